//! The model of one function for each [`TransferMethod`], with the paper's fit settings
//! (`safe-transfer.md` §6 \[code\]): SAL's single-task GP with 10 restarts and noise std 0.01
//! (the simulator scripts; the GEngine scripts fit SAL like the transfer GPs, see
//! [`SalFit`]), the transfer GPs with 5 restarts and noise std 0.1; [`function_model_with`]
//! optionally makes the refits warm (`TransferFitOptions::warm_restarts`).

use super::{FunctionModel, SalFit, SourceTask, TransferMethod};
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
    function_model_with(method, sources, None, SalFit::Simulator)
}

/// The fit options of SAL's single-task GP under `sal_fit`.
pub fn sal_fit_options(sal_fit: SalFit) -> TransferFitOptions {
    match sal_fit {
        SalFit::Simulator => TransferFitOptions::single_task(),
        SalFit::Engine => TransferFitOptions::default(),
    }
}

/// As [`function_model`], with `warm_restarts` random restarts in every refit that starts from
/// a previous optimum (`None`: the paper's protocol, as [`function_model`]; see
/// [`TransferFitOptions::warm_restarts`]) and SAL (`TransferMethod::None`) fitted with the
/// settings `sal_fit` (a benchmark's [`SafeBenchmark::sal_fit`](super::SafeBenchmark)).
///
/// # Errors
/// As [`function_model`].
pub fn function_model_with(
    method: TransferMethod,
    sources: Vec<SourceTask>,
    warm_restarts: Option<usize>,
    sal_fit: SalFit,
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
    let sal = TransferFitOptions {
        warm_restarts,
        ..sal_fit_options(sal_fit)
    };
    let transfer = TransferFitOptions {
        warm_restarts,
        ..TransferFitOptions::default()
    };
    Ok(match method {
        TransferMethod::None => Box::new(SingleTaskGp::new(sal)),
        TransferMethod::SourcePrior => Box::new(SourcePriorGp::new(sources, single)?),
        TransferMethod::Lmc => Box::new(LmcTransfer::new(sources, transfer)?),
        TransferMethod::Hgp => Box::new(HgpTransfer::new(sources, transfer)?),
        TransferMethod::EfficientHgp => Box::new(EfficientHgp::new(sources, transfer)?),
    })
}
