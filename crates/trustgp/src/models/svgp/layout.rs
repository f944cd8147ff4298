//! The flat unconstrained parameter vector the optimiser moves, in this order:
//!
//! 1. `m̃` (m) and the lower triangle of `L̃` column by column, its diagonal as logarithms
//!    (m(m+1)/2) — left out when natural gradients update the variational parameters;
//! 2. the kernel's log-hyperparameters;
//! 3. the likelihood's unconstrained parameters;
//! 4. the mean's parameters;
//! 5. the inducing inputs, row by row (m·d) — only when they are learned.

use faer::Mat;

use super::elbo::Grad;
use super::state::State;
use crate::models::ModelError;

/// Which groups the vector holds, and their sizes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    m: usize,
    d: usize,
    variational: bool,
    inducing: bool,
}

impl Layout {
    pub(super) fn new(state: &State, variational: bool, inducing: bool) -> Layout {
        Layout {
            m: state.m(),
            d: state.z.ncols(),
            variational,
            inducing,
        }
    }

    /// The lower-triangle positions `(i, j)`, `i ≥ j`, column by column.
    fn triangle(&self) -> impl Iterator<Item = (usize, usize)> {
        let m = self.m;
        (0..m).flat_map(move |j| (j..m).map(move |i| (i, j)))
    }

    /// # Errors
    /// Likelihood parameters out of their domain.
    pub(super) fn pack(&self, state: &State) -> Result<Vec<f64>, ModelError> {
        let mut p = Vec::new();
        if self.variational {
            p.extend(&state.m_tilde);
            p.extend(self.triangle().map(|(i, j)| {
                let v = state.l_tilde[(i, j)];
                if i == j {
                    v.ln()
                } else {
                    v
                }
            }));
        }
        p.extend(state.kernel.log_params());
        p.extend(state.likelihood.build(&state.lik_params)?.unconstrained());
        p.extend(state.mean.params());
        if self.inducing {
            p.extend((0..self.m).flat_map(|a| (0..self.d).map(move |c| state.z[(a, c)])));
        }
        Ok(p)
    }

    /// A copy of `template` with the groups this layout holds taken from `p`.
    ///
    /// # Errors
    /// Parameters the kernel or the likelihood rejects (e.g. an overflowing exponential).
    pub(super) fn unpack(&self, template: &State, p: &[f64]) -> Result<State, ModelError> {
        let mut s = template.clone();
        let mut rest = p;
        let mut take = |k: usize| {
            let (head, tail) = rest.split_at(k);
            rest = tail;
            head
        };
        if self.variational {
            s.m_tilde = take(self.m).to_vec();
            let tri = take(self.m * (self.m + 1) / 2);
            s.l_tilde = Mat::zeros(self.m, self.m);
            for ((i, j), &v) in self.triangle().zip(tri) {
                s.l_tilde[(i, j)] = if i == j { v.exp() } else { v };
            }
        }
        s.kernel.set_log_params(take(s.kernel.n_params()))?;
        let lik = s
            .likelihood
            .build_unconstrained(take(s.likelihood.n_params()))?;
        s.lik_params = lik.natural();
        s.mean.set_params(take(s.mean.n_params()))?;
        if self.inducing {
            let z = take(self.m * self.d);
            s.z = Mat::from_fn(self.m, self.d, |a, c| z[a * self.d + c]);
        }
        Ok(s)
    }

    /// The gradient in the packed coordinates (chain rule through `log L̃_ii`).
    pub(super) fn pack_grad(&self, state: &State, g: &Grad) -> Vec<f64> {
        let mut p = Vec::new();
        if self.variational {
            p.extend(&g.m_tilde);
            p.extend(self.triangle().map(|(i, j)| {
                let v = g.l_tilde[(i, j)];
                if i == j {
                    v * state.l_tilde[(i, i)]
                } else {
                    v
                }
            }));
        }
        p.extend(&g.kernel);
        p.extend(&g.lik);
        p.extend(&g.mean);
        // The inducing gradient is computed exactly when the inputs are learned.
        if let (true, Some(gz)) = (self.inducing, g.z.as_ref()) {
            p.extend((0..self.m).flat_map(|a| (0..self.d).map(move |c| gz[(a, c)])));
        }
        p
    }

    /// The optimiser's box: the kernel's and the likelihood's bounds, free elsewhere.
    pub(super) fn bounds(&self, state: &State) -> Vec<(f64, f64)> {
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let mut b = Vec::new();
        if self.variational {
            b.extend(std::iter::repeat_n(
                free,
                self.m + self.m * (self.m + 1) / 2,
            ));
        }
        b.extend(state.kernel.log_bounds());
        b.extend(state.likelihood.bounds());
        b.extend(std::iter::repeat_n(free, state.mean.n_params()));
        if self.inducing {
            b.extend(std::iter::repeat_n(free, self.m * self.d));
        }
        b
    }

    /// Names of the entries, in the order of [`Layout::bounds`] (for the fit report).
    pub(super) fn names(&self, state: &State) -> Vec<String> {
        let mut names = Vec::new();
        if self.variational {
            names.extend((0..self.m).map(|i| format!("q.m[{i}]")));
            names.extend(self.triangle().map(|(i, j)| format!("q.L[{i},{j}]")));
        }
        names.extend(state.kernel.param_names());
        names.extend(state.likelihood.param_names().iter().map(|s| s.to_string()));
        names.extend(state.mean.param_names());
        if self.inducing {
            names.extend((0..self.m).flat_map(|a| (0..self.d).map(move |c| format!("z[{a},{c}]"))));
        }
        names
    }
}
