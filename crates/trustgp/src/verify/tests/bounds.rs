//! Mean, variance and probability bounds of one box hold at 10⁵ sampled points (invariant 5, 6)
//! and close as the box shrinks (invariant 9).

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::{kernels, random_box, random_form, samples};
use crate::verify::bnb::{Bounded, Sense};
use crate::verify::link::BinaryLink;
use crate::verify::quantity::{Problem, Quantity};
use crate::verify::region::Region;

const QUANTITIES: [Quantity; 4] = [
    Quantity::Mean,
    Quantity::Variance,
    Quantity::Probability(BinaryLink::Probit),
    Quantity::Probability(BinaryLink::Logistic),
];

/// The quantity at a point, and how far the computed value may be from the true one: the
/// logistic integral is known to its bracket's half-width (checked against Simpson's rule in
/// `probability.rs`).
fn value(p: &Problem<'_>, m: &crate::verify::form::PointMoments) -> (f64, f64) {
    match p.quantity {
        Quantity::Mean => (m.mean, 0.0),
        Quantity::Variance => (m.var, 0.0),
        Quantity::Probability(link) => {
            let (lo, hi) = link.bracket(m.mean, m.var);
            (0.5 * (lo + hi), 0.5 * (hi - lo))
        }
    }
}

#[test]
fn box_bounds_hold_at_sampled_points_for_every_kernel() {
    let mut rng = StdRng::seed_from_u64(11);
    for d in 1..=3 {
        for (ki, kernel) in kernels(d).into_iter().enumerate() {
            let form = random_form(kernel, 25, d, 100 + ki as u64);
            let region = random_box(d, 0.5, &mut rng);
            let xs = samples(&region, 1000, ki as u64);
            let moments = form.moments(xs.as_ref());
            for q in QUANTITIES {
                let p = Problem {
                    form: &form,
                    quantity: q,
                    variance: Default::default(),
                };
                let (lo, _) = p.bound(&region, Sense::Min);
                let (hi, _) = p.bound(&region, Sense::Max);
                for m in &moments {
                    let (v, tol) = value(&p, m);
                    assert!(
                        lo <= v + tol && v - tol <= hi,
                        "{q:?} kernel {ki} d {d}: {lo} ≤ {v} ≤ {hi}"
                    );
                }
            }
        }
    }
}

#[test]
fn hundred_thousand_samples_never_leave_the_bounds() {
    // One form per quantity family at 10⁵ samples (spec §4: soundness).
    let kernel = crate::kernels::Kernel::parse("se(var=1.5, ls=[0.5,0.8])").unwrap();
    let form = random_form(kernel, 40, 2, 7);
    let region = Region::new(vec![-0.4, 0.1], vec![0.3, 0.6]).unwrap();
    let xs = samples(&region, 100_000, 3);
    let moments = form.moments(xs.as_ref());
    for q in QUANTITIES {
        let p = Problem {
            form: &form,
            quantity: q,
            variance: Default::default(),
        };
        let (lo, _) = p.bound(&region, Sense::Min);
        let (hi, _) = p.bound(&region, Sense::Max);
        // The logistic bracket costs ~0.1 ms a point: 10⁴ of them.
        let count = if q == QUANTITIES[3] {
            10_000
        } else {
            moments.len()
        };
        let out = moments[..count]
            .iter()
            .filter(|m| {
                let (v, tol) = value(&p, m);
                v + tol < lo || v - tol > hi
            })
            .count();
        assert_eq!(out, 0, "{q:?}: {out} samples outside [{lo}, {hi}]");
    }
}

#[test]
fn gaps_close_as_the_box_shrinks() {
    for (ki, kernel) in kernels(2).into_iter().enumerate() {
        let form = random_form(kernel, 20, 2, 300 + ki as u64);
        let x0 = [0.2, -0.3];
        let mut last = [f64::INFINITY; 3];
        for (step, r) in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6].into_iter().enumerate() {
            let region = Region::ball(&x0, r, None).unwrap();
            let m = form.moments_at(&x0);
            for (qi, q) in QUANTITIES[..3].iter().enumerate() {
                let p = Problem {
                    form: &form,
                    quantity: *q,
                    variance: Default::default(),
                };
                let (lo, _) = p.bound(&region, Sense::Min);
                let (hi, _) = p.bound(&region, Sense::Max);
                let (v, _) = value(&p, &m);
                assert!(lo <= v && v <= hi, "{q:?} kernel {ki} r {r}");
                let gap = hi - lo;
                assert!(
                    gap <= last[qi] * 1.0001 + 1e-12,
                    "{q:?} kernel {ki}: gap grew at r {r}"
                );
                last[qi] = gap;
                if step == 5 {
                    assert!(gap < 1e-4, "{q:?} kernel {ki}: gap {gap} at r = 1e-6");
                }
            }
        }
        // A degenerate box: the bounds equal the point value.
        let region = Region::new(x0.to_vec(), x0.to_vec()).unwrap();
        let m = form.moments_at(&x0);
        let p = Problem {
            form: &form,
            quantity: Quantity::Mean,
            variance: Default::default(),
        };
        let (lo, _) = p.bound(&region, Sense::Min);
        let (hi, _) = p.bound(&region, Sense::Max);
        assert!((lo - m.mean).abs() < 1e-9 && (hi - m.mean).abs() < 1e-9);
    }
}
