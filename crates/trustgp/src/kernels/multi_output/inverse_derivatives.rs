//! `[P ∂K P]_jj` and `P ∂K P V` for every parameter of a single-term ICM with one kernel
//! parameter on homotopic data in layout order (see [`LooCovariance::inverse_derivatives`](crate::models::robust::LooCovariance::inverse_derivatives)), with
//! `P = (K + D)⁻¹`, `K = B ⊗ K_x`, `D = diag(d)`.
//!
//! **Coregionalisation.** `∂K = ∂B ⊗ K_x = (G ⊗ I)(B ⊗ K_x) = (G ⊗ I)(P⁻¹ − D)` with
//! `G = ∂B B⁻¹`, so no product with `K_x` is needed:
//!
//! ```text
//! P ∂K P   = P (G ⊗ I) − P (G ⊗ I) D P
//! [·]_jj   = Σ_s P_{j,(s,i_j)} G_{s,t_j} − Σ_{s,t} G_st S_st[j],
//!            S_st[j] = Σ_i P_{(s,i),j} d_{(t,i)} P_{(t,i),j}      (O(T n²) once for all)
//! P ∂K P V = P (G ⊗ I)(V − D U)                                    (U = P V)
//! ```
//!
//! **Kernel parameters.** `∂K = B ⊗ ∂K_x`, so the s-th block row of `∂K P` is
//! `Σ_t B_st ∂K_x P_t·` (`P_t·` the rows of output t): T products of m × m × n per
//! parameter, and `P ∂K P V = P (∂K U)`. `∂K_x` is the central difference of
//! the m × m kernel matrix in the log-parameter (step 1e-5, relative error about 1e-10): the
//! kernels expose gradients only as contractions, and what these derivatives feed — a
//! curvature model for the optimiser and the gradient at the same point — needs far less
//! accuracy than that.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef};
use rayon::prelude::*;

use super::homotopic::{factor_and_invert, Layout};
use super::{Coregion, MultiOutputKernel};
use crate::kernels::{InverseDerivative, Kernel};
use crate::linalg::{par_zeros, sum_pairs, Parallelism};

/// Step of the central difference of `K_x` in each log-parameter.
const STEP: f64 = 1e-5;

/// The most kernel parameters for which the derivatives are offered. Each one costs T products
/// of m × m × n, about 0.7 of an evaluation of the weighted LOO with its gradient (Energy,
/// m = 576: 22 ms against 35); with one parameter the three Gauss–Newton starts of a fit cost
/// about one evaluation more and save eight, with two they would about break even, and with
/// ARD lengthscales (8 on Energy) they cost several times what they save.
const MAX_KERNEL_PARAMETERS: usize = 1;

/// The derivatives for every parameter (kernel parameters, then coregionalisation), or `None`
/// if `k` has several terms or more than [`MAX_KERNEL_PARAMETERS`] kernel parameters, `x` is
/// not homotopic in layout order or `B` is near singular.
pub(crate) fn icm(
    k: &MultiOutputKernel,
    x: MatRef<'_, f64>,
    p: MatRef<'_, f64>,
    d: &[f64],
    v: MatRef<'_, f64>,
    u: MatRef<'_, f64>,
    par: Parallelism,
) -> Option<Vec<InverseDerivative>> {
    let [term] = k.terms() else {
        return None;
    };
    if term.kernel.n_params() > MAX_KERNEL_PARAMETERS {
        return None;
    }
    let t = term.coregion.n_tasks();
    let layout = Layout::of(x, t)?;
    if !layout.in_order() {
        return None;
    }
    let b = term.coregion.b();
    let (_, b_inv) = factor_and_invert(b.as_ref())?;
    let blocks = Blocks {
        p,
        t,
        m: layout.m(),
    };
    let mut out = blocks.kernel_parameters(&term.kernel, layout.unique.as_ref(), &b, u, par)?;
    out.extend(blocks.coregion_parameters(&term.coregion, &b_inv, d, v, u, par));
    Some(out)
}

/// `P` with its output blocks.
struct Blocks<'a> {
    p: MatRef<'a, f64>,
    t: usize,
    m: usize,
}

impl Blocks<'_> {
    /// `[Σ_t w_0t M_t· | Σ_t w_1t M_t· | …]`: the rows of `mat` (n × c) combined by output
    /// with the weights `w` (T × T), the s-th combination in columns `s·c..(s+1)·c` (m × Tc).
    fn combine(&self, w: &Mat<f64>, mat: MatRef<'_, f64>) -> Mat<f64> {
        let (m, t, c) = (self.m, self.t, mat.ncols());
        let mut out = Mat::<f64>::zeros(m, t * c);
        for col in 0..c {
            let src = column(mat, col);
            for s in 0..t {
                let dst = out.col_as_slice_mut(s * c + col);
                for r in 0..t {
                    let wsr = w[(s, r)];
                    for (o, v) in dst.iter_mut().zip(&src[r * m..(r + 1) * m]) {
                        *o += wsr * v;
                    }
                }
            }
        }
        out
    }

    fn kernel_parameters(
        &self,
        kernel: &Kernel,
        unique: MatRef<'_, f64>,
        b: &Mat<f64>,
        u: MatRef<'_, f64>,
        par: Parallelism,
    ) -> Option<Vec<InverseDerivative>> {
        let (n, m, t) = (self.p.nrows(), self.m, self.t);
        let theta = kernel.log_params();
        let yu = self.combine(b, u);
        let mut product = par_zeros(m, t * n, par);
        (0..theta.len())
            .map(|q| {
                let dk = kernel_derivative(kernel, unique, &theta, q)?;
                // ∂K_x P_t· for every output t (P_t· the m × n rows of output t, read in
                // place), in columns t·n..(t+1)·n of `product`; then
                // [P ∂K P]_jj = Σ_st B_st ⟨P_{(s,·),j}, [∂K_x P_t·]_{·j}⟩.
                for r in 0..t {
                    matmul(
                        product.as_mut().subcols_mut(r * n, n),
                        Accum::Replace,
                        dk.as_ref(),
                        self.p.subrows(r * m, m),
                        1.0,
                        par.faer(),
                    );
                }
                let diag = map_columns(n, par, |j| {
                    let pj = column(self.p, j);
                    (0..t * t)
                        .map(|sr| {
                            let (s, r) = (sr / t, sr % t);
                            let block = &pj[s * m..(s + 1) * m];
                            b[(s, r)]
                                * sum_pairs(block, product.col_as_slice(r * n + j), |a, b| a * b)
                        })
                        .sum()
                });
                // ∂K U, block row s = ∂K_x Σ_t B_st U_t·, then P times it.
                let dku_blocks = &dk * &yu;
                let c = u.ncols();
                let dku = Mat::from_fn(n, c, |i, k| dku_blocks[(i % m, (i / m) * c + k)]);
                let mut times_v = Mat::<f64>::zeros(n, c);
                matmul(
                    times_v.as_mut(),
                    Accum::Replace,
                    self.p,
                    dku.as_ref(),
                    1.0,
                    par.faer(),
                );
                Some(InverseDerivative { diag, times_v })
            })
            .collect()
    }

    fn coregion_parameters(
        &self,
        coregion: &Coregion,
        b_inv: &Mat<f64>,
        d: &[f64],
        v: MatRef<'_, f64>,
        u: MatRef<'_, f64>,
        par: Parallelism,
    ) -> Vec<InverseDerivative> {
        let (n, m, t, q) = (self.p.nrows(), self.m, self.t, v.ncols());
        let np = coregion.n_params();
        // ∂B_st/∂θ_k: the parameters' gradient map applied to the unit matrices E_st.
        let mut db = vec![Mat::<f64>::zeros(t, t); np];
        for s in 0..t {
            for r in 0..t {
                let mut unit = Mat::<f64>::zeros(t, t);
                unit[(s, r)] = 1.0;
                let mut g = vec![0.0; np];
                coregion.grad_from(&unit, &mut g);
                for (dbk, gk) in db.iter_mut().zip(&g) {
                    dbk[(s, r)] = *gk;
                }
            }
        }
        // sums[j][s·T + r] = S_sr[j] = Σ_i P_{(s,i),j} d_{(r,i)} P_{(r,i),j}.
        let sums: Vec<Vec<f64>> = map_columns(n, par, |j| {
            let col = column(self.p, j);
            let mut out = vec![0.0; t * t];
            let mut scaled = vec![0.0; m];
            for r in 0..t {
                let (pr, dr) = (&col[r * m..(r + 1) * m], &d[r * m..(r + 1) * m]);
                (scaled.iter_mut().zip(pr).zip(dr)).for_each(|((v, p), w)| *v = p * w);
                for s in 0..t {
                    out[s * t + r] = sum_pairs(&col[s * m..(s + 1) * m], &scaled, |a, b| a * b);
                }
            }
            out
        });
        let rest = Mat::from_fn(n, q, |i, c| v[(i, c)] - d[i] * u[(i, c)]);
        let mut stacked = Mat::<f64>::zeros(n, np * q);
        let mut diags = Vec::with_capacity(np);
        for (k, dbk) in db.iter().enumerate() {
            let g = dbk * b_inv;
            let diag = (0..n)
                .map(|j| {
                    let (tj, ij) = (j / m, j % m);
                    // P symmetric: P_{j,(s,i)} read down column j.
                    let own: f64 = (0..t).map(|s| self.p[(s * m + ij, j)] * g[(s, tj)]).sum();
                    let through_d: f64 =
                        (0..t * t).map(|sr| g[(sr / t, sr % t)] * sums[j][sr]).sum();
                    own - through_d
                })
                .collect();
            diags.push(diag);
            let combined = self.combine(&g, rest.as_ref());
            for s in 0..t {
                stacked
                    .as_mut()
                    .submatrix_mut(s * m, k * q, m, q)
                    .copy_from(combined.as_ref().subcols(s * q, q));
            }
        }
        let mut all = Mat::<f64>::zeros(n, np * q);
        matmul(
            all.as_mut(),
            Accum::Replace,
            self.p,
            stacked.as_ref(),
            1.0,
            par.faer(),
        );
        diags
            .into_iter()
            .enumerate()
            .map(|(k, diag)| InverseDerivative {
                diag,
                times_v: all.as_ref().subcols(k * q, q).to_owned(),
            })
            .collect()
    }
}

/// `f(j)` for `j` in `0..n`, spread over threads where `par` allows; each `f(j)` is computed
/// alone, so the result does not depend on the threads.
fn map_columns<T: Send>(
    n: usize,
    par: Parallelism,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    match par {
        Parallelism::Parallel => (0..n).into_par_iter().map(f).collect(),
        Parallelism::Sequential => (0..n).map(f).collect(),
    }
}

/// Column `j` of a column-major matrix as a slice.
fn column(mat: MatRef<'_, f64>, j: usize) -> &[f64] {
    mat.col(j)
        .try_as_col_major()
        .expect("a column of a column-major matrix is contiguous")
        .as_slice()
}

/// `∂K_x/∂θ_q` (θ the kernel's log-parameters) by a central difference, or `None` if a
/// shifted parameter is not valid.
fn kernel_derivative(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    theta: &[f64],
    q: usize,
) -> Option<Mat<f64>> {
    let at = |h: f64| {
        let mut k = kernel.clone();
        let mut shifted = theta.to_vec();
        shifted[q] += h;
        k.set_log_params(&shifted).ok()?;
        Some(k.matrix(x))
    };
    let (plus, minus) = (at(STEP)?, at(-STEP)?);
    Some(Mat::from_fn(x.nrows(), x.nrows(), |i, j| {
        (plus[(i, j)] - minus[(i, j)]) / (2.0 * STEP)
    }))
}
