//! One candidate kernel of VBKS in **full-θ mode** (spec §2.3–§2.7, mode FULL_THETA): a
//! Gaussian posterior over the kernel's log-hyperparameters next to the sparse GP's `q(u)`.
//!
//! * `q(θ) = N(m_θ, C_θ C_θᵀ)` over the log-hyperparameters (`C_θ` lower-triangular with a
//!   positive diagonal), prior `p(θ) = N(μ₀, s₀² I)` with `μ₀ = 0`, `s₀ = 1` (every
//!   hyperparameter 1 in standardised units, spec §2.14); `m_θ` starts at the kernel's
//!   initial hyperparameters and `C_θ` at `0.1 I`.
//! * `q(u) = N(m_u, C_u C_uᵀ)` **non-whitened**, independent of `θ` (spec §7.14), starting at
//!   the prior of the initial hyperparameters (`m_u = 0`, `C_u = chol(K_ZZ + εI)`).
//! * The noise variance `σ²` is a point estimate (log space, floor `10⁻⁶`, spec §2.1).
//!
//! The local ELBO is `L = E_q(θ)[ELL(θ) − KL(q(u) ‖ p(u | θ))] − KL(q(θ) ‖ p(θ))` and its
//! estimator (spec §2.7, RB with `S_train = 1`) uses one reparameterised sample
//! `θ = m_θ + C_θ η`, `η ~ N(0, I)`, and a minibatch:
//! `L̂ = (n/B) Σ_batch ℓ_j(θ) − KL_u(θ) − KL_θ`. Its gradient in `m_θ` is `∇_θ h − (m_θ − μ₀)/s₀²`
//! and in `C_θ` `tril(∇_θ h ηᵀ) − C_θ/s₀² + diag(1/C_θ,jj)`, `∇_θ h` being the sparse GP's
//! hyperparameter gradient at the sample (exact, hand-derived in `models::svgp`).
//!
//! Sampled log-hyperparameters are clamped to `m_θ ± 6 sd` and to `[−30, 30]` (spec §7.6):
//! a clamped coordinate passes no gradient (a 6-sd event, about 2·10⁻⁹ per coordinate).
//! Diagonals of `C_u`, `C_θ` are optimised as logarithms (the crate's convention for positive
//! parameters; the spec's softplus is an equivalent choice).

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use crate::fit::{maximize, Optimizer};
use crate::kernels::Kernel;
use crate::models::svgp::{optimal_q_u, prior_factor, unwhitened_elbo, Batches, Svgp};
use crate::models::ModelError;

use super::settle::IterateMean;

/// Mean `μ₀` of the prior on every log-hyperparameter.
pub const THETA_PRIOR_MEAN: f64 = 0.0;
/// Standard deviation `s₀` of the prior on every log-hyperparameter.
pub const THETA_PRIOR_SD: f64 = 1.0;
/// `C_θ` starts at this multiple of the identity.
pub const THETA_INIT_SD: f64 = 0.1;
/// Sampled log-hyperparameters stay within this many standard deviations of `m_θ`.
const CLAMP_SD: f64 = 6.0;
/// … and within `[−CLAMP_LOG, CLAMP_LOG]` (exp overflows or degenerates beyond).
const CLAMP_LOG: f64 = 30.0;
/// The noise variance's floor `σ²_min` (standardised units).
const NOISE_FLOOR: f64 = 1e-6;

/// One stage of full-θ training ([`FullTheta::train_stage`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    /// Adam steps.
    pub steps: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Minibatch size (capped at `n`).
    pub batch_size: usize,
    /// Seeds of the minibatch sequence (shared by all kernels) and of the `θ`-draws.
    pub seeds: (u64, u64),
    /// `Some(s)`: return the mean of the iterates after step `s` instead of the last one.
    pub average_from: Option<usize>,
    /// `θ`-draws per step (`S_train`, spec §2.7; 1 by the spec's choice).
    pub theta_samples: usize,
}

/// One kernel's variational state in full-θ mode: `q(u)`, `q(θ)` and the noise variance.
#[derive(Clone, Debug)]
pub struct FullTheta {
    /// The kernel (its structure; its hyperparameters are overwritten by each sample).
    kernel: Kernel,
    z: Mat<f64>,
    m_u: Vec<f64>,
    c_u: Mat<f64>,
    m_theta: Vec<f64>,
    c_theta: Mat<f64>,
    noise: f64,
}

/// The lower triangle of `a`, column by column, its diagonal as logarithms.
fn push_triangle(out: &mut Vec<f64>, a: &Mat<f64>) {
    let m = a.nrows();
    for j in 0..m {
        out.push(a[(j, j)].ln());
        out.extend((j + 1..m).map(|i| a[(i, j)]));
    }
}

/// The gradient `g` in the entries of a lower factor `a` as the gradient in
/// [`push_triangle`]'s coordinates (chain rule through the log diagonal).
fn push_triangle_grad(out: &mut Vec<f64>, g: &Mat<f64>, a: &Mat<f64>) {
    let m = a.nrows();
    for j in 0..m {
        out.push(g[(j, j)] * a[(j, j)]);
        out.extend((j + 1..m).map(|i| g[(i, j)]));
    }
}

/// The inverse of [`push_triangle`]: an `m × m` lower factor from the front of `p`.
fn take_triangle(p: &mut &[f64], m: usize) -> Mat<f64> {
    let mut a = Mat::zeros(m, m);
    let mut it = p.iter();
    for j in 0..m {
        a[(j, j)] = it.next().expect("length checked").exp();
        for i in j + 1..m {
            a[(i, j)] = *it.next().expect("length checked");
        }
    }
    *p = &p[m * (m + 1) / 2..];
    a
}

/// `count` draws of `N(0, I_dim)` from `seed` (fixed draws: common random numbers).
pub(crate) fn standard_normals(count: usize, dim: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| (0..dim).map(|_| StandardNormal.sample(&mut rng)).collect())
        .collect()
}

impl FullTheta {
    /// The initial state of `kernel` (initialised, e.g. from [`Structure::instantiate`]):
    /// `m_θ` its log-hyperparameters, `C_θ = 0.1 I`, `q(u)` its prior at inducing inputs `z`,
    /// noise variance `noise`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a non-positive noise or an uninitialised kernel; a
    /// factorisation error if `K_ZZ` is singular even with jitter.
    ///
    /// [`Structure::instantiate`]: super::Structure::instantiate
    pub fn new(kernel: Kernel, z: Mat<f64>, noise: f64) -> Result<FullTheta, ModelError> {
        if !kernel.is_initialized() {
            return Err(ModelError::Invalid(format!(
                "kernel '{kernel}' has lengthscales without values"
            )));
        }
        let p = kernel.n_params();
        let c_u = prior_factor(&kernel, z.as_ref())?;
        let state = FullTheta {
            m_theta: kernel.log_params(),
            c_theta: Mat::from_fn(p, p, |i, j| if i == j { THETA_INIT_SD } else { 0.0 }),
            m_u: vec![0.0; z.nrows()],
            c_u,
            kernel,
            z,
            noise,
        };
        state.validate()?;
        Ok(state)
    }

    /// A state from its parts: `q(u) = N(m_u, C_u C_uᵀ)`, `q(θ) = N(m_θ, C_θ C_θᵀ)` (only the
    /// lower triangles of the factors are read), noise variance `noise`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] naming the part with a wrong shape, a non-finite entry or a
    /// non-positive diagonal.
    pub fn from_parts(
        kernel: Kernel,
        z: Mat<f64>,
        (m_u, c_u): (Vec<f64>, Mat<f64>),
        (m_theta, c_theta): (Vec<f64>, Mat<f64>),
        noise: f64,
    ) -> Result<FullTheta, ModelError> {
        let low = |a: Mat<f64>| {
            Mat::from_fn(
                a.nrows(),
                a.ncols(),
                |i, j| if i >= j { a[(i, j)] } else { 0.0 },
            )
        };
        let state = FullTheta {
            kernel,
            z,
            m_u,
            c_u: low(c_u),
            m_theta,
            c_theta: low(c_theta),
            noise,
        };
        state.validate()?;
        Ok(state)
    }

    fn validate(&self) -> Result<(), ModelError> {
        let bad = |what: String| Err(ModelError::Invalid(what));
        let (m, p) = (self.z.nrows(), self.kernel.n_params());
        if m == 0 {
            return bad("full-θ: at least one inducing input is needed".into());
        }
        for (name, vec, mat, size) in [
            ("q(u)", &self.m_u, &self.c_u, m),
            ("q(θ)", &self.m_theta, &self.c_theta, p),
        ] {
            if vec.len() != size || mat.nrows() != size || mat.ncols() != size {
                return bad(format!(
                    "full-θ {name}: expected a mean of length {size} and a {size}×{size} \
                     factor, got {} and {}×{}",
                    vec.len(),
                    mat.nrows(),
                    mat.ncols()
                ));
            }
            if vec.iter().any(|v| !v.is_finite())
                || (0..size).any(|j| (0..size).any(|i| !mat[(i, j)].is_finite()))
            {
                return bad(format!("full-θ {name}: expected finite parameters"));
            }
            if let Some(i) = (0..size).find(|&i| mat[(i, i)] <= 0.0) {
                return bad(format!(
                    "full-θ {name}: the factor needs a positive diagonal, got {} at ({i}, {i})",
                    mat[(i, i)]
                ));
            }
        }
        if !(self.noise.is_finite() && self.noise > 0.0) {
            return bad(format!(
                "full-θ: the noise must be a positive variance, got {}",
                self.noise
            ));
        }
        Ok(())
    }

    /// Number of log-hyperparameters `P`.
    pub fn n_theta(&self) -> usize {
        self.m_theta.len()
    }

    /// The mean `m_θ` and lower factor `C_θ` of `q(θ)`.
    pub fn theta(&self) -> (&[f64], MatRef<'_, f64>) {
        (&self.m_theta, self.c_theta.as_ref())
    }

    /// The mean `m_u` and lower factor `C_u` of `q(u)` (non-whitened).
    pub fn variational(&self) -> (&[f64], MatRef<'_, f64>) {
        (&self.m_u, self.c_u.as_ref())
    }

    /// The noise variance `σ²`.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// `KL(q(θ) ‖ p(θ)) = ½[(‖C_θ‖²_F + ‖m_θ − μ₀‖²)/s₀² − P + P log s₀² − 2 Σ log C_θ,jj]`.
    pub fn kl_theta(&self) -> f64 {
        let p = self.n_theta();
        let s2 = THETA_PRIOR_SD * THETA_PRIOR_SD;
        let frob: f64 = (0..p)
            .map(|j| (j..p).map(|i| self.c_theta[(i, j)].powi(2)).sum::<f64>())
            .sum();
        let mean: f64 = self
            .m_theta
            .iter()
            .map(|v| (v - THETA_PRIOR_MEAN).powi(2))
            .sum();
        let log_diag: f64 = (0..p).map(|j| self.c_theta[(j, j)].ln()).sum();
        0.5 * ((frob + mean) / s2 - p as f64 + p as f64 * s2.ln() - 2.0 * log_diag)
    }

    /// The sample `θ = m_θ + C_θ η` (clamped, spec §7.6) and which coordinates are free
    /// (not clamped).
    fn sample(&self, eta: &[f64]) -> (Vec<f64>, Vec<bool>) {
        let p = self.n_theta();
        (0..p)
            .map(|i| {
                let row = (0..=i).map(|k| self.c_theta[(i, k)]);
                let sd = row.clone().map(|c| c * c).sum::<f64>().sqrt();
                let raw = self.m_theta[i] + row.zip(eta).map(|(c, e)| c * e).sum::<f64>();
                let (lo, hi) = (
                    (self.m_theta[i] - CLAMP_SD * sd).max(-CLAMP_LOG),
                    (self.m_theta[i] + CLAMP_SD * sd).min(CLAMP_LOG),
                );
                let theta = raw.clamp(lo.min(hi), hi);
                (theta, theta == raw)
            })
            .unzip()
    }

    /// The kernel at the hyperparameter sample of `eta`.
    fn kernel_at(&self, eta: &[f64]) -> Result<(Kernel, Vec<bool>), ModelError> {
        let (theta, free) = self.sample(eta);
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(&theta)?;
        Ok((kernel, free))
    }

    /// The one-sample estimate `L̂ = c Σ_rows ℓ_j(θ) − KL_u(θ) − KL_θ` at `θ = m_θ + C_θ η`, over
    /// all rows of `(x, y)` (`rows` `None`, `c = 1`) or a minibatch (`c = n/|rows|`), and with
    /// `gradient` its gradient in the packed coordinates ([`FullTheta::pack`]).
    ///
    /// # Errors
    /// `eta` of the wrong length; data of the wrong width; a `K_ZZ` that cannot be factorised
    /// at the sample.
    pub fn estimate(
        &self,
        (x, y): (MatRef<'_, f64>, &[f64]),
        rows: Option<&[usize]>,
        eta: &[f64],
        gradient: bool,
    ) -> Result<(f64, Option<Vec<f64>>), ModelError> {
        if eta.len() != self.n_theta() {
            return Err(ModelError::Invalid(format!(
                "full-θ: expected a standard normal draw of length {} (one per \
                 hyperparameter), got {}",
                self.n_theta(),
                eta.len()
            )));
        }
        if x.ncols() != self.z.ncols() {
            return Err(ModelError::Invalid(format!(
                "full-θ: the model has {} input columns, the data {}",
                self.z.ncols(),
                x.ncols()
            )));
        }
        let (kernel, free) = self.kernel_at(eta)?;
        let (h, g) = unwhitened_elbo(
            &kernel,
            self.noise,
            self.z.as_ref(),
            &self.m_u,
            self.c_u.as_ref(),
            (x, y),
            rows,
            gradient,
        )?;
        let value = h - self.kl_theta();
        let Some(g) = g else {
            return Ok((value, None));
        };
        let p = self.n_theta();
        let s2 = THETA_PRIOR_SD * THETA_PRIOR_SD;
        // ∇_θ h at the sample; a clamped coordinate does not move with (m_θ, C_θ).
        let gt: Vec<f64> = g
            .kernel
            .iter()
            .zip(&free)
            .map(|(v, f)| if *f { *v } else { 0.0 })
            .collect();
        let mut out = Vec::with_capacity(self.len());
        out.extend(&g.m);
        push_triangle_grad(&mut out, &g.c, &self.c_u);
        out.extend(
            gt.iter()
                .zip(&self.m_theta)
                .map(|(g, m)| g - (m - THETA_PRIOR_MEAN) / s2),
        );
        let g_c = Mat::from_fn(p, p, |i, j| {
            if i < j {
                return 0.0;
            }
            let diag = if i == j {
                1.0 / self.c_theta[(i, i)]
            } else {
                0.0
            };
            gt[i] * eta[j] - self.c_theta[(i, j)] / s2 + diag
        });
        push_triangle_grad(&mut out, &g_c, &self.c_theta);
        out.push(g.log_noise);
        Ok((value, Some(out)))
    }

    /// The local ELBO estimate `L* = mean_s [c Σ_rows ℓ_j(θ_s) − KL_u(θ_s)] − KL_θ` over the
    /// given draws `etas` (common random numbers across kernels and checkpoints, spec §4.1).
    ///
    /// # Errors
    /// As for [`FullTheta::estimate`], and for no draw.
    pub fn local_elbo(
        &self,
        data: (MatRef<'_, f64>, &[f64]),
        rows: Option<&[usize]>,
        etas: &[Vec<f64>],
    ) -> Result<f64, ModelError> {
        if etas.is_empty() {
            return Err(ModelError::Invalid(
                "full-θ: the local ELBO needs at least one hyperparameter sample".into(),
            ));
        }
        let mut total = 0.0;
        for eta in etas {
            total += self.estimate(data, rows, eta, false)?.0;
        }
        Ok(total / etas.len() as f64)
    }

    /// Length of the packed parameter vector.
    pub fn len(&self) -> usize {
        let (m, p) = (self.z.nrows(), self.n_theta());
        m + m * (m + 1) / 2 + p + p * (p + 1) / 2 + 1
    }

    /// Never: a state has at least one inducing point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The unconstrained parameters the optimiser moves: `m_u`, the lower triangle of `C_u`
    /// (column by column, log diagonal), `m_θ`, the lower triangle of `C_θ` (likewise), and
    /// `log σ²`.
    pub fn pack(&self) -> Vec<f64> {
        let mut p = Vec::with_capacity(self.len());
        p.extend(&self.m_u);
        push_triangle(&mut p, &self.c_u);
        p.extend(&self.m_theta);
        push_triangle(&mut p, &self.c_theta);
        p.push(self.noise.ln());
        p
    }

    /// A copy with the parameters of `p` (the layout of [`FullTheta::pack`]).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a vector of the wrong length or parameters that are not
    /// finite once transformed.
    pub fn unpack(&self, p: &[f64]) -> Result<FullTheta, ModelError> {
        if p.len() != self.len() {
            return Err(ModelError::Invalid(format!(
                "full-θ: expected {} packed parameters, got {}",
                self.len(),
                p.len()
            )));
        }
        let (m, k) = (self.z.nrows(), self.n_theta());
        let mut rest = p;
        let m_u = rest[..m].to_vec();
        rest = &rest[m..];
        let c_u = take_triangle(&mut rest, m);
        let m_theta = rest[..k].to_vec();
        rest = &rest[k..];
        let c_theta = take_triangle(&mut rest, k);
        let state = FullTheta {
            kernel: self.kernel.clone(),
            z: self.z.clone(),
            m_u,
            c_u,
            m_theta,
            c_theta,
            noise: rest[0].exp(),
        };
        state.validate()?;
        Ok(state)
    }

    /// Trains for `steps` Adam steps at learning rate `lr` (fresh moments), one minibatch
    /// of `batch_size` rows (the seeded sequence of `batch_seed`, shared by all kernels) and
    /// one `η` (from `eta_seed`) per step, returning the last iterate. The optimiser sees the
    /// estimate divided by `n`. [`FullTheta::train_stage`] with the other options.
    ///
    /// # Errors
    /// As for [`FullTheta::estimate`]; the optimiser's errors (e.g. a non-finite estimate).
    pub fn train(
        &self,
        data: (MatRef<'_, f64>, &[f64]),
        steps: usize,
        lr: f64,
        batch_size: usize,
        seeds: (u64, u64),
    ) -> Result<FullTheta, ModelError> {
        self.train_stage(
            data,
            &Stage {
                steps,
                lr,
                batch_size,
                seeds,
                average_from: None,
                theta_samples: 1,
            },
        )
    }

    /// Trains one stage as `stage` says: Adam (fresh moments) on the estimator of spec §2.7
    /// with `theta_samples` draws of `θ` per step (their mean, on one shared minibatch), and
    /// either the last iterate or, with `average_from = Some(s)`, the mean of the iterates
    /// after step `s` (Polyak–Ruppert averaging, see `selection::settle`).
    ///
    /// # Errors
    /// As for [`FullTheta::train`]; zero `theta_samples`.
    pub fn train_stage(
        &self,
        (x, y): (MatRef<'_, f64>, &[f64]),
        stage: &Stage,
    ) -> Result<FullTheta, ModelError> {
        if stage.theta_samples == 0 {
            return Err(ModelError::Invalid(
                "full-θ: expected at least one θ-sample per training step, got 0".into(),
            ));
        }
        let n = x.nrows();
        let batch = stage.batch_size.clamp(1, n.max(1));
        let (batch_seed, eta_seed) = stage.seeds;
        let mut batches = Batches::new(n, batch, batch_seed);
        let mut rng = StdRng::seed_from_u64(eta_seed);
        let x0 = self.pack();
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let mut bounds = vec![free; x0.len()];
        *bounds.last_mut().expect("non-empty") = (NOISE_FLOOR.ln(), f64::INFINITY);
        let names: Vec<String> = (0..x0.len()).map(|i| format!("full-θ[{i}]")).collect();
        let p = self.n_theta();
        let s = stage.theta_samples as f64;
        // Adam evaluates every iterate once, x0 first, and only accepted points succeed, so
        // the successful evaluations are the iterates in order.
        let mut iterate = 0;
        let mut mean = IterateMean::default();
        let objective = |params: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
            let model = self.unpack(params)?;
            let rows = (batch < n).then(|| batches.next_batch());
            let (mut value, mut grad) = (0.0, vec![0.0; params.len()]);
            for _ in 0..stage.theta_samples {
                let eta: Vec<f64> = (0..p).map(|_| StandardNormal.sample(&mut rng)).collect();
                let (v, g) = model.estimate((x, y), rows, &eta, true)?;
                value += v;
                grad.iter_mut()
                    .zip(g.expect("gradient requested"))
                    .for_each(|(t, g)| *t += g);
            }
            if stage.average_from.is_some_and(|from| iterate > from) {
                mean.add(params);
            }
            iterate += 1;
            let scale = s * n as f64;
            Ok((value / scale, grad.into_iter().map(|g| g / scale).collect()))
        };
        let optimizer = Optimizer::adam_fixed_steps(stage.steps, stage.lr);
        let (last, _) = maximize(objective, &x0, &bounds, &names, &optimizer, &mut |_, _| {})?;
        self.unpack(&mean.mean().unwrap_or(last))
    }

    /// A copy whose `q(u)` is the exact maximiser of the local ELBO for this `q(θ)` and noise,
    /// the expectation over `q(θ)` taken over the draws `etas` (the ELBO is quadratic in
    /// `q(u)`'s mean and covariance for every `θ`, see `models::svgp::optimal_q_u`). Training
    /// by minibatch SGA leaves `q(u)` jittering around this optimum; comparing kernels at it
    /// removes that noise from their `L*`.
    ///
    /// # Errors
    /// As for [`FullTheta::estimate`].
    pub fn with_optimal_q_u(
        &self,
        data: (MatRef<'_, f64>, &[f64]),
        etas: &[Vec<f64>],
    ) -> Result<FullTheta, ModelError> {
        let kernels = etas
            .iter()
            .map(|eta| self.kernel_at(eta).map(|k| k.0))
            .collect::<Result<Vec<_>, _>>()?;
        let (m_u, c_u) = optimal_q_u(&kernels, self.noise, self.z.as_ref(), data)?;
        let state = FullTheta {
            m_u,
            c_u,
            ..self.clone()
        };
        state.validate()?;
        Ok(state)
    }

    /// The sparse GP at the hyperparameter sample of `eta` with this `q(u)` (for prediction).
    ///
    /// # Errors
    /// As for [`FullTheta::estimate`].
    pub fn svgp_at(&self, eta: &[f64]) -> Result<Svgp, ModelError> {
        if eta.len() != self.n_theta() {
            return Err(ModelError::Invalid(format!(
                "full-θ: expected a draw of length {}, got {}",
                self.n_theta(),
                eta.len()
            )));
        }
        let (kernel, _) = self.kernel_at(eta)?;
        Svgp::from_unwhitened(
            &kernel,
            self.noise,
            self.z.as_ref(),
            &self.m_u,
            self.c_u.as_ref(),
        )
    }
}
