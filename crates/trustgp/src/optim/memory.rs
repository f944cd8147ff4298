//! The limited memory of curvature pairs and the two-loop recursion that applies it.

use std::collections::VecDeque;

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

/// The last `capacity` step/gradient-change pairs `(s, y)`, oldest first.
pub(crate) struct Memory {
    capacity: usize,
    pairs: VecDeque<(Vec<f64>, Vec<f64>)>,
}

impl Memory {
    pub(crate) fn new(capacity: usize) -> Self {
        Memory {
            capacity,
            pairs: VecDeque::with_capacity(capacity),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
    }

    /// Stores the pair if it has positive curvature (otherwise it is skipped, as in L-BFGS-B)
    /// and drops the oldest when full.
    pub(crate) fn push(&mut self, s: Vec<f64>, y: Vec<f64>) {
        let all = vec![true; s.len()];
        if !has_curvature(dot_free(&s, &y, &all), dot_free(&y, &y, &all)) {
            return;
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
        let used = gamma.is_some();
        let gamma = gamma.unwrap_or(1.0);
        q.iter_mut().for_each(|qi| *qi *= gamma);
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
