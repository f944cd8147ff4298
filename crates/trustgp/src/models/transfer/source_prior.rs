//! The labelled stand-in for Rothfuss et al. 2022 (`safe-transfer.md` §5.1 \[choice\]): a
//! single-task GP whose hyperparameters are fitted once on the source data (all source tasks
//! pooled) and then frozen; it is conditioned on the target data only. It is *not* the
//! meta-learned F-PACOH prior, and its numbers are not comparable to the paper's row.

use faer::MatRef;

use super::single_task::SingleTaskGp;
use super::stack::{required_width, stack_sources};
use super::TransferFitOptions;
use crate::models::hyper::GpHyper;
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::{FunctionModel, SourceTask};

/// A single-task GP with hyperparameters learnt from the source tasks and frozen.
#[derive(Clone, Debug)]
pub struct SourcePriorGp {
    gp: SingleTaskGp,
    /// The frozen hyperparameters (also the model's, kept apart so no accessor can fail).
    hyper: GpHyper,
}

impl SourcePriorGp {
    /// Fits the hyperparameters of [`SingleTaskGp`] (with `options`, seeded by
    /// `options.seed`) on the points of every source task pooled, and freezes them. As in the
    /// paper's accounting, this meta-training is not counted in
    /// [`FunctionModel::fit_seconds`].
    ///
    /// # Errors
    /// No source task, a source with no rows, non-finite values or mismatched columns, or a
    /// failed fit.
    pub fn new(
        sources: Vec<SourceTask>,
        options: TransferFitOptions,
    ) -> Result<SourcePriorGp, ModelError> {
        let stacked = stack_sources(&sources)?;
        // Pooled: the task column is dropped.
        let x = stacked.x.subcols(0, required_width(&stacked)?);
        let y = stacked.y.as_slice();
        let seed = options.seed;
        let mut gp = SingleTaskGp::new(options);
        gp.update(x, y, true, seed)?;
        gp.forget_data();
        let hyper = gp.hyper().cloned().ok_or_else(|| {
            ModelError::Invalid("the source fit returned no hyperparameters".into())
        })?;
        Ok(SourcePriorGp { gp, hyper })
    }

    /// The frozen hyperparameters.
    pub fn hyper(&self) -> &GpHyper {
        &self.hyper
    }

    /// The single-task GP conditioned on the target data (no data before the first update).
    pub fn single_task(&self) -> &SingleTaskGp {
        &self.gp
    }
}

impl FunctionModel for SourcePriorGp {
    /// Conditions on the target data with the frozen hyperparameters: `refit` and `seed` are
    /// ignored, since nothing is refitted on the target.
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        _refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        self.gp.update(x, y, false, seed)
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.gp.predict(x)
    }

    fn noise_variance(&self) -> f64 {
        self.gp.noise_variance()
    }

    fn fit_seconds(&self) -> f64 {
        0.0
    }
}
