//! The two kinds of actions (spec §2.5) behind one interface.
//!
//! * **Sparse block actions** ([`BlockActions`]): trainable, one vector per block of rows,
//!   `T = SᵀDS` diagonal.
//! * **Dense inducing-point actions** `S = k(X, Z)`: `Z` is fixed, `S` moves with the kernel
//!   hyperparameters (so the ELBO is differentiated through it) and `T` is a dense `i×i`
//!   matrix.
//!
//! The ELBO and prediction see `S` as an n×i matrix (memory `O(n·i)`, which the spec allows)
//! and stream the kernel over [`Chunk`]s: a range of rows together with the columns on which `S`
//! can be non-zero there, so that block actions keep their `O(n)` products with `S` and their
//! masked gradient.

use std::ops::Range;

use faer::{Mat, MatRef};

use super::actions::BlockActions;
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Most training rows whose kernel columns are held at once: `k(X, X_chunk)` is n×512.
const CHUNK_ROWS: usize = 512;

/// Most bytes of an n×chunk matrix of kernel columns. Blocks below 32 MiB are reused by the
/// allocator from one chunk to the next (see `linalg::reuse_freed_memory`); larger ones are
/// mapped and page-faulted in afresh for every chunk, which at n = 36 000 and 512 rows
/// (147 MB) cost more than the smaller matrix products.
const CHUNK_BYTES: usize = 24 << 20;

/// Chunk rows are a multiple of this, so that the contraction's blocks of columns (32 wide)
/// split a chunk evenly over the threads.
const CHUNK_QUANTUM: usize = 64;

/// Rows per chunk for `n` training rows: [`CHUNK_ROWS`], or fewer if the n×chunk matrix would
/// exceed [`CHUNK_BYTES`] (never fewer than [`CHUNK_QUANTUM`]).
fn chunk_rows(n: usize) -> usize {
    let fit = CHUNK_BYTES / (8 * n.max(1));
    (fit / CHUNK_QUANTUM * CHUNK_QUANTUM).clamp(CHUNK_QUANTUM, CHUNK_ROWS)
}

/// The actions of a CaGP, as stored and as given to [`super::CaGp::from_parts`].
#[derive(Clone, Debug, PartialEq)]
pub enum Actions {
    /// Sparse block actions: `θ_b` for each block of consecutive training rows (the first
    /// `n mod i` blocks one row longer).
    Blocks(Vec<Vec<f64>>),
    /// Dense inducing-point actions `S = k(X, Z)`: the rows of `Z` (i×d), fixed.
    Inducing(Mat<f64>),
}

impl Actions {
    /// `i` block actions over `n` training rows with entries drawn from `N(0, 1/k_b)` (`k_b`
    /// the block's length), seeded: the random initialisation that [`super::CaGp::fit`] uses,
    /// and what a caller re-draws when the training set changes (`rcagp.md` §3.5 step 6, §6.11).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] unless `1 ≤ i ≤ n`.
    pub fn random_blocks(n: usize, i: usize, seed: u64) -> Result<Actions, ModelError> {
        if i == 0 || i > n {
            return Err(ModelError::Invalid(format!(
                "need between 1 and n = {n} action blocks, got {i}"
            )));
        }
        Ok(Actions::Blocks(
            BlockActions::random(n, i, seed).blocks().to_vec(),
        ))
    }
}

/// A range of training rows and the action columns that may be non-zero on them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Chunk {
    pub rows: Range<usize>,
    pub cols: Range<usize>,
}

/// The actions inside the model.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ActionSet {
    Blocks(BlockActions),
    /// The inducing inputs `Z` and whether they are trained.
    Inducing {
        z: Mat<f64>,
        learn: bool,
    },
}

/// `T = SᵀDS` in the form its kind allows.
#[derive(Clone, Debug)]
pub(crate) enum ProjectedNoise {
    /// Block actions: `(log T_bb, floored)` per block.
    Diagonal(Vec<(f64, bool)>),
    /// Inducing-point actions: the Cholesky factor of the dense `T`.
    Dense(Cholesky),
}

impl ActionSet {
    /// The actions for `n` rows from their stored form (`d` input columns).
    pub(crate) fn new(n: usize, d: usize, actions: Actions) -> Result<ActionSet, ModelError> {
        match actions {
            Actions::Blocks(theta) => Ok(ActionSet::Blocks(BlockActions::from_blocks(n, theta)?)),
            Actions::Inducing(z) => {
                if z.nrows() == 0 || z.nrows() > n {
                    return Err(ModelError::Invalid(format!(
                        "need between 1 and n = {n} inducing actions, got {}",
                        z.nrows()
                    )));
                }
                if z.ncols() != d {
                    return Err(ModelError::Invalid(format!(
                        "inducing actions have {} columns, the inputs {d}",
                        z.ncols()
                    )));
                }
                if let Some(r) = (0..z.nrows()).find(|&r| (0..d).any(|c| !z[(r, c)].is_finite())) {
                    return Err(ModelError::Invalid(format!(
                        "inducing action {r} has a non-finite coordinate"
                    )));
                }
                Ok(ActionSet::Inducing { z, learn: false })
            }
        }
    }

    /// The stored form.
    pub(crate) fn stored(&self) -> Actions {
        match self {
            ActionSet::Blocks(b) => Actions::Blocks(b.blocks().to_vec()),
            ActionSet::Inducing { z, .. } => Actions::Inducing(z.clone()),
        }
    }

    /// Number of actions `i`.
    pub(crate) fn count(&self) -> usize {
        match self {
            ActionSet::Blocks(b) => b.count(),
            ActionSet::Inducing { z, .. } => z.nrows(),
        }
    }

    /// `S` (n×i) for inputs `x` under `kernel`.
    pub(crate) fn matrix(&self, kernel: &Kernel, x: MatRef<'_, f64>) -> Mat<f64> {
        match self {
            ActionSet::Blocks(b) => {
                let mut s = Mat::<f64>::zeros(x.nrows(), b.count());
                for c in 0..b.count() {
                    for (l, j) in b.range(c).enumerate() {
                        s[(j, c)] = b.theta(c)[l];
                    }
                }
                s
            }
            ActionSet::Inducing { z, .. } => kernel.cross(x, z.as_ref()),
        }
    }

    /// The chunks of `n` rows over which the kernel is streamed.
    pub(crate) fn chunks(&self, n: usize) -> Vec<Chunk> {
        let size = chunk_rows(n);
        let split = |rows: Range<usize>, cols: Range<usize>| {
            rows.clone().step_by(size).map(move |s| Chunk {
                rows: s..(s + size).min(rows.end),
                cols: cols.clone(),
            })
        };
        match self {
            ActionSet::Blocks(b) => (0..b.count())
                .flat_map(|c| split(b.range(c), c..c + 1))
                .collect(),
            ActionSet::Inducing { z, .. } => split(0..n, 0..z.nrows()).collect(),
        }
    }

    /// `T = SᵀDS` for the rows' `D` (`log_d` its logarithm).
    pub(crate) fn projected_noise(
        &self,
        s: MatRef<'_, f64>,
        d: &[f64],
        log_d: &[f64],
    ) -> Result<ProjectedNoise, ModelError> {
        match self {
            ActionSet::Blocks(b) => Ok(ProjectedNoise::Diagonal(b.log_t(log_d))),
            ActionSet::Inducing { .. } => {
                let ds = Mat::<f64>::from_fn(s.nrows(), s.ncols(), |j, c| d[j] * s[(j, c)]);
                let mut t = s.transpose() * &ds;
                t = Mat::from_fn(t.nrows(), t.ncols(), |r, c| 0.5 * (t[(r, c)] + t[(c, r)]));
                Ok(ProjectedNoise::Dense(Cholesky::factor(
                    &t,
                    "CaGP projected noise SᵀDS",
                    Parallelism::Sequential,
                )?))
            }
        }
    }

    /// The trainable entries, flattened: Θ block after block, or `Z` row after row when the
    /// inducing inputs are trained (none when they are fixed).
    pub(crate) fn flat(&self) -> Vec<f64> {
        match self {
            ActionSet::Blocks(b) => b.flat(),
            ActionSet::Inducing { z, learn: true } => (0..z.nrows())
                .flat_map(|r| (0..z.ncols()).map(move |c| z[(r, c)]))
                .collect(),
            ActionSet::Inducing { learn: false, .. } => Vec::new(),
        }
    }

    /// Sets the trainable entries from [`ActionSet::flat`]'s layout.
    pub(crate) fn set_flat(&mut self, v: &[f64]) {
        match self {
            ActionSet::Blocks(b) => b.set_flat(v),
            ActionSet::Inducing { z, learn: true } => {
                let d = z.ncols();
                *z = Mat::from_fn(z.nrows(), d, |r, c| v[r * d + c]);
            }
            ActionSet::Inducing { learn: false, .. } => {}
        }
    }

    /// Takes `S̄ = ∂ℓ/∂S` (correct at least on the non-zero pattern of `S`) to the trainable
    /// entries: the block pattern for block actions; for inducing-point actions `S = k(X, Z)`
    /// passes it on to the kernel's log-hyperparameters (added to `grad_kernel`) and, when they
    /// are trained, to `Z`.
    pub(crate) fn backward(
        &self,
        s_bar: MatRef<'_, f64>,
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        grad_kernel: &mut [f64],
    ) -> Vec<f64> {
        match self {
            ActionSet::Blocks(b) => (0..b.count())
                .flat_map(|c| b.range(c).map(move |j| s_bar[(j, c)]))
                .collect(),
            ActionSet::Inducing { z, learn } => {
                kernel.grad_contract_cross(x, z.as_ref(), s_bar, grad_kernel);
                if *learn {
                    let g = kernel.grad_inputs_cross(z.as_ref(), x, s_bar.transpose());
                    (0..g.nrows())
                        .flat_map(|r| (0..g.ncols()).map(move |c| (r, c)))
                        .map(|(r, c)| g[(r, c)])
                        .collect()
                } else {
                    Vec::new()
                }
            }
        }
    }
}

impl ProjectedNoise {
    /// `log det T`.
    pub(crate) fn log_det(&self) -> f64 {
        match self {
            ProjectedNoise::Diagonal(lt) => lt.iter().map(|(v, _)| v).sum(),
            ProjectedNoise::Dense(chol) => chol.log_det(),
        }
    }

    /// `G + T` for the i×i matrix `g`.
    pub(crate) fn add_to(&self, mut g: Mat<f64>) -> Mat<f64> {
        match self {
            ProjectedNoise::Diagonal(lt) => {
                for (c, (v, _)) in lt.iter().enumerate() {
                    g[(c, c)] += v.exp();
                }
                g
            }
            ProjectedNoise::Dense(chol) => g + chol.reconstruct(),
        }
    }

    /// `T̄_tot = ½T⁻¹ + Ḡ` on the entries `T` really has (the diagonal of block actions,
    /// nothing through a floored `T_bb`).
    pub(crate) fn adjoint(&self, g_bar: MatRef<'_, f64>) -> Mat<f64> {
        let i = g_bar.nrows();
        match self {
            ProjectedNoise::Diagonal(lt) => Mat::from_fn(i, i, |r, c| match lt[r] {
                _ if r != c => 0.0,
                (_, true) => 0.0,
                (v, false) => 0.5 * (-v).exp() + g_bar[(r, r)],
            }),
            ProjectedNoise::Dense(chol) => {
                let t_inv = chol.inverse();
                Mat::from_fn(i, i, |r, c| 0.5 * t_inv[(r, c)] + g_bar[(r, c)])
            }
        }
    }
}

#[cfg(test)]
mod chunk_tests {
    use super::*;

    #[test]
    fn chunks_shrink_with_n_to_keep_kernel_columns_under_the_byte_cap() {
        assert_eq!(chunk_rows(1), CHUNK_ROWS);
        assert_eq!(chunk_rows(4_000), CHUNK_ROWS);
        assert_eq!(chunk_rows(10_000), 256);
        assert_eq!(chunk_rows(36_000), 64);
        assert_eq!(chunk_rows(10_000_000), CHUNK_QUANTUM);
        for n in [100, 4_000, 10_000, 36_000, 100_000] {
            let rows = chunk_rows(n);
            assert!(rows % CHUNK_QUANTUM == 0 && rows <= CHUNK_ROWS);
            assert!(
                rows == CHUNK_QUANTUM || 8 * n * rows <= CHUNK_BYTES,
                "n = {n}"
            );
        }
    }
}
