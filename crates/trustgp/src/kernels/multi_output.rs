//! Multi-output kernels: the intrinsic and linear models of coregionalisation (ICM, LMC).
//!
//! Outputs ("tasks") are encoded in the inputs: a multi-output input matrix has the ordinary
//! input columns followed by one column holding the task index `t ∈ {0, …, T−1}` of the row.
//! One row is one observed (input, output) pair, so heterotopic data (a point where only some
//! outputs were measured) is simply a set of rows, and no covariance ever holds an unobserved
//! entry. The covariance of rows a and b is
//!
//! ```text
//! k((x_a, t_a), (x_b, t_b)) = Σ_q B_q[t_a, t_b] κ_q(x_a, x_b),     B_q = A_q A_qᵀ + diag(κ_q),
//! ```
//!
//! one term per latent process q (ICM: a single term). `A_q` is a free T×rank matrix; the
//! diagonal `κ_q` (positive, in log space) is present only when rank < T, where it keeps
//! `B_q` positive definite. For ICM with rank T, `B = A Aᵀ` has the rotation and sign
//! ambiguity of any Cholesky-like factor; compare `B`, never `A`.

use std::collections::HashMap;

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::{Covariance, Kernel, KernelError};

pub(crate) mod homotopic;
mod input_gradients;
pub(crate) mod inverse_derivatives;

/// Log-space bounds of the diagonal coregionalisation term κ.
const KAPPA_BOUNDS: (f64, f64) = (1e-8, 1e5);

/// A coregionalisation matrix `B = A Aᵀ + diag(κ)` over T tasks.
#[derive(Clone, Debug, PartialEq)]
pub struct Coregion {
    a: Mat<f64>,
    kappa: Option<Vec<f64>>,
    a_bound: f64,
}

/// How many times the initial output scale an entry of `A` may reach while fitting
/// ([`Coregion::from_covariance`]): a hundredfold variance, far beyond any sensible fit, but
/// finite, so that objectives that are flat in the overall scale (weighted LOO-CV with a
/// vanishing noise) cannot run off to a degenerate, ill-conditioned `B`.
pub const A_BOUND_FACTOR: f64 = 10.0;

impl Coregion {
    /// A coregionalisation with factor `a` (T×rank) and, optionally, a positive diagonal
    /// `kappa` (one entry per task).
    pub fn new(a: Mat<f64>, kappa: Option<Vec<f64>>) -> Result<Coregion, KernelError> {
        let bad = |m: String| Err(KernelError::MultiOutput(m));
        if a.nrows() == 0 || a.ncols() == 0 {
            return bad(
                "the coregionalisation factor A must have at least one row and column".into(),
            );
        }
        for i in 0..a.nrows() {
            for k in 0..a.ncols() {
                if !a[(i, k)].is_finite() {
                    return bad(format!("A[{i},{k}] = {} is not finite", a[(i, k)]));
                }
            }
        }
        if let Some(k) = &kappa {
            if k.len() != a.nrows() {
                return bad(format!(
                    "kappa has {} entries but A has {} rows (one per task)",
                    k.len(),
                    a.nrows()
                ));
            }
            if let Some(t) = k.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
                return bad(format!("kappa[{t}] = {} is not a positive number", k[t]));
            }
        }
        Ok(Coregion {
            a,
            kappa,
            a_bound: f64::INFINITY,
        })
    }

    /// A rank-`rank` coregionalisation whose `B` approximates the covariance `c` (T×T): the
    /// leading columns of the Cholesky factor of `c` (with a small relative jitter), and, when
    /// `rank < T`, the diagonal κ that restores `c`'s variances (floored at 1e-3 of them). The
    /// entries of `A` are bounded by [`A_BOUND_FACTOR`] times the largest standard deviation of
    /// `c` while fitting.
    pub fn from_covariance(c: MatRef<'_, f64>, rank: usize) -> Result<Coregion, KernelError> {
        let t = c.nrows();
        if c.ncols() != t || t == 0 {
            return Err(KernelError::MultiOutput(format!(
                "the initial output covariance must be square and non-empty, got {}×{}",
                c.nrows(),
                c.ncols()
            )));
        }
        if rank == 0 || rank > t {
            return Err(KernelError::MultiOutput(format!(
                "rank must be between 1 and the number of outputs ({t}), got {rank}"
            )));
        }
        let mean_diag = (0..t).map(|i| c[(i, i)]).sum::<f64>() / t as f64;
        let mut cj = c.to_owned();
        for i in 0..t {
            cj[(i, i)] += 1e-6 * mean_diag.abs().max(f64::MIN_POSITIVE);
        }
        let l = cj.llt(faer::Side::Lower).map_err(|_| {
            KernelError::MultiOutput(
                "the initial output covariance is not positive definite".into(),
            )
        })?;
        let l = l.L();
        let a = Mat::from_fn(t, rank, |i, k| if k <= i { l[(i, k)] } else { 0.0 });
        let kappa = (rank < t).then(|| {
            (0..t)
                .map(|i| {
                    let explained: f64 = (0..rank).map(|k| a[(i, k)] * a[(i, k)]).sum();
                    (c[(i, i)] - explained)
                        .max(1e-3 * c[(i, i)].abs())
                        .max(1e-8)
                })
                .collect()
        });
        let mut coregion = Coregion::new(a, kappa)?;
        let scale = (0..t).map(|i| c[(i, i)]).fold(0.0, f64::max).sqrt();
        coregion.a_bound = A_BOUND_FACTOR * scale.max(f64::MIN_POSITIVE);
        Ok(coregion)
    }

    /// Number of tasks T.
    pub fn n_tasks(&self) -> usize {
        self.a.nrows()
    }

    /// Rank of `A`.
    pub fn rank(&self) -> usize {
        self.a.ncols()
    }

    /// The factor `A` (T×rank).
    pub fn a(&self) -> MatRef<'_, f64> {
        self.a.as_ref()
    }

    /// The diagonal term κ, if present.
    pub fn kappa(&self) -> Option<&[f64]> {
        self.kappa.as_deref()
    }

    /// `B = A Aᵀ + diag(κ)`.
    pub fn b(&self) -> Mat<f64> {
        let mut b = &self.a * self.a.transpose();
        if let Some(k) = &self.kappa {
            for (t, v) in k.iter().enumerate() {
                b[(t, t)] += v;
            }
        }
        b
    }

    /// The free entries of `A`: its lower trapezoid (k ≤ i), column by column. Every PSD `B`
    /// of rank ≤ `rank` has such a factor (a pivot-free Cholesky-like one), so nothing is lost,
    /// and fixing the upper entries removes the rotations `A ↦ A R` that leave `B` unchanged —
    /// flat directions that only slow the optimiser. Entries above the diagonal keep the value
    /// they were built with (zero from [`Coregion::from_covariance`]).
    fn free_entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let (t, r) = (self.a.nrows(), self.a.ncols());
        (0..r).flat_map(move |k| (k..t).map(move |i| (i, k)))
    }

    fn n_free(&self) -> usize {
        self.free_entries().count()
    }

    fn n_params(&self) -> usize {
        self.n_free() + self.kappa.as_ref().map_or(0, Vec::len)
    }

    /// The free entries of `A`, then `ln κ`.
    fn params(&self) -> Vec<f64> {
        let mut p: Vec<f64> = self.free_entries().map(|(i, k)| self.a[(i, k)]).collect();
        if let Some(kappa) = &self.kappa {
            p.extend(kappa.iter().map(|v| v.ln()));
        }
        p
    }

    fn set_params(&mut self, p: &[f64]) {
        let entries: Vec<(usize, usize)> = self.free_entries().collect();
        for (&(i, k), v) in entries.iter().zip(p) {
            self.a[(i, k)] = *v;
        }
        let nf = entries.len();
        if let Some(kappa) = &mut self.kappa {
            for (v, lp) in kappa.iter_mut().zip(&p[nf..]) {
                *v = lp.exp();
            }
        }
    }

    /// Gradient of the parameters given `G_pq = ∂φ/∂B_pq` (G symmetric, each entry of `B`
    /// treated as a separate variable): `∂φ/∂A = (G + Gᵀ) A` on the free entries,
    /// `∂φ/∂ln κ_t = G_tt κ_t`.
    fn grad_from(&self, g: &Mat<f64>, out: &mut [f64]) {
        let t = self.a.nrows();
        let mut nf = 0;
        for (j, (i, k)) in self.free_entries().enumerate() {
            out[j] += (0..t)
                .map(|q| (g[(i, q)] + g[(q, i)]) * self.a[(q, k)])
                .sum::<f64>();
            nf = j + 1;
        }
        if let Some(kappa) = &self.kappa {
            for (i, v) in kappa.iter().enumerate() {
                out[nf + i] += g[(i, i)] * v;
            }
        }
    }
}

/// One latent process of an LMC: a kernel on the inputs and its coregionalisation.
#[derive(Clone, Debug, PartialEq)]
pub struct LmcTerm {
    /// Kernel on the ordinary input columns.
    pub kernel: Kernel,
    /// Mixing across outputs.
    pub coregion: Coregion,
}

/// A multi-output kernel `Σ_q B_q ⊗ κ_q` on task-indexed inputs (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiOutputKernel {
    terms: Vec<LmcTerm>,
}

/// The task index of row `i` of a task-indexed input (its last column).
fn task(x: MatRef<'_, f64>, i: usize) -> usize {
    x[(i, x.ncols() - 1)] as usize
}

/// The distinct rows of an input matrix.
struct Unique;

impl Unique {
    /// The distinct rows of `x` (bitwise equality, in order of first appearance) and, for
    /// every row of `x`, the index of its distinct row.
    fn rows(x: MatRef<'_, f64>) -> (Mat<f64>, Vec<usize>) {
        let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
        let mut firsts = Vec::new();
        let index = (0..x.nrows())
            .map(|i| {
                let key: Vec<u64> = (0..x.ncols()).map(|j| x[(i, j)].to_bits()).collect();
                *seen.entry(key).or_insert_with(|| {
                    firsts.push(i);
                    firsts.len() - 1
                })
            })
            .collect();
        let unique = Mat::from_fn(firsts.len(), x.ncols(), |u, j| x[(firsts[u], j)]);
        (unique, index)
    }
}

/// The task index of every row.
fn tasks(x: MatRef<'_, f64>) -> Vec<usize> {
    (0..x.nrows()).map(|i| task(x, i)).collect()
}

impl MultiOutputKernel {
    /// An LMC from its terms (ICM: one term). All coregionalisations must have the same
    /// number of tasks.
    pub fn new(terms: Vec<LmcTerm>) -> Result<MultiOutputKernel, KernelError> {
        let Some(first) = terms.first() else {
            return Err(KernelError::MultiOutput(
                "an LMC needs at least one term".into(),
            ));
        };
        let t = first.coregion.n_tasks();
        if let Some(q) = terms.iter().position(|m| m.coregion.n_tasks() != t) {
            return Err(KernelError::MultiOutput(format!(
                "term {q} mixes {} outputs but term 0 mixes {t}",
                terms[q].coregion.n_tasks()
            )));
        }
        Ok(MultiOutputKernel { terms })
    }

    /// The terms.
    pub fn terms(&self) -> &[LmcTerm] {
        &self.terms
    }

    /// Number of outputs T.
    pub fn n_tasks(&self) -> usize {
        self.terms[0].coregion.n_tasks()
    }

    /// Checks a task-indexed input: at least two columns, every task index an integer in
    /// `0..T`, and the kernels fit the ordinary columns.
    pub fn validate_inputs(&self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        if x.ncols() < 2 {
            return Err(KernelError::MultiOutput(
                "task-indexed inputs need the input columns plus a task column".into(),
            ));
        }
        let t = self.n_tasks();
        if let Some(i) = (0..x.nrows()).find(|&i| {
            let v = x[(i, x.ncols() - 1)];
            !(v >= 0.0 && v < t as f64 && v.fract() == 0.0)
        }) {
            return Err(KernelError::MultiOutput(format!(
                "row {i} has task index {} (expected an integer in 0..{t})",
                x[(i, x.ncols() - 1)]
            )));
        }
        for m in &self.terms {
            m.kernel.validate(x.ncols() - 1)?;
        }
        Ok(())
    }

    /// The ordinary input columns of a task-indexed input.
    fn inputs<'a>(x: MatRef<'a, f64>) -> MatRef<'a, f64> {
        x.subcols(0, x.ncols() - 1)
    }
}

/// Parallel blocks of the gradient contraction: each carries its own (distinct rows)²
/// accumulator, so a few blocks of equal work are better than many small ones.
const CONTRACT_BLOCKS: usize = 4;

/// Splits the columns `0..n` of a lower triangle into at most `parts` consecutive ranges
/// holding about the same number of entries (column j holds n − j).
fn balanced_column_blocks(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let total = n * (n + 1) / 2;
    let mut blocks = Vec::new();
    let (mut start, mut seen) = (0, 0);
    for j in 0..n {
        seen += n - j;
        if seen * parts >= total * (blocks.len() + 1) || j + 1 == n {
            blocks.push(start..j + 1);
            start = j + 1;
        }
    }
    blocks
}

impl Covariance for MultiOutputKernel {
    // The flat unconstrained parameter vector: per term, the kernel's log-parameters, then
    // `vec(A)`, then `ln κ`.
    fn params(&self) -> Vec<f64> {
        self.terms
            .iter()
            .flat_map(|m| {
                let mut p = m.kernel.log_params();
                p.extend(m.coregion.params());
                p
            })
            .collect()
    }
    // Sets the parameters from a vector laid out as [`MultiOutputKernel::params`].
    fn set_params(&mut self, p: &[f64]) -> Result<(), KernelError> {
        let expected = self.n_params();
        if p.len() != expected {
            return Err(KernelError::ParamCount {
                expected,
                got: p.len(),
            });
        }
        if let Some(i) = p.iter().position(|v| !v.is_finite()) {
            return Err(KernelError::NonFiniteParam {
                name: Covariance::param_names(self)[i].clone(),
                value: p[i],
            });
        }
        let mut offset = 0;
        for m in &mut self.terms {
            let nk = m.kernel.n_params();
            m.kernel.set_log_params(&p[offset..offset + nk])?;
            offset += nk;
            let nc = m.coregion.n_params();
            m.coregion.set_params(&p[offset..offset + nc]);
            offset += nc;
        }
        Ok(())
    }
    // Names of the parameters, e.g. `q0.k0.se.ls`, `q0.A[1,0]`, `q0.kappa[1]`.
    fn param_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (q, m) in self.terms.iter().enumerate() {
            names.extend(
                m.kernel
                    .param_names()
                    .into_iter()
                    .map(|n| format!("q{q}.{n}")),
            );
            names.extend(
                m.coregion
                    .free_entries()
                    .map(|(i, k)| format!("q{q}.A[{i},{k}]")),
            );
            let t = m.coregion.n_tasks();
            if m.coregion.kappa.is_some() {
                names.extend((0..t).map(|i| format!("q{q}.kappa[{i}]")));
            }
        }
        names
    }
    // Optimisation bounds: the kernels' log bounds, `A` within its bound, κ in [1e-8, 1e5].
    fn bounds(&self) -> Vec<(f64, f64)> {
        let mut b = Vec::new();
        for m in &self.terms {
            b.extend(m.kernel.log_bounds());
            let free = m.coregion.n_free();
            let ab = m.coregion.a_bound;
            b.extend(std::iter::repeat_n((-ab, ab), free));
            if m.coregion.kappa.is_some() {
                let kb = (KAPPA_BOUNDS.0.ln(), KAPPA_BOUNDS.1.ln());
                b.extend(std::iter::repeat_n(kb, m.coregion.n_tasks()));
            }
        }
        b
    }

    fn matrix(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        self.cross(x, x)
    }

    fn cross(&self, x1: MatRef<'_, f64>, x2: MatRef<'_, f64>) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(x1.nrows(), x2.nrows());
        // The kernels are evaluated on the distinct input rows only: with T outputs observed
        // at every input that is T² times fewer evaluations.
        let (u1, r1) = Unique::rows(Self::inputs(x1));
        let (u2, r2) = Unique::rows(Self::inputs(x2));
        let same = std::ptr::eq(x1.as_ptr(), x2.as_ptr()) && x1.nrows() == x2.nrows();
        let (t1, t2) = (tasks(x1), tasks(x2));
        for m in &self.terms {
            let b = m.coregion.b();
            let k = if same {
                m.kernel.matrix(u1.as_ref())
            } else {
                m.kernel.cross(u1.as_ref(), u2.as_ref())
            };
            out.par_col_iter_mut().enumerate().for_each(|(j, col)| {
                let bj = b.col_as_slice(t2[j]);
                let kj = k.col_as_slice(r2[j]);
                for (i, o) in col.iter_mut().enumerate() {
                    *o += bj[t1[i]] * kj[r1[i]];
                }
            });
        }
        out
    }

    fn check_inputs(&self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        self.validate_inputs(x)
    }

    fn grad_inputs_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64> {
        self.inputs_contract(x1, x2, w)
    }

    fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        let mut out = vec![0.0; x.nrows()];
        for m in &self.terms {
            let b = m.coregion.b();
            let k = m.kernel.diag(Self::inputs(x));
            for (i, o) in out.iter_mut().enumerate() {
                let t = task(x, i);
                *o += b[(t, t)] * k[i];
            }
        }
        out
    }

    fn n_params(&self) -> usize {
        self.terms
            .iter()
            .map(|m| m.kernel.n_params() + m.coregion.n_params())
            .sum()
    }

    fn grad_contract(&self, x: MatRef<'_, f64>, w: MatRef<'_, f64>, out: &mut [f64]) {
        let n = x.nrows();
        let t = self.n_tasks();
        let (unique, r) = Unique::rows(Self::inputs(x));
        let nu = unique.nrows();
        let task = tasks(x);
        let mut offset = 0;
        for m in &self.terms {
            let b = m.coregion.b();
            let k = m.kernel.matrix(unique.as_ref());
            // The kernel's parameters see W ∘ B[t_a, t_b], folded onto the distinct rows (the
            // contraction is linear in W); G_pq = Σ_ab W_ab κ_ab [t_a = p][t_b = q] over the
            // full symmetric W. Only lower triangles are read and written.
            let column = |(mut wu, mut g): (Mat<f64>, Mat<f64>), j: usize| {
                let (tj, rj) = (task[j], r[j]);
                let bj = b.col_as_slice(tj);
                let kj = k.col_as_slice(rj);
                let wj = w.col(j);
                for i in j..n {
                    let (ti, ri) = (task[i], r[i]);
                    let wij = wj[i];
                    let v = wij * bj[ti];
                    let (hi, lo) = if ri >= rj { (ri, rj) } else { (rj, ri) };
                    // An off-diagonal pair folded onto a diagonal entry counts twice there.
                    wu[(hi, lo)] += if i != j && hi == lo { 2.0 * v } else { v };
                    let kv = wij * kj[ri];
                    g[(ti, tj)] += kv;
                    if i != j {
                        g[(tj, ti)] += kv;
                    }
                }
                (wu, g)
            };
            let zero = || (Mat::<f64>::zeros(nu, nu), Mat::<f64>::zeros(t, t));
            // Blocks of columns in parallel, each into its own accumulators, added in block
            // order so that the sum does not depend on thread scheduling.
            let parts: Vec<_> = balanced_column_blocks(n, CONTRACT_BLOCKS)
                .into_par_iter()
                .map(|cols| cols.fold(zero(), column))
                .collect();
            let (wu, g) = (parts.into_iter()).fold(zero(), |(a, ga), (b, gb)| (a + b, ga + gb));
            let nk = m.kernel.n_params();
            m.kernel
                .grad_contract(unique.as_ref(), wu.as_ref(), &mut out[offset..offset + nk]);
            offset += nk;
            let nc = m.coregion.n_params();
            m.coregion.grad_from(&g, &mut out[offset..offset + nc]);
            offset += nc;
        }
    }

    // Every term's `B = AAᵀ + diag(κ)` scales: `A → √c A`, `κ → c κ`.
    fn scaled(&self, c: f64) -> Option<Self> {
        let mut k = self.clone();
        for m in &mut k.terms {
            m.coregion.a.as_mut().col_iter_mut().for_each(|col| {
                col.iter_mut().for_each(|v| *v *= c.sqrt());
            });
            if let Some(kappa) = &mut m.coregion.kappa {
                kappa.iter_mut().for_each(|v| *v *= c);
            }
        }
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task_inputs() -> Mat<f64> {
        // 10 rows, 2 input columns, tasks 0..3; the last three repeat earlier inputs with
        // other tasks, as complete multi-output rows do.
        let raw = [
            [0.1, -0.3, 0.0],
            [0.5, 0.2, 1.0],
            [-0.7, 0.9, 0.0],
            [1.2, -1.1, 2.0],
            [0.3, 0.4, 1.0],
            [-0.2, -0.8, 0.0],
            [0.9, 0.6, 1.0],
            [0.1, -0.3, 1.0],
            [0.1, -0.3, 2.0],
            [0.5, 0.2, 0.0],
        ];
        Mat::from_fn(raw.len(), 3, |i, j| raw[i][j])
    }

    fn lmc() -> MultiOutputKernel {
        let a1 = Mat::from_fn(3, 3, |i, k| {
            [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.2, 0.5]][i][k]
        });
        let a2 = Mat::from_fn(3, 1, |i, _| [0.4, -0.2, 0.7][i]);
        MultiOutputKernel::new(vec![
            LmcTerm {
                kernel: Kernel::parse("se(ls=[0.8, 1.3])").unwrap(),
                coregion: Coregion::new(a1, None).unwrap(),
            },
            LmcTerm {
                kernel: Kernel::parse("matern52(ls=0.5)").unwrap(),
                coregion: Coregion::new(a2, Some(vec![0.1, 0.2, 0.05])).unwrap(),
            },
        ])
        .unwrap()
    }

    #[test]
    fn matrix_is_the_coregionalised_sum_entry_by_entry() {
        let k = lmc();
        let x = task_inputs();
        let m = k.matrix(x.as_ref());
        let xi = x.as_ref().subcols(0, 2);
        for a in 0..x.nrows() {
            for b in 0..x.nrows() {
                let (ta, tb) = (task(x.as_ref(), a), task(x.as_ref(), b));
                let expected: f64 = k
                    .terms()
                    .iter()
                    .map(|term| {
                        term.coregion.b()[(ta, tb)]
                            * term.kernel.cross(xi.subrows(a, 1), xi.subrows(b, 1))[(0, 0)]
                    })
                    .sum();
                assert!((m[(a, b)] - expected).abs() < 1e-14);
            }
        }
        let d = k.diag(x.as_ref());
        for (i, v) in d.iter().enumerate() {
            assert!((v - m[(i, i)]).abs() < 1e-14);
        }
    }

    #[test]
    fn scaling_multiplies_the_matrix_and_keeps_the_base_kernels() {
        let (k, x) = (lmc(), task_inputs());
        let c = 2.7;
        let scaled = k.scaled(c).unwrap();
        let (m, ms) = (k.matrix(x.as_ref()), scaled.matrix(x.as_ref()));
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                assert!((ms[(i, j)] - c * m[(i, j)]).abs() < 1e-13 * (1.0 + m[(i, j)].abs()));
            }
        }
        // The coregionalisation carries the scale (A by √c, κ by c); the base kernels stay.
        for (before, after) in k.terms().iter().zip(scaled.terms()) {
            assert_eq!(before.kernel.log_params(), after.kernel.log_params());
            let (a0, a1) = (before.coregion.a(), after.coregion.a());
            for i in 0..a0.nrows() {
                for r in 0..a0.ncols() {
                    assert!((a1[(i, r)] - c.sqrt() * a0[(i, r)]).abs() < 1e-15);
                }
            }
            if let (Some(k0), Some(k1)) = (before.coregion.kappa(), after.coregion.kappa()) {
                (k0.iter().zip(k1)).for_each(|(u, v)| assert!((v - c * u).abs() < 1e-15));
            }
        }
        // A single-output kernel scales through its overall scale, if it has one.
        let single = Kernel::parse("se(ls=0.7) * const(1.5)").unwrap();
        let xi = x.as_ref().subcols(0, 2);
        let (m, ms) = (single.matrix(xi), single.scaled(c).unwrap().matrix(xi));
        assert!((ms[(3, 5)] - c * m[(3, 5)]).abs() < 1e-14 && m[(3, 5)] > 0.1);
        assert!(Kernel::parse("se + per").unwrap().scaled(c).is_none());
    }

    #[test]
    fn gradient_contraction_matches_central_differences() {
        let mut k = lmc();
        let x = task_inputs();
        let n = x.nrows();
        // A fixed symmetric weight matrix.
        let w = Mat::from_fn(n, n, |i, j| {
            ((i * 7 + j * 7 + 3 * i * j) % 11) as f64 / 5.0 - 1.0
        });
        let phi = |k: &MultiOutputKernel| -> f64 {
            let m = k.matrix(x.as_ref());
            (0..n)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .map(|(i, j)| w[(i.max(j), i.min(j))] * m[(i, j)])
                .sum()
        };
        let mut grad = vec![0.0; Covariance::n_params(&k)];
        k.grad_contract(x.as_ref(), w.as_ref(), &mut grad);
        let p0 = k.params();
        let h = 1e-6;
        for j in 0..p0.len() {
            let mut p = p0.clone();
            p[j] += h;
            k.set_params(&p).unwrap();
            let up = phi(&k);
            p[j] -= 2.0 * h;
            k.set_params(&p).unwrap();
            let down = phi(&k);
            let fd = (up - down) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() < 1e-7 * (1.0 + fd.abs()),
                "{}: analytic {} vs fd {fd}",
                k.param_names()[j],
                grad[j]
            );
        }
        k.set_params(&p0).unwrap();
        assert_eq!(k.params(), p0);
    }

    #[test]
    fn column_blocks_cover_the_triangle_in_order_with_balanced_work() {
        for n in [1, 2, 5, 100, 1152] {
            let blocks = balanced_column_blocks(n, 4);
            assert!(blocks.len() <= 4 && blocks[0].start == 0 && blocks.last().unwrap().end == n);
            assert!(blocks.windows(2).all(|w| w[0].end == w[1].start));
            if n >= 100 {
                let work = |r: &std::ops::Range<usize>| r.clone().map(|j| n - j).sum::<usize>();
                let quarter = n * (n + 1) / 8;
                assert!(
                    blocks.iter().all(|b| work(b).abs_diff(quarter) <= n),
                    "n = {n}"
                );
            }
        }
    }

    #[test]
    fn from_covariance_reproduces_the_covariance() {
        let c = Mat::from_fn(3, 3, |i, j| {
            [[2.0, 1.2, 0.3], [1.2, 1.5, 0.4], [0.3, 0.4, 0.9]][i][j]
        });
        let full = Coregion::from_covariance(c.as_ref(), 3).unwrap();
        let low = Coregion::from_covariance(c.as_ref(), 1).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                assert!((full.b()[(i, j)] - c[(i, j)]).abs() < 1e-5);
            }
            // Rank 1 keeps the variances through κ (up to its floor of 1e-3 of them).
            assert!((low.b()[(i, i)] - c[(i, i)]).abs() <= 1e-3 * c[(i, i)] + 1e-5);
        }
        assert!(Coregion::from_covariance(c.as_ref(), 4).is_err());
    }

    #[test]
    fn rejects_bad_task_indices_and_shapes() {
        let k = lmc();
        let mut x = task_inputs();
        assert!(k.validate_inputs(x.as_ref()).is_ok());
        x[(2, 2)] = 3.0;
        assert!(k
            .validate_inputs(x.as_ref())
            .unwrap_err()
            .to_string()
            .contains("row 2"));
        x[(2, 2)] = 0.5;
        assert!(k.validate_inputs(x.as_ref()).is_err());
        x[(2, 2)] = f64::NAN;
        assert!(k.validate_inputs(x.as_ref()).is_err());
        let bad = Coregion::new(Mat::zeros(2, 1), Some(vec![1.0]));
        assert!(bad.is_err());
        let two = LmcTerm {
            kernel: Kernel::parse("se(ls=1)").unwrap(),
            coregion: Coregion::new(Mat::from_fn(2, 1, |_, _| 1.0), None).unwrap(),
        };
        let three = k.terms()[0].clone();
        assert!(MultiOutputKernel::new(vec![three, two]).is_err());
    }
}
