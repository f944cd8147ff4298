//! Cholesky factorisation `A = L Lᵀ` with jitter escalation only on failure.
//!
//! A jitter added unconditionally changes every answer (and breaks agreement with reference
//! implementations), so the factorisation is first tried on `A` itself. Only if it fails is
//! `jitter · I` added, starting at [`JITTER_START`] × mean diagonal and growing tenfold up to
//! [`JITTER_CAP`] × mean diagonal; the jitter used is recorded so fit reports can show it.
//! (faer's in-place factorisation writes outside the lower triangle, so a failed attempt
//! cannot be undone in place: the caller's `rebuild` recreates the matrix before each retry.)

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use faer::{Accum, Mat, MatMut, MatRef};

use super::gram::lower_gram_in_place;
use super::{LinalgError, Parallelism};

/// First jitter tried, relative to the mean diagonal.
pub const JITTER_START: f64 = 1e-8;
/// Largest jitter tried, relative to the mean diagonal.
pub const JITTER_CAP: f64 = 1e-2;

/// A lower Cholesky factor together with the jitter that was needed to obtain it.
#[derive(Clone, Debug)]
pub struct Cholesky {
    /// Lower-triangular factor; the strict upper triangle is unspecified.
    l: Mat<f64>,
    jitter: f64,
    par: Parallelism,
}

impl Cholesky {
    /// Factorise the symmetric matrix `a` (only its lower triangle and diagonal are read).
    ///
    /// Keeps `a` unchanged for a retry with jitter, at the cost of one copy; hot paths that
    /// own their matrix use [`Cholesky::factor_owned`] instead.
    pub fn factor(a: &Mat<f64>, what: &str, par: Parallelism) -> Result<Self, LinalgError> {
        Self::factor_owned(a.clone(), what, par, || a.clone())
    }

    /// Factorise `a` in place. `rebuild` must return `a` again; it is called only if the
    /// factorisation fails (the failed attempt overwrites the buffer) and a jitter retry is
    /// needed — so the success path makes no copy of the matrix.
    pub fn factor_owned(
        a: Mat<f64>,
        what: &str,
        par: Parallelism,
        rebuild: impl Fn() -> Mat<f64>,
    ) -> Result<Self, LinalgError> {
        let n = a.nrows();
        let mean_diag = if n > 0 && a.ncols() == n {
            (0..n).map(|i| a[(i, i)]).sum::<f64>() / n as f64
        } else {
            0.0
        };
        Self::factor_owned_relative_to(a, mean_diag, what, par, rebuild)
    }

    /// [`Cholesky::factor_owned`] with the jitter relative to `scale` instead of the mean
    /// diagonal of `a`: for a Schur complement `K − AᵀA`, whose diagonal can cancel to round-off
    /// while the jitter it needs is on the scale of `K`.
    pub fn factor_owned_relative_to(
        a: Mat<f64>,
        scale: f64,
        what: &str,
        par: Parallelism,
        rebuild: impl Fn() -> Mat<f64>,
    ) -> Result<Self, LinalgError> {
        let n = a.nrows();
        if n == 0 || a.ncols() != n {
            return Err(LinalgError::Shape {
                what: what.to_string(),
                rows: a.nrows(),
                cols: a.ncols(),
            });
        }
        let mean_diag = scale;
        let mut l = a;
        let mut jitter = 0.0;
        let mut next = JITTER_START * mean_diag.abs().max(f64::MIN_POSITIVE);
        loop {
            // A NaN or infinity anywhere in the lower triangle reaches the factor's diagonal
            // (L_ii = √(A_ii − Σ_k L_ik²) and L_ij involves A_ij), so checking that diagonal
            // after a "successful" factorisation is a complete and O(n) finiteness test.
            if try_factor(l.as_mut(), par) && (0..n).all(|i| l[(i, i)].is_finite()) {
                return Ok(Cholesky { l, jitter, par });
            }
            l = rebuild();
            check_finite_lower(l.as_ref(), what)?;
            if jitter >= JITTER_CAP * mean_diag.abs() || !next.is_finite() {
                return Err(LinalgError::NotPositiveDefinite {
                    what: what.to_string(),
                    n,
                    jitter,
                    cap: JITTER_CAP,
                });
            }
            jitter = next;
            next *= 10.0;
            for i in 0..n {
                l[(i, i)] += jitter;
            }
        }
    }

    /// Factorise `a` in place without any jitter: `None` if it is not (numerically) positive
    /// definite. For callers with a fallback of their own.
    pub fn exact(a: Mat<f64>, par: Parallelism) -> Option<Self> {
        let n = a.nrows();
        let mut l = a;
        (n > 0 && l.ncols() == n && try_factor(l.as_mut(), par))
            .then_some(())
            .filter(|_| (0..n).all(|i| l[(i, i)].is_finite()))
            .map(|_| Cholesky {
                l,
                jitter: 0.0,
                par,
            })
    }

    /// A factor assembled elsewhere (e.g. from blocks, see
    /// [`BlockCholesky::to_cholesky`](super::BlockCholesky::to_cholesky)): `l` must be
    /// lower triangular with a positive diagonal; `jitter` is what its factorisations needed.
    pub(crate) fn from_parts(l: Mat<f64>, jitter: f64, par: Parallelism) -> Self {
        Cholesky { l, jitter, par }
    }

    /// The dimension of the factorised matrix.
    pub fn n(&self) -> usize {
        self.l.nrows()
    }

    /// The jitter (absolute, added to the diagonal) that the factorisation needed; 0 if none.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The parallelism this factor uses for its solves.
    pub fn parallelism(&self) -> Parallelism {
        self.par
    }

    /// The factor `L` (lower triangle only is meaningful).
    pub fn l(&self) -> MatRef<'_, f64> {
        self.l.as_ref()
    }

    /// `log det A = 2 Σ log L_ii`.
    pub fn log_det(&self) -> f64 {
        2.0 * (0..self.n()).map(|i| self.l[(i, i)].ln()).sum::<f64>()
    }

    /// Overwrite `rhs` with `A⁻¹ rhs`.
    pub fn solve_in_place(&self, rhs: MatMut<'_, f64>) {
        llt::solve::solve_in_place(
            self.l.as_ref(),
            rhs,
            self.par.faer(),
            MemStack::new(&mut MemBuffer::new(faer::dyn_stack::StackReq::EMPTY)),
        );
    }

    /// `A⁻¹ b` for a vector.
    pub fn solve_vec(&self, b: &[f64]) -> Vec<f64> {
        let mut m = Mat::from_fn(b.len(), 1, |i, _| b[i]);
        self.solve_in_place(m.as_mut());
        (0..b.len()).map(|i| m[(i, 0)]).collect()
    }

    /// Overwrite `rhs` with `L⁻¹ rhs` (half a solve: `‖L⁻¹ b‖² = bᵀ A⁻¹ b`).
    pub fn solve_lower_in_place(&self, rhs: MatMut<'_, f64>) {
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            self.l.as_ref(),
            rhs,
            self.par.faer(),
        );
    }

    /// Overwrite `rhs` with `L⁻ᵀ rhs` (the other half of a solve: `A⁻¹ = L⁻ᵀ L⁻¹`).
    pub fn solve_lower_transpose_in_place(&self, rhs: MatMut<'_, f64>) {
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(
            self.l.as_ref().transpose(),
            rhs,
            self.par.faer(),
        );
    }

    /// `A⁻¹`, with its lower triangle (and diagonal) filled in; the strict upper triangle is
    /// unspecified. Costs `2n³/3` flops: `L⁻¹` (faer's recursive triangular inverse), then the
    /// lower triangle of `L⁻ᵀ L⁻¹` in place by row blocks of GEMMs.
    pub fn inverse_lower(&self) -> Mat<f64> {
        let n = self.n();
        let mut out = super::par_zeros(n, n, self.par);
        self.invert_lower_into_zeroed(out.as_mut());
        out
    }

    /// The full symmetric `A⁻¹`.
    pub fn inverse(&self) -> Mat<f64> {
        let mut inv = self.inverse_lower();
        super::mirror_lower(inv.as_mut());
        inv
    }

    /// Writes the full symmetric `A⁻¹` into `dst` (n × n, any contents), for callers that
    /// assemble it into a larger matrix: no allocation and no copy.
    pub fn inverse_into(&self, mut dst: MatMut<'_, f64>) {
        // The strict upper triangle must be zero for the Gram product (see below); the rest is
        // overwritten.
        for j in 1..dst.ncols() {
            dst.as_mut().col_mut(j).subrows_mut(0, j).fill(0.0);
        }
        self.invert_lower_into_zeroed(dst.as_mut());
        super::mirror_lower(dst);
    }

    /// The lower triangle of `A⁻¹` into `dst`, whose strict upper triangle must be zero: the
    /// triangular inverse writes only the lower triangle and the Gram product reads the upper
    /// halves of the diagonal blocks.
    fn invert_lower_into_zeroed(&self, mut dst: MatMut<'_, f64>) {
        faer::linalg::triangular_inverse::invert_lower_triangular(
            dst.as_mut(),
            self.l.as_ref(),
            self.par.faer(),
        );
        lower_gram_in_place(dst, self.par);
    }

    /// Reconstruct `L Lᵀ` (the factorised matrix including any jitter); for tests and checks.
    pub fn reconstruct(&self) -> Mat<f64> {
        let n = self.n();
        let l = Mat::from_fn(n, n, |i, j| if i >= j { self.l[(i, j)] } else { 0.0 });
        let mut out = Mat::<f64>::zeros(n, n);
        faer::linalg::matmul::matmul(
            out.as_mut(),
            Accum::Replace,
            l.as_ref(),
            l.transpose(),
            1.0,
            self.par.faer(),
        );
        out
    }
}

fn check_finite_lower(a: MatRef<'_, f64>, what: &str) -> Result<(), LinalgError> {
    let n = a.nrows();
    for j in 0..n {
        for i in j..n {
            let v = a[(i, j)];
            if !v.is_finite() {
                return Err(LinalgError::NonFinite {
                    what: what.to_string(),
                    row: i,
                    col: j,
                    value: v,
                });
            }
        }
    }
    Ok(())
}

/// Try to factorise in place; `false` if a pivot was not positive.
fn try_factor(a: MatMut<'_, f64>, par: Parallelism) -> bool {
    let n = a.nrows();
    let p = par.faer();
    let mut buf = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(
        n,
        p,
        Default::default(),
    ));
    llt::factor::cholesky_in_place(
        a,
        Default::default(),
        p,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Mat<f64> {
        // A well-conditioned SPD matrix: Bᵀ B + n I with a deterministic B.
        let b = Mat::from_fn(n, n, |i, j| ((i * 31 + j * 17) % 11) as f64 / 7.0 - 0.6);
        let mut a = Mat::<f64>::zeros(n, n);
        faer::linalg::matmul::matmul(
            a.as_mut(),
            Accum::Replace,
            b.transpose(),
            b.as_ref(),
            1.0,
            faer::Par::Seq,
        );
        for i in 0..n {
            a[(i, i)] += n as f64;
        }
        a
    }

    fn max_abs_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
        let mut m: f64 = 0.0;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                m = m.max((a[(i, j)] - b[(i, j)]).abs());
            }
        }
        m
    }

    #[test]
    fn factor_reconstructs_without_jitter() {
        for par in [Parallelism::Sequential, Parallelism::Parallel] {
            let a = spd(40);
            let c = Cholesky::factor(&a, "test", par).unwrap();
            assert_eq!(c.jitter(), 0.0);
            assert!(max_abs_diff(c.reconstruct().as_ref(), a.as_ref()) < 1e-10);
        }
    }

    #[test]
    fn solve_inverse_and_logdet_agree_with_brute_force() {
        // 2×2 closed form: [[4, 2], [2, 3]], det 8, inverse [[3, -2], [-2, 4]] / 8.
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, 3.0]][i][j]);
        let c = Cholesky::factor(&a, "t", Parallelism::Sequential).unwrap();
        assert!((c.log_det() - 8f64.ln()).abs() < 1e-14);
        let inv = c.inverse();
        let expect = [[3.0 / 8.0, -2.0 / 8.0], [-2.0 / 8.0, 4.0 / 8.0]];
        for i in 0..2 {
            for j in 0..2 {
                assert!((inv[(i, j)] - expect[i][j]).abs() < 1e-15);
            }
        }
        let x = c.solve_vec(&[1.0, 2.0]);
        assert!((x[0] - (3.0 - 4.0) / 8.0).abs() < 1e-15);
        assert!((x[1] - (-2.0 + 8.0) / 8.0).abs() < 1e-15);
    }

    #[test]
    fn exact_factorisation_adds_no_jitter_and_fails_cleanly() {
        let a = spd(30);
        let exact = Cholesky::exact(a.clone(), Parallelism::Sequential).unwrap();
        let usual = Cholesky::factor(&a, "t", Parallelism::Sequential).unwrap();
        assert_eq!(exact.jitter(), 0.0);
        assert!((exact.log_det() - usual.log_det()).abs() < 1e-12 * usual.log_det().abs());
        // Indefinite, and singular (which `factor` would rescue with jitter): no factor.
        let mut indefinite = a.clone();
        indefinite[(4, 4)] = -1.0;
        assert!(Cholesky::exact(indefinite, Parallelism::Sequential).is_none());
        let v: Vec<f64> = (0..5).map(|i| 1.0 + i as f64).collect();
        let rank_one = Mat::from_fn(5, 5, |i, j| v[i] * v[j]);
        assert!(Cholesky::exact(rank_one, Parallelism::Sequential).is_none());
        assert!(Cholesky::exact(Mat::zeros(0, 0), Parallelism::Sequential).is_none());
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let a = spd(60);
        let c = Cholesky::factor(&a, "t", Parallelism::Sequential).unwrap();
        let inv = c.inverse();
        let prod = &inv * &a;
        assert!(max_abs_diff(prod.as_ref(), Mat::<f64>::identity(60, 60).as_ref()) < 1e-12);
        // half solve: ‖L⁻¹ b‖² = bᵀ A⁻¹ b
        let b = Mat::from_fn(60, 1, |i, _| (i as f64).sin());
        let mut h = b.clone();
        c.solve_lower_in_place(h.as_mut());
        let quad: f64 = (0..60).map(|i| h[(i, 0)] * h[(i, 0)]).sum();
        let mut s = b.clone();
        c.solve_in_place(s.as_mut());
        let quad2: f64 = (0..60).map(|i| b[(i, 0)] * s[(i, 0)]).sum();
        assert!((quad - quad2).abs() < 1e-12 * quad2.abs());
    }

    #[test]
    fn inverse_into_a_dirty_block_equals_the_inverse() {
        // Sizes on both sides of the Gram product's row block, written into the middle of a
        // larger matrix full of garbage, as the block inverses of the ICM do.
        for n in [7, 150] {
            let c = Cholesky::factor(&spd(n), "t", Parallelism::Parallel).unwrap();
            let mut big = Mat::from_fn(n + 9, n + 5, |i, j| (i * 31 + j * 17) as f64 - 1e3);
            c.inverse_into(big.as_mut().submatrix_mut(4, 3, n, n));
            let inv = c.inverse();
            assert_eq!(big.as_ref().submatrix(4, 3, n, n), inv.as_ref());
            assert_eq!(big[(3, 3)], (3 * 31 + 3 * 17) as f64 - 1e3);
        }
    }

    #[test]
    fn jitter_escalates_only_on_failure_and_is_recorded() {
        // Rank-one matrix v vᵀ: singular, needs jitter; the recorded jitter must be the smallest
        // power-of-ten multiple of 1e-8 × mean diagonal that works.
        let n = 5;
        let v: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let a = Mat::from_fn(n, n, |i, j| v[i] * v[j]);
        let mean_diag = v.iter().map(|x| x * x).sum::<f64>() / n as f64;
        let c = Cholesky::factor(&a, "t", Parallelism::Sequential).unwrap();
        assert!(c.jitter() > 0.0);
        let rel = c.jitter() / mean_diag;
        let k = rel.log10().round();
        assert!((rel.log10() - k).abs() < 1e-9 && (-8.0..=-2.0).contains(&k));
        // The factor is of A + jitter I exactly.
        let mut aj = a.clone();
        for i in 0..n {
            aj[(i, i)] += c.jitter();
        }
        assert!(max_abs_diff(c.reconstruct().as_ref(), aj.as_ref()) < 1e-9);
    }

    #[test]
    fn failure_beyond_cap_is_a_clear_error() {
        let a = Mat::from_fn(2, 2, |i, j| if i == j { -1.0 } else { 0.0 });
        let err = Cholesky::factor(&a, "kernel matrix", Parallelism::Sequential).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("kernel matrix") && msg.contains("not positive definite"),
            "{msg}"
        );
    }

    #[test]
    fn non_finite_and_bad_shape_are_errors() {
        let mut a = spd(3);
        a[(2, 1)] = f64::NAN;
        assert!(matches!(
            Cholesky::factor(&a, "k", Parallelism::Sequential),
            Err(LinalgError::NonFinite { row: 2, col: 1, .. })
        ));
        let b = Mat::<f64>::zeros(2, 3);
        assert!(matches!(
            Cholesky::factor(&b, "k", Parallelism::Sequential),
            Err(LinalgError::Shape { .. })
        ));
    }
}
