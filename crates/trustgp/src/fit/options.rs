//! Options of the conjugate models' fits (exact GP, RCGP, MOGP, MO-RCGP).

use crate::optim::LbfgsOptions;

/// Options of [`ExactGp::fit`](crate::models::exact::ExactGp::fit) and of the other conjugate
/// models' fits.
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// Optimise the hyperparameters (otherwise keep the initial ones).
    pub optimize: bool,
    /// Random restarts in addition to the initial start.
    pub restarts: usize,
    /// Seed of the random restarts.
    pub seed: u64,
    /// L-BFGS settings.
    pub lbfgs: LbfgsOptions,
    /// A fixed value added to the noise on the training diagonal (scikit-learn's `alpha`).
    pub extra_diag: f64,
    /// When the kernel has an overall scale (`const * …`, see
    /// [`Kernel::overall_scale_index`](crate::kernels::Kernel::overall_scale_index)) and
    /// `extra_diag` is 0, optimise the likelihood concentrated over that scale: the same
    /// optimum in fewer evaluations. Random restarts are then drawn around the initial
    /// parameters in the profiled coordinates. The robust GPs likewise profile the common
    /// scale of their covariance and noise variances out of the weighted LOO-CV objective
    /// (see [`weighted_loo`](crate::models::robust::weighted_loo)); the multi-output GP does not use it.
    pub profile_scale: bool,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            optimize: true,
            restarts: 0,
            seed: 0,
            lbfgs: LbfgsOptions::default(),
            extra_diag: 0.0,
            profile_scale: true,
        }
    }
}
