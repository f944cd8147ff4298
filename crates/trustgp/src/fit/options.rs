//! Options of the conjugate models' fits (exact GP, RCGP, MOGP, MO-RCGP).

use crate::optim::LbfgsOptions;

/// The default [`FitOptions::pilot_rows`]: a pilot evaluation costs about (512/n)³ of a full
/// one, under 2% at n = 2000.
pub const DEFAULT_PILOT_ROWS: usize = 512;

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
    /// Rows of the pilot fit ([`pilot`](super::pilot)): on more than twice this many rows, the
    /// exact GP and the binary Laplace classifier first fit a seeded subset of this many rows
    /// (with the restarts) and start the fit on every row from its optimum (without restarts):
    /// the same optimum in a fraction of the full-size evaluations. 0 never pilots.
    pub pilot_rows: usize,
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
            pilot_rows: DEFAULT_PILOT_ROWS,
        }
    }
}
