use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::model::{index_pool, FixedGp, TableModel};
use crate::sequential::safe::{
    evaluate_pool, propose_from_pool, Constraint, FunctionModel, ProposeOptions, SafeError,
    SafeSet, SafeSetOptions, TwoSidedRule,
};

/// A random safe-learning problem: target data, one or two models (f = q or not), random
/// constraints and options, a random pool.
pub struct Problem {
    pub x: Mat<f64>,
    pub models: Vec<FixedGp>,
    pub safe_set: SafeSet,
    pub options: SafeSetOptions,
    pub pool: Mat<f64>,
}

pub fn random_problem(rng: &mut StdRng) -> Problem {
    let d = rng.random_range(1..=2);
    let n = rng.random_range(1..=10);
    let x = Mat::from_fn(n, d, |_, _| rng.random_range(0.0..0.4));
    let n_models = rng.random_range(1..=2);
    let models: Vec<FixedGp> = (0..n_models)
        .map(|_| {
            let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.5)).collect();
            let ls = rng.random_range(0.05..0.5);
            let noise = rng.random_range(1e-3..0.1);
            FixedGp::fitted(ls, 1.0, noise, x.as_ref(), &y)
        })
        .collect();
    // Constraint on output 0 when f = q; else on the last one, sometimes on both.
    let mut constraints = Vec::new();
    let n_con = if n_models == 1 {
        1
    } else {
        rng.random_range(1..=2)
    };
    for k in 0..n_con {
        let output = if n_models == 1 { 0 } else { n_models - 1 - k };
        let lo = rng.random_range(-2.5..0.5);
        let c = match rng.random_range(0..3) {
            0 => Constraint {
                output,
                lower: Some(lo),
                upper: None,
            },
            1 => Constraint {
                output,
                lower: None,
                upper: Some(lo + 2.0),
            },
            _ => Constraint {
                output,
                lower: Some(lo),
                upper: Some(lo + rng.random_range(0.5..4.0)),
            },
        };
        constraints.push(c);
    }
    let options = SafeSetOptions {
        beta: rng.random_range(0.5..9.0),
        noisy: rng.random_bool(0.5),
        two_sided: if rng.random_bool(0.5) {
            TwoSidedRule::Joint
        } else {
            TwoSidedRule::Separate
        },
    };
    let safe_set = SafeSet::new(constraints, n_models, &options).unwrap();
    let pool = Mat::from_fn(rng.random_range(1..400), d, |_, _| {
        rng.random_range(0.0..1.0)
    });
    Problem {
        x,
        models,
        safe_set,
        options,
        pool,
    }
}

impl Problem {
    pub fn refs(&self) -> Vec<&dyn FunctionModel> {
        self.models
            .iter()
            .map(|m| m as &dyn FunctionModel)
            .collect()
    }
}

/// The safety of one point, judged by predicting it alone and checking each constraint by
/// its own formula (not through `SafeSet::is_safe`).
pub fn safe_alone(p: &Problem, x: &[f64]) -> bool {
    let row = Mat::from_fn(1, x.len(), |_, c| x[c]);
    let sqrt_beta = p.options.beta.sqrt();
    p.safe_set.constraints().iter().all(|c| {
        let m = p.models[c.output].predict(row.as_ref()).unwrap();
        let noise = if p.options.noisy {
            p.models[c.output].noise_variance()
        } else {
            0.0
        };
        let s = (m.var[0].max(0.0) + noise).sqrt();
        let mu = m.mean[0];
        match (c.lower, c.upper, p.options.two_sided) {
            (Some(l), Some(u), TwoSidedRule::Joint) => {
                use crate::sequential::acquisition::normal::cdf;
                cdf((u - mu) / s) - cdf((l - mu) / s) >= 1.0 - cdf(-sqrt_beta)
            }
            _ => {
                c.lower.is_none_or(|l| mu - sqrt_beta * s >= l)
                    && c.upper.is_none_or(|u| mu + sqrt_beta * s <= u)
            }
        }
    })
}

#[test]
fn a_point_outside_the_safe_set_is_never_proposed() {
    let mut rng = StdRng::seed_from_u64(21);
    let (mut proposed, mut empty) = (0, 0);
    for trial in 0..150 {
        let p = random_problem(&mut rng);
        let refs = p.refs();
        let options = ProposeOptions {
            chunk_size: rng.random_range(1..100),
            ..ProposeOptions::default()
        };
        let result = propose_from_pool(&refs, &p.safe_set, p.pool.as_ref(), p.x.as_ref(), &options);
        // Brute force: every pool row alone.
        let safe: Vec<bool> = (0..p.pool.nrows())
            .map(|i| {
                safe_alone(
                    &p,
                    &(0..p.pool.ncols())
                        .map(|c| p.pool[(i, c)])
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        match result {
            Ok(prop) => {
                proposed += 1;
                assert!(
                    safe[prop.index],
                    "trial {trial}: unsafe row {} proposed",
                    prop.index
                );
                let row: Vec<f64> = (0..p.pool.ncols())
                    .map(|c| p.pool[(prop.index, c)])
                    .collect();
                assert_eq!(prop.x, row);
                assert_eq!(prop.safe_set_size, safe.iter().filter(|&&s| s).count());
                assert_eq!(
                    prop.safety_probability.len(),
                    p.safe_set.constraints().len()
                );
                // Each probability clears 1 − α (up to rounding) for one-sided constraints.
                for (k, c) in p.safe_set.constraints().iter().enumerate() {
                    if c.lower.is_none() || c.upper.is_none() {
                        assert!(prop.safety_probability[k] >= 1.0 - p.safe_set.alpha() - 1e-12);
                    }
                }
                // The acquisition is the largest over the safe rows, the first of ties.
                let eval = evaluate_pool(
                    &refs,
                    &p.safe_set,
                    p.pool.as_ref(),
                    p.x.as_ref(),
                    &ProposeOptions {
                        chunk_size: 1,
                        ..options.clone()
                    },
                )
                .unwrap();
                let values: Vec<f64> = eval
                    .values
                    .iter()
                    .map(|v| v.unwrap_or(f64::NEG_INFINITY))
                    .collect();
                // (Chunks of other sizes may round the last bits differently.)
                let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let tol = 1e-12 * max.abs().max(1.0);
                assert!(
                    (prop.acquisition - max).abs() <= tol,
                    "{} vs {max}",
                    prop.acquisition
                );
                assert!((values[prop.index] - max).abs() <= tol);
                let first = (0..values.len()).find(|&i| values[i] >= max - tol).unwrap();
                assert!(prop.index == first || (values[first] - values[prop.index]).abs() <= tol);
            }
            Err(SafeError::EmptySafeSet) => {
                empty += 1;
                assert!(
                    safe.iter().all(|&s| !s),
                    "trial {trial}: empty safe set reported, but a row is safe"
                );
            }
            Err(e) => panic!("trial {trial}: {e}"),
        }
    }
    // Both outcomes occur, so both branches were checked.
    assert!(
        proposed > 30 && empty > 5,
        "{proposed} proposals, {empty} empty"
    );
}

#[test]
fn chunking_does_not_change_the_answer() {
    let mut rng = StdRng::seed_from_u64(22);
    for _ in 0..30 {
        let p = random_problem(&mut rng);
        let refs = p.refs();
        let eval = |chunk| {
            evaluate_pool(
                &refs,
                &p.safe_set,
                p.pool.as_ref(),
                p.x.as_ref(),
                &ProposeOptions {
                    chunk_size: chunk,
                    ..ProposeOptions::default()
                },
            )
            .unwrap()
        };
        let whole = eval(100_000);
        for chunk in [1, 3, 64] {
            let e = eval(chunk);
            assert_eq!(e.safe_mask(), whole.safe_mask());
            assert_eq!(
                e.best.as_ref().map(|b| b.index),
                whole.best.as_ref().map(|b| b.index)
            );
        }
    }
}

#[test]
fn ties_go_to_the_lowest_pool_row_and_empty_set_is_an_error() {
    // Rows 0, 1 unsafe (mean too low); rows 2..6 safe with equal variances.
    let m = TableModel {
        mean: vec![-5.0, -5.0, 3.0, 3.0, 3.0, 3.0],
        var: vec![1.0; 6],
        noise: 0.01,
    };
    let pool = index_pool(6);
    let s = SafeSet::new(
        vec![Constraint {
            output: 0,
            lower: Some(0.0),
            upper: None,
        }],
        1,
        &SafeSetOptions::default(),
    )
    .unwrap();
    let p = propose_from_pool(
        &[&m],
        &s,
        pool.as_ref(),
        pool.as_ref(),
        &ProposeOptions::default(),
    )
    .unwrap();
    assert_eq!(p.index, 2);
    assert_eq!(p.safe_set_size, 4);
    let never = SafeSet::new(
        vec![Constraint {
            output: 0,
            lower: Some(100.0),
            upper: None,
        }],
        1,
        &SafeSetOptions::default(),
    )
    .unwrap();
    let e = propose_from_pool(
        &[&m],
        &never,
        pool.as_ref(),
        pool.as_ref(),
        &ProposeOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, SafeError::EmptySafeSet));
    assert!(e.to_string().contains("never proposed"), "{e}");
}

#[test]
fn bad_proposal_inputs_are_clear_errors() {
    let m = TableModel {
        mean: vec![1.0; 3],
        var: vec![1.0; 3],
        noise: 0.01,
    };
    let pool = index_pool(3);
    let s2 = SafeSet::new(
        vec![Constraint {
            output: 1,
            lower: Some(0.0),
            upper: None,
        }],
        2,
        &SafeSetOptions::default(),
    )
    .unwrap();
    let s1 = SafeSet::new(
        vec![Constraint {
            output: 0,
            lower: Some(0.0),
            upper: None,
        }],
        1,
        &SafeSetOptions::default(),
    )
    .unwrap();
    let o = ProposeOptions::default();
    let err = |r: Result<_, SafeError>| {
        r.map(|_: crate::sequential::safe::Proposal| ())
            .unwrap_err()
            .to_string()
    };
    assert!(err(propose_from_pool(
        &[],
        &s1,
        pool.as_ref(),
        pool.as_ref(),
        &o
    ))
    .contains("no models"));
    assert!(err(propose_from_pool(
        &[&m],
        &s2,
        pool.as_ref(),
        pool.as_ref(),
        &o
    ))
    .contains("output column 1"));
    assert!(err(propose_from_pool(
        &[&m],
        &s1,
        index_pool(0).as_ref(),
        pool.as_ref(),
        &o
    ))
    .contains("no candidates"));
    let mut nan = index_pool(3);
    nan[(1, 0)] = f64::NAN;
    assert!(err(propose_from_pool(
        &[&m],
        &s1,
        nan.as_ref(),
        pool.as_ref(),
        &o
    ))
    .contains("row 1, column 0"));
    let zero = ProposeOptions {
        chunk_size: 0,
        ..ProposeOptions::default()
    };
    assert!(err(propose_from_pool(
        &[&m],
        &s1,
        pool.as_ref(),
        pool.as_ref(),
        &zero
    ))
    .contains("chunk_size"));
}

#[test]
fn adding_the_posterior_mean_keeps_means_and_grows_the_safe_set() {
    // Spec §4 item 10: fixed hyperparameters, a new observation equal to the posterior mean.
    let mut rng = StdRng::seed_from_u64(23);
    let mut grew = 0;
    for _ in 0..20 {
        let n = rng.random_range(2..8);
        let x = Mat::from_fn(n, 1, |_, _| rng.random_range(0.0..0.5));
        let y: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.5)).collect();
        let before = FixedGp::fitted(0.15, 1.0, 0.02, x.as_ref(), &y);
        let star = Mat::from_fn(1, 1, |_, _| rng.random_range(0.0..1.0));
        let mu_star = before.predict(star.as_ref()).unwrap().mean[0];
        let x2 = Mat::from_fn(
            n + 1,
            1,
            |i, _| if i < n { x[(i, 0)] } else { star[(0, 0)] },
        );
        let mut y2 = y.clone();
        y2.push(mu_star);
        let after = FixedGp::fitted(0.15, 1.0, 0.02, x2.as_ref(), &y2);
        let pool = Mat::from_fn(500, 1, |i, _| i as f64 / 499.0);
        let (mb, ma) = (
            before.predict(pool.as_ref()).unwrap(),
            after.predict(pool.as_ref()).unwrap(),
        );
        let s = SafeSet::new(
            vec![Constraint {
                output: 0,
                lower: Some(0.2),
                upper: None,
            }],
            1,
            &SafeSetOptions::default(),
        )
        .unwrap();
        for i in 0..500 {
            assert!((mb.mean[i] - ma.mean[i]).abs() < 1e-10);
            assert!(ma.var[i] <= mb.var[i] + 1e-12);
        }
        let eb = evaluate_pool(
            &[&before],
            &s,
            pool.as_ref(),
            x.as_ref(),
            &ProposeOptions::default(),
        )
        .unwrap();
        let ea = evaluate_pool(
            &[&after],
            &s,
            pool.as_ref(),
            x2.as_ref(),
            &ProposeOptions::default(),
        )
        .unwrap();
        let (sb, sa) = (eb.safe_mask(), ea.safe_mask());
        for i in 0..500 {
            assert!(!sb[i] || sa[i], "row {i} left the safe set");
        }
        grew += usize::from(sa.iter().filter(|&&v| v).count() > sb.iter().filter(|&&v| v).count());
    }
    assert!(grew > 3, "the safe set grew in only {grew} cases");
}
