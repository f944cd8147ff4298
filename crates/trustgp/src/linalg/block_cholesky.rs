//! The two-step (block) Cholesky factorisation of a matrix whose leading block is fixed
//! (`safe-transfer.md` §2.9):
//!
//! ```text
//! Ω = [[K_ss + D_s, K_st], [K_ts, K_tt + D_t]] = L Lᵀ,    L = [[L_s, 0], [Aᵀ, L_t]],
//! A = L_s⁻¹ K_st,   K̃_t = K_tt + D_t − AᵀA (the Schur complement),   L_t = chol(K̃_t).
//! ```
//!
//! `L` is the Cholesky factor of `Ω` by uniqueness. When the leading ("source") block never
//! changes, `L_s` is computed once and shared, each trailing ("target") row appended later
//! costs one triangular solve `L_s⁻¹ k` (`O(N_s²)`) plus `O(N_s N)` to extend `G = AᵀA`, and
//! a new trailing block (other hyperparameters of the target part) costs `O(N³)` only,
//! independent of `N_s`. [`SchurBasis`] holds what depends on the fixed block only (`L_s`,
//! `A`, `G`); [`BlockCholesky`] adds `L_t`.
//!
//! The Schur complement is formed from a symmetric `G` (its lower triangle mirrored, as a
//! rank-k "syrk" update would give) and symmetrised, so round-off cannot make `K̃_t`
//! asymmetric; `L_t` gets the jitter escalation of [`Cholesky::factor_owned`], relative to the
//! trailing block's diagonal (the complement's own can cancel to round-off), which matters when
//! source and target inputs coincide and the noise is small (§6).

use std::sync::Arc;

use faer::{Accum, Mat, MatMut, MatRef};

use super::{Cholesky, LinalgError, Parallelism};

/// What the two-step factorisation keeps from the fixed leading block: the shared factor
/// `L_s` (absent when the block is empty), `A = L_s⁻¹ K_st` (`N_s × N`) and `G = AᵀA`
/// (`N × N`, symmetric), with trailing rows appendable.
#[derive(Clone, Debug)]
pub struct SchurBasis {
    source: Option<Arc<Cholesky>>,
    a: Mat<f64>,
    gram: Mat<f64>,
}

impl SchurBasis {
    /// The basis of a fixed block with factor `source` (`None`: an empty block, `N_s = 0`) and
    /// the cross-covariance `k_st` (`N_s × N`) to the first trailing rows.
    ///
    /// # Errors
    /// `k_st` has not `N_s` rows, or holds a non-finite entry.
    pub fn new(source: Option<Arc<Cholesky>>, k_st: MatRef<'_, f64>) -> Result<Self, LinalgError> {
        let n_s = source.as_ref().map_or(0, |c| c.n());
        let mut basis = SchurBasis {
            source,
            a: Mat::zeros(n_s, 0),
            gram: Mat::zeros(0, 0),
        };
        basis.append(k_st)?;
        Ok(basis)
    }

    /// The shared factor `L_s` of the fixed block (`None` when it is empty).
    pub fn source(&self) -> Option<&Arc<Cholesky>> {
        self.source.as_ref()
    }

    /// `N_s`, the dimension of the fixed block.
    pub fn n_source(&self) -> usize {
        self.a.nrows()
    }

    /// `N`, the number of trailing rows.
    pub fn n_target(&self) -> usize {
        self.a.ncols()
    }

    /// `A = L_s⁻¹ K_st` (`N_s × N`).
    pub fn a(&self) -> MatRef<'_, f64> {
        self.a.as_ref()
    }

    /// `G = AᵀA` (`N × N`, exactly symmetric).
    pub fn gram(&self) -> MatRef<'_, f64> {
        self.gram.as_ref()
    }

    /// Overwrite `rhs` (`N_s` rows) with `L_s⁻¹ rhs`.
    pub fn source_solve_lower_in_place(&self, rhs: MatMut<'_, f64>) {
        if let Some(l) = &self.source {
            l.solve_lower_in_place(rhs);
        }
    }

    /// Append `m` trailing rows whose cross-covariance to the fixed block is `k_s_new`
    /// (`N_s × m`): `O(N_s² m)` for the new columns of `A`, `O(N_s N m)` for `G`. Returns the
    /// new columns of `A`, from which callers extend their own projections (`Aᵀ a_s`).
    ///
    /// # Errors
    /// `k_s_new` has not `N_s` rows, or holds a non-finite entry.
    pub fn append(&mut self, k_s_new: MatRef<'_, f64>) -> Result<Mat<f64>, LinalgError> {
        let (n_s, n, m) = (self.n_source(), self.n_target(), k_s_new.ncols());
        if k_s_new.nrows() != n_s {
            return Err(LinalgError::Shape {
                what: format!(
                    "cross-covariance to the fixed block (expected {n_s} rows, one per fixed row)"
                ),
                rows: k_s_new.nrows(),
                cols: m,
            });
        }
        check_finite(k_s_new, "cross-covariance to the fixed block")?;
        let mut a_new = k_s_new.to_owned();
        self.source_solve_lower_in_place(a_new.as_mut());
        let par = self.parallelism();
        // Cross block Aᵀ a_new (N × m) and the new diagonal block a_newᵀ a_new (m × m).
        let mut cross = Mat::<f64>::zeros(n, m);
        let mut corner = Mat::<f64>::zeros(m, m);
        if n_s > 0 {
            let p = par.faer();
            faer::linalg::matmul::matmul(
                cross.as_mut(),
                Accum::Replace,
                self.a.transpose(),
                a_new.as_ref(),
                1.0,
                p,
            );
            faer::linalg::matmul::matmul(
                corner.as_mut(),
                Accum::Replace,
                a_new.transpose(),
                a_new.as_ref(),
                1.0,
                p,
            );
        }
        let mut gram = Mat::<f64>::zeros(n + m, n + m);
        gram.as_mut()
            .submatrix_mut(0, 0, n, n)
            .copy_from(&self.gram);
        for j in 0..m {
            for i in 0..n {
                gram[(i, n + j)] = cross[(i, j)];
                gram[(n + j, i)] = cross[(i, j)];
            }
            // The lower triangle of the new block, mirrored: G stays exactly symmetric.
            for i in j..m {
                gram[(n + i, n + j)] = corner[(i, j)];
                gram[(n + j, n + i)] = corner[(i, j)];
            }
        }
        let mut a = Mat::<f64>::zeros(n_s, n + m);
        a.as_mut().submatrix_mut(0, 0, n_s, n).copy_from(&self.a);
        a.as_mut().submatrix_mut(0, n, n_s, m).copy_from(&a_new);
        self.a = a;
        self.gram = gram;
        Ok(a_new)
    }

    /// The Schur complement `K̃_t = sym(k_tt) − G` of the trailing block `k_tt` (`N × N`, noise
    /// included), symmetrised `(K̃ + K̃ᵀ)/2`.
    ///
    /// # Errors
    /// `k_tt` is not `N × N`.
    pub fn schur_complement(&self, k_tt: MatRef<'_, f64>) -> Result<Mat<f64>, LinalgError> {
        let n = self.n_target();
        if k_tt.nrows() != n || k_tt.ncols() != n {
            return Err(LinalgError::Shape {
                what: format!("trailing block (expected {n}×{n}, one row per trailing row)"),
                rows: k_tt.nrows(),
                cols: k_tt.ncols(),
            });
        }
        Ok(Mat::from_fn(n, n, |i, j| {
            0.5 * (k_tt[(i, j)] + k_tt[(j, i)]) - self.gram[(i, j)]
        }))
    }

    /// `L_t = chol(K̃_t)` with jitter escalation, for the trailing block `k_tt` (noise included).
    ///
    /// # Errors
    /// Wrong shape, a non-finite entry, or `K̃_t` not positive definite even with the largest
    /// jitter (`what` names the matrix in the message).
    pub fn factor_target(
        &self,
        k_tt: MatRef<'_, f64>,
        what: &str,
        par: Parallelism,
    ) -> Result<Cholesky, LinalgError> {
        let s = self.schur_complement(k_tt)?;
        // Jitter on the scale of the trailing block itself: the complement's own diagonal can
        // cancel to round-off (trailing rows that repeat fixed ones at small noise).
        let n = k_tt.nrows();
        let scale = (0..n).map(|i| k_tt[(i, i)]).sum::<f64>() / n.max(1) as f64;
        Cholesky::factor_owned_relative_to(s.clone(), scale, what, par, || s.clone())
    }

    fn parallelism(&self) -> Parallelism {
        self.source
            .as_ref()
            .map_or(Parallelism::Sequential, |c| c.parallelism())
    }
}

/// The Cholesky factor of `Ω` in two blocks: the [`SchurBasis`] of the fixed leading block and
/// the factor `L_t` of the Schur complement (absent when there are no trailing rows).
#[derive(Clone, Debug)]
pub struct BlockCholesky {
    basis: SchurBasis,
    target: Option<Cholesky>,
}

impl BlockCholesky {
    /// Factorise the trailing block `k_tt` (`N × N`, noise included) against `basis`.
    ///
    /// # Errors
    /// As [`SchurBasis::factor_target`]; also an empty matrix overall (`N_s = N = 0`).
    pub fn new(
        basis: SchurBasis,
        k_tt: MatRef<'_, f64>,
        what: &str,
        par: Parallelism,
    ) -> Result<Self, LinalgError> {
        let target = if basis.n_target() == 0 {
            basis.schur_complement(k_tt)?;
            None
        } else {
            Some(basis.factor_target(k_tt, what, par)?)
        };
        Self::from_parts(basis, target)
    }

    /// The factor from a basis and a trailing factor computed from it (by
    /// [`SchurBasis::factor_target`]).
    ///
    /// # Errors
    /// The dimensions disagree, or the whole matrix is empty.
    pub fn from_parts(basis: SchurBasis, target: Option<Cholesky>) -> Result<Self, LinalgError> {
        let n_t = target.as_ref().map_or(0, |c| c.n());
        if n_t != basis.n_target() || basis.n_source() + n_t == 0 {
            return Err(LinalgError::Shape {
                what: format!(
                    "trailing factor (expected {0}×{0}, one row per trailing row, and a \
                     non-empty matrix overall)",
                    basis.n_target()
                ),
                rows: n_t,
                cols: n_t,
            });
        }
        Ok(BlockCholesky { basis, target })
    }

    /// The basis of the fixed block.
    pub fn basis(&self) -> &SchurBasis {
        &self.basis
    }

    /// The basis, to append trailing rows to (the trailing factor must then be recomputed).
    pub fn into_basis(self) -> SchurBasis {
        self.basis
    }

    /// `L_t`, the factor of the Schur complement (`None` without trailing rows).
    pub fn target(&self) -> Option<&Cholesky> {
        self.target.as_ref()
    }

    /// `N_s + N`.
    pub fn n(&self) -> usize {
        self.basis.n_source() + self.basis.n_target()
    }

    /// `log det Ω = 2 Σ log diag L_s + 2 Σ log diag L_t`.
    pub fn log_det(&self) -> f64 {
        let s = self.basis.source().map_or(0.0, |c| c.log_det());
        s + self.target.as_ref().map_or(0.0, Cholesky::log_det)
    }

    /// Overwrite `rhs` (`N_s + N` rows: fixed rows first) with `L⁻¹ rhs`:
    /// `w_s = L_s⁻¹ b_s`, `w_t = L_t⁻¹ (b_t − Aᵀ w_s)`.
    ///
    /// # Panics
    /// If `rhs` has not `N_s + N` rows.
    pub fn solve_lower_in_place(&self, rhs: MatMut<'_, f64>) {
        assert_eq!(rhs.nrows(), self.n(), "solve: rhs needs N_s + N rows");
        let n_s = self.basis.n_source();
        let (mut top, mut bottom) = rhs.split_at_row_mut(n_s);
        self.basis.source_solve_lower_in_place(top.as_mut());
        if let Some(l_t) = &self.target {
            if n_s > 0 {
                faer::linalg::matmul::matmul(
                    bottom.as_mut(),
                    Accum::Add,
                    self.basis.a().transpose(),
                    top.as_ref(),
                    -1.0,
                    l_t.parallelism().faer(),
                );
            }
            l_t.solve_lower_in_place(bottom.as_mut());
        }
    }

    /// Overwrite `rhs` (`N_s + N` rows) with `Ω⁻¹ rhs`: [`BlockCholesky::solve_lower_in_place`]
    /// then `x_t = L_t⁻ᵀ z_t`, `x_s = L_s⁻ᵀ (z_s − A x_t)`.
    ///
    /// # Panics
    /// If `rhs` has not `N_s + N` rows.
    pub fn solve_in_place(&self, mut rhs: MatMut<'_, f64>) {
        self.solve_lower_in_place(rhs.as_mut());
        let n_s = self.basis.n_source();
        let (mut top, mut bottom) = rhs.split_at_row_mut(n_s);
        if let Some(l_t) = &self.target {
            l_t.solve_lower_transpose_in_place(bottom.as_mut());
            if n_s > 0 {
                faer::linalg::matmul::matmul(
                    top.as_mut(),
                    Accum::Add,
                    self.basis.a(),
                    bottom.as_ref(),
                    -1.0,
                    l_t.parallelism().faer(),
                );
            }
        }
        if let Some(l_s) = self.basis.source() {
            l_s.solve_lower_transpose_in_place(top);
        }
    }

    /// The dense factor `L = [[L_s, 0], [Aᵀ, L_t]]` as a [`Cholesky`] of `Ω` (for code written
    /// against a single factor, e.g. [`ConjugatePosterior::from_factor`](crate::models::conjugate::ConjugatePosterior::from_factor));
    /// its recorded jitter is the larger of the two blocks'. `O((N_s + N)²)` memory.
    pub fn to_cholesky(&self) -> Cholesky {
        let (n_s, n_t) = (self.basis.n_source(), self.basis.n_target());
        let mut l = Mat::<f64>::zeros(n_s + n_t, n_s + n_t);
        let mut jitter: f64 = 0.0;
        let mut par = Parallelism::Sequential;
        if let Some(ls) = self.basis.source() {
            copy_lower(ls.l(), l.as_mut().submatrix_mut(0, 0, n_s, n_s));
            jitter = jitter.max(ls.jitter());
            par = ls.parallelism();
        }
        if let Some(lt) = &self.target {
            copy_lower(lt.l(), l.as_mut().submatrix_mut(n_s, n_s, n_t, n_t));
            l.as_mut()
                .submatrix_mut(n_s, 0, n_t, n_s)
                .copy_from(self.basis.a().transpose());
            jitter = jitter.max(lt.jitter());
            par = lt.parallelism();
        }
        Cholesky::from_parts(l, jitter, par)
    }
}

/// Copy the lower triangle (and diagonal) of `src` into `dst` (zeros above are left alone).
fn copy_lower(src: MatRef<'_, f64>, mut dst: MatMut<'_, f64>) {
    for j in 0..src.ncols() {
        for i in j..src.nrows() {
            dst[(i, j)] = src[(i, j)];
        }
    }
}

fn check_finite(m: MatRef<'_, f64>, what: &str) -> Result<(), LinalgError> {
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            if !m[(i, j)].is_finite() {
                return Err(LinalgError::NonFinite {
                    what: what.to_string(),
                    row: i,
                    col: j,
                    value: m[(i, j)],
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
