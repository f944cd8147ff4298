//! The pairwise loops shared by all base kernels: symmetric and cross matrices,
//! diagonals, gradient contractions and input gradients.
//!
//! Symmetric work only visits the lower triangle (a ≥ b), walking down column b
//! so that both the output and the weight matrix W are read contiguously
//! (faer is column-major). Large problems are split over columns with rayon.

use faer::{Mat, MatMut, MatRef};
use rayon::prelude::*;

use super::pair::PairKernel;
use crate::linalg::{par_from_columns, Parallelism};

/// Number of kernel evaluations above which work is spread over threads; below
/// it the rayon overhead outweighs the gain (≈ n = 256 for a symmetric matrix).
const PAR_MIN_PAIRS: usize = 256 * 257 / 2;

/// Columns per block of a parallel contraction: small enough for the blocks to balance the
/// triangular work over the threads, large enough to amortise one accumulator each.
const FOLD_BLOCK: usize = 32;

/// Inputs restricted to a kernel's active columns and scaled per column
/// (z_c = s_c·x_c), stored both row-major (one observation contiguous, for
/// pointwise work) and column-major (one input contiguous, so that loops down a
/// column of the kernel matrix vectorise).
pub(crate) struct Prepared {
    dims: Vec<usize>,
    scale: Vec<f64>,
    n: usize,
    data: Vec<f64>,
    columns: Vec<f64>,
}

impl Prepared {
    /// Prepares the rows of `x`.
    pub(crate) fn new(x: MatRef<'_, f64>, dims: Vec<usize>, scale: Vec<f64>) -> Self {
        let n = x.nrows();
        let mut data = Vec::with_capacity(n * dims.len());
        for i in 0..n {
            data.extend(dims.iter().zip(&scale).map(|(&c, s)| s * x[(i, c)]));
        }
        let columns = (0..dims.len())
            .flat_map(|c| data.iter().skip(c).step_by(dims.len()).copied())
            .collect();
        Prepared {
            dims,
            scale,
            n,
            data,
            columns,
        }
    }

    /// Prepares a single point given as a slice.
    pub(crate) fn point(x: &[f64], dims: Vec<usize>, scale: Vec<f64>) -> Self {
        Self::new(MatRef::from_row_major_slice(x, 1, x.len()), dims, scale)
    }

    /// Observation i over the active inputs.
    pub(crate) fn row(&self, i: usize) -> &[f64] {
        let m = self.dims.len();
        &self.data[i * m..(i + 1) * m]
    }

    /// Active input c over all observations.
    pub(crate) fn column(&self, c: usize) -> &[f64] {
        &self.columns[c * self.n..(c + 1) * self.n]
    }
}

/// Sequential below [`PAR_MIN_PAIRS`] kernel evaluations, parallel from there.
fn parallelism(pairs: usize) -> Parallelism {
    if pairs >= PAR_MIN_PAIRS {
        Parallelism::Parallel
    } else {
        Parallelism::Sequential
    }
}

/// The lower triangle (and diagonal) of the symmetric matrix k(x_a, x_b); the strict upper
/// triangle is zero. Sums and products combine these entry by entry, and
/// [`Kernel::matrix`](super::Kernel::matrix) mirrors the result once at the end.
pub(crate) fn symmetric_lower<K: PairKernel>(k: &K, p: &Prepared) -> Mat<f64> {
    let n = p.n;
    par_from_columns(n, n, parallelism(n * (n + 1) / 2), |b, col| {
        k.column(p, b, p.row(b), &mut col[b..]);
    })
}

/// The n1×n2 matrix k(x1_a, x2_b).
pub(crate) fn cross<K: PairKernel>(k: &K, p1: &Prepared, p2: &Prepared) -> Mat<f64> {
    par_from_columns(p1.n, p2.n, parallelism(p1.n * p2.n), |b, col| {
        k.column(p1, 0, p2.row(b), col);
    })
}

/// k(x_a, x_a) for every row.
pub(crate) fn diag<K: PairKernel>(k: &K, p: &Prepared) -> Vec<f64> {
    (0..p.n).map(|a| k.value(p.row(a), p.row(a))).collect()
}

/// Per-thread accumulator of a contraction, with its scratch buffers.
struct Acc {
    /// Σ W∘K.
    wk: f64,
    /// Σ W∘∂K/∂log θ for the non-variance hyperparameters.
    g: Vec<f64>,
    /// Pair weights of the current column.
    w: Vec<f64>,
    /// Scratch space for [`PairKernel::contract_against`].
    scratch: Vec<f64>,
}

impl Acc {
    fn zero(len: usize) -> Self {
        Acc {
            wk: 0.0,
            g: vec![0.0; len],
            w: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn merge(mut self, other: Acc) -> Acc {
        self.wk += other.wk;
        self.g.iter_mut().zip(&other.g).for_each(|(a, b)| *a += b);
        self
    }
}

/// Runs `f` on `w` with unit row stride: a strided view would make every read of W a gather,
/// so it is copied once instead.
fn with_contiguous<R>(w: MatRef<'_, f64>, f: impl FnOnce(MatRef<'_, f64>) -> R) -> R {
    if w.row_stride() == 1 {
        f(w)
    } else {
        let owned = w.to_owned();
        f(owned.as_ref())
    }
}

/// Column `b` of a matrix with unit row stride, as a slice.
fn column_slice<'a>(w: MatRef<'a, f64>, b: usize) -> &'a [f64] {
    w.col(b)
        .try_as_col_major()
        .expect("unit row stride")
        .as_slice()
}

/// Folds `column(acc, b)` over the columns `0..n` into one accumulator of `ns` shape
/// parameters, in parallel when `large`. Columns are folded in fixed blocks whose partial sums
/// are added in block order, so the result does not depend on how threads pick up the work.
fn fold_columns(
    n: usize,
    large: bool,
    ns: usize,
    column: impl Fn(Acc, usize) -> Acc + Send + Sync,
) -> (f64, Vec<f64>) {
    let acc = if large {
        let blocks: Vec<Acc> = (0..n.div_ceil(FOLD_BLOCK))
            .into_par_iter()
            .map(|blk| {
                let cols = blk * FOLD_BLOCK..((blk + 1) * FOLD_BLOCK).min(n);
                cols.fold(Acc::zero(ns), &column)
            })
            .collect();
        blocks.into_iter().fold(Acc::zero(ns), Acc::merge)
    } else {
        (0..n).fold(Acc::zero(ns), column)
    };
    (acc.wk, acc.g)
}

/// Returns (Σ_ab W_ab K_ab, Σ_ab W_ab ∂K_ab/∂log θ for each non-variance θ),
/// reading only the lower triangle of the symmetric `w`. Off-diagonal pairs are
/// visited once and weighted twice, because both W and ∂K are symmetric.
pub(crate) fn contract<K: PairKernel>(k: &K, p: &Prepared, w: MatRef<'_, f64>) -> (f64, Vec<f64>) {
    with_contiguous(w, |w| {
        let column = |mut acc: Acc, b: usize| {
            let wcol = column_slice(w, b);
            acc.w.clear();
            acc.w.extend(wcol[b..].iter().map(|v| 2.0 * v));
            acc.w[0] = wcol[b];
            acc.wk += k.contract_against(p, b, p.row(b), &acc.w, &mut acc.scratch, &mut acc.g);
            acc
        };
        fold_columns(
            p.n,
            p.n * (p.n + 1) / 2 >= PAR_MIN_PAIRS,
            k.n_shape(),
            column,
        )
    })
}

/// Returns (Σ_ab W_ab k(x1_a, x2_b), Σ_ab W_ab ∂k(x1_a, x2_b)/∂log θ for each non-variance θ)
/// for a general n1×n2 weight matrix `w`; with `values`, also adds k(x1_a, x2_b) to it (an
/// n1×n2 matrix), from the same pass. Columns are processed in fixed blocks whose partial sums
/// are added in block order, as in [`fold_columns`].
pub(crate) fn contract_cross<K: PairKernel>(
    k: &K,
    p1: &Prepared,
    p2: &Prepared,
    w: MatRef<'_, f64>,
    values: Option<&mut Mat<f64>>,
) -> (f64, Vec<f64>) {
    with_contiguous(w, |w| {
        let ns = k.n_shape();
        // Columns b0.. of one block; `vals` holds the block's columns of `values`.
        let block = |b0: usize, width: usize, mut vals: Option<MatMut<'_, f64>>| {
            let mut acc = Acc::zero(ns);
            for j in 0..width {
                let (b, wcol) = (b0 + j, column_slice(w, b0 + j));
                let (zb, scratch, g) = (p2.row(b), &mut acc.scratch, &mut acc.g);
                acc.wk += match vals.as_mut() {
                    Some(v) => {
                        let col = v.as_mut().col_mut(j).try_as_col_major_mut();
                        let col = col.expect("owned matrices are column-major").as_slice_mut();
                        k.contract_against_adding_values(p1, 0, zb, wcol, scratch, g, col)
                    }
                    None => k.contract_against(p1, 0, zb, wcol, scratch, g),
                };
            }
            acc
        };
        let n = p2.n;
        let blocks: Vec<Acc> = match (values, p1.n * n >= PAR_MIN_PAIRS) {
            (Some(v), true) => (v.as_mut().par_col_chunks_mut(FOLD_BLOCK).enumerate())
                .map(|(i, vc)| block(i * FOLD_BLOCK, vc.ncols(), Some(vc)))
                .collect(),
            (None, true) => (0..n.div_ceil(FOLD_BLOCK))
                .into_par_iter()
                .map(|i| block(i * FOLD_BLOCK, FOLD_BLOCK.min(n - i * FOLD_BLOCK), None))
                .collect(),
            (v, false) => vec![block(0, n, v.map(|v| v.as_mut()))],
        };
        let acc = blocks.into_iter().fold(Acc::zero(ns), Acc::merge);
        (acc.wk, acc.g)
    })
}

/// Returns (Σ_a w_a k(x_a, x_a), Σ_a w_a ∂k(x_a, x_a)/∂log θ for each non-variance θ).
pub(crate) fn contract_diag<K: PairKernel>(k: &K, p: &Prepared, w: &[f64]) -> (f64, Vec<f64>) {
    let mut acc = Acc::zero(k.n_shape());
    for (a, wa) in w.iter().enumerate() {
        acc.wk += k.contract_against(p, a, p.row(a), &[*wa], &mut acc.scratch, &mut acc.g);
    }
    (acc.wk, acc.g)
}

/// G[a, c] = Σ_b W_ab ∂k(x1_a, x2_b)/∂x1_{a,c} (original coordinates, zero outside the active
/// columns) as an n1×ncols matrix; rows of `x1` in parallel when the problem is large.
pub(crate) fn grad_first_contract<K: PairKernel>(
    k: &K,
    p1: &Prepared,
    p2: &Prepared,
    w: MatRef<'_, f64>,
    ncols: usize,
) -> Mat<f64> {
    // Row a of W is read along b: transpose once so that it is contiguous.
    let wt = w.transpose().to_owned();
    let m = p1.dims.len();
    let row = |a: usize| {
        let (mut acc, mut scratch) = (vec![0.0; m], Vec::new());
        k.grad_first_contract_row(p1.row(a), p2, wt.col_as_slice(a), &mut scratch, &mut acc);
        acc
    };
    let rows: Vec<Vec<f64>> = if p1.n * p2.n >= PAR_MIN_PAIRS {
        (0..p1.n).into_par_iter().map(row).collect()
    } else {
        (0..p1.n).map(row).collect()
    };
    let mut g = Mat::zeros(p1.n, ncols);
    for (a, acc) in rows.iter().enumerate() {
        // Chain rule back from prepared coordinates z_c = s_c·x_c.
        for ((&c, s), v) in p1.dims.iter().zip(&p1.scale).zip(acc) {
            g[(a, c)] = s * v;
        }
    }
    g
}

/// G[b, c] = ∂k(x*, x_b)/∂x*_c for the point `xs` (prepared) against the rows of `p`,
/// as an n×ncols matrix (zero outside the active columns).
pub(crate) fn grad_first<K: PairKernel>(
    k: &K,
    xs: &Prepared,
    p: &Prepared,
    ncols: usize,
) -> Mat<f64> {
    let mut g = Mat::zeros(p.n, ncols);
    let mut buf = vec![0.0; p.dims.len()];
    for b in 0..p.n {
        k.grad_first(xs.row(0), p.row(b), &mut buf);
        // Chain rule back from prepared coordinates z_c = s_c·x_c.
        for ((&c, s), v) in p.dims.iter().zip(&p.scale).zip(&buf) {
            g[(b, c)] = s * v;
        }
    }
    g
}
