//! Draws from a zero-mean multi-output GP with an LMC covariance `Σ_l B_l ⊗ K_l` on a fixed set
//! of inputs (`safe-transfer.md` §5.2, GP1D/GP2D steps 2–3), using the Kronecker structure of
//! each term: `chol(B_l ⊗ K_l) = chol(B_l) ⊗ chol(K_l)`, and
//! `(L_B ⊗ L_K) vec(U) = vec(L_K U L_Bᵀ)` for an `n × T` matrix `U` of standard normals
//! (`vec` stacks columns, so entry `t·n + i` is output `t` at input `i`). A 100×100 grid thus
//! costs two 10⁴-sized factorisations instead of one of size 2·10⁴.

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, Mat, MatRef};
use rand::Rng;
use rand_distr::StandardNormal;

use crate::kernels::Kernel;
use crate::linalg::{parallelism_for, Cholesky, LinalgError};

/// Jitter added to every `K_l` before factorising (`safe-transfer.md` §6 \[choice\]: 10⁻⁶ on
/// every Cholesky). A smooth kernel's Gram matrix on a dense grid is numerically singular, and
/// each failed attempt at a 10⁴-sized factorisation costs seconds, so the jitter goes in up
/// front; it adds white noise of standard deviation 10⁻³, a tenth of the benchmarks' noise.
pub const GRAM_JITTER: f64 = 1e-6;

/// One LMC term: the mixing matrix `W_l` (T×R, `B_l = W_l W_lᵀ`) and the ARD lengthscales of
/// its unit-variance Matérn-5/2 kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct LmcTerm {
    /// Mixing matrix, T×R.
    pub w: Mat<f64>,
    /// One lengthscale per input.
    pub lengthscales: Vec<f64>,
}

impl LmcTerm {
    /// The coregionalisation matrix `B = W Wᵀ`.
    pub fn coregion(&self) -> Mat<f64> {
        &self.w * self.w.transpose()
    }

    /// The unit-variance Matérn-5/2 kernel with these lengthscales.
    pub fn kernel(&self) -> Kernel {
        let ls: Vec<String> = self.lengthscales.iter().map(|l| format!("{l:?}")).collect();
        Kernel::parse(&format!("matern52(var=1, ls=[{}])", ls.join(", ")))
            .expect("a valid Matérn-5/2 expression with positive lengthscales")
    }
}

/// Draws the hyperparameters of §5.2 step 2: `n_latents` terms, each with a `n_tasks × n_tasks`
/// `W` of entries `U[−1, 1)` whose rows are scaled to unit norm, and lengthscales `U[0.1, 1)`
/// per input.
pub fn sample_terms(
    rng: &mut impl Rng,
    n_tasks: usize,
    n_latents: usize,
    dim: usize,
) -> Vec<LmcTerm> {
    (0..n_latents)
        .map(|_| {
            let mut w = Mat::from_fn(n_tasks, n_tasks, |_, _| rng.random_range(-1.0..1.0));
            for i in 0..n_tasks {
                let norm = (0..n_tasks)
                    .map(|j| w[(i, j)] * w[(i, j)])
                    .sum::<f64>()
                    .sqrt();
                // A zero row has probability 0; leave it rather than divide by zero.
                if norm > 0.0 {
                    for j in 0..n_tasks {
                        w[(i, j)] /= norm;
                    }
                }
            }
            let lengthscales = (0..dim).map(|_| rng.random_range(0.1..1.0)).collect();
            LmcTerm { w, lengthscales }
        })
        .collect()
}

/// The Cholesky factors of every term on a fixed set of inputs, ready for any number of draws.
#[derive(Clone, Debug)]
pub struct LmcFactors {
    /// Per term: `chol(B_l)` (T×T) and `chol(K_l + GRAM_JITTER·I)` (n×n, lower triangle).
    factors: Vec<(Cholesky, Cholesky)>,
    n_tasks: usize,
}

impl LmcFactors {
    /// Factorises every term's `B_l` and `K_l(x, x) + GRAM_JITTER·I` (`x` n×d).
    ///
    /// # Errors
    /// A factor that is not positive definite even with the jitter escalation.
    pub fn new(terms: &[LmcTerm], x: MatRef<'_, f64>) -> Result<LmcFactors, LinalgError> {
        let n_tasks = terms.first().map_or(0, |t| t.w.nrows());
        let par = parallelism_for(x.nrows());
        let factors = terms
            .iter()
            .map(|t| {
                let b = Cholesky::factor(&t.coregion(), "LMC coregionalisation B", par)?;
                let gram = || {
                    let mut k = t.kernel().matrix_lower(x);
                    for i in 0..k.nrows() {
                        k[(i, i)] += GRAM_JITTER;
                    }
                    k
                };
                let k = Cholesky::factor_owned(gram(), "LMC grid Gram matrix", par, gram)?;
                Ok((b, k))
            })
            .collect::<Result<Vec<_>, LinalgError>>()?;
        Ok(LmcFactors { factors, n_tasks })
    }

    /// Number of outputs T.
    pub fn n_tasks(&self) -> usize {
        self.n_tasks
    }

    /// Number of inputs n.
    pub fn n(&self) -> usize {
        self.factors.first().map_or(0, |(_, k)| k.n())
    }

    /// The draw `Σ_l L_K,l U_l L_B,lᵀ` (n×T, column t = output t) from one n×T matrix of
    /// standard normals per term.
    ///
    /// # Panics
    /// If `normals` does not hold one n×T matrix per term (a programming error).
    pub fn draw(&self, normals: &[Mat<f64>]) -> Mat<f64> {
        assert_eq!(
            normals.len(),
            self.factors.len(),
            "one normal matrix per term"
        );
        let (n, t) = (self.n(), self.n_tasks);
        let mut out = Mat::<f64>::zeros(n, t);
        for ((lb, lk), u) in self.factors.iter().zip(normals) {
            assert_eq!((u.nrows(), u.ncols()), (n, t), "normals are n×T");
            // L_K U: only the lower triangle of the factor is meaningful.
            let mut ku = Mat::<f64>::zeros(n, t);
            matmul(
                ku.as_mut(),
                BlockStructure::Rectangular,
                Accum::Replace,
                lk.l(),
                BlockStructure::TriangularLower,
                u.as_ref(),
                BlockStructure::Rectangular,
                1.0,
                lk.parallelism().faer(),
            );
            // (L_K U) L_Bᵀ, accumulated over the terms.
            matmul(
                out.as_mut(),
                BlockStructure::Rectangular,
                Accum::Add,
                ku.as_ref(),
                BlockStructure::Rectangular,
                lb.l().transpose(),
                BlockStructure::TriangularUpper,
                1.0,
                faer::Par::Seq,
            );
        }
        out
    }

    /// One n×T matrix of standard normals per term, drawn column by column.
    pub fn normals(&self, rng: &mut impl Rng) -> Vec<Mat<f64>> {
        let (n, t) = (self.n(), self.n_tasks);
        (0..self.factors.len())
            .map(|_| {
                let mut u = Mat::<f64>::zeros(n, t);
                for j in 0..t {
                    for i in 0..n {
                        u[(i, j)] = rng.sample(StandardNormal);
                    }
                }
                u
            })
            .collect()
    }
}

/// Standardises each column of `m` to mean 0 and (population) variance 1 in place (§5.2 step
/// 4); a constant column is only centred.
pub fn standardize_columns(m: &mut Mat<f64>) {
    let n = m.nrows() as f64;
    for j in 0..m.ncols() {
        let mean = (0..m.nrows()).map(|i| m[(i, j)]).sum::<f64>() / n;
        let var = (0..m.nrows())
            .map(|i| (m[(i, j)] - mean).powi(2))
            .sum::<f64>()
            / n;
        let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
        for i in 0..m.nrows() {
            m[(i, j)] = (m[(i, j)] - mean) / sd;
        }
    }
}
