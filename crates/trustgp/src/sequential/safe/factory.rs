//! The model of one function for each [`TransferMethod`], with the paper's fit settings
//! (`safe-transfer.md` §6 \[code\]): SAL's single-task GP with 10 restarts and noise std 0.01,
//! the transfer GPs with 5 restarts and noise std 0.1; [`function_model_with`] optionally
//! makes the refits warm (`TransferFitOptions::warm_restarts`).

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
    function_model_with(method, sources, None)
}

/// As [`function_model`], with `warm_restarts` random restarts in every refit that starts from
/// a previous optimum (`None`: the paper's protocol, as [`function_model`]; see
/// [`TransferFitOptions::warm_restarts`]).
///
/// # Errors
/// As [`function_model`].
pub fn function_model_with(
    method: TransferMethod,
    sources: Vec<SourceTask>,
    warm_restarts: Option<usize>,
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
    let single = TransferFitOptions {
        warm_restarts,
        ..TransferFitOptions::single_task()
    };
    let transfer = TransferFitOptions {
        warm_restarts,
        ..TransferFitOptions::default()
    };
    Ok(match method {
        TransferMethod::None => Box::new(SingleTaskGp::new(single)),
        TransferMethod::SourcePrior => Box::new(SourcePriorGp::new(sources, single)?),
        TransferMethod::Lmc => Box::new(LmcTransfer::new(sources, transfer)?),
        TransferMethod::Hgp => Box::new(HgpTransfer::new(sources, transfer)?),
        TransferMethod::EfficientHgp => Box::new(EfficientHgp::new(sources, transfer)?),
    })
}
