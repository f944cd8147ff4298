//! The pilot fit: on many rows, fit a seeded subset first and start the full fit from its
//! optimum.
//!
//! An evaluation of an exact GP's or a Laplace classifier's evidence costs `O(n³)`, and most of
//! an L-BFGS run's evaluations are spent far from the optimum, finding the scale of the
//! hyperparameters. A subset of `m` rows has nearly the same optimum (length-scales and noise
//! are properties of the function, not of `n`) at `(m/n)³` of the cost per evaluation, so the
//! full fit, started there, needs only the last few steps. It still converges on every row
//! with the same rule, so its optimum is the full objective's (a test checks that the piloted
//! and unpiloted fits agree). Restarts are spent on the pilot, where they are cheap; a pilot
//! that fails (a subset with one class, say) is skipped, never an error.
//!
//! The pilot also hands the full fit its curvature ([`curvature`]): the evidence's Hessian on
//! `n` rows has nearly the shape of the one on `m` rows, and a size that the full fit's first
//! step measures (see [`curvature_scale`]). Started from that matrix instead of a multiple of
//! the identity, the full fit's quasi-Newton model begins close to Newton's and needs fewer
//! steps (exact GP at n = 2000, d = 4: 8 full-size evaluations instead of 18; binary Laplace
//! GPC: 7 instead of 13); the optimum and the stopping rule are unchanged, only the path to
//! it is shorter.

use faer::{Mat, MatRef, Side};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::restarts::Evaluation;
use super::{FitOptions, FitReport};

/// Why the pilot seed differs from the restarts' seed: the two draws must not be correlated.
const PILOT_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// The pilot's rows (ascending) for `n` rows under `opts`, or `None` when no pilot is wanted
/// (`opts.pilot_rows` is 0, or `n ≤ 2 · opts.pilot_rows`, or no optimisation is asked for).
pub fn pilot_rows(n: usize, opts: &FitOptions) -> Option<Vec<usize>> {
    let m = opts.pilot_rows;
    if !opts.optimize || m == 0 || n <= 2 * m {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(opts.seed ^ PILOT_STREAM);
    let mut rows = rand::seq::index::sample(&mut rng, n, m).into_vec();
    rows.sort_unstable();
    Some(rows)
}

/// The rows `rows` of `x`.
pub fn select_rows(x: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
}

/// The entries `rows` of `y`.
pub fn select(y: &[f64], rows: &[usize]) -> Vec<f64> {
    rows.iter().map(|&i| y[i]).collect()
}

/// The options of the pilot fit itself (all restarts, no pilot of its own).
pub fn pilot_options(opts: &FitOptions) -> FitOptions {
    FitOptions {
        pilot_rows: 0,
        ..opts.clone()
    }
}

/// The options of the full fit after a pilot (one start, from the pilot's optimum, whose
/// [`curvature`] the optimiser rescales at its first step, see
/// [`LbfgsOptions::rescale_curvature`](crate::optim::LbfgsOptions::rescale_curvature)).
pub fn after_pilot(opts: &FitOptions) -> FitOptions {
    let mut lbfgs = opts.lbfgs.clone();
    lbfgs.rescale_curvature = true;
    FitOptions {
        restarts: 0,
        pilot_rows: 0,
        lbfgs,
        ..opts.clone()
    }
}

/// Step of the forward differences in [`curvature`], in the (log-space) parameters: large
/// enough that the gradients' rounding (~1e-12 relative) stays far below the differences,
/// small enough that the third derivatives' error (~1e-4 relative) does not matter to a
/// starting approximation that the quasi-Newton updates correct anyway.
const CURVATURE_STEP: f64 = 1e-4;

/// Eigenvalues of [`curvature`]'s matrix are raised to at least this fraction of the largest,
/// so that the matrix is positive definite (a direction along which the pilot's evidence is
/// flat, e.g. the length-scale of an irrelevant input, would otherwise get an infinite step).
const CURVATURE_FLOOR: f64 = 1e-8;

/// The factor from the pilot's curvature on `m` rows to the full fit's on `n`: `√(n/m)`.
///
/// The evidence's Hessian grows with the rows, but not always in proportion: rows that the
/// kernel correlates add less information than independent ones (at n = 2000, d = 4 with
/// `const * se`, it grew as about `n^0.34` from 512 rows). `√(n/m)`, the geometric mean of no
/// growth and linear growth, keeps the first step within a factor `√(n/m)` of the right length
/// either way, and the optimiser then rescales the matrix to the curvature it measured along
/// that step ([`LbfgsOptions::rescale_curvature`](crate::optim::LbfgsOptions::rescale_curvature)).
pub fn curvature_scale(n: usize, m: usize) -> f64 {
    (n as f64 / m as f64).sqrt()
}

/// The evaluations [`curvature`] makes for `p` parameters.
pub fn curvature_evaluations(p: usize) -> usize {
    p + 1
}

/// An approximation of the full fit's negated Hessian at the pilot's optimum `v`: `scale`
/// (see [`curvature_scale`]) times the negated Hessian of the
/// pilot's objective (`objective` gives the value and gradient that the fit maximises), by
/// forward differences of the gradient (backward ones at an upper bound of `bounds`),
/// symmetrised and made positive definite (eigenvalues raised to at least 1e-8 of the
/// largest).
///
/// It costs [`curvature_evaluations`] evaluations of the pilot's objective. `None` if one of
/// them fails or the matrix has no positive curvature at all: the full fit then starts as it
/// would without it.
pub fn curvature<F, E>(
    mut objective: F,
    v: &[f64],
    bounds: &[(f64, f64)],
    scale: f64,
) -> Option<Mat<f64>>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>), E>,
{
    let p = v.len();
    let mut gradient = |at: &[f64]| -> Option<Vec<f64>> {
        let (f, g) = objective(at).ok()?;
        (f.is_finite() && g.len() == p && g.iter().all(|gi| gi.is_finite())).then_some(g)
    };
    let g0 = gradient(v)?;
    let mut columns = Mat::<f64>::zeros(p, p);
    for j in 0..p {
        let step = if v[j] + CURVATURE_STEP <= bounds[j].1 {
            CURVATURE_STEP
        } else {
            -CURVATURE_STEP
        };
        let mut at = v.to_vec();
        at[j] += step;
        let gj = gradient(&at)?;
        for i in 0..p {
            // The objective is maximised: its negated Hessian is the curvature wanted.
            columns[(i, j)] = -scale * (gj[i] - g0[i]) / step;
        }
    }
    let sym = Mat::from_fn(p, p, |i, j| 0.5 * (columns[(i, j)] + columns[(j, i)]));
    let eig = sym.self_adjoint_eigen(Side::Lower).ok()?;
    let values: Vec<f64> = (0..p).map(|k| eig.S()[k]).collect();
    let largest = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(largest > 0.0 && largest.is_finite()) {
        return None;
    }
    let floored: Vec<f64> = values
        .iter()
        .map(|&l| l.max(CURVATURE_FLOOR * largest))
        .collect();
    let u = eig.U();
    Some(Mat::from_fn(p, p, |i, j| {
        (0..p).map(|k| u[(i, k)] * floored[k] * u[(j, k)]).sum()
    }))
}

/// `objective` (value and gradient) in the form the fit driver takes, supplying `b0` as its
/// curvature at the start `x0` (where the optimiser asks for it first) and none elsewhere:
/// how the full fit receives the pilot's [`curvature`].
pub(crate) fn curved_at_start<F>(
    objective: F,
    x0: Vec<f64>,
    b0: Option<Mat<f64>>,
) -> impl Fn(&[f64], bool) -> Result<Evaluation, String> + Sync
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), String> + Sync,
{
    move |v, want| {
        let (value, grad) = objective(v)?;
        let at_start = want && v == x0.as_slice();
        Ok((value, grad, b0.clone().filter(|_| at_start)))
    }
}

/// Says in the full fit's reports that it started from a pilot on `m` of `n` rows, and what
/// the pilot cost (its optimiser's evaluations, then `curvature` more at its optimum for the
/// full fit's start: its [`curvature`], a classifier's mode).
pub fn mark_piloted(
    reports: &mut [FitReport],
    pilot: &[FitReport],
    curvature: usize,
    m: usize,
    n: usize,
) {
    let evaluations: usize = pilot.iter().map(|r| r.evaluations).sum();
    let seconds: f64 = pilot.iter().map(|r| r.seconds).sum();
    for r in reports {
        r.message = format!(
            "started at the optimum of a pilot fit on {m} of {n} rows ({} start(s), \
             {evaluations} evaluations, {seconds:.3} s, then {curvature} at its optimum for \
             this start): {}",
            pilot.len(),
            r.message
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::restarts::{maximize, plain};
    use crate::linalg::Parallelism;

    type Eval = Result<(f64, Vec<f64>), String>;

    /// `−½ (v − c)ᵀ A (v − c)` with `A` given by rows, and its gradient.
    fn quadratic(a: [[f64; 3]; 3], v: &[f64]) -> Eval {
        let c = [0.3, -1.0, 2.0];
        let r: Vec<f64> = (0..3).map(|i| v[i] - c[i]).collect();
        let ar: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| a[i][j] * r[j]).sum())
            .collect();
        let f = -0.5 * (0..3).map(|i| r[i] * ar[i]).sum::<f64>();
        Ok((f, ar.iter().map(|g| -g).collect()))
    }

    const SPD: [[f64; 3]; 3] = [[4.0, 1.0, 0.5], [1.0, 3.0, -0.4], [0.5, -0.4, 2.0]];

    #[test]
    fn curvature_is_the_scaled_negated_hessian_of_a_quadratic_also_at_an_upper_bound() {
        let free = [(-10.0, 10.0); 3];
        // The second parameter on its upper bound takes the backward difference.
        let pinned = [(-10.0, 10.0), (-10.0, 0.5), (-10.0, 10.0)];
        for bounds in [free, pinned] {
            let h = curvature(
                |v: &[f64]| quadratic(SPD, v),
                &[1.0, 0.5, -2.0],
                &bounds,
                3.5,
            )
            .unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    assert!(
                        (h[(i, j)] - 3.5 * SPD[i][j]).abs() < 1e-9,
                        "({i}, {j}): {} vs {}",
                        h[(i, j)],
                        3.5 * SPD[i][j]
                    );
                }
            }
        }
        assert_eq!(curvature_evaluations(3), 4);
    }

    #[test]
    fn curvature_is_floored_positive_definite_and_absent_without_any() {
        let bounds = [(-10.0, 10.0); 3];
        let v = [0.0; 3];
        // Flat along the second axis, negative along the third: both are raised to the floor.
        let h = curvature(
            |v: &[f64]| quadratic([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, -1.0]], v),
            &v,
            &bounds,
            1.0,
        )
        .unwrap();
        let expected = [2.0, 2.0 * CURVATURE_FLOOR, 2.0 * CURVATURE_FLOOR];
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { expected[i] } else { 0.0 };
                assert!((h[(i, j)] - want).abs() < 1e-9, "({i}, {j}): {}", h[(i, j)]);
            }
        }
        // A minimum of the maximised objective has no positive curvature at all.
        let neg = SPD.map(|row| row.map(|a| -a));
        assert!(curvature(|v: &[f64]| quadratic(neg, v), &v, &bounds, 1.0).is_none());
        // A failed evaluation gives none.
        let failing = |v: &[f64]| {
            if v[2] > 0.0 {
                Err("no".to_string())
            } else {
                quadratic(SPD, v)
            }
        };
        assert!(curvature(failing, &v, &bounds, 1.0).is_none());
    }

    #[test]
    fn curved_at_start_supplies_the_matrix_only_at_the_start_and_when_asked() {
        let b0 = Mat::from_fn(3, 3, |i, j| SPD[i][j]);
        let f = curved_at_start(
            |v: &[f64]| quadratic(SPD, v),
            vec![1.0; 3],
            Some(b0.clone()),
        );
        let (value, grad, c) = f(&[1.0; 3], true).unwrap();
        assert_eq!((value, grad), quadratic(SPD, &[1.0; 3]).unwrap());
        assert_eq!(c.unwrap(), b0);
        assert!(f(&[1.0; 3], false).unwrap().2.is_none());
        assert!(f(&[1.0, 1.0, 1.5], true).unwrap().2.is_none());
    }

    /// A ridge-penalised logistic regression log-likelihood (a sum over rows, as an evidence
    /// is) on `rows` of a fixed data set of 400 rows with 3 features, and its gradient.
    fn logistic(rows: &[usize], v: &[f64]) -> Eval {
        let (mut f, mut g) = (-0.5 * v.iter().map(|b| b * b).sum::<f64>(), vec![0.0; 3]);
        v.iter().zip(&mut g).for_each(|(b, gi)| *gi = -b);
        for &i in rows {
            let x = [
                1.0,
                ((i * 37) % 101) as f64 / 50.0 - 1.0,
                ((i * 61) % 89) as f64 / 44.0 - 1.0,
            ];
            let label = if (i * 7919) % 13 < 5 + 4 * usize::from(x[1] > 0.0) {
                1.0
            } else {
                -1.0
            };
            let margin = label * (0..3).map(|j| x[j] * v[j]).sum::<f64>();
            // log σ(m) and its derivative σ(−m), both without overflow.
            f -= (-margin).max(0.0) + (-margin.abs()).exp().ln_1p();
            let slope = 1.0 / (1.0 + margin.exp());
            for j in 0..3 {
                g[j] += slope * label * x[j];
            }
        }
        Ok((f, g))
    }

    #[test]
    fn the_pilots_scaled_curvature_shortens_the_full_fit_to_the_same_optimum() {
        let (all, subset): (Vec<usize>, Vec<usize>) =
            ((0..400).collect(), (0..400).step_by(4).collect());
        let bounds = [(-20.0, 20.0); 3];
        let lbfgs = after_pilot(&FitOptions::default()).lbfgs;
        assert!(lbfgs.rescale_curvature);
        let names: Vec<String> = ["b0", "b1", "b2"].map(String::from).to_vec();
        let fit = |rows: &[usize], x0: &[f64], b0: Option<Mat<f64>>| {
            let (v, reports) = maximize(
                curved_at_start(|v: &[f64]| logistic(rows, v), x0.to_vec(), b0),
                x0,
                &bounds,
                &names,
                0,
                0,
                &lbfgs,
                Parallelism::Sequential,
            )
            .unwrap();
            (v, reports[0].evaluations)
        };
        let (pilot, _) = fit(&subset, &[0.0; 3], None);
        let b0 = curvature(
            |v: &[f64]| logistic(&subset, v),
            &pilot,
            &bounds,
            curvature_scale(400, 100),
        );
        let (cold, cold_evals) = fit(&all, &pilot, None);
        let (warm, warm_evals) = fit(&all, &pilot, b0);
        let value = |v: &[f64]| logistic(&all, v).unwrap().0;
        assert!(
            (value(&warm) - value(&cold)).abs() < 1e-9 * value(&cold).abs(),
            "{warm:?} vs {cold:?}"
        );
        assert!(warm_evals < cold_evals, "{warm_evals} vs {cold_evals}");
        // Without the pilot's curvature the driver runs as it always did.
        let (again, _) = maximize(
            plain(|v: &[f64]| logistic(&all, v)),
            &pilot,
            &bounds,
            &names,
            0,
            0,
            &lbfgs,
            Parallelism::Sequential,
        )
        .unwrap();
        assert_eq!(again, cold);
        println!("full fit from the pilot: {cold_evals} evaluations cold, {warm_evals} with its curvature");
    }

    #[test]
    fn pilot_rows_are_seeded_distinct_sorted_and_only_for_large_fits() {
        let opts = FitOptions::default();
        assert_eq!(pilot_rows(2 * opts.pilot_rows, &opts), None);
        let rows = pilot_rows(2000, &opts).unwrap();
        assert_eq!(rows.len(), opts.pilot_rows);
        assert!(rows.windows(2).all(|w| w[0] < w[1]) && *rows.last().unwrap() < 2000);
        assert_eq!(pilot_rows(2000, &opts), Some(rows.clone()));
        let other = FitOptions {
            seed: 1,
            ..opts.clone()
        };
        assert_ne!(pilot_rows(2000, &other), Some(rows));
        for off in [
            FitOptions {
                pilot_rows: 0,
                ..opts.clone()
            },
            FitOptions {
                optimize: false,
                ..opts.clone()
            },
        ] {
            assert_eq!(pilot_rows(100_000, &off), None);
        }
    }
}
