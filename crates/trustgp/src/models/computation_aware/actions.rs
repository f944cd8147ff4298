//! Sparse block actions (spec §2.5).
//!
//! The training rows, in their given order, are cut into `i` contiguous blocks; action column
//! `b` is non-zero only on block `b`, where it holds the trainable vector `θ_b`. When `n` is not
//! a multiple of `i` the first `n mod i` blocks get one row more, so no data is dropped. The
//! disjoint supports make `T = SᵀDS` diagonal and every product with `S` cost `O(n)`.

use std::ops::Range;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use crate::models::ModelError;

/// Floor of `T_bb = Σ θ_b² D`: a block whose `θ_b` collapsed to zero would give `log T = −∞`.
pub(crate) const T_FLOOR: f64 = 1e-30;

/// The action matrix `S` (n×i) stored as one vector per block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BlockActions {
    /// `starts[b]..starts[b + 1]` are the rows of block `b`.
    starts: Vec<usize>,
    theta: Vec<Vec<f64>>,
}

impl BlockActions {
    /// The row ranges of `i` blocks over `n` rows (the first `n mod i` blocks one row longer).
    fn starts(n: usize, i: usize) -> Vec<usize> {
        let (k, extra) = (n / i, n % i);
        let mut starts = vec![0];
        for b in 0..i {
            starts.push(starts[b] + k + usize::from(b < extra));
        }
        starts
    }

    /// `i` blocks over `n` rows with entries drawn from N(0, 1/k_b), seeded.
    pub(crate) fn random(n: usize, i: usize, seed: u64) -> BlockActions {
        let starts = Self::starts(n, i);
        let mut rng = StdRng::seed_from_u64(seed);
        let theta = starts
            .windows(2)
            .map(|s| {
                let sd = 1.0 / ((s[1] - s[0]) as f64).sqrt();
                (s[0]..s[1])
                    .map(|_| sd * rng.sample::<f64, _>(StandardNormal))
                    .collect()
            })
            .collect();
        BlockActions { starts, theta }
    }

    /// Actions from stored block vectors; their lengths must be the block sizes for `n` rows.
    pub(crate) fn from_blocks(n: usize, theta: Vec<Vec<f64>>) -> Result<BlockActions, ModelError> {
        let i = theta.len();
        if i == 0 || i > n {
            return Err(ModelError::Invalid(format!(
                "need between 1 and n = {n} action blocks, got {i}"
            )));
        }
        let starts = Self::starts(n, i);
        for (b, t) in theta.iter().enumerate() {
            let k = starts[b + 1] - starts[b];
            if t.len() != k {
                return Err(ModelError::Invalid(format!(
                    "action block {b} must have {k} entries for {n} rows in {i} blocks, got {}",
                    t.len()
                )));
            }
            if t.iter().any(|v| !v.is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "action block {b} has a non-finite entry"
                )));
            }
        }
        Ok(BlockActions { starts, theta })
    }

    /// Number of actions `i`.
    pub(crate) fn count(&self) -> usize {
        self.theta.len()
    }

    /// The rows of block `b`.
    pub(crate) fn range(&self, b: usize) -> Range<usize> {
        self.starts[b]..self.starts[b + 1]
    }

    /// `θ_b`.
    pub(crate) fn theta(&self, b: usize) -> &[f64] {
        &self.theta[b]
    }

    /// All block vectors.
    pub(crate) fn blocks(&self) -> &[Vec<f64>] {
        &self.theta
    }

    /// Θ flattened block after block (n entries): the layout of the optimiser's vector.
    pub(crate) fn flat(&self) -> Vec<f64> {
        self.theta.concat()
    }

    /// Sets Θ from its flattened form.
    pub(crate) fn set_flat(&mut self, v: &[f64]) {
        for (b, t) in self.theta.iter_mut().enumerate() {
            t.copy_from_slice(&v[self.starts[b]..self.starts[b + 1]]);
        }
    }

    /// `log T_bb = log Σ_{j∈B_b} θ_bj² D_j` by log-sum-exp over `2 log|θ| + log D` (D can be
    /// astronomically large for gross outliers), floored at `log T_FLOOR`. Also says which
    /// blocks hit the floor (their `T` is then a constant).
    pub(crate) fn log_t(&self, log_d: &[f64]) -> Vec<(f64, bool)> {
        (0..self.count())
            .map(|b| {
                let terms: Vec<f64> = self.theta[b]
                    .iter()
                    .zip(&log_d[self.range(b)])
                    .map(|(t, ld)| 2.0 * t.abs().ln() + ld)
                    .collect();
                let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let lt = if top == f64::NEG_INFINITY {
                    top
                } else {
                    top + terms.iter().map(|v| (v - top).exp()).sum::<f64>().ln()
                };
                if lt > T_FLOOR.ln() {
                    (lt, false)
                } else {
                    (T_FLOOR.ln(), true)
                }
            })
            .collect()
    }
}

/// `aᵀb`.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
