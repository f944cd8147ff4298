//! Building blocks of the robust conjugate models.
//!
//! * [`ImqWeights`], [`soft_threshold`] — the IMQ observation weights with their soft
//!   thresholds (order statistics of the absolute residuals).
//! * [`conditional_centres`] — the centring of each observation on what the other outputs
//!   observed at the same input predict.
//! * [`fast_mcd`] — the minimum covariance determinant estimator (FastMCD, Rousseeuw & Van
//!   Driessen 1999) with scikit-learn's `MinCovDet` semantics: raw MCD, consistency
//!   correction, reweighting at the χ²₀.₉₇₅ cut-off, and a documented MAD-diagonal fallback
//!   for degenerate data.
//! * [`expert_mean`] — the expert-guided robust prior mean of the RCaGP paper: expert
//!   corrections of identified outliers, shrunk towards their inlier neighbours and weighted by
//!   the labels' reliability.
//! * [`chi_squared_cdf`] / [`chi_squared_quantile`] — the χ² distribution, which MCD needs
//!   for its correction factor and cut-off at any dimension.

mod centre;
mod chi_squared;
mod cstep;
mod error;
mod expert_mean;
mod mcd;
mod univariate;
mod weights;

pub use centre::conditional_centres;
pub use chi_squared::{chi_squared_cdf, chi_squared_quantile};
pub use error::McdError;
pub use expert_mean::{
    expert_mean, CorrectedOutlier, ExpertCorrection, ExpertMean, ExpertMeanError, ExpertSettings,
    EXPERT_BETA_PRIOR, EXPERT_CORRECTION_VARIANCE, EXPERT_NEIGHBOURS, EXPERT_VARIANCE_JITTER,
};
pub use mcd::{fast_mcd, McdEstimate, McdOptions};
pub(crate) use univariate::{median_in_place, MAD_TO_SD};
pub use weights::{order_statistic_quantile, soft_threshold, ImqWeights, C_FLOOR};
