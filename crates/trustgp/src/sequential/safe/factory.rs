//! The model of one function for each [`TransferMethod`], with the paper's fit settings
//! (`safe-transfer.md` §6 \[code\]): SAL's single-task GP with 10 restarts and noise std 0.01,
//! the transfer GPs with 5 restarts and noise std 0.1.

use super::{FunctionModel, SourceTask, TransferMethod};
use crate::models::transfer::{
    EfficientHgp, HgpTransfer, LmcTransfer, SingleTaskGp, SourcePriorGp, TransferFitOptions,
};
use crate::models::ModelError;

/// The model of one function by `method`, seeing that function's observations on `sources`.
///
/// # Errors
/// [`ModelError::Invalid`] for a transfer method without source data (or source data given to
/// the single-task GP, which would ignore them); the models' own checks of the sources.
pub fn function_model(
    method: TransferMethod,
    sources: Vec<SourceTask>,
) -> Result<Box<dyn FunctionModel>, ModelError> {
    match (method, sources.len()) {
        (TransferMethod::None, n) if n > 0 => {
            return Err(ModelError::Invalid(format!(
                "transfer 'none' ignores source data, but {n} source task(s) were given; \
                 choose a transfer method (efficient-hgp, hgp, lmc or source-prior)"
            )))
        }
        (m, 0) if m != TransferMethod::None => {
            return Err(ModelError::Invalid(format!(
                "transfer '{}' needs at least one source task (or use transfer 'none')",
                m.name()
            )))
        }
        _ => {}
    }
    Ok(match method {
        TransferMethod::None => Box::new(SingleTaskGp::new(TransferFitOptions::single_task())),
        TransferMethod::SourcePrior => Box::new(SourcePriorGp::new(
            sources,
            TransferFitOptions::single_task(),
        )?),
        TransferMethod::Lmc => Box::new(LmcTransfer::new(sources, TransferFitOptions::default())?),
        TransferMethod::Hgp => Box::new(HgpTransfer::new(sources, TransferFitOptions::default())?),
        TransferMethod::EfficientHgp => {
            Box::new(EfficientHgp::new(sources, TransferFitOptions::default())?)
        }
    })
}
