//! Building blocks of the robust conjugate models: the IMQ observation weights with their
//! soft thresholds, and the centring of each observation on what the other outputs predict.

mod centre;
mod weights;

pub use centre::conditional_centres;
pub use weights::{order_statistic_quantile, soft_threshold, ImqWeights, C_FLOOR};
