//! Gaussian-process classification (and the sparse posteriors that classification shares with
//! regression), each exposing the linear-Gaussian form that verification bounds.
//!
//! * [`multiclass`] — multi-class Laplace with the softmax likelihood (R&W Alg. 3.3/3.4), one
//!   kernel shared by all classes or one per class; its `(t_c, S_cc')` form.
//! * [`sparse`] — the sparse FIC, DTC and VAR posteriors over inducing points: for regression
//!   and for EP classification with the probit likelihood (spec §2.2).

pub mod multiclass;
pub mod sparse;
