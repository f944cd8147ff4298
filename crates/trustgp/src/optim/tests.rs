//! End-to-end tests of the optimisers on problems with known answers.

use approx::assert_abs_diff_eq;

use super::*;

type Eval = Result<(f64, Vec<f64>), String>;

const FREE: (f64, f64) = (f64::NEG_INFINITY, f64::INFINITY);

fn rosenbrock(x: &[f64]) -> Eval {
    let mut f = 0.0;
    let mut g = vec![0.0; x.len()];
    for i in 0..x.len() - 1 {
        let (a, b) = (x[i + 1] - x[i] * x[i], 1.0 - x[i]);
        f += 100.0 * a * a + b * b;
        g[i] += -400.0 * x[i] * a - 2.0 * b;
        g[i + 1] += 200.0 * a;
    }
    Ok((f, g))
}

/// The standard start (−1.2, 1, −1.2, 1, …).
fn rosenbrock_start(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn run<O: Objective>(f: O, x0: &[f64], bounds: &[(f64, f64)]) -> OptimResult {
    minimize_lbfgsb(f, x0, bounds, &LbfgsOptions::default()).unwrap()
}

#[test]
fn rosenbrock_2d_converges_in_about_as_many_evaluations_as_scipy() {
    let r = run(&mut rosenbrock, &rosenbrock_start(2), &[FREE; 2]);
    println!(
        "rosenbrock 2-D: {} evals, {} iters, {}",
        r.n_evals, r.n_iter, r.message
    );
    assert!(r.converged, "{}", r.message);
    assert!(max_abs_diff(&r.x, &[1.0; 2]) < 1e-5, "{:?}", r.x);
    // SciPy 1.x L-BFGS-B with the same tolerances: 44 evaluations.
    assert!(r.n_evals <= 50, "{} evaluations", r.n_evals);
}

#[test]
fn rosenbrock_10d_converges_in_about_as_many_evaluations_as_scipy() {
    let r = run(&mut rosenbrock, &rosenbrock_start(10), &[FREE; 10]);
    println!(
        "rosenbrock 10-D: {} evals, {} iters, {}",
        r.n_evals, r.n_iter, r.message
    );
    assert!(r.converged, "{}", r.message);
    assert!(max_abs_diff(&r.x, &[1.0; 10]) < 1e-5, "{:?}", r.x);
    // SciPy: 88 evaluations.
    assert!(r.n_evals <= 100, "{} evaluations", r.n_evals);
}

/// f = Σ wᵢ (xᵢ − cᵢ)²: separable, so the box-constrained minimiser is `clamp(c, lo, hi)`.
fn diagonal_quadratic(w: &[f64], c: &[f64]) -> impl FnMut(&[f64]) -> Eval {
    let (w, c) = (w.to_vec(), c.to_vec());
    move |x: &[f64]| {
        let r: Vec<f64> = x.iter().zip(&c).map(|(xi, ci)| xi - ci).collect();
        let f = r.iter().zip(&w).map(|(ri, wi)| wi * ri * ri).sum();
        Ok((f, r.iter().zip(&w).map(|(ri, wi)| 2.0 * wi * ri).collect()))
    }
}

#[test]
fn bounded_diagonal_quadratic_matches_the_clamped_minimiser() {
    let w = [1.0, 10.0, 0.5, 3.0, 100.0, 2.0];
    let c: [f64; 6] = [-3.0, 0.5, 4.0, 1.0, -0.2, 7.0];
    let bounds = [
        (-1.0, 1.0),
        (0.0, 1.0),
        (f64::NEG_INFINITY, 2.0),
        (0.0, 0.0),
        (0.0, 5.0),
        FREE,
    ];
    let expected: Vec<f64> = c
        .iter()
        .zip(&bounds)
        .map(|(ci, &(lo, hi))| ci.clamp(lo, hi))
        .collect();
    let r = run(&mut diagonal_quadratic(&w, &c), &[0.3; 6], &bounds);
    println!(
        "bounded quadratic: {} evals, {} iters, {}",
        r.n_evals, r.n_iter, r.message
    );
    assert!(r.converged, "{}", r.message);
    // Active coordinates must sit exactly on their bounds; free ones within grad_tol / (2 w).
    for i in [0, 2, 3, 4] {
        assert_eq!(r.x[i], expected[i], "coordinate {i}");
    }
    for i in [1, 5] {
        assert!(
            (r.x[i] - expected[i]).abs() <= 1e-5 / (2.0 * w[i]),
            "coordinate {i}: {}",
            r.x[i]
        );
    }
}

#[test]
fn bounded_coupled_quadratic_satisfies_kkt() {
    // f = ½ xᵀAx − bᵀx with A positive definite and coupled; the unconstrained minimiser
    // A⁻¹b = (3, −2, 1) violates both bounds below, which then hold at the solution.
    let a = [[4.0, 1.0, 0.5], [1.0, 3.0, -0.5], [0.5, -0.5, 2.0]];
    let b: Vec<f64> = (0..3)
        .map(|i| a[i][0] * 3.0 - a[i][1] * 2.0 + a[i][2])
        .collect();
    let mut f = |x: &[f64]| -> Eval {
        let ax: Vec<f64> = a
            .iter()
            .map(|row| row.iter().zip(x).map(|(r, xi)| r * xi).sum())
            .collect();
        let f = 0.5 * ax.iter().zip(x).map(|(p, q)| p * q).sum::<f64>()
            - b.iter().zip(x).map(|(p, q)| p * q).sum::<f64>();
        Ok((f, ax.iter().zip(&b).map(|(p, q)| p - q).collect()))
    };
    let bounds = [(0.0, 2.0), (-1.0, 1.0), FREE];
    let r = run(&mut f, &[1.0, 0.0, 0.0], &bounds);
    assert!(r.converged, "{}", r.message);
    assert_eq!((r.x[0], r.x[1]), (2.0, -1.0));
    // With x0 = 2 and x1 = −1 fixed, x2 solves row 2 of Ax = b.
    let x2 = (b[2] - a[2][0] * 2.0 + a[2][1]) / a[2][2];
    assert_abs_diff_eq!(r.x[2], x2, epsilon = 1e-5);
    assert!(
        r.grad[0] < 0.0 && r.grad[1] > 0.0,
        "multipliers have the wrong sign: {:?}",
        r.grad
    );
}

#[test]
fn infinite_bounds_behave_as_unconstrained_and_inactive_bounds_change_nothing() {
    let free = run(&mut rosenbrock, &rosenbrock_start(4), &[FREE; 4]);
    let half = [
        (f64::NEG_INFINITY, 50.0),
        (-50.0, f64::INFINITY),
        (-50.0, 50.0),
        FREE,
    ];
    let boxed = run(&mut rosenbrock, &rosenbrock_start(4), &half);
    assert_eq!(free, boxed);
    assert!(max_abs_diff(&free.x, &[1.0; 4]) < 1e-5);
}

#[test]
fn start_outside_the_box_is_projected() {
    let mut first = None;
    let mut quadratic = diagonal_quadratic(&[1.0, 1.0], &[0.5, 2.0]);
    let mut f = |x: &[f64]| {
        first.get_or_insert_with(|| x.to_vec());
        quadratic(x)
    };
    let r = run(&mut f, &[5.0, -5.0], &[(0.0, 1.0), (0.0, 1.0)]);
    assert_eq!(first.unwrap(), vec![1.0, 0.0]);
    assert!(r.converged);
    assert!((r.x[0] - 0.5).abs() < 1e-6 && r.x[1] == 1.0, "{:?}", r.x);
}

/// ln cosh(3(x₀ − 1.9)) + (x₁ − 1)²: nearly linear far from the minimum, so the secant curvature
/// is small there and quasi-Newton steps overshoot into the failing region x₀ > 2.
fn walled(failure: fn() -> Eval, failures: &mut usize) -> impl FnMut(&[f64]) -> Eval + '_ {
    move |x: &[f64]| {
        if x[0] > 2.0 {
            *failures += 1;
            return failure();
        }
        let u = 3.0 * (x[0] - 1.9);
        Ok((
            (u.cosh()).ln() + (x[1] - 1.0).powi(2),
            vec![3.0 * u.tanh(), 2.0 * (x[1] - 1.0)],
        ))
    }
}

#[test]
fn failing_region_is_backed_off_from_and_the_minimum_found() {
    let failures: [fn() -> Eval; 3] = [
        || Err("cholesky failed".into()),
        || Ok((f64::NAN, vec![0.0, 0.0])),
        || Ok((f64::INFINITY, vec![0.0, 0.0])),
    ];
    for failure in failures {
        let mut count = 0;
        let r = run(&mut walled(failure, &mut count), &[-6.0, 3.0], &[FREE; 2]);
        println!(
            "walled: {} evals ({count} failed), {}",
            r.n_evals, r.message
        );
        assert!(count > 0, "the test never reached the failing region");
        assert!(r.converged, "{}", r.message);
        assert!(max_abs_diff(&r.x, &[1.9, 1.0]) < 1e-5, "{:?}", r.x);
    }
}

/// (x₀ − 3)² + (x₁ − 1)², failing for x₀ > 2: the unconstrained minimum (3, 1) is infeasible.
fn beyond_wall(failures: &mut usize) -> impl FnMut(&[f64]) -> Eval + '_ {
    move |x: &[f64]| {
        if x[0] > 2.0 {
            *failures += 1;
            return Err("infeasible".into());
        }
        Ok((
            (x[0] - 3.0).powi(2) + (x[1] - 1.0).powi(2),
            vec![2.0 * (x[0] - 3.0), 2.0 * (x[1] - 1.0)],
        ))
    }
}

#[test]
fn minimum_beyond_a_wall_ends_at_the_best_feasible_point() {
    // Approaching along the wall's normal, the best feasible point (2, 1) is reachable.
    let mut failures = 0;
    let r = run(&mut beyond_wall(&mut failures), &[0.0, 1.0], &[FREE; 2]);
    println!(
        "wall (normal): {} evals ({failures} failed), {:?}, {}",
        r.n_evals, r.x, r.message
    );
    assert!(failures > 0);
    assert!(
        r.x[0] <= 2.0 && r.x[0] > 2.0 - 1e-6 && r.x[1] == 1.0,
        "{:?}",
        r.x
    );
    // It is the best feasible point but not a minimiser of f, and the result must say so.
    assert_eq!(
        (r.reason, r.converged),
        (StopReason::FailureBoundary, false)
    );
    assert!(r.n_evals <= 60);
}

#[test]
fn stalling_against_an_oblique_wall_is_not_reported_as_convergence() {
    // Approaching obliquely, every descent direction points into the wall, so the run stalls on
    // it short of (2, 1); it must keep its best point and not claim convergence.
    let mut failures = 0;
    let r = run(&mut beyond_wall(&mut failures), &[0.0, 0.0], &[FREE; 2]);
    println!(
        "wall (oblique): {} evals ({failures} failed), {:?}, {}",
        r.n_evals, r.x, r.message
    );
    assert!(r.x[0] <= 2.0 && r.x[0] > 2.0 - 1e-6, "{:?}", r.x);
    assert!(r.f < 10.0);
    assert_eq!(
        (r.reason, r.converged),
        (StopReason::FailureBoundary, false)
    );
}

#[test]
fn failing_start_is_an_error() {
    let mut err = |_: &[f64]| -> Eval { Err("singular".into()) };
    let e = minimize_lbfgsb(&mut err, &[1.0], &[FREE], &LbfgsOptions::default());
    assert_eq!(e, Err(OptimError::StartFailed("singular".into())));
    let mut nan = |_: &[f64]| -> Eval { Ok((f64::NAN, vec![0.0])) };
    let e = minimize_lbfgsb(&mut nan, &[1.0], &[FREE], &LbfgsOptions::default());
    assert!(matches!(e, Err(OptimError::StartFailed(_))));
    let e = minimize_adam(&mut nan, &[1.0], &[FREE], &AdamOptions::default());
    assert!(matches!(e, Err(OptimError::StartFailed(_))));
}

#[test]
fn invalid_inputs_are_errors() {
    let opts = LbfgsOptions::default();
    let mut f = diagonal_quadratic(&[1.0, 1.0], &[0.0, 0.0]);
    let mut check = |x0: &[f64], bounds: &[(f64, f64)], opts: &LbfgsOptions| {
        minimize_lbfgsb(&mut f, x0, bounds, opts).unwrap_err()
    };
    assert_eq!(
        check(&[0.0, 0.0], &[FREE], &opts),
        OptimError::DimensionMismatch { x0: 2, bounds: 1 }
    );
    assert!(matches!(
        check(&[0.0, 0.0], &[FREE, (1.0, 0.0)], &opts),
        OptimError::InvalidBound { index: 1, .. }
    ));
    assert!(matches!(
        check(&[0.0, 0.0], &[(f64::NAN, 1.0), FREE], &opts),
        OptimError::InvalidBound { index: 0, .. }
    ));
    assert!(matches!(
        check(&[0.0, f64::NAN], &[FREE; 2], &opts),
        OptimError::NonFiniteStart { index: 1, .. }
    ));
    assert!(matches!(
        check(&[f64::INFINITY, 0.0], &[FREE; 2], &opts),
        OptimError::NonFiniteStart { index: 0, .. }
    ));
    for bad in [
        LbfgsOptions {
            memory: 0,
            ..opts.clone()
        },
        LbfgsOptions {
            max_evals: 0,
            ..opts.clone()
        },
        LbfgsOptions {
            grad_tol: f64::NAN,
            ..opts.clone()
        },
        LbfgsOptions {
            f_rel_tol: -1.0,
            ..opts.clone()
        },
    ] {
        assert!(matches!(
            check(&[0.0, 0.0], &[FREE; 2], &bad),
            OptimError::InvalidOptions(_)
        ));
    }
    let bad_adam = AdamOptions {
        beta2: 1.0,
        ..AdamOptions::default()
    };
    let e = minimize_adam(
        &mut diagonal_quadratic(&[1.0], &[0.0]),
        &[0.0],
        &[FREE],
        &bad_adam,
    );
    assert!(matches!(e, Err(OptimError::InvalidOptions(_))));
    let mut short_gradient = |_: &[f64]| -> Eval { Ok((0.0, vec![1.0])) };
    let e = minimize_lbfgsb(&mut short_gradient, &[0.0, 0.0], &[FREE; 2], &opts);
    assert_eq!(
        e,
        Err(OptimError::GradientLength {
            expected: 2,
            got: 1
        })
    );
}

#[test]
fn result_is_never_worse_than_the_start() {
    let x0 = rosenbrock_start(4);
    let f0 = rosenbrock(&x0).unwrap().0;
    for max_evals in 1..30 {
        let opts = LbfgsOptions {
            max_evals,
            ..LbfgsOptions::default()
        };
        let r = minimize_lbfgsb(&mut rosenbrock, &x0, &[FREE; 4], &opts).unwrap();
        assert!(r.f <= f0 && r.n_evals <= max_evals);
        assert_eq!(r.f, rosenbrock(&r.x).unwrap().0);
        assert!(!r.converged && r.reason == StopReason::MaxEvaluations);
    }
    let opts = LbfgsOptions {
        max_iter: 3,
        ..LbfgsOptions::default()
    };
    let r = minimize_lbfgsb(&mut rosenbrock, &x0, &[FREE; 4], &opts).unwrap();
    assert_eq!(
        (r.n_iter, r.reason, r.converged),
        (3, StopReason::MaxIterations, false)
    );
    assert!(r.f < f0);
}

#[test]
fn noisy_objective_stops_with_its_best_point() {
    // Rounding noise far above machine precision: once it dominates the decrease no step can
    // satisfy sufficient decrease, and the run must stop gracefully with the best point.
    let mut f = |x: &[f64]| -> Eval {
        let (f, g) = rosenbrock(x)?;
        let noise = 1e-6 * ((x[0] * 1e7).sin() + (x[1] * 1e7).cos());
        Ok((f + noise, g))
    };
    let opts = LbfgsOptions {
        grad_tol: 0.0,
        f_rel_tol: 0.0,
        ..LbfgsOptions::default()
    };
    let r = minimize_lbfgsb(&mut f, &rosenbrock_start(2), &[FREE; 2], &opts).unwrap();
    println!("noisy: {} evals, {}", r.n_evals, r.message);
    assert_eq!(r.reason, StopReason::LineSearchFailed);
    assert!(!r.converged);
    assert!(max_abs_diff(&r.x, &[1.0; 2]) < 1e-2, "{:?}", r.x);
}

/// `95 + Σ wᵢ (xᵢ − cᵢ)²` plus a deterministic "rounding noise" of amplitude 1.5e-7 (1.6e-9
/// relative; the weighted LOO-CV objective of MO-RCGP on Energy carries ~5e-10 near its
/// optimum) that the exact gradient does not see.
fn noisy_offset_quadratic(x: &[f64]) -> Eval {
    let (w, c) = NOISY_QUADRATIC;
    let r: Vec<f64> = x.iter().zip(&c).map(|(xi, ci)| xi - ci).collect();
    let smooth: f64 = r.iter().zip(&w).map(|(ri, wi)| wi * ri * ri).sum();
    let phase: f64 = x
        .iter()
        .enumerate()
        .map(|(i, xi)| (i + 1) as f64 * xi)
        .sum();
    let noise = 1.5e-7 * (1e9 * phase).sin();
    let g = r.iter().zip(&w).map(|(ri, wi)| 2.0 * wi * ri).collect();
    Ok((95.0 + smooth + noise, g))
}

/// Weights and centre of [`noisy_offset_quadratic`].
const NOISY_QUADRATIC: ([f64; 5], [f64; 5]) =
    ([1.0, 30.0, 0.2, 5.0, 300.0], [0.4, 2.6, 2.0, 0.55, -3.7]);

#[test]
fn rounding_noise_near_the_tolerance_ends_the_run_when_no_step_can_gain_more() {
    // The relative-decrease tolerance (2.1e-7 here) is about the noise, so line searches near
    // the optimum fail on noise. Before the search reported a flat bracket, this run spent 11
    // more evaluations (40) shrinking steps, clearing its memory and searching again from
    // steepest descent until a noise "decrease" ended it.
    let start = [-1.5, -0.6, 0.3, 1.2, -1.2];
    let r = run(&mut noisy_offset_quadratic, &start, &[FREE; 5]);
    println!("noisy quadratic: {} evals, {}", r.n_evals, r.message);
    assert_eq!(r.reason, StopReason::PredictedDecrease, "{}", r.message);
    assert!(r.converged);
    assert!(r.n_evals <= 30, "{} evaluations", r.n_evals);
    let (w, c) = NOISY_QUADRATIC;
    let excess: f64 = (r.x.iter().zip(&c).zip(&w))
        .map(|((x, c), w)| w * (x - c) * (x - c))
        .sum();
    assert!(excess < 1e-6, "{excess:e} above the minimum");
}

#[test]
fn struct_objectives_and_fixed_variables_work() {
    struct Shifted<'a> {
        calls: &'a mut usize,
    }
    impl Objective for Shifted<'_> {
        fn eval(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), String> {
            *self.calls += 1;
            Ok((
                (x[0] - 2.0).powi(2) + x[1].powi(2),
                vec![2.0 * (x[0] - 2.0), 2.0 * x[1]],
            ))
        }
    }
    let mut calls = 0;
    let obj = Shifted { calls: &mut calls };
    let r = minimize_lbfgsb(
        obj,
        &[0.0, 0.0],
        &[FREE, (0.7, 0.7)],
        &LbfgsOptions::default(),
    )
    .unwrap();
    assert_eq!(r.x[1], 0.7);
    assert!((r.x[0] - 2.0).abs() < 1e-6);
    assert_eq!(calls, r.n_evals);
    let empty = minimize_lbfgsb(
        &mut |_: &[f64]| -> Eval { Ok((1.0, vec![])) },
        &[],
        &[],
        &LbfgsOptions::default(),
    )
    .unwrap();
    assert_eq!((empty.n_evals, empty.converged), (1, true));
}

#[test]
fn adam_reaches_the_optimum_of_a_quadratic() {
    let c = [0.8, -1.5, 2.5];
    let opts = AdamOptions {
        max_iter: 5000,
        ..AdamOptions::default()
    };
    let r = minimize_adam(
        &mut diagonal_quadratic(&[1.0, 4.0, 0.5], &c),
        &[0.0; 3],
        &[FREE; 3],
        &opts,
    )
    .unwrap();
    println!("adam: {} iters, {}", r.n_iter, r.message);
    assert!(r.converged, "{}", r.message);
    assert!(max_abs_diff(&r.x, &c) < 1e-3, "{:?}", r.x);
    // With a bound cutting off the optimum, the projection holds the coordinate on it.
    let bounds = [(0.0, 0.5), FREE, FREE];
    let r = minimize_adam(
        &mut diagonal_quadratic(&[1.0, 4.0, 0.5], &c),
        &[0.0; 3],
        &bounds,
        &opts,
    )
    .unwrap();
    assert_eq!(r.x[0], 0.5);
    assert!(max_abs_diff(&r.x[1..], &c[1..]) < 1e-3, "{:?}", r.x);
}

#[test]
fn adam_backs_off_from_failures() {
    let mut failures = 0;
    let mut f = |x: &[f64]| -> Eval {
        if x[0] > 1.0 {
            failures += 1;
            return Err("infeasible".into());
        }
        Ok(((x[0] - 1.0).powi(2), vec![2.0 * (x[0] - 1.0)]))
    };
    let opts = AdamOptions {
        lr: 0.1,
        max_iter: 3000,
        ..AdamOptions::default()
    };
    let r = minimize_adam(&mut f, &[0.0], &[FREE], &opts).unwrap();
    assert!(failures > 0);
    assert!(
        r.x[0] <= 1.0 && (r.x[0] - 1.0).abs() < 1e-2,
        "{:?} {}",
        r.x,
        r.message
    );
}

#[test]
fn bounded_rosenbrock_matches_scipy() {
    // Reference values from SciPy's L-BFGS-B with default settings (30 evaluations).
    let r = run(&mut rosenbrock, &[-1.2, 1.0], &[(-2.0, 0.5), (-2.0, 2.0)]);
    println!("bounded rosenbrock 2-D: {} evals, {}", r.n_evals, r.message);
    assert!(r.converged, "{}", r.message);
    assert_eq!(r.x[0], 0.5);
    assert_abs_diff_eq!(r.x[1], 0.25, epsilon = 1e-6);
    assert!(r.n_evals <= 35, "{} evaluations", r.n_evals);
    // Every third variable bounded to [0, 0.5]; SciPy: f = 7.594812948953572 in 21 evaluations.
    let bounds: Vec<(f64, f64)> = (0..10)
        .map(|i| if i % 3 == 0 { (0.0, 0.5) } else { FREE })
        .collect();
    let r = run(&mut rosenbrock, &rosenbrock_start(10), &bounds);
    println!(
        "bounded rosenbrock 10-D: {} evals, {}",
        r.n_evals, r.message
    );
    assert!(r.converged, "{}", r.message);
    assert_abs_diff_eq!(r.f, 7.594812948953572, epsilon = 1e-6);
    assert!(r.n_evals <= 30, "{} evaluations", r.n_evals);
}

/// Rosenbrock as least squares, `f = r₁² + r₂²` with `r₁ = 10(x₂ − x₁²)`, `r₂ = 1 − x₁`,
/// returning its Gauss–Newton matrix `2JᵀJ` when asked.
fn rosenbrock_with_gauss_newton(x: &[f64], want: bool) -> Result<CurvedEvaluation, String> {
    let (f, g) = rosenbrock(x)?;
    let jac = [[-20.0 * x[0], 10.0], [-1.0, 0.0]];
    let curvature = want.then(|| {
        faer::Mat::from_fn(2, 2, |a, b| {
            2.0 * (jac[0][a] * jac[0][b] + jac[1][a] * jac[1][b])
        })
    });
    Ok((f, g, curvature))
}

#[test]
fn gauss_newton_starts_converge_in_fewer_evaluations_and_plain_objectives_are_unaffected() {
    let start = rosenbrock_start(2);
    let without = LbfgsOptions {
        curvature_iterations: 0,
        ..LbfgsOptions::default()
    };
    let plain = minimize_lbfgsb(
        WithCurvature(rosenbrock_with_gauss_newton),
        &start,
        &[FREE; 2],
        &without,
    )
    .unwrap();
    // Gauss–Newton on every iteration (each restarts the model).
    let opts = LbfgsOptions {
        curvature_iterations: usize::MAX,
        ..LbfgsOptions::default()
    };
    let started = minimize_lbfgsb(
        WithCurvature(rosenbrock_with_gauss_newton),
        &start,
        &[FREE; 2],
        &opts,
    )
    .unwrap();
    // Rosenbrock's residuals vanish at the minimum, where Gauss–Newton is Newton.
    assert!(started.converged, "{}", started.message);
    assert!(
        max_abs_diff(&started.x, &[1.0; 2]) < 1e-5,
        "{:?}",
        started.x
    );
    // 31 against 45 evaluations.
    assert!(
        started.n_evals * 4 < plain.n_evals * 3,
        "{} with Gauss–Newton starts vs {} without",
        started.n_evals,
        plain.n_evals
    );
    // An objective without curvature runs exactly as before when asked for some.
    let closure = minimize_lbfgsb(&mut rosenbrock, &start, &[FREE; 2], &opts).unwrap();
    assert_eq!(closure.n_evals, plain.n_evals);
    assert_eq!(closure.x, plain.x);
}

/// Rosenbrock that sets `stop` at its `stop_at`-th evaluation, which fails, and fails at every
/// later one (as a profiled objective does once its scale has left the bounds); counts the
/// evaluations and keeps the best value returned.
fn stopping_rosenbrock<'a>(
    stop_at: usize,
    stop: &'a std::sync::atomic::AtomicBool,
    calls: &'a mut usize,
    best: &'a mut f64,
) -> impl FnMut(&[f64]) -> Eval + 'a {
    move |x| {
        *calls += 1;
        if *calls >= stop_at {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            return Err("left the problem".into());
        }
        let value = rosenbrock(x)?;
        *best = best.min(value.0);
        Ok(value)
    }
}

#[test]
fn a_stop_request_ends_the_run_after_the_evaluation_that_made_it() {
    use std::sync::atomic::AtomicBool;
    let x0 = rosenbrock_start(4);
    for stop_at in 2..40 {
        let (stop, mut calls, mut best) = (AtomicBool::new(false), 0, f64::INFINITY);
        let f = stopping_rosenbrock(stop_at, &stop, &mut calls, &mut best);
        let r = minimize_lbfgsb(
            StopWhen(f, &stop),
            &x0,
            &[FREE; 4],
            &LbfgsOptions::default(),
        )
        .unwrap();
        assert_eq!((calls, r.n_evals), (stop_at, stop_at));
        assert_eq!((r.reason, r.converged), (StopReason::Requested, false));
        assert_eq!(r.message, "stopped at the objective's request");
        // The best point evaluated before the request, with its own value.
        assert_eq!(r.f, best);
        assert_eq!(r.f, rosenbrock(&r.x).unwrap().0);
        // Adam too.
        let (stop, mut calls, mut best) = (AtomicBool::new(false), 0, f64::INFINITY);
        let f = stopping_rosenbrock(stop_at, &stop, &mut calls, &mut best);
        let opts = AdamOptions {
            lr: 0.01,
            ..AdamOptions::default()
        };
        let r = minimize_adam(StopWhen(f, &stop), &x0, &[FREE; 4], &opts).unwrap();
        assert_eq!((calls, r.n_evals), (stop_at, stop_at));
        assert_eq!((r.reason, r.converged), (StopReason::Requested, false));
        assert_eq!(r.f, rosenbrock(&r.x).unwrap().0);
    }
    // A flag never set changes nothing.
    let never = AtomicBool::new(false);
    let plain = run(&mut rosenbrock, &x0, &[FREE; 4]);
    let wrapped = run(StopWhen(&mut rosenbrock, &never), &x0, &[FREE; 4]);
    assert_eq!(
        (plain.x, plain.n_evals, plain.reason),
        (wrapped.x, wrapped.n_evals, wrapped.reason)
    );
}
