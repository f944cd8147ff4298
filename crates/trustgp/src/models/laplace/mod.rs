//! Latent GPs with a non-Gaussian likelihood, by the Laplace approximation.
//!
//! * [`student_t`] — the Laplace machinery, generic over any
//!   [`Likelihood`](crate::likelihoods::Likelihood) per noise group
//!   ([`laplace_approximation`](student_t::laplace_approximation)), and the Student-t GP on it;
//!   binary classification ([`crate::models::classification`]) reuses the same machinery.

pub mod student_t;
