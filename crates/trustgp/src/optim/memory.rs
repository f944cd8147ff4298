//! The limited memory of curvature pairs and the two-loop recursion that applies it.

use std::collections::VecDeque;

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};

/// Dot product over the variables marked free.
fn dot_free(a: &[f64], b: &[f64], free: &[bool]) -> f64 {
    a.iter()
        .zip(b)
        .zip(free)
        .filter(|(_, &is_free)| is_free)
        .map(|((ai, bi), _)| ai * bi)
        .sum()
}

/// Whether a pair carries usable (positive) curvature: BFGS updates stay positive definite only
/// if `sᵀy > 0`, and the `ε·yᵀy` margin rejects pairs whose curvature is pure rounding noise.
fn has_curvature(sy: f64, yy: f64) -> bool {
    sy.is_finite() && yy.is_finite() && sy > f64::EPSILON * yy
}

/// The last `capacity` step/gradient-change pairs `(s, y)`, oldest first, and the Hessian
/// approximation `B₀` they update, if the objective supplied one (otherwise `B₀ = I/γ`).
pub(crate) struct Memory {
    capacity: usize,
    pairs: VecDeque<(Vec<f64>, Vec<f64>)>,
    initial: Option<Mat<f64>>,
    /// Whether the next pair with curvature rescales `B₀` (see [`Memory::restart_from`]).
    rescale_pending: bool,
}

impl Memory {
    pub(crate) fn new(capacity: usize) -> Self {
        Memory {
            capacity,
            pairs: VecDeque::with_capacity(capacity),
            initial: None,
            rescale_pending: false,
        }
    }

    /// Forgets the pairs and starts again from the Hessian approximation `b0` (symmetric
    /// positive semi-definite): with every later pair kept, the directions are those of BFGS
    /// started from `b0`. With `rescale`, the first pair with curvature first multiplies `b0`
    /// by `sᵀy / sᵀb0 s`, so that it matches the objective's curvature along that step: the
    /// matrix analogue of the scaling `γ = sᵀy / yᵀy` of an identity start (Oren–Luenberger
    /// self-scaling, Nocedal & Wright §6.1), for a `b0` whose shape is trusted but not its
    /// overall size.
    pub(crate) fn restart_from(&mut self, b0: Mat<f64>, rescale: bool) {
        self.pairs.clear();
        self.initial = Some(b0);
        self.rescale_pending = rescale;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pairs.is_empty() && self.initial.is_none()
    }

    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
        self.initial = None;
        self.rescale_pending = false;
    }

    /// `B₀⁻¹ q` on the free variables (`q` is zero elsewhere), or `None` if there is no `B₀`
    /// or its free block is not positive definite even after a small shift.
    fn apply_initial(&self, q: &[f64], free: &[bool]) -> Option<Vec<f64>> {
        let b0 = self.initial.as_ref()?;
        let idx: Vec<usize> = (0..q.len()).filter(|&i| free[i]).collect();
        let block = Mat::from_fn(idx.len(), idx.len(), |a, b| b0[(idx[a], idx[b])]);
        // A Gauss–Newton matrix is only semi-definite (a direction the model misses has zero
        // curvature); a shift of 1e-10 of its largest diagonal entry keeps that step finite.
        let largest = (0..idx.len()).map(|a| block[(a, a)]).fold(0.0, f64::max);
        let shifted = Mat::from_fn(idx.len(), idx.len(), |a, b| {
            block[(a, b)] + if a == b { 1e-10 * largest } else { 0.0 }
        });
        let llt = shifted.as_ref().llt(Side::Lower).ok()?;
        let rhs = Mat::from_fn(idx.len(), 1, |a, _| q[idx[a]]);
        let sol = llt.solve(rhs.as_ref());
        let mut out = vec![0.0; q.len()];
        for (a, &i) in idx.iter().enumerate() {
            out[i] = sol[(a, 0)];
        }
        out.iter().all(|v| v.is_finite()).then_some(out)
    }

    /// Stores the pair if it has positive curvature (otherwise it is skipped, as in L-BFGS-B)
    /// and drops the oldest when full.
    pub(crate) fn push(&mut self, s: Vec<f64>, y: Vec<f64>) {
        let all = vec![true; s.len()];
        let sy = dot_free(&s, &y, &all);
        if !has_curvature(sy, dot_free(&y, &y, &all)) {
            return;
        }
        if std::mem::take(&mut self.rescale_pending) {
            if let Some(b0) = self.initial.as_mut() {
                let b0s: Vec<f64> = (0..s.len())
                    .map(|i| (0..s.len()).map(|j| b0[(i, j)] * s[j]).sum())
                    .collect();
                let sbs = dot_free(&s, &b0s, &all);
                let tau = sy / sbs;
                // A b0 without curvature along s (or a non-finite ratio) is left as it is.
                if sbs > 0.0 && tau.is_finite() {
                    *b0 *= faer::Scale(tau);
                }
            }
        }
        if self.pairs.len() == self.capacity {
            self.pairs.pop_front();
        }
        self.pairs.push_back((s, y));
    }

    /// The quasi-Newton direction `−H g` on the free variables (zero elsewhere), with `H` built
    /// from the pairs restricted to the free variables. Restricting each pair, and skipping those
    /// whose restricted curvature is not positive, keeps `H` positive definite on the free
    /// subspace, so the direction is a descent direction there.
    ///
    /// Returns the direction and whether any pair contributed (if none did, the direction is the
    /// unscaled steepest descent and the caller must choose the step length itself).
    pub(crate) fn direction(&self, g: &[f64], free: &[bool]) -> (Vec<f64>, bool) {
        let mut q: Vec<f64> = g
            .iter()
            .zip(free)
            .map(|(&gi, &is_free)| if is_free { gi } else { 0.0 })
            .collect();
        // (ρ, α) per pair, newest first; ρ = None marks a skipped pair.
        let mut coefficients = Vec::with_capacity(self.pairs.len());
        let mut gamma = None;
        for (s, y) in self.pairs.iter().rev() {
            let sy = dot_free(s, y, free);
            let yy = dot_free(y, y, free);
            if !has_curvature(sy, yy) {
                coefficients.push(None);
                continue;
            }
            // The newest usable pair sets the initial scaling H₀ = γI (Nocedal & Wright 7.20),
            // which is what makes a unit step a good first trial.
            gamma.get_or_insert(sy / yy);
            let rho = 1.0 / sy;
            let alpha = rho * dot_free(s, &q, free);
            for ((qi, yi), &is_free) in q.iter_mut().zip(y).zip(free) {
                if is_free {
                    *qi -= alpha * yi;
                }
            }
            coefficients.push(Some((rho, alpha)));
        }
        let mut used = gamma.is_some();
        match self.apply_initial(&q, free) {
            Some(r) => {
                q = r;
                used = true;
            }
            None => {
                let gamma = gamma.unwrap_or(1.0);
                q.iter_mut().for_each(|qi| *qi *= gamma);
            }
        }
        for ((s, y), coefficient) in self.pairs.iter().zip(coefficients.iter().rev()) {
            let Some((rho, alpha)) = *coefficient else {
                continue;
            };
            let beta = rho * dot_free(y, &q, free);
            for ((qi, si), &is_free) in q.iter_mut().zip(s).zip(free) {
                if is_free {
                    *qi += (alpha - beta) * si;
                }
            }
        }
        q.iter_mut().for_each(|qi| *qi = -*qi);
        (q, used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_newton_step_on_a_quadratic() {
        // f = ½ xᵀ diag(1, 4) x: pairs along both axes make H the exact inverse Hessian.
        let mut memory = Memory::new(5);
        memory.push(vec![1.0, 0.0], vec![1.0, 0.0]);
        memory.push(vec![0.0, 1.0], vec![0.0, 4.0]);
        let (d, used) = memory.direction(&[2.0, 8.0], &[true, true]);
        assert!(used);
        assert!((d[0] + 2.0).abs() < 1e-14 && (d[1] + 2.0).abs() < 1e-14);
    }

    #[test]
    fn an_initial_hessian_gives_the_newton_step_on_the_free_variables_until_cleared() {
        // B₀ = [[2, 1], [1, 4]]: the direction is −B₀⁻¹ g, or −g₁/4 with variable 0 fixed.
        let mut memory = Memory::new(5);
        memory.restart_from(
            Mat::from_fn(2, 2, |i, j| [[2.0, 1.0], [1.0, 4.0]][i][j]),
            false,
        );
        assert!(!memory.is_empty());
        let (d, used) = memory.direction(&[3.0, 5.0], &[true, true]);
        assert!(used);
        // B₀⁻¹ = [[4, −1], [−1, 2]] / 7.
        assert!(
            (d[0] + 1.0).abs() < 1e-9 && (d[1] + 1.0).abs() < 1e-9,
            "{d:?}"
        );
        let (d, _) = memory.direction(&[3.0, 5.0], &[false, true]);
        assert!(d[0] == 0.0 && (d[1] + 1.25).abs() < 1e-9, "{d:?}");
        // A pair updates B₀ as BFGS does: the secant condition H y = s holds afterwards.
        let (s, y) = (vec![0.5, -0.25], vec![1.5, 0.2]);
        memory.push(s.clone(), y.clone());
        let (d, _) = memory.direction(&y, &[true, true]);
        assert!(
            (d[0] + s[0]).abs() < 1e-9 && (d[1] + s[1]).abs() < 1e-9,
            "{d:?}"
        );
        memory.clear();
        assert!(memory.is_empty());
    }

    #[test]
    fn a_rescaled_start_matches_the_curvature_along_the_first_step_then_updates_as_bfgs() {
        // f = ½ xᵀ A x with A = [[3, 1], [1, 2]], started from 5 A: the first pair (y = A s)
        // scales it by sᵀAs / (5 sᵀAs) = 1/5, so B₀ becomes A, which the BFGS update with a
        // pair of A itself leaves as it is: the direction is then Newton's, −A⁻¹ g.
        let a = [[3.0, 1.0], [1.0, 2.0]];
        let times_a = |v: &[f64]| {
            vec![
                a[0][0] * v[0] + a[0][1] * v[1],
                a[1][0] * v[0] + a[1][1] * v[1],
            ]
        };
        let g = [1.0, -2.0];
        // A⁻¹ = [[2, −1], [−1, 3]] / 5.
        let newton = [-(2.0 * g[0] - g[1]) / 5.0, -(-g[0] + 3.0 * g[1]) / 5.0];
        let s = vec![0.3, 0.7];
        let mut memory = Memory::new(5);
        memory.restart_from(Mat::from_fn(2, 2, |i, j| 5.0 * a[i][j]), true);
        // Before any pair the direction is the unscaled start's, a fifth of Newton's (to the
        // 1e-10 relative shift `apply_initial` adds).
        let (d, _) = memory.direction(&g, &[true, true]);
        assert!((d[0] - newton[0] / 5.0).abs() < 1e-9 && (d[1] - newton[1] / 5.0).abs() < 1e-9);
        memory.push(s.clone(), times_a(&s));
        let (d, _) = memory.direction(&g, &[true, true]);
        assert!(
            (d[0] - newton[0]).abs() < 1e-9 && (d[1] - newton[1]).abs() < 1e-9,
            "{d:?}"
        );
        // Without the rescaling, B₀ = 5 A stays wrong off the step: the direction is not
        // Newton's, only the secant condition holds (the direction for g = y is −s).
        let mut plain = Memory::new(5);
        plain.restart_from(Mat::from_fn(2, 2, |i, j| 5.0 * a[i][j]), false);
        plain.push(s.clone(), times_a(&s));
        let (d, _) = plain.direction(&g, &[true, true]);
        assert!((d[0] - newton[0]).abs() > 1e-3, "{d:?}");
        let (d, _) = plain.direction(&times_a(&s), &[true, true]);
        assert!(
            (d[0] + s[0]).abs() < 1e-9 && (d[1] + s[1]).abs() < 1e-9,
            "{d:?}"
        );
    }

    #[test]
    fn skips_pairs_without_curvature_and_zeroes_fixed_variables() {
        let mut memory = Memory::new(5);
        memory.push(vec![1.0, 0.0], vec![-1.0, 0.0]);
        assert!(memory.is_empty());
        memory.push(vec![1.0, 1.0], vec![2.0, -1.0]);
        // Restricted to variable 1 the pair has sᵀy = −1 < 0, so it must be ignored.
        let (d, used) = memory.direction(&[3.0, 5.0], &[false, true]);
        assert!(!used);
        assert_eq!(d, vec![0.0, -5.0]);
    }

    #[test]
    fn drops_the_oldest_pair_when_full() {
        let mut memory = Memory::new(1);
        memory.push(vec![1.0], vec![1.0]);
        memory.push(vec![1.0], vec![4.0]);
        let (d, _) = memory.direction(&[4.0], &[true]);
        assert!((d[0] + 1.0).abs() < 1e-15);
    }
}
