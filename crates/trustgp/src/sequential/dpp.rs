//! Greedy MAP selection from a quality-weighted determinantal point process (DPP-BO, Moss et
//! al. 2023; `rcagp.md` §3.5): the inducing points (or dense actions) of the next model are the
//! candidates that are both good (high quality, e.g. expected improvement) and diverse (far
//! apart under the kernel).
//!
//! The L-ensemble is `L = diag(q) K diag(q)` with `K = k(C, C)` over the candidates `C`. The
//! greedy MAP of `det L_S` adds, at every step, the candidate with the largest residual diagonal
//! of the pivoted Cholesky factorisation of `L`,
//!
//! ```text
//! d_i = q_i² (K_ii − c_iᵀ c_i)   (the residual variance of k given the selected points, × q²),
//! ```
//!
//! because `det L_{S ∪ {i}} = det L_S · d_i`. The step costs one kernel column and O(N |S|), so
//! the selection costs O(N k) kernel evaluations and O(N k²) flops, and `L` is never formed.
//! Selection stops at the requested size, or when no candidate of positive quality is left
//! whose kernel residual variance `K_ii − c_iᵀc_i / q_i²` is above the threshold (`10⁻⁶` in the
//! spec) times its prior variance `K_ii`: the rest of the candidates are then (numerically) in
//! the span of the selected ones, and adding them would make `L_S` singular. The threshold is
//! relative to `K_ii` and leaves `q` out, so it measures the kernel's numerical rank whatever
//! the scales of the kernel and of the qualities: an absolute threshold on `L`'s residual
//! stopped a DPP-BO selection after one pick when the surrogate's kernel variance was 0.035
//! and most expected improvements were small (issue 22, `docs/decisions.md`).

use faer::MatRef;

use crate::kernels::Kernel;

/// The default relative residual variance below which a candidate counts as in the span of
/// the selected ones (`rcagp.md` §3.5).
pub const DPP_RESIDUAL_TOLERANCE: f64 = 1e-6;

/// Invalid input to [`dpp_select`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DppError {
    /// The quality vector does not have one entry per candidate.
    #[error("{found} quality values for {expected} candidates: expected one per candidate row")]
    QualityLength {
        /// Number of candidate rows.
        expected: usize,
        /// Number of quality values given.
        found: usize,
    },
    /// A quality value is negative or not finite.
    #[error("quality of candidate {index} is {value}: expected a finite value ≥ 0")]
    BadQuality {
        /// The candidate (row) index.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A candidate input is not finite.
    #[error("candidate {row}, input {column} is {value}: expected a finite number")]
    BadCandidate {
        /// The candidate (row) index.
        row: usize,
        /// The input (column) index.
        column: usize,
        /// The value given.
        value: f64,
    },
    /// The stopping threshold is negative or not finite.
    #[error("residual tolerance is {0}: expected a finite value ≥ 0")]
    BadTolerance(f64),
    /// The kernel does not accept the candidates' number of columns.
    #[error("kernel: {0}")]
    Kernel(String),
}

/// The greedy selection: the chosen candidate rows in the order they were picked, and the
/// residual `d_i` of each at the moment it was picked (non-increasing, the factor's squared
/// diagonal; their logs sum to `log det L_S`).
#[derive(Clone, Debug, PartialEq)]
pub struct DppSelection {
    /// Indices of the selected candidate rows, in order of selection.
    pub indices: Vec<usize>,
    /// The residual `q_i² (K_ii − c_iᵀc_i)` of each selected row when it was picked.
    pub residuals: Vec<f64>,
}

impl DppSelection {
    /// `log det L_S` of the selected set (the sum of the log residuals).
    pub fn log_det(&self) -> f64 {
        self.residuals.iter().map(|r| r.ln()).sum()
    }
}

/// Greedy MAP of the DPP with L-ensemble `diag(q) k(C, C) diag(q)` over the rows of
/// `candidates`: at most `size` rows, fewer when every remaining candidate of positive quality
/// has a kernel residual variance below `tolerance` times its prior variance (use
/// [`DPP_RESIDUAL_TOLERANCE`]). Ties go to the lowest index, so the result is deterministic; a
/// candidate of quality 0 is never selected. The picks do not change when every quality, or
/// the kernel, is multiplied by a positive constant.
///
/// # Errors
/// Quality values that are not one finite non-negative number per candidate, a non-finite
/// candidate, a bad tolerance, or a kernel that does not fit the candidates' columns.
pub fn dpp_select(
    candidates: MatRef<'_, f64>,
    kernel: &Kernel,
    quality: &[f64],
    size: usize,
    tolerance: f64,
) -> Result<DppSelection, DppError> {
    let n = candidates.nrows();
    if quality.len() != n {
        return Err(DppError::QualityLength {
            expected: n,
            found: quality.len(),
        });
    }
    if let Some((index, &value)) =
        (quality.iter().enumerate()).find(|(_, q)| !(**q >= 0.0 && q.is_finite()))
    {
        return Err(DppError::BadQuality { index, value });
    }
    for row in 0..n {
        for column in 0..candidates.ncols() {
            let value = candidates[(row, column)];
            if !value.is_finite() {
                return Err(DppError::BadCandidate { row, column, value });
            }
        }
    }
    if !(tolerance >= 0.0 && tolerance.is_finite()) {
        return Err(DppError::BadTolerance(tolerance));
    }
    if !kernel.is_initialized() {
        return Err(DppError::Kernel(format!(
            "'{kernel}' has lengthscales without values: give them, or initialise the kernel \
             from data first"
        )));
    }
    kernel
        .validate(candidates.ncols())
        .map_err(|e| DppError::Kernel(e.to_string()))?;

    let size = size.min(n);
    // residual[i] = q_i² (K_ii − Σ_k c_k[i]²); factor[k] is column k of the pivoted Cholesky
    // factor of L (zero at the rows already selected).
    let prior = kernel.diag(candidates);
    let mut residual: Vec<f64> = (prior.iter().zip(quality))
        .map(|(k, q)| q * q * k)
        .collect();
    // A candidate can be picked while its residual, divided by q², is above `tolerance` times
    // its prior variance (the comparison is written without the division, as q may be tiny).
    let floor: Vec<f64> = (prior.iter().zip(quality))
        .map(|(k, q)| tolerance * q * q * k)
        .collect();
    let mut factor: Vec<Vec<f64>> = Vec::with_capacity(size);
    let mut out = DppSelection {
        indices: Vec::with_capacity(size),
        residuals: Vec::with_capacity(size),
    };
    let mut taken = vec![false; n];
    while out.indices.len() < size {
        let Some((pick, best)) = (0..n)
            .filter(|&i| !taken[i] && residual[i] > floor[i] && residual[i] > 0.0)
            .map(|i| (i, residual[i]))
            .fold(None, |acc: Option<(usize, f64)>, (i, r)| match acc {
                Some((_, b)) if b >= r => acc,
                _ => Some((i, r)),
            })
        else {
            break;
        };
        taken[pick] = true;
        out.indices.push(pick);
        out.residuals.push(best);
        // Column `pick` of L minus the part the earlier factor columns explain, scaled by
        // 1/√d_pick, is the next factor column.
        let k_col = kernel.cross(candidates, candidates.subrows(pick, 1));
        let scale = 1.0 / best.sqrt();
        let col: Vec<f64> = (0..n)
            .map(|i| {
                if taken[i] {
                    return 0.0;
                }
                let explained: f64 = factor.iter().map(|c| c[i] * c[pick]).sum();
                (quality[i] * quality[pick] * k_col[(i, 0)] - explained) * scale
            })
            .collect();
        for i in 0..n {
            // Round-off can leave a tiny negative residual for a row in the span of the
            // selected ones; it is then simply never picked.
            residual[i] -= col[i] * col[i];
        }
        factor.push(col);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;
    use crate::linalg::{Cholesky, Parallelism};

    fn kernel() -> Kernel {
        Kernel::parse("const(1.3) * se(ls=0.7)").unwrap()
    }

    fn candidates(n: usize, d: usize) -> Mat<f64> {
        // A fixed scatter with no two rows alike.
        Mat::from_fn(n, d, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin() * 1.5)
    }

    /// `log det` of `diag(q) K diag(q)` restricted to `rows`, by a dense Cholesky.
    fn log_det_l(c: MatRef<'_, f64>, q: &[f64], rows: &[usize]) -> f64 {
        let k = kernel().matrix(c);
        let sub = Mat::from_fn(rows.len(), rows.len(), |a, b| {
            q[rows[a]] * k[(rows[a], rows[b])] * q[rows[b]]
        });
        Cholesky::exact(sub, Parallelism::Sequential).map_or(f64::NEG_INFINITY, |l| l.log_det())
    }

    #[test]
    fn every_greedy_pick_maximises_the_log_det_of_the_selected_submatrix() {
        let c = candidates(12, 2);
        let q: Vec<f64> = (0..12)
            .map(|i| 0.2 + (i as f64 * 0.9).cos().abs())
            .collect();
        let sel = dpp_select(c.as_ref(), &kernel(), &q, 6, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert_eq!(sel.indices.len(), 6);
        for step in 0..6 {
            let before = &sel.indices[..step];
            // Brute force: the candidate whose addition gives the largest determinant.
            let (best, best_val) = (0..12)
                .filter(|i| !before.contains(i))
                .map(|i| {
                    let mut rows = before.to_vec();
                    rows.push(i);
                    (i, log_det_l(c.as_ref(), &q, &rows))
                })
                .fold((usize::MAX, f64::NEG_INFINITY), |a, b| {
                    if b.1 > a.1 {
                        b
                    } else {
                        a
                    }
                });
            assert_eq!(sel.indices[step], best, "step {step}");
            let picked = log_det_l(c.as_ref(), &q, &sel.indices[..=step]);
            assert!((picked - best_val).abs() < 1e-10);
        }
        let dense = log_det_l(c.as_ref(), &q, &sel.indices);
        assert!((sel.log_det() - dense).abs() < 1e-10 * dense.abs().max(1.0));
    }

    #[test]
    fn unit_quality_is_plain_pivoted_cholesky_of_the_kernel_matrix() {
        let c = candidates(10, 3);
        let k = kernel().matrix(c.as_ref());
        let sel = dpp_select(c.as_ref(), &kernel(), &[1.0; 10], 10, 0.0).unwrap();
        // Textbook pivoted Cholesky on the dense K: pivot on the largest remaining diagonal of
        // the Schur complement.
        let mut s = k.clone();
        let mut remaining: Vec<usize> = (0..10).collect();
        for (step, &pick) in sel.indices.iter().enumerate() {
            // The first of equal diagonals (a stationary kernel ties them all at step 0).
            let best = remaining.iter().copied().fold(remaining[0], |a, b| {
                if s[(b, b)] > s[(a, a)] {
                    b
                } else {
                    a
                }
            });
            assert_eq!(pick, best, "step {step}");
            assert!((sel.residuals[step] - s[(best, best)]).abs() < 1e-12);
            let piv = s[(best, best)];
            let col: Vec<f64> = (0..10).map(|i| s[(i, best)]).collect();
            for i in 0..10 {
                for j in 0..10 {
                    s[(i, j)] -= col[i] * col[j] / piv;
                }
            }
            remaining.retain(|&r| r != best);
        }
        assert!(sel.residuals.windows(2).all(|w| w[1] <= w[0] + 1e-15));
    }

    #[test]
    fn selection_stops_at_the_size_or_when_the_residual_is_below_tolerance() {
        // Three distinct points, each repeated: after three picks every residual is 0.
        let base = candidates(3, 2);
        let c = Mat::from_fn(9, 2, |i, j| base[(i % 3, j)]);
        let sel = dpp_select(c.as_ref(), &kernel(), &[1.0; 9], 9, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert_eq!(sel.indices.len(), 3);
        let mut picked: Vec<usize> = sel.indices.iter().map(|i| i % 3).collect();
        picked.sort_unstable();
        assert_eq!(picked, vec![0, 1, 2]);
        // The size bound binds first.
        let two = dpp_select(c.as_ref(), &kernel(), &[1.0; 9], 2, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert_eq!(two.indices, sel.indices[..2]);
        // A tolerance just above the third residual (relative to K_ii = 1.3) stops after two.
        let tol = sel.residuals[2] / 1.3 * (1.0 + 1e-9);
        let early = dpp_select(c.as_ref(), &kernel(), &[1.0; 9], 9, tol).unwrap();
        assert_eq!(early.indices, sel.indices[..2]);
        // Zero quality is never selected.
        let mut q = vec![1.0; 9];
        q[sel.indices[0]] = 0.0;
        let zeroed = dpp_select(c.as_ref(), &kernel(), &q, 9, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert!(!zeroed.indices.contains(&sel.indices[0]));
    }

    #[test]
    fn the_picks_and_the_stopping_rule_ignore_the_scales_of_the_kernel_and_of_the_quality() {
        // Issue 22: an absolute threshold on L's residual stopped a DPP-BO selection after one
        // pick for a kernel of variance 0.035 and small qualities. Scaling the kernel by 1e-4
        // and the qualities by 1e-3 must change neither the picks nor their number.
        let c = candidates(20, 2);
        let q: Vec<f64> = (0..20)
            .map(|i| 0.2 + (i as f64 * 0.9).cos().abs())
            .collect();
        let base = dpp_select(c.as_ref(), &kernel(), &q, 12, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert_eq!(base.indices.len(), 12);
        let small_kernel = Kernel::parse("const(1.3e-4) * se(ls=0.7)").unwrap();
        let small_q: Vec<f64> = q.iter().map(|v| v * 1e-3).collect();
        let scaled = dpp_select(
            c.as_ref(),
            &small_kernel,
            &small_q,
            12,
            DPP_RESIDUAL_TOLERANCE,
        )
        .unwrap();
        assert_eq!(scaled.indices, base.indices);
        for (a, b) in scaled.residuals.iter().zip(&base.residuals) {
            assert!((a / (b * 1e-10) - 1.0).abs() < 1e-9, "{a} vs {b}");
        }
    }

    #[test]
    fn quality_favours_good_candidates_among_equally_diverse_ones() {
        // Far-apart points (kernel ≈ 0 between them): the order is that of q² K_ii.
        let c = Mat::from_fn(4, 1, |i, _| i as f64 * 50.0);
        let q = [0.5, 3.0, 1.0, 2.0];
        let sel = dpp_select(c.as_ref(), &kernel(), &q, 4, DPP_RESIDUAL_TOLERANCE).unwrap();
        assert_eq!(sel.indices, vec![1, 3, 2, 0]);
        for (i, r) in sel.indices.iter().zip(&sel.residuals) {
            assert!((r - q[*i] * q[*i] * 1.3).abs() < 1e-12);
        }
    }

    #[test]
    fn bad_inputs_are_errors_that_name_the_problem() {
        let c = candidates(4, 2);
        let k = kernel();
        let e = dpp_select(c.as_ref(), &k, &[1.0; 3], 2, 1e-6).unwrap_err();
        assert_eq!(
            e,
            DppError::QualityLength {
                expected: 4,
                found: 3
            }
        );
        let e = dpp_select(c.as_ref(), &k, &[1.0, -1.0, 1.0, 1.0], 2, 1e-6).unwrap_err();
        assert!(e.to_string().contains("candidate 1"), "{e}");
        let e = dpp_select(c.as_ref(), &k, &[1.0, f64::NAN, 1.0, 1.0], 2, 1e-6).unwrap_err();
        assert!(matches!(e, DppError::BadQuality { index: 1, .. }));
        let mut bad = c.clone();
        bad[(2, 1)] = f64::INFINITY;
        let e = dpp_select(bad.as_ref(), &k, &[1.0; 4], 2, 1e-6).unwrap_err();
        assert!(matches!(
            e,
            DppError::BadCandidate {
                row: 2,
                column: 1,
                ..
            }
        ));
        let e = dpp_select(c.as_ref(), &k, &[1.0; 4], 2, -1.0).unwrap_err();
        assert_eq!(e, DppError::BadTolerance(-1.0));
        let ard = Kernel::parse("se(ls=[1, 1, 1])").unwrap();
        assert!(matches!(
            dpp_select(c.as_ref(), &ard, &[1.0; 4], 2, 1e-6),
            Err(DppError::Kernel(_))
        ));
        assert!(dpp_select(c.as_ref(), &k, &[1.0; 4], 0, 1e-6)
            .unwrap()
            .indices
            .is_empty());
    }
}
