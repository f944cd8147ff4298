//! A single-term ICM on homotopic data (every output observed at every distinct input) has
//! Kronecker structure that the dense algorithms ignore. Two uses of it, each falling back to
//! the dense algorithm when the structure is missing:
//!
//! * [`contract`]: the gradient contraction of an [`InverseSandwich`] without forming the
//!   n×n adjoint `W` (any number of outputs; T times fewer flops);
//! * [`inverse_plus_diagonal`]: `(K + diag(d))⁻¹` for two outputs by block elimination
//!   (5m³ instead of 8m³ flops), with the diagonal of `K (K + diag(d))⁻¹` from `K_x` and `B`
//!   (the n×n `K` is never formed).
//!
//! **Contraction.** Up to the order of the entries, `K = B ⊗ K_x` (T outputs, m distinct inputs, n = Tm).
//! With `P_tu` the m×m blocks of `P`, `E_u`, `D_u` the output-u parts of `diag(e)`,
//! `diag(d)`, `a_t`, `b_t` those of the vectors and `B = F Fᵀ` (Cholesky), the contraction
//! needs only the folded matrices
//!
//! ```text
//! N    = Σ_ts B_ts W_ts = −Σ_{r,u} Z_ru E_u Z_ruᵀ − ½ Σ_t (a_t (Bb)_tᵀ + b_t (Ba)_tᵀ),
//!        Z_ru = Σ_s F_sr P_su                         (kernel parameters: Σ N ∘ ∂K_x)
//! G_pq = tr(W_pq K_x) = −Σ_u ⟨P_pu E_u, K_x P_qu⟩ − ½ (a_pᵀ K_x b_q + b_pᵀ K_x a_q)
//!                                                      (coregionalisation: ∂φ/∂B)
//! ```
//!
//! `N` is one m × T²m × m product with a symmetric result, T²m³ flops against the (Tm)³ of
//! forming `W`. `G` needs `K_x P_qu`, which `(c K + D) P = I` gives without a product:
//! `c Σ_s B_js K_x P_su = δ_ju I − D_j P_ju`, so `K_x P_qu = (1/c) Σ_j (B⁻¹)_qj (δ_ju I −
//! D_j P_ju)`, O(T³m²) in all. This divides by `B`; when `B` is near singular (a pivot of its
//! Cholesky factor below `MIN_PIVOT` of its largest diagonal) the caller forms `W` instead.

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::linalg::solvers::DenseSolveCore;
use faer::{Accum, Mat, MatRef, Side};
use rayon::prelude::*;

use super::{task, MultiOutputKernel, Unique};
use crate::kernels::{InversePlusDiagonal, InverseSandwich};
use crate::linalg::{
    copy_transposed, mirror_lower, par_from_columns, par_zeros, sum_pairs, Cholesky, Parallelism,
};

/// Why a column of a `Mat` can be viewed as a slice.
const CONTIGUOUS: &str = "a Mat column is contiguous";

/// A column of a `Mat` as a slice.
fn column_slice(col: faer::ColMut<'_, f64>) -> &mut [f64] {
    col.try_as_col_major_mut().expect(CONTIGUOUS).as_slice_mut()
}

/// Blocks of columns summed in parallel, in a fixed order, by `Blocks::coregion_weights`.
const SUM_BLOCKS: usize = 8;

/// Smallest squared pivot of `B`'s Cholesky factor, relative to `B`'s largest diagonal entry,
/// for which `B⁻¹` is used (a condition number of `B` up to about 1e10).
const MIN_PIVOT: f64 = 1e-10;

/// The entries of a homotopic task-indexed input.
pub(super) struct Layout {
    /// The distinct inputs (m rows, without the task column).
    pub(super) unique: Mat<f64>,
    /// `index[t·m + i]`: the entry of output t at distinct input i (the layout order).
    index: Vec<usize>,
    t: usize,
}

impl Layout {
    /// The layout of `x` (task column last) if every one of its distinct inputs carries each of
    /// the `t` outputs exactly once.
    pub(super) fn of(x: MatRef<'_, f64>, t: usize) -> Option<Layout> {
        let (unique, row) = Unique::rows(MultiOutputKernel::inputs(x));
        let (n, m) = (x.nrows(), unique.nrows());
        if n != t * m {
            return None;
        }
        let mut index = vec![usize::MAX; n];
        for (k, r) in row.iter().enumerate() {
            let slot = index.get_mut(task(x, k) * m + r)?;
            if *slot != usize::MAX {
                return None;
            }
            *slot = k;
        }
        Some(Layout { unique, index, t })
    }

    pub(super) fn m(&self) -> usize {
        self.unique.nrows()
    }

    /// Whether the entries are already in layout order (outputs one after the other, inputs
    /// in the same order within each), as [`TaskEntries`](crate::models::robust::tasks::TaskEntries)
    /// builds them from complete data.
    pub(super) fn in_order(&self) -> bool {
        self.index.iter().enumerate().all(|(k, &e)| k == e)
    }

    /// An entry vector in layout order.
    fn order(&self, v: &[f64]) -> Vec<f64> {
        self.index.iter().map(|&k| v[k]).collect()
    }
}

/// Adds the contraction of `w` for the ICM `k` at `x` to `out` and returns `true`, or returns
/// `false` without touching `out` if `k` has several terms, `x` is not homotopic or `B` is
/// near singular.
pub(crate) fn contract(
    k: &MultiOutputKernel,
    x: MatRef<'_, f64>,
    w: &InverseSandwich<'_>,
    par: Parallelism,
    out: &mut [f64],
) -> bool {
    let [term] = k.terms.as_slice() else {
        return false;
    };
    let Some(lay) = Layout::of(x, k.n_tasks()) else {
        return false;
    };
    let b = term.coregion.b();
    let Some((f, b_inv)) = factor_and_invert(b.as_ref()) else {
        return false;
    };
    let permuted;
    let p = if lay.in_order() {
        w.p
    } else {
        permuted = Mat::from_fn(w.p.nrows(), w.p.ncols(), |i, j| {
            w.p[(lay.index[i], lay.index[j])]
        });
        permuted.as_ref()
    };
    let (d, e, a, bv) = (
        lay.order(w.d),
        lay.order(w.e),
        lay.order(w.a),
        lay.order(w.b),
    );
    let blocks = Blocks {
        p,
        t: lay.t,
        m: lay.m(),
    };
    let kx = term.kernel.matrix(lay.unique.as_ref());
    let mut n_fold = blocks.folded_kernel_weights(f.as_ref(), &e, par);
    blocks.add_rank_two(&mut n_fold, &a, &bv, b.as_ref());
    let g = blocks.coregion_weights(b_inv.as_ref(), &kx, &d, &e, &a, &bv, w.scale);
    let nk = term.kernel.n_params();
    term.kernel
        .grad_contract(lay.unique.as_ref(), n_fold.as_ref(), &mut out[..nk]);
    term.coregion.grad_from(&g, &mut out[nk..]);
    true
}

/// `(K + diag(d))⁻¹` and the diagonal of `K (K + diag(d))⁻¹` (from `K_x` and `B`, without
/// forming `K`) for a single-term ICM with two outputs on homotopic data, by block
/// elimination on the outputs in 5m³ flops instead of the 8m³ of a dense Cholesky and inverse
/// (m distinct inputs). With `Q₁₁ = b₁₁ K_x + D₁`, `P₁₁ = Q₁₁⁻¹` and `r = b₁₂/b₁₁`, the
/// off-diagonal block `b₁₂ K_x = r (Q₁₁ − D₁)` gives `P₁₁ Q₁₂ = X = r (I − P₁₁ D₁)` without a
/// product, and the Schur complement is a sum of positive semi-definite terms:
///
/// ```text
/// S   = (b₂₂ − r b₁₂) K_x + D₂ + r² D₁ (I − P₁₁ D₁),      P₂₂ = S⁻¹,
/// P₁₂ = −X P₂₂,      P₁₁ ← P₁₁ + X P₂₂ Xᵀ = P₁₁ − P₁₂ Xᵀ.
/// ```
///
/// The diagonal of `I − P₁₁ D₁` is taken as `b₁₁ [P₁₁ K_x]_jj`, which does not cancel when
/// `d_j` is huge (an outlier's effective noise). `None` if the structure is missing, `b₁₁` is
/// near zero or a block is not positive definite (the caller then factorises densely, with
/// jitter if need be).
pub(crate) fn inverse_plus_diagonal(
    k: &MultiOutputKernel,
    x: MatRef<'_, f64>,
    d: &[f64],
    par: Parallelism,
) -> Option<InversePlusDiagonal> {
    let [term] = k.terms.as_slice() else {
        return None;
    };
    if k.n_tasks() != 2 {
        return None;
    }
    let lay = Layout::of(x, 2)?;
    let b = term.coregion.b();
    let (b11, b12, b22) = (b[(0, 0)], b[(1, 0)], b[(1, 1)]);
    if !(b11 >= MIN_PIVOT * b22.max(b11) && b11.is_finite()) {
        return None;
    }
    let m = lay.m();
    let kx = term.kernel.matrix(lay.unique.as_ref());
    let d = lay.order(d);
    let (d1, d2) = d.split_at(m);
    let q11 = par_from_columns(m, m, par, |j, col| {
        (col.iter_mut().zip(kx.col_as_slice(j))).for_each(|(q, k)| *q = b11 * k);
        col[j] += d1[j];
    });
    let n = 2 * m;
    // The inverses are written straight into their blocks of P, and the bottom-left block holds
    // Xᵀ until the products that read it are done: no copies, and no buffer for Xᵀ.
    let mut p = par_zeros(n, n, par);
    let (mut p11, mut p12, mut x_t, mut p22) = p.as_mut().split_at_mut(m, m);
    Cholesky::exact(q11, par)?.inverse_into(p11.as_mut());
    let r = b12 / b11;
    // diag(I − P₁₁ D₁) = b₁₁ diag(P₁₁ K_x).
    let keep: Vec<f64> = (0..m)
        .map(|j| {
            let p11_col = p11.as_ref().col(j).try_as_col_major().expect(CONTIGUOUS);
            b11 * sum_pairs(p11_col.as_slice(), kx.col_as_slice(j), |p, k| p * k)
        })
        .collect();
    // Xᵀ = r (I − D₁ P₁₁) (P₁₁ symmetric): with Xᵀ stored, both products below read their
    // operands with columns contiguous along the inner dimension, faer's fastest layout.
    let schur_b = b22 - r * b12;
    let mut s = par_zeros(m, m, par);
    let fill = |(j, (x_col, s_col)): (usize, (faer::ColMut<'_, f64>, faer::ColMut<'_, f64>))| {
        let p11_col = p11.as_ref().col(j).try_as_col_major().expect(CONTIGUOUS);
        let (x_col, s_col) = (column_slice(x_col), column_slice(s_col));
        let columns = x_col.iter_mut().zip(s_col).zip(p11_col.as_slice());
        for (i, (((xv, sv), &pv), &kv)) in columns.zip(kx.col_as_slice(j)).enumerate() {
            let (from_d1, own, x) = if i == j {
                (d1[j] * keep[j], d2[j], keep[j])
            } else {
                (-d1[i] * pv * d1[j], 0.0, -d1[i] * pv)
            };
            *xv = r * x;
            *sv = schur_b * kv + r * r * from_d1 + own;
        }
    };
    match par {
        Parallelism::Parallel => (x_t.as_mut().par_col_iter_mut().zip(s.par_col_iter_mut()))
            .enumerate()
            .for_each(fill),
        Parallelism::Sequential => (x_t.as_mut().col_iter_mut().zip(s.col_iter_mut()))
            .enumerate()
            .for_each(fill),
    }
    Cholesky::exact(s, par)?.inverse_into(p22.as_mut());
    // P₁₂ = −X P₂₂, P₁₁ ← P₁₁ − P₁₂ Xᵀ.
    faer::linalg::matmul::matmul(
        p12.as_mut(),
        Accum::Replace,
        x_t.as_ref().transpose(),
        p22.as_ref(),
        -1.0,
        par.faer(),
    );
    matmul(
        p11.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Add,
        p12.as_ref(),
        BlockStructure::Rectangular,
        x_t.as_ref(),
        BlockStructure::Rectangular,
        -1.0,
        par.faer(),
    );
    mirror_lower(p11);
    copy_transposed(x_t, p12.as_ref());
    // [K P]_jj for entry j = (t, i): Σ_s B_ts ⟨K_x[:, i], P_st[:, i]⟩.
    let blocks = Blocks {
        p: p.as_ref(),
        t: 2,
        m,
    };
    let kp_layout: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|j| {
            let (t, i) = (j / m, j % m);
            let col = blocks.column(j);
            (0..2)
                .map(|s| {
                    b[(t, s)] * sum_pairs(kx.col_as_slice(i), blocks.part(col, s), |k, q| k * q)
                })
                .sum()
        })
        .collect();
    if lay.in_order() {
        return Some(InversePlusDiagonal {
            p,
            kp_diag: kp_layout,
        });
    }
    // Back from the layout order to the entries' order.
    let mut out = Mat::<f64>::zeros(n, n);
    let mut kp_diag = vec![0.0; n];
    for (c, &ec) in lay.index.iter().enumerate() {
        kp_diag[ec] = kp_layout[c];
        let col = out.col_as_slice_mut(ec);
        for (r, &er) in lay.index.iter().enumerate() {
            col[er] = p[(r, c)];
        }
    }
    Some(InversePlusDiagonal { p: out, kp_diag })
}

/// The Cholesky factor `F` of `B` and `B⁻¹`, or `None` if `B` is near singular.
pub(super) fn factor_and_invert(b: MatRef<'_, f64>) -> Option<(Mat<f64>, Mat<f64>)> {
    let t = b.nrows();
    let llt = b.llt(Side::Lower).ok()?;
    let f = llt.L().to_owned();
    let biggest = (0..t).map(|i| b[(i, i)]).fold(0.0, f64::max);
    let smallest = (0..t)
        .map(|i| f[(i, i)] * f[(i, i)])
        .fold(f64::INFINITY, f64::min);
    (smallest >= MIN_PIVOT * biggest && biggest.is_finite()).then(|| (f, llt.inverse()))
}

/// `P` in layout order: block `(s, u)` is rows `s·m..`, columns `u·m..`; entry vectors are in
/// the same order, and slices of them by output are the `v_t` of the module docs.
struct Blocks<'a> {
    p: MatRef<'a, f64>,
    t: usize,
    m: usize,
}

impl Blocks<'_> {
    /// Column `c` of `P` split by output: its part in output `s` is `[s·m, (s+1)·m)`.
    fn column(&self, c: usize) -> &[f64] {
        self.p
            .col(c)
            .try_as_col_major()
            .expect(CONTIGUOUS)
            .as_slice()
    }

    /// The output-`s` part of an entry vector.
    fn part<'v>(&self, v: &'v [f64], s: usize) -> &'v [f64] {
        &v[s * self.m..(s + 1) * self.m]
    }

    /// The lower triangle of `−Σ_{r,u} Z_ru E_u Z_ruᵀ`, `Z_ru = Σ_s F_sr P_su`: per `r`, one
    /// product `−Y_rᵀ E Y_r` of the n × m matrix `Y_r = Z_rᵀ = Σ_s F_sr P_{·s}` (`P` symmetric)
    /// with its row-scaled self. `Y_rᵀ (E Y_r)` is the layout faer's product runs fastest
    /// (both operands' columns contiguous along the inner dimension, about 30% faster than
    /// `Z Zᵀ` from m × n operands), and the last `Y` is a block column of `P` itself, scaled.
    fn folded_kernel_weights(&self, f: MatRef<'_, f64>, e: &[f64], par: Parallelism) -> Mat<f64> {
        let (t, m) = (self.t, self.m);
        let mut n_fold = par_zeros(m, m, par);
        for r in 0..t {
            let (built, ey) = self.block_combination(f, r, e, par);
            let y = match &built {
                Some(y) => y.as_ref(),
                None => self.p.subcols(r * m, m),
            };
            matmul(
                n_fold.as_mut(),
                BlockStructure::TriangularLower,
                if r == 0 { Accum::Replace } else { Accum::Add },
                y.transpose(),
                BlockStructure::Rectangular,
                ey.as_ref(),
                BlockStructure::Rectangular,
                -1.0,
                par.faer(),
            );
        }
        n_fold
    }

    /// `Y_r = Σ_{s ≥ r} F_sr P_{·s}` (n × m, the transpose of `Z_r` for a lower-triangular `F`)
    /// and `E Y_r`, in one pass. The last `Y_r` is `F_rr P_{·r}`: it is not built (`None`; the
    /// caller reads the block column of `P`) and its factor `F_rr²` goes into `E Y_r`.
    fn block_combination(
        &self,
        f: MatRef<'_, f64>,
        r: usize,
        e: &[f64],
        par: Parallelism,
    ) -> (Option<Mat<f64>>, Mat<f64>) {
        let (t, m) = (self.t, self.m);
        let n = t * m;
        let mut ey = par_zeros(n, m, par);
        if r + 1 == t {
            let scale = f[(r, r)] * f[(r, r)];
            let fill = |(j, col): (usize, faer::ColMut<'_, f64>)| {
                let p_col = self.column(r * m + j);
                (column_slice(col).iter_mut().zip(p_col).zip(e)).for_each(|((v, pv), ei)| {
                    *v = scale * ei * pv;
                });
            };
            match par {
                Parallelism::Parallel => ey.par_col_iter_mut().enumerate().for_each(fill),
                Parallelism::Sequential => ey.col_iter_mut().enumerate().for_each(fill),
            }
            return (None, ey);
        }
        let mut y = par_zeros(n, m, par);
        let fill = |(j, (col, col_e)): (usize, (faer::ColMut<'_, f64>, faer::ColMut<'_, f64>))| {
            let (col, col_e) = (column_slice(col), column_slice(col_e));
            for s in r..t {
                let fs = f[(s, r)];
                (col.iter_mut().zip(self.column(s * m + j))).for_each(|(v, pv)| *v += fs * pv);
            }
            (col_e.iter_mut().zip(col.iter()).zip(e)).for_each(|((ve, v), ei)| *ve = ei * v);
        };
        match par {
            Parallelism::Parallel => (y.par_col_iter_mut().zip(ey.par_col_iter_mut()))
                .enumerate()
                .for_each(fill),
            Parallelism::Sequential => (y.col_iter_mut().zip(ey.col_iter_mut()))
                .enumerate()
                .for_each(fill),
        }
        (Some(y), ey)
    }

    /// Adds the lower triangle of `−½ Σ_t (a_t (Bb)_tᵀ + b_t (Ba)_tᵀ)` to `n_fold`.
    fn add_rank_two(&self, n_fold: &mut Mat<f64>, a: &[f64], bv: &[f64], b: MatRef<'_, f64>) {
        let (t, m) = (self.t, self.m);
        let mix = |v: &[f64], s: usize| -> Vec<f64> {
            (0..m)
                .map(|i| (0..t).map(|u| b[(s, u)] * v[u * m + i]).sum())
                .collect()
        };
        for s in 0..t {
            let (ba, bb) = (mix(a, s), mix(bv, s));
            let (a_s, b_s) = (self.part(a, s), self.part(bv, s));
            for j in 0..m {
                let col = &mut n_fold.col_as_slice_mut(j)[j..];
                for ((v, ai), bi) in col.iter_mut().zip(&a_s[j..]).zip(&b_s[j..]) {
                    *v -= 0.5 * (ai * bb[j] + bi * ba[j]);
                }
            }
        }
    }

    /// `G_pq = tr(W_pq K_x)` (T×T) through
    /// `K_x P_qu = (1/c) Σ_j (B⁻¹)_qj (δ_ju I − D_j P_ju)`.
    #[allow(clippy::too_many_arguments)]
    fn coregion_weights(
        &self,
        b_inv: MatRef<'_, f64>,
        kx: &Mat<f64>,
        d: &[f64],
        e: &[f64],
        a: &[f64],
        bv: &[f64],
        scale: f64,
    ) -> Mat<f64> {
        let (t, m) = (self.t, self.m);
        // s[(p·T + j)·T + u] = ⟨P_pu E_u, δ_ju I − D_j P_ju⟩, a sum over the columns of u,
        // added into `acc` (no allocation per column).
        let add_column = |acc: &mut [f64], scratch: &mut [f64], c: usize| {
            let (u, col) = (c / m, c % m);
            let p_col = self.column(c);
            for j in 0..t {
                // D_j P_ju[:, col], then its dot with every P_pu[:, col].
                let (pj, dj) = (self.part(p_col, j), self.part(d, j));
                (scratch.iter_mut().zip(pj).zip(dj)).for_each(|((v, x), dd)| *v = x * dd);
                for p in 0..t {
                    let pp = self.part(p_col, p);
                    let dot = sum_pairs(pp, scratch, |x, y| x * y);
                    let identity = if j == u { pp[col] } else { 0.0 };
                    acc[(p * t + j) * t + u] += e[c] * (identity - dot);
                }
            }
        };
        // Fixed blocks of columns whose partial sums are added in block order: rayon's own
        // fold/reduce splits the range by work stealing, which made the sum (and so a fit's
        // path) differ from run to run in the last bits.
        let n = t * m;
        let block = n.div_ceil(SUM_BLOCKS).max(1);
        let parts: Vec<Vec<f64>> = (0..n.div_ceil(block))
            .into_par_iter()
            .map(|b| {
                let (mut acc, mut scratch) = (vec![0.0; t * t * t], vec![0.0; m]);
                for c in b * block..((b + 1) * block).min(n) {
                    add_column(&mut acc, &mut scratch, c);
                }
                acc
            })
            .collect();
        let mut s = vec![0.0; t * t * t];
        for part in &parts {
            s.iter_mut().zip(part).for_each(|(a, b)| *a += b);
        }
        let kv = |v: &[f64]| -> Vec<f64> {
            (0..m)
                .map(|i| sum_pairs(kx.col_as_slice(i), v, |k, x| k * x))
                .collect()
        };
        let dot = |x: &[f64], y: &[f64]| sum_pairs(x, y, |a, b| a * b);
        let ka: Vec<Vec<f64>> = (0..t).map(|q| kv(self.part(a, q))).collect();
        let kb: Vec<Vec<f64>> = (0..t).map(|q| kv(self.part(bv, q))).collect();
        Mat::from_fn(t, t, |p, q| {
            let through_inverse: f64 = (0..t)
                .flat_map(|u| (0..t).map(move |j| (u, j)))
                .map(|(u, j)| b_inv[(q, j)] * s[(p * t + j) * t + u])
                .sum();
            -through_inverse / scale
                - 0.5 * (dot(self.part(a, p), &kb[q]) + dot(self.part(bv, p), &ka[q]))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Coregion, Covariance, Kernel, LmcTerm};
    use crate::linalg::Cholesky;

    /// `m` distinct 2-d inputs, each carrying all `t` outputs, entries in the order `perm`.
    fn inputs(m: usize, t: usize, perm: &[usize]) -> Mat<f64> {
        let row = |k: usize| {
            let (tt, i) = (k / m, k % m);
            let i = i as f64;
            [
                (1.3 * i).sin() * 2.0,
                (0.7 * i + 0.4).cos() * 1.5,
                tt as f64,
            ]
        };
        Mat::from_fn(t * m, 3, |k, j| row(perm[k])[j])
    }

    fn icm(kernel: &str, a: Mat<f64>, kappa: Option<Vec<f64>>) -> MultiOutputKernel {
        MultiOutputKernel::new(vec![LmcTerm {
            kernel: Kernel::parse(kernel).unwrap(),
            coregion: Coregion::new(a, kappa).unwrap(),
        }])
        .unwrap()
    }

    /// The vectors of a sandwich on `n` entries: a few entries of huge `d` (outliers, as the
    /// robust GPs give them), mixed-sign `e`.
    fn pieces(n: usize) -> [Vec<f64>; 4] {
        let d: Vec<f64> = (0..n)
            .map(|j| {
                if j % 7 == 3 {
                    4e5
                } else {
                    0.05 + 0.1 * (j as f64).sin().abs()
                }
            })
            .collect();
        let e: Vec<f64> = (0..n).map(|j| (0.9 * j as f64 + 0.3).sin()).collect();
        let a: Vec<f64> = (0..n).map(|j| (0.4 * j as f64).cos()).collect();
        let b: Vec<f64> = (0..n).map(|j| 0.3 - (j % 5) as f64 * 0.2).collect();
        [d, e, a, b]
    }

    /// The structured contraction (asserting that it applies) and the dense one.
    fn both(k: &MultiOutputKernel, x: MatRef<'_, f64>, c: f64) -> (Vec<f64>, Vec<f64>) {
        let [d, e, a, b] = pieces(x.nrows());
        let mut q = k.matrix(x);
        for j in 0..x.nrows() {
            for i in 0..x.nrows() {
                q[(i, j)] *= c;
            }
            q[(j, j)] += d[j];
        }
        let p = Cholesky::factor(&q, "test", Parallelism::Sequential)
            .unwrap()
            .inverse();
        let w = InverseSandwich {
            p: p.as_ref(),
            scale: c,
            d: &d,
            e: &e,
            a: &a,
            b: &b,
        };
        let np = Covariance::n_params(k);
        let mut fast = vec![0.0; np];
        assert!(contract(k, x, &w, Parallelism::Parallel, &mut fast));
        let mut dense = vec![0.0; np];
        k.grad_contract(x, w.lower(Parallelism::Sequential).as_ref(), &mut dense);
        (fast, dense)
    }

    fn assert_close(fast: &[f64], dense: &[f64]) {
        let scale = dense.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
        assert!(
            scale > 1e-3,
            "a contraction that is all but zero tests nothing"
        );
        for (j, (f, d)) in fast.iter().zip(dense).enumerate() {
            assert!((f - d).abs() <= 1e-10 * scale, "parameter {j}: {f} vs {d}");
        }
    }

    #[test]
    fn the_contraction_does_not_depend_on_the_number_of_threads() {
        // Rayon's fold/reduce splits work by stealing, so a sum through it changes in the last
        // bits with the pool (and from run to run), and so would an optimiser's path. Every
        // pool must give the same bits.
        let a = Mat::from_fn(2, 2, |i, k| [[1.3, 0.0], [1.1, 0.4]][i][k]);
        let k = icm("se(ls=[0.9, 1.4])", a, None);
        let m = 150;
        let x = inputs(m, 2, &(0..2 * m).collect::<Vec<_>>());
        let in_pool = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| both(&k, x.as_ref(), 1.7).0)
        };
        let one = in_pool(1);
        for threads in [2, 3, 4, 7] {
            let other = in_pool(threads);
            let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one), bits(&other), "{threads} threads");
        }
    }

    #[test]
    fn two_outputs_in_entry_order_match_the_dense_contraction() {
        let a = Mat::from_fn(2, 2, |i, k| [[1.3, 0.0], [1.1, 0.4]][i][k]);
        let k = icm("se(ls=[0.9, 1.4])", a, None);
        let m = 40;
        let x = inputs(m, 2, &(0..2 * m).collect::<Vec<_>>());
        let (fast, dense) = both(&k, x.as_ref(), 1.7);
        assert_close(&fast, &dense);
    }

    #[test]
    fn three_outputs_with_kappa_in_shuffled_order_match_the_dense_contraction() {
        let a = Mat::from_fn(3, 1, |i, _| [0.8, -0.5, 1.2][i]);
        let k = icm("matern52(ls=0.7)", a, Some(vec![0.2, 0.05, 0.3]));
        let m = 25;
        let perm: Vec<usize> = (0..3 * m).map(|k| (k * 31 + 7) % (3 * m)).collect();
        let mut seen = perm.clone();
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..3 * m).collect::<Vec<_>>(),
            "perm is a permutation"
        );
        let x = inputs(m, 3, &perm);
        let (fast, dense) = both(&k, x.as_ref(), 0.6);
        assert_close(&fast, &dense);
    }

    /// The block inverse (asserting that it applies) against the dense Cholesky inverse,
    /// entry by entry relative to the largest entry.
    fn check_inverse(k: &MultiOutputKernel, x: MatRef<'_, f64>) {
        let [d, ..] = pieces(x.nrows());
        let fast = inverse_plus_diagonal(k, x, &d, Parallelism::Parallel).unwrap();
        let dense = crate::kernels::dense_inverse_plus_diagonal(
            &k.matrix(x),
            &d,
            "test",
            Parallelism::Sequential,
        )
        .unwrap();
        let n = x.nrows();
        let big = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .fold(0.0_f64, |s, (i, j)| s.max(dense.p[(i, j)].abs()));
        for i in 0..n {
            for j in 0..n {
                let (f, g) = (fast.p[(i, j)], dense.p[(i, j)]);
                assert!((f - g).abs() <= 1e-11 * big, "({i},{j}): {f} vs {g}");
            }
        }
        // [K P]_jj from K_x and B against the dense Σ_i K_ij P_ij; entries of huge d (outliers)
        // have [K P]_jj near 0, others near 1.
        for (j, (f, g)) in fast.kp_diag.iter().zip(&dense.kp_diag).enumerate() {
            assert!((f - g).abs() <= 1e-10, "[KP]_{j}{j}: {f} vs {g}");
        }
        assert!(dense.kp_diag.iter().any(|v| *v > 1e-2) && dense.kp_diag.iter().any(|v| *v < 1e-3));
    }

    #[test]
    fn two_output_block_inverse_matches_the_dense_inverse() {
        let m = 40;
        let in_order: Vec<usize> = (0..2 * m).collect();
        let shuffled: Vec<usize> = (0..2 * m).map(|k| (k * 17 + 5) % (2 * m)).collect();
        // Moderately and strongly correlated outputs (correlation 0.94 and 0.9999), and a
        // second output with a far larger scale than the first.
        for a in [
            [[1.3, 0.0], [1.1, 0.4]],
            [[1.0, 0.0], [0.9999, 0.014]],
            [[0.2, 0.0], [3.0, 2.0]],
        ] {
            let k = icm(
                "matern32(ls=[0.9, 1.4])",
                Mat::from_fn(2, 2, |i, c| a[i][c]),
                None,
            );
            for perm in [&in_order, &shuffled] {
                check_inverse(&k, inputs(m, 2, perm).as_ref());
            }
        }
        // Rank one plus κ.
        let a = Mat::from_fn(2, 1, |i, _| [0.8, -0.5][i]);
        let k = icm("se(ls=0.7)", a, Some(vec![0.2, 0.05]));
        check_inverse(&k, inputs(m, 2, &shuffled).as_ref());
        // A larger problem, whose products run in parallel blocks.
        let big = 230;
        let a = Mat::from_fn(2, 2, |i, c| [[1.3, 0.0], [1.1, 0.4]][i][c]);
        let k = icm("matern52(ls=[0.9, 1.4])", a, None);
        check_inverse(
            &k,
            inputs(big, 2, &(0..2 * big).collect::<Vec<_>>()).as_ref(),
        );
    }

    #[test]
    fn falls_back_without_touching_the_gradient_when_the_structure_is_missing() {
        let m = 12;
        let full = inputs(m, 2, &(0..2 * m).collect::<Vec<_>>());
        let a = Mat::from_fn(2, 2, |i, k| [[1.0, 0.0], [0.5, 0.7]][i][k]);
        let k = icm("se(ls=1)", a.clone(), None);
        let n = 2 * m;
        let p = Mat::<f64>::identity(n, n);
        let v = vec![0.5; n];
        let w = InverseSandwich {
            p: p.as_ref(),
            scale: 1.0,
            d: &v,
            e: &v,
            a: &v,
            b: &v,
        };
        let untouched = |k: &MultiOutputKernel, x: MatRef<'_, f64>| {
            let mut out = vec![7.0; Covariance::n_params(k)];
            assert!(!contract(k, x, &w, Parallelism::Sequential, &mut out));
            assert!(out.iter().all(|&g| g == 7.0));
        };
        // Heterotopic: one entry missing (and a duplicated entry in its place).
        let mut het = full.clone();
        het[(n - 1, 2)] = 0.0;
        untouched(&k, het.as_ref());
        // Two LMC terms.
        let lmc = MultiOutputKernel::new(vec![k.terms()[0].clone(), k.terms()[0].clone()]).unwrap();
        untouched(&lmc, full.as_ref());
        // B of rank one.
        let singular = Mat::from_fn(2, 2, |i, k| [[1.0, 0.0], [0.5, 0.0]][i][k]);
        untouched(&icm("se(ls=1)", singular, None), full.as_ref());
        // The block inverse needs two outputs of one term at complete inputs, and b₁₁ > 0.
        let none = |k: &MultiOutputKernel, x: MatRef<'_, f64>| {
            assert!(inverse_plus_diagonal(k, x, &v, Parallelism::Sequential).is_none());
        };
        none(&k, het.as_ref());
        none(&lmc, full.as_ref());
        let first_silent = Mat::from_fn(2, 2, |i, k| [[0.0, 0.0], [0.5, 1.0]][i][k]);
        none(&icm("se(ls=1)", first_silent, None), full.as_ref());
        let a3 = Mat::from_fn(3, 3, |i, k| if i == k { 1.0 } else { 0.0 });
        none(
            &icm("se(ls=1)", a3, None),
            inputs(m, 3, &(0..3 * m).collect::<Vec<_>>()).as_ref(),
        );
    }
}
