//! Branch and bound: ε-exactness against dense grids (invariant 11, both split rules), anytime
//! monotonicity and validity (10), and certified answers against exhaustive search.

use faer::Mat;

use super::{kernels, random_form};
use crate::verify::bnb::{branch_and_bound, BnbOptions, Sense, Split};
use crate::verify::form::LatentForm;
use crate::verify::link::BinaryLink;
use crate::verify::quantity::{verify, Problem, Quantity};
use crate::verify::region::Region;

/// Values of `q` on a `k^d` grid of the box (d ≤ 2), with the grid's min and max.
fn grid(form: &LatentForm, q: Quantity, region: &Region, k: usize) -> (f64, f64) {
    let d = region.dim();
    let count = k.pow(d as u32);
    let xs = Mat::from_fn(count, d, |a, j| {
        let idx = if j == 0 { a % k } else { a / k };
        region.lower[j] + (region.upper[j] - region.lower[j]) * idx as f64 / (k - 1) as f64
    });
    let vals: Vec<f64> = form
        .moments(xs.as_ref())
        .iter()
        .map(|m| match q {
            Quantity::Mean => m.mean,
            Quantity::Variance => m.var,
            Quantity::Probability(l) => l.value(m.mean, m.var),
        })
        .collect();
    (
        vals.iter().copied().fold(f64::INFINITY, f64::min),
        vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

#[test]
fn gap_closes_to_tolerance_and_brackets_the_grid() {
    for d in 1..=2 {
        for (ki, kernel) in kernels(d).into_iter().enumerate().step_by(2) {
            let form = random_form(kernel, 15, d, 500 + ki as u64);
            let region = Region::ball(&vec![0.1; d], 0.4, None).unwrap();
            for q in [
                Quantity::Mean,
                Quantity::Variance,
                Quantity::Probability(BinaryLink::Probit),
            ] {
                for (eps, split) in [
                    (1e-2, Split::Widest),
                    (1e-3, Split::Widest),
                    (1e-3, Split::Random(9)),
                ] {
                    let opts = BnbOptions {
                        tolerance: eps,
                        max_iterations: usize::MAX,
                        split,
                        ..BnbOptions::default()
                    };
                    let v = verify(&form, q, &region, &opts).unwrap();
                    let (gmin, gmax) = grid(&form, q, &region, if d == 1 { 4001 } else { 161 });
                    assert!(
                        v.gap <= eps,
                        "{q:?} kernel {ki} d {d}: gap {} > {eps}",
                        v.gap
                    );
                    assert!(
                        v.lower <= gmin && gmax <= v.upper,
                        "{q:?} kernel {ki} d {d}"
                    );
                    assert!(v.min_found <= gmin + eps && v.max_found >= gmax - eps);
                    assert!(region.contains(&v.argmin) && region.contains(&v.argmax));
                    let at = form.moments_at(&v.argmin);
                    let val = match q {
                        Quantity::Mean => at.mean,
                        Quantity::Variance => at.var,
                        Quantity::Probability(l) => l.value(at.mean, at.var),
                    };
                    assert!(
                        (val - v.min_found).abs() < 1e-12,
                        "min_found is the value at argmin"
                    );
                }
            }
        }
    }
}

#[test]
fn anytime_bounds_are_monotone_and_valid_at_every_iteration() {
    let kernel = crate::kernels::Kernel::parse("matern52(var=1.0, ls=[0.4,0.6])").unwrap();
    let form = random_form(kernel, 20, 2, 42);
    let region = Region::ball(&[0.0, 0.2], 0.5, None).unwrap();
    let (gmin, _) = grid(&form, Quantity::Mean, &region, 201);
    let opts = BnbOptions {
        tolerance: 1e-4,
        record: true,
        ..BnbOptions::default()
    };
    let p = Problem {
        form: &form,
        quantity: Quantity::Mean,
        variance: Default::default(),
    };
    let r = branch_and_bound(&p, &region, Sense::Min, &opts);
    assert!(r.history.len() > 3);
    for w in r.history.windows(2) {
        assert!(w[1].0 >= w[0].0 - 1e-15, "lower bound decreased");
        assert!(w[1].1 <= w[0].1 + 1e-15, "incumbent increased");
    }
    for (lb, ub) in &r.history {
        assert!(*lb <= gmin && gmin <= *ub + 1e-4);
    }
    // Truncated runs still give valid bounds.
    for cap in [0, 1, 3, 10] {
        let opts = BnbOptions {
            max_iterations: cap,
            tolerance: 0.0,
            ..BnbOptions::default()
        };
        let r = branch_and_bound(&p, &region, Sense::Min, &opts);
        assert!(r.bound <= gmin && r.iterations <= cap);
    }
}

#[test]
fn certified_answers_agree_with_exhaustive_search() {
    // Binary decision at threshold 0.5 (spec §2.1): certified iff the box minimum of the
    // probability stays above 0.5. Run to a small ε and compare with a 2-D grid, away from ties.
    let mut agreed = 0;
    for (ki, kernel) in kernels(2).into_iter().enumerate() {
        for (si, gamma) in [0.05, 0.2, 0.5].into_iter().enumerate() {
            let form = random_form(kernel.clone(), 15, 2, 900 + 10 * ki as u64 + si as u64);
            let x0 = [0.3, -0.2];
            let region = Region::ball(&x0, gamma, None).unwrap();
            // The logistic bracket costs ~0.1 ms: fewer of its runs.
            let links: &[BinaryLink] = if si == 0 {
                &[BinaryLink::Probit, BinaryLink::Logistic]
            } else {
                &[BinaryLink::Probit]
            };
            for &link in links {
                let q = Quantity::Probability(link);
                let eps = 2e-3;
                let v = verify(
                    &form,
                    q,
                    &region,
                    &BnbOptions {
                        tolerance: eps,
                        ..BnbOptions::default()
                    },
                )
                .unwrap();
                let (gmin, gmax) = grid(&form, q, &region, 61);
                let p0 = {
                    let m = form.moments_at(&x0);
                    link.value(m.mean, m.var)
                };
                let (certified, truth) = if p0 >= 0.5 {
                    (v.lower > 0.5, gmin > 0.5)
                } else {
                    (v.upper < 0.5, gmax < 0.5)
                };
                if certified {
                    assert!(truth, "certified but the grid flips: kernel {ki} γ {gamma}");
                }
                let near = (gmin - 0.5).abs() < 2.0 * eps || (gmax - 0.5).abs() < 2.0 * eps;
                if !near {
                    assert_eq!(certified, truth, "kernel {ki} γ {gamma} {link:?}");
                    agreed += 1;
                }
            }
        }
    }
    assert!(agreed > 20, "only {agreed} clear cases");
}

#[test]
fn decided_stops_early_and_is_right() {
    let kernel = crate::kernels::Kernel::parse("se(var=1.0, ls=0.5)").unwrap();
    let form = random_form(kernel, 20, 1, 77);
    let region = Region::ball(&[0.0], 0.8, None).unwrap();
    let (gmin, _) = grid(&form, Quantity::Mean, &region, 20001);
    let p = Problem {
        form: &form,
        quantity: Quantity::Mean,
        variance: Default::default(),
    };
    for t in [gmin - 0.3, gmin + 0.3] {
        let r = branch_and_bound(
            &p,
            &region,
            Sense::Min,
            &BnbOptions {
                tolerance: 0.0,
                decide_at: Some(t),
                ..BnbOptions::default()
            },
        );
        assert_eq!(r.exit.name(), "decided");
        assert_eq!(r.bound > t, gmin > t);
        assert_eq!(r.found_certified < t, gmin < t);
    }
}
