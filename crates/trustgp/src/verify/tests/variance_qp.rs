//! The solver variance bounds (spec §2.6, §6.2): the relaxation contains the truth (invariant
//! 4), the weak-duality bound is sound for any multipliers and tight for the solver's
//! (invariant 16), the bounds hold at 10⁵ sampled points for indefinite `S` with large and
//! negative eigenvalues (5), beat the closed form where it is loose, and let branch and bound
//! close the gap to ε (11).

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{kernels, random_box, samples};
use crate::kernels::Kernel;
use crate::verify::bnb::{BnbOptions, Bounded, Sense};
use crate::verify::form::LatentForm;
use crate::verify::link::BinaryLink;
use crate::verify::quantity::{verify, Problem, Quantity};
use crate::verify::region::Region;
use crate::verify::relaxation::Polytope;
use crate::verify::variance;
use crate::verify::variance_qp::{self, Sides, VarianceMethod};

/// A form whose `S = Q diag(λ) Qᵀ` (random orthogonal `Q`) has one large positive eigenvalue
/// `big`, one large negative one `−big/3`, and the rest in `[−1, 2]` (scaled by `1/n`).
fn indefinite_form(kernel: Kernel, n: usize, d: usize, big: f64, seed: u64) -> LatentForm {
    let mut rng = StdRng::seed_from_u64(seed);
    let z = Mat::from_fn(n, d, |_, _| rng.random_range(-1.5..1.5));
    let t: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    let a = Mat::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    let q = a.qr().compute_Q();
    let lam: Vec<f64> = (0..n)
        .map(|k| match k {
            0 => big,
            1 => -big / 3.0,
            _ => rng.random_range(-1.0..2.0) / n as f64,
        })
        .collect();
    let scaled = Mat::from_fn(n, n, |i, k| q[(i, k)] * lam[k]);
    let s = &scaled * q.transpose();
    LatentForm::new(kernel, z, t, s, 0.0, Vec::new()).expect("valid form")
}

/// Variance bounds of one side by `method` (the other side from the closed form).
fn side(form: &LatentForm, region: &Region, method: VarianceMethod, sense: Sense) -> f64 {
    let sw = form.sandwiches(region);
    let sides = Sides {
        lower: sense == Sense::Min,
        upper: sense == Sense::Max,
    };
    let v = variance_qp::bounds(form, &sw, region, method, sides);
    if sense == Sense::Min {
        v.lower
    } else {
        v.upper
    }
}

#[test]
fn the_relaxation_contains_the_truth() {
    let mut rng = StdRng::seed_from_u64(4);
    for d in 1..=3 {
        for (ki, kernel) in kernels(d).into_iter().enumerate() {
            let form = indefinite_form(kernel, 12, d, 5.0, 40 + ki as u64);
            let mut region = random_box(d, 0.6, &mut rng);
            if d == 3 {
                // A fixed coordinate: its φ terms become constants.
                region.upper[1] = region.lower[1];
            }
            let sw = form.sandwiches(&region);
            let poly = Polytope::build(&form, &sw, &region);
            let xs = samples(&region, 300, ki as u64);
            for a in 0..xs.nrows() {
                let x: Vec<f64> = (0..d).map(|j| xs[(a, j)]).collect();
                let truth = poly.truth(&form, &x);
                assert_eq!(truth.len(), poly.vars());
                assert!(poly.contains(&truth, 0.0), "kernel {ki} d {d} at {x:?}");
            }
        }
    }
}

#[test]
fn weak_duality_is_sound_for_any_multipliers_and_tight_for_the_solvers() {
    let mut rng = StdRng::seed_from_u64(5);
    for (ki, kernel) in kernels(2).into_iter().enumerate() {
        let form = indefinite_form(kernel, 10, 2, 5.0, 70 + ki as u64);
        let region = random_box(2, 0.5, &mut rng);
        let sw = form.sandwiches(&region);
        let poly = Polytope::build(&form, &sw, &region);
        let c: Vec<f64> = (0..poly.vars())
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let xs = samples(&region, 2000, 9);
        let truth_min = (0..xs.nrows())
            .map(|a| {
                let z = poly.truth(&form, &[xs[(a, 0)], xs[(a, 1)]]);
                c.iter().zip(&z).map(|(c, z)| c * z).sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min);
        // y = 0: exactly the box bound.
        let boxed: f64 = (0..poly.vars())
            .map(|k| (c[k] * poly.lower[k]).min(c[k] * poly.upper[k]))
            .sum();
        let b0 = poly.certified_min(&c, &[]);
        assert!(b0 <= boxed && boxed - b0 < 1e-9, "{b0} vs {boxed}");
        // Garbage multipliers (random, some negative or NaN): still below the truth.
        for trial in 0..20 {
            let y: Vec<f64> = (0..poly.rows())
                .map(|k| match (k + trial) % 7 {
                    0 => f64::NAN,
                    1 => -3.0,
                    _ => rng.random_range(0.0..2.0_f64).powi(3),
                })
                .collect();
            assert!(poly.certified_min(&c, &y) <= truth_min);
        }
        // The LP itself: the certified bound from Clarabel's duals is within the solver
        // tolerance of the primal value and below every true point.
        let lp = variance_qp::solve(&poly, None, &c);
        let cert = poly.certified_min(&c, &lp.1);
        let primal: f64 = c.iter().zip(&lp.0).map(|(c, z)| c * z).sum();
        assert!(cert <= truth_min, "kernel {ki}: {cert} > {truth_min}");
        assert!(
            (primal - cert).abs() <= 1e-6 * (1.0 + primal.abs()),
            "kernel {ki}: primal {primal}, certified {cert}"
        );
        assert!(cert >= b0 - 1e-12, "the duals never lose to the box bound");
    }
}

/// Min and max of the (clamped) variance over sampled points.
fn sampled_range(form: &LatentForm, region: &Region, count: usize, seed: u64) -> (f64, f64) {
    let xs = samples(region, count, seed);
    form.moments(xs.as_ref())
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
            (lo.min(m.var), hi.max(m.var))
        })
}

#[test]
fn solver_bounds_hold_at_sampled_points_with_large_and_negative_eigenvalues() {
    let mut rng = StdRng::seed_from_u64(6);
    for d in 1..=3 {
        for (ki, kernel) in kernels(d).into_iter().enumerate() {
            for big in [0.5, 40.0] {
                let form = indefinite_form(kernel.clone(), 15, d, big, 100 + ki as u64);
                let region = random_box(d, 0.5, &mut rng);
                let (vmin, vmax) = sampled_range(&form, &region, 2000, ki as u64);
                for method in [VarianceMethod::Solver, VarianceMethod::Both] {
                    let lo = side(&form, &region, method, Sense::Min);
                    let hi = side(&form, &region, method, Sense::Max);
                    assert!(
                        lo <= vmin && vmax <= hi,
                        "{method:?} kernel {ki} d {d} big {big}: {lo} ≤ [{vmin}, {vmax}] ≤ {hi}"
                    );
                }
            }
        }
    }
    // 10⁵ points of one box per form (spec §4: soundness).
    for (seed, expr) in [
        (1, "se(var=1.5, ls=[0.5,0.8])"),
        (
            2,
            "matern32(var=1.0, ls=0.6) + per(var=0.5, ls=1.0, period=1.3)",
        ),
        (3, "se(var=1.2, ls=0.7) * rq(var=0.9, ls=1.0, alpha=2.0)"),
    ] {
        // 45 support points: more convex terms than the solver keeps as a quadratic.
        let form = indefinite_form(Kernel::parse(expr).unwrap(), 45, 2, 30.0, seed);
        let region = Region::new(vec![-0.4, 0.1], vec![0.3, 0.6]).unwrap();
        let (vmin, vmax) = sampled_range(&form, &region, 100_000, seed);
        for method in [VarianceMethod::Solver, VarianceMethod::Both] {
            let lo = side(&form, &region, method, Sense::Min);
            let hi = side(&form, &region, method, Sense::Max);
            assert!(lo <= vmin && vmax <= hi, "{expr} {method:?}");
        }
    }
}

#[test]
fn both_is_the_intersection_of_the_closed_form_and_the_solver() {
    let mut rng = StdRng::seed_from_u64(8);
    for (ki, kernel) in kernels(2).into_iter().enumerate() {
        let form = indefinite_form(kernel, 12, 2, 20.0, 200 + ki as u64);
        let region = random_box(2, 0.5, &mut rng);
        let sw = form.sandwiches(&region);
        let closed = variance::bounds(&form, &sw, &region);
        let solver = variance_qp::bounds(&form, &sw, &region, VarianceMethod::Solver, Sides::BOTH);
        let both = variance_qp::bounds(&form, &sw, &region, VarianceMethod::Both, Sides::BOTH);
        assert_eq!(both.lower, closed.lower.max(solver.lower), "kernel {ki}");
        assert_eq!(both.upper, closed.upper.min(solver.upper), "kernel {ki}");
        assert!(region.contains(&solver.x_lower) && region.contains(&solver.x_upper));
    }
}

#[test]
fn the_solver_is_strictly_tighter_where_the_closed_form_is_loose() {
    // A large eigenvalue of S along a support point z₀ whose kernel value varies a lot over
    // the box: the closed form bounds q = rᵀSr below by its tangent plane at the centre of
    // r₀'s range, losing λ h² (h the half-range of r₀); the QP keeps the curvature and is
    // exact up to the relaxation.
    let kernel = Kernel::parse("se(var=1.0, ls=0.5)").unwrap();
    let n = 8;
    let mut rng = StdRng::seed_from_u64(12);
    let z = Mat::from_fn(n, 1, |i, _| -1.0 + 2.0 * i as f64 / (n - 1) as f64);
    let t: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    // S = 1.8 e₀e₀ᵀ + 0.01 I: λ_max = 1.81, 180 times the others.
    let s = Mat::from_fn(n, n, |i, j| {
        f64::from(i == j) * 0.01 + if i == 0 && j == 0 { 1.8 } else { 0.0 }
    });
    let form = LatentForm::new(kernel, z, t, s, 0.0, Vec::new()).unwrap();
    let region = Region::new(vec![-0.6], vec![0.2]).unwrap();
    let (vmin, vmax) = sampled_range(&form, &region, 100_000, 1);
    let closed_hi = side(&form, &region, VarianceMethod::ClosedForm, Sense::Max);
    let closed_lo = side(&form, &region, VarianceMethod::ClosedForm, Sense::Min);
    let solver_hi = side(&form, &region, VarianceMethod::Solver, Sense::Max);
    let solver_lo = side(&form, &region, VarianceMethod::Solver, Sense::Min);
    assert!(closed_lo <= vmin && vmax <= closed_hi);
    assert!(solver_lo <= vmin && vmax <= solver_hi);
    assert!(vmin > 0.0, "the example keeps the variance positive");
    // Over-approximation of the upper side: closed form vs solver.
    let (c_up, s_up) = (closed_hi - vmax, solver_hi - vmax);
    assert!(c_up > 0.1, "the closed form is loose here: {c_up}");
    assert!(
        s_up < 0.1 * c_up,
        "upper: solver {s_up} vs closed form {c_up}"
    );
    // The lower side: the LP's chord of λ s² along e₀ is the closed form's own bound here,
    // so it may only be as tight, never looser than the sampled truth allows.
    assert!(solver_lo <= vmin && closed_lo <= vmin);
}

#[test]
fn solver_gaps_close_as_the_box_shrinks() {
    for (ki, kernel) in kernels(2).into_iter().enumerate() {
        let form = indefinite_form(kernel, 10, 2, 10.0, 300 + ki as u64);
        let x0 = [0.2, -0.3];
        let v0 = form.moments_at(&x0).var;
        let mut last = f64::INFINITY;
        for r in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6] {
            let region = Region::ball(&x0, r, None).unwrap();
            let lo = side(&form, &region, VarianceMethod::Solver, Sense::Min);
            let hi = side(&form, &region, VarianceMethod::Solver, Sense::Max);
            assert!(lo <= v0 && v0 <= hi, "kernel {ki} r {r}");
            let gap = hi - lo;
            assert!(gap <= last * 1.01 + 1e-9, "kernel {ki}: gap grew at r {r}");
            last = gap;
        }
        assert!(last < 1e-4, "kernel {ki}: gap {last} at r = 1e-6");
    }
}

#[test]
fn branch_and_bound_closes_the_gap_with_the_solver_bounds() {
    for d in 1..=2 {
        for (ki, kernel) in kernels(d).into_iter().enumerate().step_by(3) {
            let form = indefinite_form(kernel, 8, d, 10.0, 400 + ki as u64);
            let region = Region::ball(&vec![0.1; d], 0.3, None).unwrap();
            let (gmin, gmax) = sampled_range(&form, &region, 20_000, 3);
            for q in [
                Quantity::Variance,
                Quantity::Probability(BinaryLink::Probit),
            ] {
                for method in [VarianceMethod::Solver, VarianceMethod::Both] {
                    let eps = 1e-3;
                    let opts = BnbOptions {
                        tolerance: eps,
                        max_iterations: usize::MAX,
                        variance: method,
                        ..BnbOptions::default()
                    };
                    let v = verify(&form, q, &region, &opts).unwrap();
                    assert!(
                        v.gap <= eps,
                        "{q:?} {method:?} kernel {ki} d {d}: {}",
                        v.gap
                    );
                    if q == Quantity::Variance {
                        assert!(v.lower <= gmin && gmax <= v.upper);
                        assert!(v.min_found <= gmin + eps && v.max_found >= gmax - eps);
                    }
                    assert!(region.contains(&v.argmin) && region.contains(&v.argmax));
                }
            }
        }
    }
}

#[test]
fn the_problem_uses_the_chosen_method() {
    // The B&B problem's variance bound is the method's (not always the closed form).
    let kernel = Kernel::parse("se(var=1.0, ls=0.8)").unwrap();
    let form = indefinite_form(kernel, 10, 1, 30.0, 9);
    let region = Region::new(vec![-0.2], vec![0.4]).unwrap();
    let bound = |variance| {
        let p = Problem {
            form: &form,
            quantity: Quantity::Variance,
            variance,
        };
        (
            p.bound(&region, Sense::Min).0,
            p.bound(&region, Sense::Max).0,
        )
    };
    let closed = bound(VarianceMethod::ClosedForm);
    let both = bound(VarianceMethod::Both);
    assert_eq!(
        closed,
        (
            side(&form, &region, VarianceMethod::ClosedForm, Sense::Min),
            side(&form, &region, VarianceMethod::ClosedForm, Sense::Max)
        )
    );
    assert!(both.0 >= closed.0 && both.1 <= closed.1);
    assert!(both != closed, "the solver tightened nothing: {both:?}");
}
