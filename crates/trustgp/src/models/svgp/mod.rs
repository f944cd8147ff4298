//! Stochastic variational GP regression (SVGP; Hensman et al. 2013) with a Gaussian or a
//! Student-t likelihood, whitened as in GPyTorch.
//!
//! With `m` inducing inputs `Z`, `K_uu = k(Z, Z) + 10⁻⁶ I = L Lᵀ` and
//! `u = m(Z) + L ũ`, `q(ũ) = N(m̃, S̃)`, `S̃ = L̃ L̃ᵀ` (`L̃` lower-triangular with a positive
//! diagonal, optimised in log space), the latent marginals are
//!
//! ```text
//! μ_f(x) = m(x) + k_xu L⁻ᵀ m̃,      v_f(x) = k_xx − k_xu K_uu⁻¹ k_ux + k_xu L⁻ᵀ S̃ L⁻¹ k_ux
//! ```
//!
//! and the model is trained by maximising the evidence lower bound
//!
//! ```text
//! ELBO = (n/|B|) Σ_{j∈B} E_{N(f; μ_f,j, v_f,j)}[log p(y_j | f)] − KL(N(m̃, S̃) ‖ N(0, I))
//! ```
//!
//! on minibatches `B` (`B` = all rows gives the exact, deterministic ELBO). The ELBO is
//! reported unnormalised (a sum over the data, comparable to a log marginal likelihood); the
//! optimiser sees it divided by `n`. Gradients in every parameter — `m̃`, `L̃`, the kernel's
//! log-hyperparameters, the likelihood's parameters, the mean's and the inducing inputs — are
//! analytic (derived by hand in the private `elbo` module). Memory does not grow with `n`
//! beyond the data: every data-sized quantity is formed for blocks of at most 1024 rows.
//!
//! Cost per evaluation on `b` rows: about `1.5 m² b` multiply-adds for the marginals and the
//! statistics, `O(m b d)` kernel work (the inducing-input gradient is the largest part), and
//! about `10 m³` for `K_uu`'s factor, the backward pass through it and a natural-gradient
//! step. With `m ≥ 300` and millions of rows, batches of a few thousand rows amortise the
//! `m³` part (natural gradients make large batches effective).
//!
//! Likelihoods: Gaussian (closed-form expectation) and Student-t with learned `ν > 2` and
//! scale `s²` (20-node Gauss–Hermite). A new observation's predictive variance is
//! `v_f + σ²`, respectively `v_f + s² ν/(ν − 2)` ([`Svgp::predictive_noise`]).
//!
//! For EULBO, [`Svgp::joint_evaluation`] adds a function of the predictive at query points to
//! the full-data ELBO's gradient (module `joint`).

mod elbo;
mod joint;
mod layout;
mod likelihood;
mod natural;
mod posterior;
mod state;
#[cfg(test)]
mod tests;
mod train;
mod unwhitened;

use faer::{Mat, MatRef};

use self::elbo::{evaluate, kl, Need, Rows};
pub(crate) use self::state::one_thread;
use self::state::{State, Whitened, CHUNK};
pub(crate) use self::train::Batches;
pub(crate) use self::unwhitened::{optimal_q_u, prior_factor, unwhitened_elbo};
use super::checks::check_training_data;
use super::inducing::InducingInit;
use super::ModelError;
use crate::fit::{FitReport, Optimizer};
use crate::kernels::Kernel;
use crate::likelihoods::Likelihood;
use crate::means::Mean;
use crate::posterior::Marginals;

/// The observation model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvgpLikelihood {
    /// `y = f + ε`, `ε ~ N(0, σ²)`; parameters `[σ²]`.
    Gaussian,
    /// `y = f + ε`, `ε ~ Student-t(ν, 0, s²)`; parameters `[ν, s²]`, `ν > 2`.
    StudentT,
}

/// Settings of [`Svgp::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct SvgpConfig {
    /// The observation model.
    pub likelihood: SvgpLikelihood,
    /// Number of inducing points `m` (1 to n).
    pub inducing: usize,
    /// How the inducing inputs start.
    pub init: InducingInit,
    /// Whether the inducing inputs are optimised.
    pub learn_inducing: bool,
    /// Rows per minibatch (at least 1; values above `n` mean full batch).
    pub batch_size: usize,
    /// The optimiser and its stopping rule (one step per minibatch). The objective it sees,
    /// and reports to the observer, is the ELBO estimate divided by `n`. L-BFGS is accepted
    /// only on the full batch (`batch_size ≥ n`), and then moves every parameter itself.
    pub optimizer: Optimizer,
    /// Natural-gradient steps for `(m̃, S̃)` alternating with the optimiser's steps on the
    /// other parameters (Salimbeni et al. 2018). Gaussian likelihood and Adam only: ignored
    /// for Student-t, whose expected log-likelihood need not be concave, and for L-BFGS.
    pub natural_gradients: bool,
    /// Seed of the inducing-point initialisation and of the minibatch order.
    pub seed: u64,
}

impl Default for SvgpConfig {
    /// Gaussian likelihood, 100 k-means inducing points (learned), minibatches of 1024,
    /// natural gradients, and Adam at learning rate 0.01 for at most 5000 steps, stopped when
    /// the mean per-datum ELBO over 200 steps improves by less than 1e-5 on the 200 before.
    fn default() -> Self {
        SvgpConfig {
            likelihood: SvgpLikelihood::Gaussian,
            inducing: 100,
            init: InducingInit::KMeans,
            learn_inducing: true,
            batch_size: 1024,
            optimizer: Optimizer::adam_early_stopping(5000, 0.01, 200, 1e-5),
            natural_gradients: true,
            seed: 0,
        }
    }
}

/// A fitted (or loaded) SVGP.
#[derive(Clone, Debug)]
pub struct Svgp {
    state: State,
    /// `L⁻¹` and `S̃ − I`, kept for prediction.
    whitened: Whitened,
    report: Option<FitReport>,
}

impl Svgp {
    /// Fits an SVGP to inputs `x` (n×d) and targets `y`, starting from `kernel` (initialised
    /// from the data if it has data-driven defaults), `mean`, and `noise` (the initial σ², or
    /// the initial Student-t scale s², with ν starting at 4). `observe(evaluation, value)` is
    /// called after every evaluation with the per-datum ELBO estimate.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for bad inputs (empty, ragged, non-finite, a kernel or mean that
    /// does not fit the columns, a non-positive noise, `inducing` 0 or above `n`, a zero batch
    /// size); the optimiser's errors.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        config: &SvgpConfig,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<Svgp, ModelError> {
        Svgp::fit_with((x, y), kernel, mean, noise, config, None, observe)
    }

    /// [`Svgp::fit`] whose closing natural-gradient pass (which sets `q` to its optimum for
    /// the final hyperparameters) reads only the rows `final_rows`, scaled by `n/|rows|`
    /// (`None`: every row). Kernel selection on long series uses it: that pass costs
    /// `m² n` per model.
    pub(crate) fn fit_with(
        (x, y): (MatRef<'_, f64>, &[f64]),
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        config: &SvgpConfig,
        final_rows: Option<&[usize]>,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<Svgp, ModelError> {
        check_training_data(x, y)?;
        if config.batch_size == 0 {
            return Err(ModelError::Invalid(
                "the minibatch size must be at least 1".into(),
            ));
        }
        if !(noise.is_finite() && noise > 0.0) {
            return Err(ModelError::Invalid(format!(
                "the initial noise must be a positive finite variance, got {noise}"
            )));
        }
        let mut kernel = kernel;
        kernel.initialize(x)?;
        let z = config.init.select(x, config.inducing, config.seed)?;
        let m = z.nrows();
        let init = State {
            kernel,
            mean,
            likelihood: config.likelihood,
            lik_params: config.likelihood.initial(noise),
            z,
            m_tilde: vec![0.0; m],
            l_tilde: Mat::identity(m, m),
        };
        init.validate()?;
        let (state, report) = train::train(x, y, init, config, final_rows, observe)?;
        Ok(Svgp {
            whitened: Whitened::new(&state)?,
            state,
            report: Some(report),
        })
    }

    /// Continues training from this model: its kernel, likelihood, inducing inputs and
    /// variational distribution are the starting point (`config.likelihood`, `config.init`
    /// and `config.inducing` are not used; the optimiser's moments start afresh). Kernel selection trains its
    /// candidates in stages this way, to look at them between stages.
    ///
    /// # Errors
    /// As for [`Svgp::fit`], and for data of another width than the model's.
    pub fn refine(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        config: &SvgpConfig,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<Svgp, ModelError> {
        self.refine_with((x, y), config, None, observe)
    }

    /// [`Svgp::refine`] with the closing natural-gradient pass on `final_rows` only (see
    /// [`Svgp::fit_with`]).
    pub(crate) fn refine_with(
        &self,
        (x, y): (MatRef<'_, f64>, &[f64]),
        config: &SvgpConfig,
        final_rows: Option<&[usize]>,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<Svgp, ModelError> {
        check_training_data(x, y)?;
        self.check_width(x)?;
        if config.batch_size == 0 {
            return Err(ModelError::Invalid(
                "the minibatch size must be at least 1".into(),
            ));
        }
        let (state, report) = train::train(x, y, self.state.clone(), config, final_rows, observe)?;
        Ok(Svgp {
            whitened: Whitened::new(&state)?,
            state,
            report: Some(report),
        })
    }

    /// An SVGP from stored parts (a model file): the likelihood's natural parameters (`[σ²]`
    /// or `[ν, s²]`), the inducing inputs `z` (m×d), and the whitened variational mean `m̃`
    /// and factor `L̃` (m×m; only its lower triangle is read, its diagonal must be positive).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for inconsistent shapes, non-finite or out-of-domain values, or
    /// a kernel that is not initialised or does not fit `z`; a factorisation error if `K_uu`
    /// is not positive definite even with jitter.
    pub fn from_parts(
        kernel: Kernel,
        mean: Mean,
        likelihood_params: Vec<f64>,
        likelihood: SvgpLikelihood,
        z: Mat<f64>,
        m_tilde: Vec<f64>,
        l_tilde: Mat<f64>,
    ) -> Result<Svgp, ModelError> {
        let l_tilde = state::lower(l_tilde.as_ref());
        let state = State {
            kernel,
            mean,
            likelihood,
            lik_params: likelihood_params,
            z,
            m_tilde,
            l_tilde,
        };
        state.validate()?;
        Ok(Svgp {
            whitened: Whitened::new(&state)?,
            state,
            report: None,
        })
    }

    /// Latent posterior mean and variance at the rows of `xs`, computed in blocks of rows.
    ///
    /// # Panics
    /// If `xs` does not have the model's number of input columns; [`Svgp::try_predict`]
    /// returns an error instead.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Marginals {
        self.try_predict(xs)
            .unwrap_or_else(|e| panic!("Svgp::predict: {e}"))
    }

    /// [`Svgp::predict`], with an error for inputs of the wrong width.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `xs` does not have [`Svgp::input_dim`] columns.
    pub fn try_predict(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.check_width(xs)?;
        let mut out = Marginals {
            mean: Vec::with_capacity(xs.nrows()),
            var: Vec::with_capacity(xs.nrows()),
        };
        for start in (0..xs.nrows()).step_by(CHUNK) {
            let len = CHUNK.min(xs.nrows() - start);
            let bm = self
                .whitened
                .marginals_through_p(&self.state, xs.subrows(start, len));
            out.mean.extend(bm.mu);
            out.var.extend(bm.v);
        }
        Ok(out)
    }

    fn check_width(&self, x: MatRef<'_, f64>) -> Result<(), ModelError> {
        if x.ncols() == self.input_dim() {
            Ok(())
        } else {
            Err(ModelError::Invalid(format!(
                "the model has {} input columns, the data {}",
                self.input_dim(),
                x.ncols()
            )))
        }
    }

    /// The variance a new observation adds to the latent variance: σ² (Gaussian) or
    /// s² ν/(ν − 2) (Student-t).
    pub fn predictive_noise(&self) -> f64 {
        self.observation_likelihood()
            .map_or(f64::NAN, |lik| lik.predict(0.0, 0.0).1)
    }

    /// The fitted likelihood (Gaussian or Student-t) at its parameters: the observation model
    /// of a new `y`.
    ///
    /// # Errors
    /// If the stored parameters are out of the likelihood's domain (a hand-edited model file).
    pub fn observation_likelihood(&self) -> Result<Box<dyn Likelihood>, ModelError> {
        self.state.likelihood.build(&self.state.lik_params)
    }

    /// The exact full-data ELBO (a sum over the rows of `x`, not divided by `n`).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for empty, ragged, non-finite or wrong-width data.
    pub fn elbo(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<f64, ModelError> {
        self.elbo_over(x, y, Rows::All)
    }

    /// The minibatch estimate `(n/|rows|) Σ_{j∈rows} E_q[log p(y_j | f_j)] − KL` of the ELBO:
    /// unbiased for [`Svgp::elbo`] when `rows` is a uniformly random subset of `0..n`.
    ///
    /// # Errors
    /// As for [`Svgp::elbo`], and for an empty or out-of-range row list.
    pub fn elbo_minibatch(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        rows: &[usize],
    ) -> Result<f64, ModelError> {
        if rows.is_empty() || rows.iter().any(|&r| r >= x.nrows()) {
            return Err(ModelError::Invalid(format!(
                "a minibatch needs at least one row index, each below {}",
                x.nrows()
            )));
        }
        self.elbo_over(x, y, Rows::Batch(rows))
    }

    fn elbo_over(&self, x: MatRef<'_, f64>, y: &[f64], rows: Rows<'_>) -> Result<f64, ModelError> {
        check_training_data(x, y)?;
        self.check_width(x)?;
        Ok(evaluate(&self.state, &self.whitened, x, y, rows, Need::Value)?.value)
    }

    /// `KL(q(ũ) ‖ p(ũ))`, the ELBO's penalty term.
    pub fn kl_divergence(&self) -> f64 {
        kl(&self.state)
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.state.kernel
    }

    /// The prior mean.
    pub fn mean(&self) -> &Mean {
        &self.state.mean
    }

    /// The inducing inputs (m×d).
    pub fn inducing(&self) -> MatRef<'_, f64> {
        self.state.z.as_ref()
    }

    /// Number of input columns.
    pub fn input_dim(&self) -> usize {
        self.state.z.ncols()
    }

    /// The whitened variational mean `m̃` and lower factor `L̃` (zeros above the diagonal).
    pub fn variational(&self) -> (&[f64], MatRef<'_, f64>) {
        (&self.state.m_tilde, self.state.l_tilde.as_ref())
    }

    /// The likelihood and its natural parameters (`[σ²]` or `[ν, s²]`).
    pub fn likelihood(&self) -> (SvgpLikelihood, &[f64]) {
        (self.state.likelihood, &self.state.lik_params)
    }

    /// The training report (`None` for a model built with [`Svgp::from_parts`]). Its
    /// `objective` is the optimiser's last ELBO estimate (a minibatch estimate unless the batch
    /// is the full data, taken before the final natural-gradient pass), unnormalised like
    /// [`Svgp::elbo`].
    pub fn report(&self) -> Option<&FitReport> {
        self.report.as_ref()
    }
}
