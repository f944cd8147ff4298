//! The flat log-space hyperparameter vector of a kernel.
//!
//! Order: depth-first over the base kernels; within one, var (if learnable), then
//! the lengthscales, then alpha/period. Base kernel i is named `k{i}.<kind>`.

use super::base::{check_positive, BaseKernel, ParamRole};
use super::{Kernel, KernelError};

impl Kernel {
    /// Number of hyperparameters.
    pub fn n_params(&self) -> usize {
        self.bases().iter().map(|b| b.param_roles().len()).sum()
    }

    /// Unique readable names, e.g. `k0.const.var`, `k1.se.ls[3]` (ARD index in the
    /// kernel's `ls` list), `k2.per.period`.
    pub fn param_names(&self) -> Vec<String> {
        self.per_param(|i, b, role| format!("k{i}.{}", b.role_name(role)))
    }

    /// Natural logarithms of the hyperparameters.
    pub fn log_params(&self) -> Vec<f64> {
        self.per_param(|_, b, role| b.value(role).ln())
    }

    /// Log-space optimisation bounds: lengthscales and period [ln 1e-3, ln 1e5]
    /// (generous once inputs are standardised), variances [ln 1e-5, ln 1e5],
    /// alpha [ln 1e-3, ln 1e3].
    pub fn log_bounds(&self) -> Vec<(f64, f64)> {
        self.per_param(|_, b, role| {
            let (lo, hi) = b.role_bounds(role);
            (lo.ln(), hi.ln())
        })
    }

    /// Sets the hyperparameters from their logarithms. Nothing changes on error:
    /// wrong length, a non-finite entry, or one whose exponential is not a positive
    /// finite number.
    pub fn set_log_params(&mut self, p: &[f64]) -> Result<(), KernelError> {
        let expected = self.n_params();
        if p.len() != expected {
            return Err(KernelError::ParamCount {
                expected,
                got: p.len(),
            });
        }
        let names = self.param_names();
        let mut values = Vec::with_capacity(p.len());
        for (name, &lp) in names.into_iter().zip(p) {
            if !lp.is_finite() {
                return Err(KernelError::NonFiniteParam { name, value: lp });
            }
            values.push(check_positive(&name, lp.exp())?);
        }
        let mut values = values.into_iter();
        for b in self.bases_mut() {
            for role in b.param_roles() {
                *b.value_mut(role) = values.next().expect("length checked above");
            }
        }
        Ok(())
    }

    /// The index (in [`Kernel::log_params`]) of a learnable variance that scales the whole
    /// kernel, `k(x, x') = c · k̃(x, x')` with `k̃` free of `c`, if there is one: the variance of
    /// a base kernel, or of a product's carrier factor (see [`Kernel::product`]) when that
    /// factor is a base kernel. A sum has none (each term keeps its own scale).
    ///
    /// The exact GP profiles this parameter out of its likelihood.
    pub fn overall_scale_index(&self) -> Option<usize> {
        match self {
            Kernel::Base(b) => b.var_learnable().then_some(0),
            Kernel::Sum(_) => None,
            Kernel::Product(factors, _) => {
                let carrier = factors
                    .iter()
                    .position(|f| matches!(f, Kernel::Base(b) if b.var_learnable()))?;
                let before: usize = factors[..carrier].iter().map(Kernel::n_params).sum();
                Some(before)
            }
        }
    }

    /// Maps every hyperparameter, in order, given its base kernel's index.
    fn per_param<T>(&self, mut f: impl FnMut(usize, &BaseKernel, ParamRole) -> T) -> Vec<T> {
        let mut out = Vec::new();
        for (i, b) in self.bases().into_iter().enumerate() {
            out.extend(b.param_roles().into_iter().map(|role| f(i, b, role)));
        }
        out
    }
}
