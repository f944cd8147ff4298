//! Certified bounds on a GP's predictions over a box of inputs, by branch and bound
//! (`../shared/spec/adversarial-bounds.md`).
//!
//! A fitted model is read as a [`LatentForm`]: `mean(x) = m(x) + k(x, Z) t`,
//! `var(x) = k(x, x) − k(x, Z) S k(Z, x)` with `S` dense and symmetric. On a box `T`:
//!
//! 1. every kernel is written as `k(x, z) = ψ(φ(x, z))` with `φ` separable over inputs
//!    ([`decomposition`]); `ψ` is sandwiched between lines on the range of `φ` over `T`
//!    ([`psi`], Lemma 1), products by McCormick, sums term by term;
//! 2. a weighted sum `Σ cᵢ k(x, zᵢ)` is then bounded by a separable minimisation of parabolas
//!    (plus per-term `sin²` bounds for the periodic kernel) ([`separable`], [`linear`]): the
//!    mean bounds;
//! 3. the quadratic form `k(x, Z) S k(Z, x)` is bounded through its tangent plane at the centre
//!    of the per-point kernel ranges and an eigenvalue (or `|S|`) bound of the remainder
//!    ([`variance`]): the variance bounds; optionally (or also) by the spec's convex QP / LP
//!    over the relaxed feasible set ([`relaxation`]), solved by Clarabel and certified by weak
//!    duality ([`variance_qp`]);
//! 4. the `(mean, variance)` box is mapped to probability bounds by monotonicity (probit,
//!    logistic) ([`link`]); a multi-class softmax through its latent differences `f_k − f_i`,
//!    each one linear-Gaussian form with a shared kernel ([`differences`]), by latent-space
//!    discretisation of all but one of them, the chain rule, and the logistic bound for the
//!    last ([`softmax`]);
//! 5. a best-first branch and bound ([`bnb`]) splits `T` until the gap between the sound bound
//!    and the best value found at a concrete point closes to ε ([`quantity`] ties 1–4 to it).
//!
//! Every bound is widened outward by a relative margin ([`rounding`]) so that it holds for the
//! real-number function, not just the rounded one.

pub mod attribution;
pub mod bnb;
pub mod classification;
pub mod cross;
pub mod decomposition;
pub mod differences;
mod error;
pub mod form;
pub mod gauss_interval;
pub mod interval;
pub mod linear;
pub mod link;
pub mod psi;
pub mod quantity;
pub mod region;
pub mod regression;
pub mod relaxation;
pub mod rounding;
pub mod separable;
pub mod softmax;
#[cfg(test)]
mod tests;
pub mod variance;
pub mod variance_qp;

pub use attribution::{attribution, attribution_with, Attribution};
pub use bnb::{branch_and_bound, BnbOptions, BnbResult, ExitReason, Sense};
pub use classification::{
    binary_certified, binary_link, classifier_bracket, classifier_decision, classifier_form,
    multiclass_form, verify_binary, verify_classifier, verify_classifier_box,
};
pub use error::VerifyError;
pub use form::LatentForm;
pub use link::BinaryLink;
pub use quantity::{verify, Quantity, Verified};
pub use region::Region;
pub use regression::{regressor_form, verify_regressor, verify_regressor_box};
pub use softmax::{softmax_decision, verify_softmax, SoftmaxDecision, SoftmaxForm};
pub use variance_qp::VarianceMethod;
