//! FullTransHGP (Alg. 2 with the HGP kernel): every parameter of every level and every task's
//! noise refitted jointly on `log N((y_s; y_t) | 0, Ω)`, `O((N_s + N)³)` per evaluation.

use std::time::Instant;

use faer::MatRef;

use super::stack::{check_target, not_updated, stack_sources, tagged, StackedSources};
use super::{check_kernel, TransferFitOptions};
use crate::kernels::HierarchicalKernel;
use crate::linalg::parallelism_for;
use crate::means::Mean;
use crate::models::checks::check_test_inputs;
use crate::models::robust::mogp::MultiOutputGp;
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::{FunctionModel, SourceTask};

/// FullTransHGP: a multi-output GP with the hierarchical kernel over (sources, target), all
/// hyperparameters refitted jointly (see the [module docs](super)).
#[derive(Clone, Debug)]
pub struct HgpTransfer {
    options: TransferFitOptions,
    sources: StackedSources,
    /// The current hyperparameters (initial values until the first fit).
    kernel: Option<HierarchicalKernel>,
    noise: Vec<f64>,
    /// Whether `kernel` and `noise` came from a fit (the warm start of the next one).
    fitted: bool,
    gp: Option<MultiOutputGp<HierarchicalKernel, Mean>>,
    fit_seconds: f64,
}

impl HgpTransfer {
    /// The model of one function with these source tasks (in this order); nothing is fitted
    /// until [`FunctionModel::update`].
    ///
    /// # Errors
    /// Bad source data or options.
    pub fn new(sources: Vec<SourceTask>, options: TransferFitOptions) -> Result<Self, ModelError> {
        options.validate()?;
        let sources = stack_sources(&sources)?;
        let mut model = HgpTransfer {
            noise: vec![options.initial_noise(); sources.p + 1],
            options,
            sources,
            kernel: None,
            fitted: false,
            gp: None,
            fit_seconds: 0.0,
        };
        if let Some(d) = model.sources.d {
            model.kernel = Some(model.options.initial_kernel(d, model.sources.p + 1)?);
        }
        Ok(model)
    }

    /// Sets the hyperparameters (`P + 1` levels, one noise variance per task, the target's
    /// last); they are used by the next [`FunctionModel::update`] that does not refit.
    ///
    /// # Errors
    /// Wrong number of levels or noises, a non-positive noise, or kernels that do not fit the
    /// sources' inputs.
    pub fn set_hyperparameters(
        &mut self,
        kernel: HierarchicalKernel,
        noise: Vec<f64>,
    ) -> Result<(), ModelError> {
        let d = (self.sources.d).or(self.gp.as_ref().map(|g| g.posterior().x().ncols() - 1));
        check_kernel(&kernel, &noise, self.sources.p + 1, d)?;
        self.kernel = Some(kernel);
        self.noise = noise;
        self.fitted = true;
        Ok(())
    }

    /// The hierarchical kernel (`None` before the first update without sources).
    pub fn kernel(&self) -> Option<&HierarchicalKernel> {
        self.kernel.as_ref()
    }

    /// The noise variance of every task (sources in order, then the target).
    pub fn noise(&self) -> &[f64] {
        &self.noise
    }

    /// The fitted GP over (sources, target) (`None` before the first update).
    pub fn gp(&self) -> Option<&MultiOutputGp<HierarchicalKernel, Mean>> {
        self.gp.as_ref()
    }

    /// The log marginal likelihood of (sources, target) at the current hyperparameters.
    pub fn lml(&self) -> Option<f64> {
        self.gp.as_ref().map(MultiOutputGp::lml)
    }
}

impl FunctionModel for HgpTransfer {
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        let d = self.sources.d.unwrap_or(x.ncols());
        check_target(x, y, d)?;
        self.sources.settle_width(d);
        let p = self.sources.p;
        let kernel = match self.kernel.take() {
            Some(k) => k,
            None => self.options.initial_kernel(d, p + 1)?,
        };
        let (x_all, y_all, group) = self.sources.with_target(x, y);
        let par = parallelism_for(x_all.nrows());
        let (kernel, noise) = if refit {
            let clock = Instant::now();
            let initial = self.options.initial_kernel(d, p + 1)?;
            let start_noise = vec![self.options.initial_noise(); p + 1];
            let warm = self.fitted.then_some((&kernel, self.noise.as_slice()));
            let fitted = self.options.fit_joint(
                &initial,
                &start_noise,
                warm,
                x_all.as_ref(),
                &y_all,
                &group,
                seed,
                par,
            );
            self.fit_seconds = clock.elapsed().as_secs_f64();
            match fitted {
                Ok(f) => f,
                Err(e) => {
                    self.kernel = Some(kernel);
                    return Err(e);
                }
            }
        } else {
            self.fit_seconds = 0.0;
            (kernel, self.noise.clone())
        };
        self.fitted |= refit;
        let gp = MultiOutputGp::at(
            kernel.clone(),
            Mean::Zero,
            x_all.as_ref(),
            &y_all,
            &group,
            &noise,
        );
        self.kernel = Some(kernel);
        self.noise = noise;
        self.gp = Some(gp?);
        Ok(())
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let gp = self.gp.as_ref().ok_or_else(not_updated)?;
        let d = gp.posterior().x().ncols() - 1;
        check_test_inputs(x, d)?;
        Ok(gp.posterior().marginals(tagged(x, self.sources.p).as_ref()))
    }

    fn noise_variance(&self) -> f64 {
        self.noise[self.sources.p]
    }

    fn fit_seconds(&self) -> f64 {
        self.fit_seconds
    }

    fn log_evidence(&self) -> Option<f64> {
        self.lml()
    }
}
