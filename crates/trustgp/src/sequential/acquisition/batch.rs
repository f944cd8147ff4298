//! Batch (q-point) expected improvement by Monte Carlo: qEI and qLogEI, reparameterised so that
//! gradients flow to every point of the batch.
//!
//! The joint posterior of the pending points (fixed: earlier picks of a greedy batch, or points
//! still being evaluated) followed by the `q` batch points is `N(μ, C)`. Its variances are
//! clamped at [`MC_MIN_VARIANCE`] before the Cholesky factor `L` is taken (`rcagp.md` §6.6:
//! round-off can make `C` slightly indefinite); jitter is added only if the factorisation
//! fails (escalating from `1e-8 ×` the mean variance, as [`Cholesky::factor`] does), as
//! BoTorch does, not the unconditional `10⁻⁶ I` of §6.6. A constant jitter adds independent
//! noise of standard deviation `√jitter` to every point, and the max over `m` points of noise
//! is worth about `0.56 √jitter` per sample: a point repeating a pending one would gain
//! `~5·10⁻⁴` of qEI from nothing, more than the real improvement late in a run, and greedy
//! batches would repeat points. For the same reason a point that repeats another exactly (as
//! when two picks land on the same corner of the box) enters the factorisation once and
//! shares its sample: a repeat adds nothing to qEI. (qLogEI's smooth max still rewards a tie
//! by up to `τ_max ln 2`, as BoTorch's does.) With base
//! samples `ε⁽ˢ⁾` drawn **once per acquisition object** (quasi-random, [`sobol_normal`]: common
//! random numbers, so the acquisition is a deterministic smooth function of the batch),
//! `f⁽ˢ⁾ = μ + L ε⁽ˢ⁾` and
//!
//! ```text
//! qEI    = (1/N) Σ_s max_j (f⁽ˢ⁾_j − f*)₊
//! qLogEI = log (1/N) Σ_s exp( τ_max · log Σ_j exp(ℓ⁽ˢ⁾_j / τ_max) ),
//!          ℓ = log softplus_τrelu(f − f*),  softplus_τ(z) = τ log(1 + e^{z/τ})
//! ```
//!
//! qLogEI is BoTorch's `qLogExpectedImprovement` with `fat=False` (Ament et al., 2023): the
//! improvement is smoothed by a softplus at temperature `τ_relu` (default `1e-6`), the max over
//! the batch by a log-sum-exp at `τ_max` (default `1e-2`), and the mean over samples is a
//! log-mean-exp, so it stays finite and informative where qEI is zero at every sample. Since
//! `relu ≤ softplus_τ ≤ relu + τ log 2` and `max ≤ τ LSE(·/τ) ≤ max + τ log m` over the
//! `m = pending + q` joint points, `log qEI ≤ qLogEI ≤ log(qEI + τ_relu log 2) + τ_max log m`.
//! The pending points take part in the max, as BoTorch's `X_pending` do; BoTorch's default is also [`DEFAULT_MC_SAMPLES`]` = 512`
//! Sobol samples.
//!
//! Gradients: the value depends on `μ` and `L`, with adjoints `ḡ⁽ˢ⁾ = ∂value/∂f⁽ˢ⁾`. The
//! forward-mode derivative of the Cholesky factor along a direction `dC` is
//! `dL = L Φ(L⁻¹ dC L⁻ᵀ)` (`Φ`: lower triangle, diagonal halved), so
//! `d value = Σ_s ḡ⁽ˢ⁾·dμ + ⟨Φ(L⁻¹ dC L⁻ᵀ), Lᵀ Ḡ⟩` with `Ḡ = Σ_s ḡ⁽ˢ⁾ ε⁽ˢ⁾ᵀ`. Moving
//! batch point `a` along input `c` changes `C` by `u e_kᵀ + e_k uᵀ`
//! ([`JointGradients`](crate::posterior::JointGradients)), so `L⁻¹ dC L⁻ᵀ = v wᵀ + w vᵀ` with
//! `v = L⁻¹ u`, `w = L⁻¹ e_k`: every partial derivative costs `O(m²)` after one `O(N m²)` pass.

use faer::{Mat, MatRef};

use super::qmc::sobol_normal;
use super::{finite, Acquisition, AcquisitionGradients};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;
use crate::posterior::{JointGaussian, JointGradients, Posterior};

/// Base samples per acquisition unless set otherwise: BoTorch's default for its Monte Carlo
/// acquisitions (`MCAcquisitionFunction._default_sample_shape`).
pub const DEFAULT_MC_SAMPLES: usize = 512;
/// Floor of the joint variances before the factorisation (`rcagp.md` §6.6).
pub const MC_MIN_VARIANCE: f64 = 1e-10;
/// BoTorch's `TAU_MAX`: temperature of qLogEI's smooth max over the batch.
pub const DEFAULT_TAU_MAX: f64 = 1e-2;
/// BoTorch's `TAU_RELU`: temperature of qLogEI's softplus-smoothed improvement.
pub const DEFAULT_TAU_RELU: f64 = 1e-6;
/// Below `z/τ` of this, `log softplus_τ(z) = z/τ + log τ` to rounding (BoTorch's cutoff).
const LOG_SOFTPLUS_CUTOFF: f64 = -35.0;

/// Which Monte Carlo batch improvement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BatchImprovementKind {
    /// qEI: the expected improvement of the best point of the batch.
    Expected,
    /// qLogEI: a smoothed logarithm of qEI (see the module documentation).
    LogExpected {
        /// Temperature of the smooth max over the batch (positive).
        tau_max: f64,
        /// Temperature of the softplus that smooths the improvement (positive).
        tau_relu: f64,
    },
}

impl BatchImprovementKind {
    /// qLogEI at BoTorch's temperatures ([`DEFAULT_TAU_MAX`], [`DEFAULT_TAU_RELU`]).
    pub fn log_expected() -> Self {
        BatchImprovementKind::LogExpected {
            tau_max: DEFAULT_TAU_MAX,
            tau_relu: DEFAULT_TAU_RELU,
        }
    }
}

/// Settings of the Monte Carlo integration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonteCarloOptions {
    /// Quasi-random base samples (1 to 2¹⁶). Default [`DEFAULT_MC_SAMPLES`].
    pub samples: usize,
    /// Seed of the Sobol scrambling: the same seed gives the same acquisition. Default 0.
    pub seed: u32,
}

impl Default for MonteCarloOptions {
    fn default() -> Self {
        MonteCarloOptions {
            samples: DEFAULT_MC_SAMPLES,
            seed: 0,
        }
    }
}

/// qEI or qLogEI of a batch of `q` points, jointly with fixed pending points, on a posterior.
///
/// As an [`Acquisition`] (only with `q = 1`) each candidate row is scored as a batch of one
/// next to the pending points: what greedy sequential batch selection maximises.
pub struct BatchImprovement<'p> {
    posterior: &'p dyn Posterior,
    kind: BatchImprovementKind,
    incumbent: f64,
    pending: Mat<f64>,
    q: usize,
    /// N × (pending + q), drawn once: common random numbers for every evaluation.
    base: Mat<f64>,
}

impl<'p> BatchImprovement<'p> {
    /// `kind` of improvement over `incumbent` (for noisy observations the best posterior mean,
    /// [`best_posterior_mean`](super::best_posterior_mean)) of batches of `q` points next to
    /// the rows of `pending` (may have none).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `incumbent` is not finite, `q` is 0, a temperature is not
    /// positive and finite, or the sample count or `pending + q` exceed the Sobol sequence
    /// ([`sobol_normal`]); the posterior's error if `pending` is not a valid input.
    pub fn new(
        posterior: &'p dyn Posterior,
        kind: BatchImprovementKind,
        incumbent: f64,
        pending: MatRef<'_, f64>,
        q: usize,
        options: &MonteCarloOptions,
    ) -> Result<Self, ModelError> {
        let incumbent = finite(incumbent, "the incumbent")?;
        if q == 0 {
            return Err(ModelError::Invalid(
                "a batch acquisition needs at least one batch point (q ≥ 1), got q = 0".into(),
            ));
        }
        if let BatchImprovementKind::LogExpected { tau_max, tau_relu } = kind {
            for (name, tau) in [("tau_max", tau_max), ("tau_relu", tau_relu)] {
                if !(tau.is_finite() && tau > 0.0) {
                    return Err(ModelError::Invalid(format!(
                        "qLogEI's {name} must be positive and finite, got {tau}"
                    )));
                }
            }
        }
        // Validates the pending points now rather than at the first evaluation.
        posterior.marginals(pending)?;
        let base = sobol_normal(options.samples, pending.nrows() + q, options.seed)?;
        Ok(BatchImprovement {
            posterior,
            kind,
            incumbent,
            pending: pending.to_owned(),
            q,
            base,
        })
    }

    /// The batch size `q`.
    pub fn q(&self) -> usize {
        self.q
    }

    /// The pending points (one per row).
    pub fn pending(&self) -> MatRef<'_, f64> {
        self.pending.as_ref()
    }

    /// The acquisition value of the batch `batch` (q rows).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `batch` does not have `q` rows; the posterior's error for an
    /// invalid input, or if the joint covariance cannot be factorised.
    pub fn value(&self, batch: MatRef<'_, f64>) -> Result<f64, ModelError> {
        self.check_rows(batch)?;
        let all = self.with_pending(batch)?;
        let distinct = Distinct::of(all.as_ref());
        let rows = Mat::from_fn(distinct.rows.len(), all.ncols(), |v, c| {
            all[(distinct.rows[v], c)]
        });
        let joint = self.posterior.joint(rows.as_ref())?;
        let (l, _) = factor(&joint)?;
        Ok(self.utility(&joint, &l, &distinct, None))
    }

    /// The acquisition value of the batch and its gradient with respect to every batch point
    /// (q × d). Where a batch point repeats an earlier point exactly, the gradient moves the
    /// copies together and the later copy's own row is zero.
    ///
    /// # Errors
    /// As for [`BatchImprovement::value`].
    pub fn value_and_gradient(
        &self,
        batch: MatRef<'_, f64>,
    ) -> Result<(f64, Mat<f64>), ModelError> {
        self.check_rows(batch)?;
        let all = self.with_pending(batch)?;
        let distinct = Distinct::of(all.as_ref());
        let g = self
            .posterior
            .joint_gradients(self.pending.as_ref(), batch)?;
        let rows = &distinct.rows;
        let joint = JointGaussian {
            mean: rows.iter().map(|&i| g.joint.mean[i]).collect(),
            cov: Mat::from_fn(rows.len(), rows.len(), |v, w| {
                g.joint.cov[(rows[v], rows[w])]
            }),
        };
        let (l, clamped) = factor(&joint)?;
        let mut adjoint = Mat::zeros(self.base.nrows(), rows.len());
        let value = self.utility(&joint, &l, &distinct, Some(&mut adjoint));
        let gradient = self.chain_rule(&g, &distinct, &l, &clamped, &adjoint);
        Ok((value, gradient))
    }

    fn check_rows(&self, batch: MatRef<'_, f64>) -> Result<(), ModelError> {
        if batch.nrows() == self.q {
            Ok(())
        } else {
            Err(ModelError::Invalid(format!(
                "the batch acquisition was built for q = {} points, got {}",
                self.q,
                batch.nrows()
            )))
        }
    }

    /// The pending rows followed by `batch`.
    fn with_pending(&self, batch: MatRef<'_, f64>) -> Result<Mat<f64>, ModelError> {
        let p = self.pending.nrows();
        if p > 0 && batch.ncols() != self.pending.ncols() {
            return Err(ModelError::Invalid(format!(
                "the batch has {} columns but the pending points {}",
                batch.ncols(),
                self.pending.ncols()
            )));
        }
        Ok(Mat::from_fn(p + batch.nrows(), batch.ncols(), |i, c| {
            if i < p {
                self.pending[(i, c)]
            } else {
                batch[(i - p, c)]
            }
        }))
    }

    /// The base samples of the distinct joint rows (N × distinct).
    fn distinct_base(&self, distinct: &Distinct) -> Mat<f64> {
        Mat::from_fn(self.base.nrows(), distinct.rows.len(), |s, v| {
            self.base[(s, distinct.rows[v])]
        })
    }

    /// The Monte Carlo value at the samples `μ + L ε⁽ˢ⁾` of the distinct rows (`joint`, `l`),
    /// repeated rows sharing their first occurrence's sample; adds `∂value/∂f⁽ˢ⁾_v` of the
    /// distinct rows to `adjoint` (N × distinct, zeros on entry) if given.
    fn utility(
        &self,
        joint: &JointGaussian,
        l: &Mat<f64>,
        distinct: &Distinct,
        mut adjoint: Option<&mut Mat<f64>>,
    ) -> f64 {
        let (n, m) = (self.base.nrows(), self.base.ncols());
        let fu = self.distinct_base(distinct) * l.transpose();
        let of = &distinct.of;
        let f = Mat::from_fn(n, m, |s, j| {
            fu[(s, of[j])] + joint.mean[of[j]] - self.incumbent
        });
        // `f` now holds the improvements z = f − f*.
        match self.kind {
            BatchImprovementKind::Expected => {
                let mut total = 0.0;
                for s in 0..n {
                    let (best, z) = (0..m)
                        .map(|j| (j, f[(s, j)]))
                        .fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
                    if z > 0.0 {
                        total += z;
                        if let Some(a) = adjoint.as_mut() {
                            a[(s, of[best])] = 1.0 / n as f64;
                        }
                    }
                }
                total / n as f64
            }
            BatchImprovementKind::LogExpected { tau_max, tau_relu } => {
                // Per sample: ℓ_j, dℓ_j/dz_j, the smooth max A_s and its softmax weights.
                let mut smooth_max = vec![0.0; n];
                let mut weights = Mat::<f64>::zeros(n, m);
                for s in 0..n {
                    let ell: Vec<f64> = (0..m).map(|j| log_softplus(f[(s, j)], tau_relu)).collect();
                    let scaled: Vec<f64> = ell.iter().map(|e| e / tau_max).collect();
                    let lse = log_sum_exp(&scaled);
                    smooth_max[s] = tau_max * lse;
                    for j in 0..m {
                        weights[(s, j)] =
                            (scaled[j] - lse).exp() * d_log_softplus(f[(s, j)], tau_relu);
                    }
                }
                let lse = log_sum_exp(&smooth_max);
                if let Some(a) = adjoint.as_mut() {
                    for s in 0..n {
                        let w = (smooth_max[s] - lse).exp();
                        for j in 0..m {
                            a[(s, of[j])] += w * weights[(s, j)];
                        }
                    }
                }
                lse - (n as f64).ln()
            }
        }
    }

    /// The gradient (q × d) from the sample adjoints of the distinct rows, through `μ` and the
    /// Cholesky factor `l` of the distinct rows (see the module documentation).
    fn chain_rule(
        &self,
        g: &JointGradients,
        distinct: &Distinct,
        l: &Mat<f64>,
        clamped: &[bool],
        adjoint: &Mat<f64>,
    ) -> Mat<f64> {
        let (p, d) = (g.fixed, g.mean.ncols());
        let (rows, m) = (&distinct.rows, l.nrows());
        // Σ_s ḡ⁽ˢ⁾ and B = Lᵀ Ḡ, Ḡ = Σ_s ḡ⁽ˢ⁾ ε⁽ˢ⁾ᵀ.
        let mean_adjoint: Vec<f64> = (0..m).map(|v| adjoint.col(v).iter().sum()).collect();
        let b = l.transpose() * (adjoint.transpose() * self.distinct_base(distinct));
        let l_inv = lower_inverse(l);
        let mut grad = Mat::<f64>::zeros(self.q, d);
        for a in 0..self.q {
            let k = distinct.of[p + a];
            if rows[k] != p + a {
                // A repeat: it moves with its first occurrence.
                continue;
            }
            let mut u = Mat::from_fn(m, d, |v, c| g.cov[a][(rows[v], c)]);
            if clamped[k] {
                // The clamped variance does not move: ∂C_kk = 2u_k must vanish.
                u.row_mut(k).fill(0.0);
            }
            let v = &l_inv * &u;
            // w = L⁻¹ e_k, zero above row k.
            let w = l_inv.col(k);
            for c in 0..d {
                let mut dl = 0.0;
                for i in k..m {
                    // Lower triangle of v wᵀ + w vᵀ, diagonal halved; rows above k vanish
                    // because w_i = 0 there and every j ≤ i < k has w_j = 0.
                    for j in 0..i {
                        dl += b[(i, j)] * (v[(i, c)] * w[j] + w[i] * v[(j, c)]);
                    }
                    dl += b[(i, i)] * v[(i, c)] * w[i];
                }
                grad[(a, c)] = mean_adjoint[k] * g.mean[(a, c)] + dl;
            }
        }
        grad
    }
}

impl Acquisition for BatchImprovement<'_> {
    /// Each row of `xs` is a batch of one next to the pending points.
    fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        self.require_single()?;
        (0..xs.nrows())
            .map(|a| self.value(xs.subrows(a, 1)))
            .collect()
    }

    fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError> {
        self.require_single()?;
        let mut value = Vec::with_capacity(xs.nrows());
        let mut gradient = Mat::zeros(xs.nrows(), xs.ncols());
        for a in 0..xs.nrows() {
            let (v, g) = self.value_and_gradient(xs.subrows(a, 1))?;
            value.push(v);
            gradient.row_mut(a).copy_from(g.row(0));
        }
        Ok(AcquisitionGradients { value, gradient })
    }
}

impl BatchImprovement<'_> {
    fn require_single(&self) -> Result<(), ModelError> {
        if self.q == 1 {
            Ok(())
        } else {
            Err(ModelError::Invalid(format!(
                "a batch acquisition scores candidate rows one at a time only when built with \
                 q = 1, not q = {}; use value / value_and_gradient on whole batches",
                self.q
            )))
        }
    }
}

/// The distinct rows of the joint points: an exact repeat of a row has the same posterior
/// sample, so it joins the factorisation only once (two equal rows would make the covariance
/// singular, and jitter would reward the repeat with made-up independent noise).
struct Distinct {
    /// The joint row of each distinct row, in order of first occurrence.
    rows: Vec<usize>,
    /// The distinct row of each joint row.
    of: Vec<usize>,
}

impl Distinct {
    fn of(all: MatRef<'_, f64>) -> Self {
        let (mut rows, mut of) = (Vec::<usize>::new(), Vec::with_capacity(all.nrows()));
        for i in 0..all.nrows() {
            let same = |r: &usize| (0..all.ncols()).all(|c| all[(*r, c)] == all[(i, c)]);
            match rows.iter().position(same) {
                Some(v) => of.push(v),
                None => {
                    of.push(rows.len());
                    rows.push(i);
                }
            }
        }
        Distinct { rows, of }
    }
}

/// The lower Cholesky factor (zeros above the diagonal) of the joint covariance with its
/// variances clamped at [`MC_MIN_VARIANCE`] (jitter only if needed), and which were clamped.
fn factor(joint: &JointGaussian) -> Result<(Mat<f64>, Vec<bool>), ModelError> {
    let m = joint.mean.len();
    let mut c = joint.cov.clone();
    let mut clamped = vec![false; m];
    for (i, ci) in clamped.iter_mut().enumerate() {
        if c[(i, i)] < MC_MIN_VARIANCE {
            c[(i, i)] = MC_MIN_VARIANCE;
            *ci = true;
        }
    }
    let chol = Cholesky::factor(
        &c,
        "joint posterior covariance of the batch",
        Parallelism::Sequential,
    )?;
    let l = chol.l();
    Ok((
        Mat::from_fn(m, m, |i, j| if i >= j { l[(i, j)] } else { 0.0 }),
        clamped,
    ))
}

/// `L⁻¹` of a lower-triangular `L` (zeros above the diagonal).
fn lower_inverse(l: &Mat<f64>) -> Mat<f64> {
    let mut inv = Mat::<f64>::identity(l.nrows(), l.nrows());
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
        l.as_ref(),
        inv.as_mut(),
        faer::Par::Seq,
    );
    inv
}

/// `log Σ exp(x_i)`, shifted by the maximum so that nothing overflows.
fn log_sum_exp(x: &[f64]) -> f64 {
    let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + x.iter().map(|v| (v - top).exp()).sum::<f64>().ln()
}

/// `log softplus_τ(z) = log(τ log(1 + e^{z/τ}))`, without overflow above or underflow below.
fn log_softplus(z: f64, tau: f64) -> f64 {
    let u = z / tau;
    if u > LOG_SOFTPLUS_CUTOFF {
        tau.ln() + (u.max(0.0) + (-u.abs()).exp().ln_1p()).ln()
    } else {
        // softplus(u) = e^u (1 − e^u/2 + …), and e^u/2 < 1e-15 here.
        tau.ln() + u
    }
}

/// `d log softplus_τ(z)/dz = σ(z/τ) / (τ softplus(z/τ))`, `σ` the logistic function.
fn d_log_softplus(z: f64, tau: f64) -> f64 {
    let u = z / tau;
    if u > LOG_SOFTPLUS_CUTOFF {
        let sigmoid = if u >= 0.0 {
            1.0 / (1.0 + (-u).exp())
        } else {
            u.exp() / (1.0 + u.exp())
        };
        sigmoid / (tau * (u.max(0.0) + (-u.abs()).exp().ln_1p()))
    } else {
        1.0 / tau
    }
}
