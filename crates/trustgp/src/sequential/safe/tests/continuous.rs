use rand::rngs::StdRng;
use rand::SeedableRng;

use super::propose::{random_problem, safe_alone};
use crate::sequential::optimize::sobol_points;
use crate::sequential::safe::{
    evaluate_pool, propose_continuous, ContinuousOptions, ProposeOptions, SafeError,
};

#[test]
fn continuous_proposals_are_safe_in_the_box_and_at_least_the_best_design_point() {
    let mut rng = StdRng::seed_from_u64(31);
    let (mut proposed, mut empty, mut refined) = (0, 0, 0);
    for trial in 0..40 {
        let p = random_problem(&mut rng);
        let refs = p.refs();
        let d = p.pool.ncols();
        let bounds = vec![(0.0, 1.0); d];
        let options = ContinuousOptions {
            raw_samples: 256,
            seed: trial,
            ..ContinuousOptions::default()
        };
        match propose_continuous(&refs, &p.safe_set, &bounds, p.x.as_ref(), &options) {
            Ok(prop) => {
                proposed += 1;
                assert!(prop.x.iter().all(|&v| (0.0..=1.0).contains(&v)));
                assert!(
                    safe_alone(&p, &prop.x),
                    "trial {trial}: unsafe point {:?}",
                    prop.x
                );
                // No worse than the best safe design point (the search only accepts gains).
                let free: Vec<usize> = (0..d).collect();
                let design = sobol_points(256, &free, &bounds, &vec![0.0; d], trial).unwrap();
                let best = evaluate_pool(
                    &refs,
                    &p.safe_set,
                    design.as_ref(),
                    p.x.as_ref(),
                    &ProposeOptions::default(),
                )
                .unwrap()
                .best
                .unwrap();
                assert!(prop.acquisition >= best.acquisition - 1e-12);
                assert_eq!(prop.safe_raw_samples, best.safe_set_size);
                refined += usize::from(prop.acquisition > best.acquisition + 1e-9);
                // Seeded: the same answer again.
                let again = propose_continuous(&refs, &p.safe_set, &bounds, p.x.as_ref(), &options)
                    .unwrap();
                assert_eq!(again, prop);
            }
            Err(SafeError::EmptySafeSet) => empty += 1,
            Err(e) => panic!("trial {trial}: {e}"),
        }
    }
    assert!(
        proposed > 10 && empty > 0 && refined > 5,
        "{proposed} {empty} {refined}"
    );
}

#[test]
fn bad_continuous_options_are_clear_errors() {
    let mut rng = StdRng::seed_from_u64(32);
    let p = random_problem(&mut rng);
    let refs = p.refs();
    let d = p.pool.ncols();
    let good = vec![(0.0, 1.0); d];
    let base = ContinuousOptions::default();
    type Case = (Vec<(f64, f64)>, ContinuousOptions, &'static str);
    let cases: Vec<Case> = vec![
        (vec![], base.clone(), "at least one input"),
        (vec![(1.0, 0.0); d], base.clone(), "lo < hi"),
        (
            good.clone(),
            ContinuousOptions {
                raw_samples: 0,
                ..base.clone()
            },
            "raw_samples",
        ),
        (
            good.clone(),
            ContinuousOptions {
                restarts: 0,
                ..base.clone()
            },
            "restarts",
        ),
        (
            good.clone(),
            ContinuousOptions {
                initial_step: 0.0,
                ..base.clone()
            },
            "initial_step",
        ),
        (
            good.clone(),
            ContinuousOptions {
                min_step: 0.5,
                ..base.clone()
            },
            "min_step",
        ),
        (
            good.clone(),
            ContinuousOptions {
                max_iterations: 0,
                ..base.clone()
            },
            "max_iterations",
        ),
    ];
    for (bounds, options, want) in cases {
        let e =
            propose_continuous(&refs, &p.safe_set, &bounds, p.x.as_ref(), &options).unwrap_err();
        assert!(e.to_string().contains(want), "{e} should contain {want}");
    }
}
