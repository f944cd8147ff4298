//! Multi-class GP classification with the softmax likelihood and the Laplace approximation
//! (R&W §3.5, Alg. 3.3 for the mode, Alg. 3.4 for predictions).
//!
//! `C` independent latent GPs, one per class, with one kernel shared by all classes or one per
//! class ([`ClassKernels`]); labels are class indices `0..C`. The fit maximises the approximate
//! log marginal likelihood over the kernels' log-hyperparameters with analytic gradients
//! (implicit-derivative form, `gradient.rs`) through [`fit::restarts`](crate::fit).
//!
//! The posterior is the spec's (§2.2) form: `μ_c(x) = k_c(x, X) t_c` with `t_c = y_c − π̂_c` and
//! `Σ_cc'(x) = δ_cc' k_c(x, x) − k_c(x, X) S_cc' k_c'(X, x)`, `S = (K + W⁻¹)⁻¹` (`Cn×Cn`); see
//! [`MulticlassLaplace::latent_form`] and [`MulticlassLaplace::class_posterior`].
//!
//! Predictive class probabilities `∫ softmax(f) N(f; μ, Σ) df` have no closed form; they are
//! estimated by seeded Monte Carlo with antithetic pairs ([`MulticlassLaplace::predict_proba`]),
//! as in R&W Alg. 3.4. Monte Carlo rather than quadrature because a tensor Gauss–Hermite rule
//! needs `q^C` nodes (10¹⁰ for MNIST's ten classes at q = 10) while the Monte Carlo error,
//! `O(1/√samples)`, does not depend on `C`; and every sample's softmax sums to one, so the
//! estimated probabilities do too, exactly.

mod gradient;
mod newton;
mod predict;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use faer::{Mat, MatRef};

pub use self::predict::MulticlassLatent;
use crate::fit::restarts::{maximize, plain};
use crate::fit::{FitOptions, FitReport};
use crate::kernels::{Covariance, Kernel};
use crate::linalg::parallelism_for;
use crate::means::Mean;
use crate::models::checks::check_matrix;
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, Term};

/// The covariance functions of the `C` latent processes.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassKernels {
    /// One kernel (and one set of hyperparameters) shared by every class.
    Shared(Kernel),
    /// One kernel per class, in class order.
    PerClass(Vec<Kernel>),
}

impl ClassKernels {
    /// The kernel of class `c`.
    ///
    /// # Panics
    /// If `c` is out of range for per-class kernels.
    pub fn kernel(&self, c: usize) -> &Kernel {
        match self {
            ClassKernels::Shared(k) => k,
            ClassKernels::PerClass(ks) => &ks[c],
        }
    }

    /// The distinct kernels (one if shared).
    fn distinct(&self) -> &[Kernel] {
        match self {
            ClassKernels::Shared(k) => std::slice::from_ref(k),
            ClassKernels::PerClass(ks) => ks,
        }
    }

    fn distinct_mut(&mut self) -> &mut [Kernel] {
        match self {
            ClassKernels::Shared(k) => std::slice::from_mut(k),
            ClassKernels::PerClass(ks) => ks,
        }
    }

    /// The flat log-space hyperparameters (class after class for per-class kernels).
    pub fn params(&self) -> Vec<f64> {
        self.distinct().iter().flat_map(|k| k.params()).collect()
    }

    /// Sets the hyperparameters from a vector laid out as [`ClassKernels::params`].
    ///
    /// # Errors
    /// A wrong length, or a value a kernel rejects; nothing changes on error.
    pub fn set_params(&mut self, p: &[f64]) -> Result<(), ModelError> {
        let total: usize = self.distinct().iter().map(|k| k.n_params()).sum();
        if p.len() != total {
            return Err(ModelError::Invalid(format!(
                "multi-class kernels have {total} hyperparameters, got {}",
                p.len()
            )));
        }
        let mut next = self.clone();
        let mut at = 0;
        for k in next.distinct_mut() {
            let m = k.n_params();
            k.set_params(&p[at..at + m])?;
            at += m;
        }
        *self = next;
        Ok(())
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        self.distinct().iter().flat_map(|k| k.bounds()).collect()
    }

    fn names(&self) -> Vec<String> {
        match self {
            ClassKernels::Shared(k) => k.param_names(),
            ClassKernels::PerClass(ks) => ks
                .iter()
                .enumerate()
                .flat_map(|(c, k)| {
                    k.param_names()
                        .into_iter()
                        .map(move |s| format!("class{c}.{s}"))
                })
                .collect(),
        }
    }

    /// One covariance matrix per class (copies of one matrix when shared).
    fn matrices(&self, x: MatRef<'_, f64>, classes: usize) -> Vec<Mat<f64>> {
        match self {
            ClassKernels::Shared(k) => vec![k.matrix(x); classes],
            ClassKernels::PerClass(ks) => ks.iter().map(|k| k.matrix(x)).collect(),
        }
    }

    /// `dΨ/dθ` from the per-class contraction weights.
    fn contract(&self, x: MatRef<'_, f64>, weights: &[Mat<f64>]) -> Vec<f64> {
        match self {
            ClassKernels::Shared(k) => {
                let mut total = weights[0].clone();
                for w in &weights[1..] {
                    total += w;
                }
                let mut g = vec![0.0; k.n_params()];
                k.grad_contract(x, total.as_ref(), &mut g);
                g
            }
            ClassKernels::PerClass(ks) => ks
                .iter()
                .zip(weights)
                .flat_map(|(k, w)| {
                    let mut g = vec![0.0; k.n_params()];
                    k.grad_contract(x, w.as_ref(), &mut g);
                    g
                })
                .collect(),
        }
    }
}

/// The spec's (§2.2) linear-Gaussian form of a multi-class Laplace posterior, what the
/// multi-class verification bounds take.
#[derive(Clone, Debug)]
pub struct MulticlassForm {
    /// The support points (the training inputs, n×d).
    pub support: Mat<f64>,
    /// `t_c = y_c − π̂_c`, one vector of length n per class.
    pub t: Vec<Vec<f64>>,
    /// `S = (K + W⁻¹)⁻¹` (Cn×Cn, symmetric positive semi-definite), class-major blocks `S_cc'`.
    pub s: Mat<f64>,
    /// The kernel of each class (the same kernel repeated when shared).
    pub kernels: Vec<Kernel>,
}

/// A fitted multi-class Laplace GP classifier.
#[derive(Clone, Debug)]
pub struct MulticlassLaplace {
    x: Mat<f64>,
    y: Vec<usize>,
    classes: usize,
    kernels: ClassKernels,
    /// `f̂`, class-major.
    f: Vec<f64>,
    /// `t = y − π̂`, class-major.
    t: Vec<f64>,
    s: Mat<f64>,
    lml: f64,
    iterations: usize,
    reports: Vec<FitReport>,
}

/// Checks labels against the inputs and the number of classes.
fn check_labels(x: MatRef<'_, f64>, y: &[usize], classes: usize) -> Result<(), ModelError> {
    check_matrix("training input", x, x.ncols())?;
    if x.nrows() != y.len() {
        return Err(ModelError::Invalid(format!(
            "{} input rows but {} labels",
            x.nrows(),
            y.len()
        )));
    }
    if classes < 2 {
        return Err(ModelError::Invalid(format!(
            "multi-class classification needs at least 2 classes, got {classes}"
        )));
    }
    if let Some(i) = y.iter().position(|&c| c >= classes) {
        return Err(ModelError::Invalid(format!(
            "label of training row {i} is {} (expected a class index in 0..{classes})",
            y[i]
        )));
    }
    Ok(())
}

/// The Laplace approximation at fixed kernels.
struct Evaluated {
    mode: newton::Mode,
    /// `S = (K + W⁻¹)⁻¹`.
    s: Mat<f64>,
    /// The LML gradient in the flat log-hyperparameters, if it was asked for.
    grad: Option<Vec<f64>>,
}

/// The Laplace approximation at fixed kernels, and optionally its gradient.
fn evaluate(
    kernels: &ClassKernels,
    x: MatRef<'_, f64>,
    y: &[usize],
    classes: usize,
    want_grad: bool,
) -> Result<Evaluated, ModelError> {
    let k = kernels.matrices(x, classes);
    let mode = newton::find_mode(&k, y, parallelism_for(x.nrows()))?;
    let s = newton::s_matrix(&mode.curvature);
    let grad = want_grad.then(|| {
        let w = gradient::contraction_weights(&k, &mode, &s);
        kernels.contract(x, &w)
    });
    Ok(Evaluated { mode, s, grad })
}

impl MulticlassLaplace {
    /// The Laplace approximation at the given kernels (no optimisation): inputs `x` (n×d),
    /// labels `y` in `0..classes`.
    ///
    /// # Errors
    /// Inconsistent or non-finite inputs, labels out of range, fewer than 2 classes, per-class
    /// kernels not one per class, a kernel that does not fit the inputs, or Newton's method
    /// failing to converge.
    pub fn at(
        x: MatRef<'_, f64>,
        y: &[usize],
        classes: usize,
        kernels: ClassKernels,
    ) -> Result<MulticlassLaplace, ModelError> {
        check_labels(x, y, classes)?;
        if let ClassKernels::PerClass(ks) = &kernels {
            if ks.len() != classes {
                return Err(ModelError::Invalid(format!(
                    "per-class kernels: {} kernels given for {classes} classes",
                    ks.len()
                )));
            }
        }
        for k in kernels.distinct() {
            k.validate(x.ncols())?;
            if !k.is_initialized() {
                return Err(ModelError::Invalid(
                    "multi-class Laplace: a kernel has no lengthscale values yet (call fit, \
                     which initialises them from the data, or give ls=…)"
                        .into(),
                ));
            }
        }
        let Evaluated { mode, s, .. } = evaluate(&kernels, x, y, classes, false)?;
        let n = y.len();
        let t = (0..classes * n)
            .map(|j| {
                let (c, i) = (j / n, j % n);
                (if y[i] == c { 1.0 } else { 0.0 }) - mode.pi[j]
            })
            .collect();
        Ok(MulticlassLaplace {
            x: x.to_owned(),
            y: y.to_vec(),
            classes,
            kernels,
            f: mode.f,
            t,
            s,
            lml: mode.lml,
            iterations: mode.iterations,
            reports: Vec::new(),
        })
    }

    /// Fits the kernels' hyperparameters by maximising the approximate log marginal likelihood
    /// (L-BFGS-B from the kernels' values plus `options.restarts` seeded restarts; only
    /// `optimize`, `restarts`, `seed` and `lbfgs` of `options` are used). Kernels without
    /// lengthscales get data-driven ones first ([`Kernel::initialize`]).
    ///
    /// # Errors
    /// As for [`MulticlassLaplace::at`], or every optimiser start failing.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[usize],
        classes: usize,
        kernels: ClassKernels,
        options: &FitOptions,
    ) -> Result<MulticlassLaplace, ModelError> {
        check_labels(x, y, classes)?;
        let mut kernels = kernels;
        for k in kernels.distinct_mut() {
            k.initialize(x)?;
        }
        if !options.optimize {
            return Self::at(x, y, classes, kernels);
        }
        let objective = |p: &[f64]| -> Result<(f64, Vec<f64>), String> {
            let mut ks = kernels.clone();
            ks.set_params(p).map_err(|e| e.to_string())?;
            let e = evaluate(&ks, x, y, classes, true).map_err(|e| e.to_string())?;
            Ok((e.mode.lml, e.grad.unwrap_or_default()))
        };
        let (best, reports) = maximize(
            plain(objective),
            &kernels.params(),
            &kernels.bounds(),
            &kernels.names(),
            options.restarts,
            options.seed,
            &options.lbfgs,
            parallelism_for(x.nrows()),
        )?;
        kernels.set_params(&best)?;
        let mut model = Self::at(x, y, classes, kernels)?;
        model.reports = reports;
        Ok(model)
    }

    /// The approximate log marginal likelihood `log q(y | X)`.
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// The gradient of [`MulticlassLaplace::lml`] in the flat log-hyperparameters
    /// ([`ClassKernels::params`]), recomputed at the current kernels.
    ///
    /// # Errors
    /// As for [`MulticlassLaplace::at`].
    pub fn lml_gradient(&self) -> Result<Vec<f64>, ModelError> {
        let e = evaluate(&self.kernels, self.x.as_ref(), &self.y, self.classes, true)?;
        Ok(e.grad.unwrap_or_default())
    }

    /// The number of classes `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The kernels.
    pub fn kernels(&self) -> &ClassKernels {
        &self.kernels
    }

    /// The mode `f̂` at the training points, class-major (entry `c·n + i`).
    pub fn mode(&self) -> &[f64] {
        &self.f
    }

    /// Newton iterations the mode took.
    pub fn newton_iterations(&self) -> usize {
        self.iterations
    }

    /// The optimiser runs of [`MulticlassLaplace::fit`] (empty for [`MulticlassLaplace::at`]).
    pub fn reports(&self) -> &[FitReport] {
        &self.reports
    }

    /// The training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training labels.
    pub fn y(&self) -> &[usize] {
        &self.y
    }

    /// The spec's `(t_c, S_cc')` form (an owned copy; `S` is `Cn×Cn`).
    pub fn latent_form(&self) -> MulticlassForm {
        let n = self.y.len();
        MulticlassForm {
            support: self.x.clone(),
            t: (0..self.classes)
                .map(|c| self.t[c * n..(c + 1) * n].to_vec())
                .collect(),
            s: self.s.clone(),
            kernels: (0..self.classes)
                .map(|c| self.kernels.kernel(c).clone())
                .collect(),
        }
    }

    /// The marginal posterior of class `c`'s latent function as a linear-Gaussian form
    /// (`t_c`, `S_cc`), borrowing the model: a [`Posterior`](crate::posterior::Posterior)
    /// through [`LinearGaussian`]'s methods.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `c` is not a class index.
    pub fn class_posterior(
        &self,
        c: usize,
    ) -> Result<LinearGaussian<'_, Kernel, Mean>, ModelError> {
        if c >= self.classes {
            return Err(ModelError::Invalid(format!(
                "class {c} out of range (the model has {} classes)",
                self.classes
            )));
        }
        let n = self.y.len();
        LinearGaussian::new(
            self.kernels.kernel(c),
            Cow::Owned(Mean::Zero),
            self.x.as_ref(),
            &self.t[c * n..(c + 1) * n],
            vec![Term::Dense {
                sign: 1.0,
                a: self.s.as_ref().submatrix(c * n, c * n, n, n),
            }],
        )
    }
}
