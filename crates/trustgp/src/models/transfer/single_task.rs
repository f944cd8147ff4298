//! SAL's model of one function (`safe-transfer.md` §2.2, §3.1): the repo's exact GP on the
//! target data only, with kernel `const * matern52` (ARD), zero mean (the loop standardises
//! the data) and a Gaussian noise, fitted by Type-II ML from the previous optimum plus seeded
//! restarts (see `starts`).

use std::time::Instant;

use faer::MatRef;

use super::stack::{check_target, not_updated};
use super::starts::best_start;
use super::TransferFitOptions;
use crate::kernels::{BaseKernel, BaseKind, Kernel, Lengthscale};
use crate::linalg::parallelism_for;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::FunctionModel;

/// The initial hyperparameters for `d` inputs: `const(1) * matern52(ls = ℓ₀ in every
/// dimension)`, zero mean, noise variance `σ₀²` (from `options`).
pub(crate) fn initial_hyper(options: &TransferFitOptions, d: usize) -> Result<GpHyper, ModelError> {
    let scale = BaseKernel::new(BaseKind::Const).with_var(1.0)?;
    let matern = BaseKernel::new(BaseKind::Matern52)
        .with_lengthscale(Lengthscale::Ard(vec![options.initial_lengthscale; d]))?;
    Ok(GpHyper {
        kernel: Kernel::product(vec![Kernel::Base(scale), Kernel::Base(matern)]),
        mean: Mean::Zero,
        noise: options.initial_noise_std.powi(2),
    })
}

/// A single-task exact GP of one function on the target task (SAL).
#[derive(Clone, Debug)]
pub struct SingleTaskGp {
    options: TransferFitOptions,
    /// Input columns, fixed by the first update.
    d: Option<usize>,
    /// The hyperparameters that re-conditioning uses and that warm-start the next refit: the
    /// last optimum, or those set by [`SingleTaskGp::set_hyper`].
    hyper: Option<GpHyper>,
    gp: Option<ExactGp>,
    fit_seconds: f64,
}

impl SingleTaskGp {
    /// A model that has seen no data yet; the options are checked at the first update.
    pub fn new(options: TransferFitOptions) -> Self {
        SingleTaskGp {
            options,
            d: None,
            hyper: None,
            gp: None,
            fit_seconds: 0.0,
        }
    }

    /// The fit options.
    pub fn options(&self) -> &TransferFitOptions {
        &self.options
    }

    /// The current hyperparameters (`None` before the first update or
    /// [`SingleTaskGp::set_hyper`]).
    pub fn hyper(&self) -> Option<&GpHyper> {
        self.hyper.as_ref()
    }

    /// The exact GP conditioned on the last update's data (`None` before).
    pub fn exact(&self) -> Option<&ExactGp> {
        self.gp.as_ref()
    }

    /// Sets the hyperparameters (for example to condition at known values with
    /// `update(…, refit = false, …)`); a model that has data is re-conditioned on it at once.
    ///
    /// # Errors
    /// A kernel without lengthscale values, one that does not fit the model's inputs, a
    /// non-positive noise, or a failed factorisation; the model is then unchanged.
    pub fn set_hyper(&mut self, hyper: GpHyper) -> Result<(), ModelError> {
        if !hyper.kernel.is_initialized() {
            return Err(ModelError::Invalid(format!(
                "kernel '{}' has lengthscales without values",
                hyper.kernel
            )));
        }
        if !(hyper.noise.is_finite() && hyper.noise > 0.0) {
            return Err(ModelError::Invalid(format!(
                "noise must be a positive variance, got {}",
                hyper.noise
            )));
        }
        if let Some(d) = self.d {
            hyper.kernel.validate(d)?;
        }
        if let Some(gp) = &self.gp {
            self.gp = Some(ExactGp::at(
                hyper.clone(),
                gp.posterior().x(),
                &gp.y(),
                0.0,
            )?);
        }
        self.hyper = Some(hyper);
        Ok(())
    }

    /// Removes the data (keeping the hyperparameters), so that the model predicts nothing
    /// until the next update; also zeroes the fit time.
    pub(crate) fn forget_data(&mut self) {
        self.gp = None;
        self.fit_seconds = 0.0;
    }

    /// The best fit over the warm start `warm` and the restarts around the initial values.
    fn fit(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        init: &GpHyper,
        warm: &GpHyper,
        seed: u64,
    ) -> Result<ExactGp, ModelError> {
        let starts = (self.options).starts_from_current(
            &warm.to_vec(),
            &init.to_vec(),
            &init.bounds(),
            seed,
        );
        let opts = self.options.single_start();
        best_start(&starts, parallelism_for(x.nrows()), |v| {
            let gp = ExactGp::fit(x, y, init.with_vec(v)?, &opts)?;
            Ok((gp.lml(), gp))
        })
    }
}

impl FunctionModel for SingleTaskGp {
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        self.options.validate()?;
        let d = self.d.unwrap_or(x.ncols());
        check_target(x, y, d)?;
        let init = initial_hyper(&self.options, d)?;
        let current = self.hyper.clone().unwrap_or_else(|| init.clone());
        let (gp, seconds) = if refit {
            let clock = Instant::now();
            let gp = self.fit(x, y, &init, &current, seed)?;
            (gp, clock.elapsed().as_secs_f64())
        } else {
            (ExactGp::at(current, x, y, 0.0)?, 0.0)
        };
        self.d = Some(d);
        self.hyper = Some(gp.hyper().clone());
        self.gp = Some(gp);
        self.fit_seconds = seconds;
        Ok(())
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let gp = self.gp.as_ref().ok_or_else(not_updated)?;
        gp.predict(x, true)
    }

    fn noise_variance(&self) -> f64 {
        self.hyper
            .as_ref()
            .map_or(self.options.initial_noise_std.powi(2), |h| h.noise)
    }

    fn fit_seconds(&self) -> f64 {
        self.fit_seconds
    }

    fn log_evidence(&self) -> Option<f64> {
        self.exact().map(ExactGp::lml)
    }
}
