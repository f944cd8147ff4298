//! Gaussian-process classification: a latent GP `f` (one per class for the softmax) with a
//! Bernoulli or softmax likelihood, approximated by a Gaussian `q(f)`; and the sparse posteriors
//! that classification shares with regression.
//!
//! * [`laplace`] — binary Laplace (Rasmussen & Williams Alg. 3.1/3.2, evidence gradient Alg.
//!   5.1), probit or logit, on the generic Laplace machinery of [`crate::models::laplace`].
//! * [`ep`] — binary expectation propagation (R&W Alg. 3.5/3.6, gradient eq. 5.27), probit.
//! * [`multiclass`] — multi-class Laplace with the softmax likelihood (R&W Alg. 3.3/3.4), one
//!   kernel shared by all classes or one per class; its `(t_c, S_cc')` form.
//! * [`sparse`] — the sparse FIC, DTC and VAR posteriors over inducing points: for regression
//!   and for EP classification with the probit likelihood (spec §2.2).
//!
//! The binary models are linear-Gaussian posteriors (support points `X`, `t`, `S` of
//! `adversarial-bounds.md` §2.2) over the crate's [`Kernel`](crate::kernels::Kernel), so their
//! latent predictions, and verification, go through [`crate::posterior`]; class probabilities
//! are the likelihood's integral of the latent marginal ([`Bernoulli::class_probability`]).
//! Hyperparameters are fitted by [`crate::fit`] (L-BFGS-B from the start plus seeded restarts).
//!
//! [`Bernoulli::class_probability`]: crate::likelihoods::Bernoulli::class_probability

mod checks;
pub mod ep;
pub mod laplace;
pub mod multiclass;
pub mod sparse;
#[cfg(test)]
mod tests;
mod warm;

pub use ep::{BinaryEp, EpSettings, EpSite, Tilted};
pub use laplace::BinaryLaplace;
