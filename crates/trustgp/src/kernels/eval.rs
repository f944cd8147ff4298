//! Evaluation of a single base kernel: matrices, diagonals, gradient
//! contractions and input gradients. White noise is handled here because it
//! depends on row identity, not on input values.
//!
//! Every method takes a scalar `s` that multiplies the kernel: products fold their
//! constant factors into it, so `const * se` costs one se pass and no extra sweep.

use faer::{Mat, MatRef};

use super::base::BaseKernel;
use super::engine::{self, Prepared};
use super::pair::{with_pair, Pair};
use super::Target;

impl BaseKernel {
    /// The pair evaluator (variance times `s`) and the active columns with their
    /// input scales; `None` for white noise.
    ///
    /// # Panics
    /// If the kernel does not fit data with `ncols` columns or is not initialised:
    /// `Kernel::initialize` reports these as errors and must be called first.
    fn evaluator(&self, s: f64, ncols: usize) -> Option<(Pair, Vec<usize>, Vec<f64>)> {
        if let Err(e) = self.validate(ncols) {
            panic!("{e} (call Kernel::initialize with data of this shape first)");
        }
        let dims = self.active_dims(ncols);
        let (pair, scale) = Pair::new(self, s, dims.len())?;
        Some((pair, dims, scale))
    }

    /// s·K evaluated on `target` (only the lower triangle for a symmetric target); white noise
    /// is var on the diagonal of a symmetric matrix and contributes nothing between two
    /// different sets.
    pub(crate) fn evaluate(&self, target: Target<'_>, s: f64) -> Mat<f64> {
        let x = target.first();
        let Some((pair, dims, scale)) = self.evaluator(s, x.ncols()) else {
            let v = self.var() * s;
            let (r, c) = target.shape();
            return match target {
                Target::Cross(..) => Mat::zeros(r, c),
                Target::Symmetric(_) => Mat::from_fn(r, c, |i, j| if i == j { v } else { 0.0 }),
                Target::Diag(_) => Mat::from_fn(r, c, |_, _| v),
            };
        };
        let p = Prepared::new(x, dims.clone(), scale.clone());
        match target {
            Target::Symmetric(_) => with_pair!(&pair, k => engine::symmetric_lower(k, &p)),
            Target::Cross(_, x2) => {
                let p2 = Prepared::new(x2, dims, scale);
                with_pair!(&pair, k => engine::cross(k, &p, &p2))
            }
            Target::Diag(_) => {
                let d = with_pair!(&pair, k => engine::diag(k, &p));
                Mat::from_fn(d.len(), 1, |i, _| d[i])
            }
        }
    }

    /// Adds Σ W∘∂(sK)/∂log θ to `out` (this kernel's parameters only) and returns
    /// Σ W∘(sK), which is also the derivative with respect to log var. `w` has the shape of
    /// the kernel on `target`; for a symmetric target only its lower triangle is read.
    /// `values`, allowed for a cross target only, receives sK added to it.
    pub(crate) fn contract_scaled(
        &self,
        target: Target<'_>,
        w: MatRef<'_, f64>,
        s: f64,
        out: &mut [f64],
        values: Option<&mut Mat<f64>>,
    ) -> f64 {
        debug_assert!(values.is_none() || matches!(target, Target::Cross(..)));
        let x = target.first();
        let (wk, shape) = match self.evaluator(s, x.ncols()) {
            Some((pair, dims, scale)) => {
                let p = Prepared::new(x, dims.clone(), scale.clone());
                match target {
                    Target::Symmetric(_) => with_pair!(&pair, k => engine::contract(k, &p, w)),
                    Target::Cross(_, x2) => {
                        let p2 = Prepared::new(x2, dims, scale);
                        with_pair!(&pair, k => engine::contract_cross(k, &p, &p2, w, values))
                    }
                    Target::Diag(_) => {
                        let wd: Vec<f64> = (0..w.nrows()).map(|i| w[(i, 0)]).collect();
                        with_pair!(&pair, k => engine::contract_diag(k, &p, &wd))
                    }
                }
            }
            None => {
                // White noise: var on the diagonal of K(x, x), nothing between two sets.
                let on_diagonal: f64 = match target {
                    Target::Symmetric(_) => (0..x.nrows()).map(|i| w[(i, i)]).sum(),
                    Target::Cross(..) => 0.0,
                    Target::Diag(_) => (0..x.nrows()).map(|i| w[(i, 0)]).sum(),
                };
                (self.var() * s * on_diagonal, Vec::new())
            }
        };
        let learnable = usize::from(self.var_learnable());
        if learnable == 1 {
            out[0] += wk;
        }
        for (o, g) in out[learnable..].iter_mut().zip(&shape) {
            *o += g;
        }
        wk
    }

    /// G[a, c] = Σ_b W_ab ∂(s·k(x1_a, x2_b))/∂x1_{a,c} as an n1×d matrix.
    pub(crate) fn inputs_contract(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
        s: f64,
    ) -> Mat<f64> {
        match self.evaluator(s, x1.ncols()) {
            Some((pair, dims, scale)) => {
                let p1 = Prepared::new(x1, dims.clone(), scale.clone());
                let p2 = Prepared::new(x2, dims, scale);
                with_pair!(&pair, k => engine::grad_first_contract(k, &p1, &p2, w, x1.ncols()))
            }
            // White noise is 0 between distinct points, whatever the inputs.
            None => Mat::zeros(x1.nrows(), x1.ncols()),
        }
    }

    /// ∂k(x*, x_b)/∂x*_c as an n×d matrix.
    pub(crate) fn grad_x(&self, xstar: &[f64], x: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(
            xstar.len(),
            x.ncols(),
            "grad_x: x* must have one entry per column of x"
        );
        match self.evaluator(1.0, x.ncols()) {
            Some((pair, dims, scale)) => {
                let xs = Prepared::point(xstar, dims.clone(), scale.clone());
                let p = Prepared::new(x, dims, scale);
                with_pair!(&pair, k => engine::grad_first(k, &xs, &p, x.ncols()))
            }
            // White noise is 0 between distinct points, whatever x*.
            None => Mat::zeros(x.nrows(), x.ncols()),
        }
    }
}
