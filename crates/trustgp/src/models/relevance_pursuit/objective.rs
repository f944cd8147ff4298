//! The collapsed bound of relevance pursuit and its gradient, on the collapsed core of SGPR.
//!
//! With the heteroscedastic noise `D_ρ = diag(s + ρ)` (`s = σ²`), the bound of the module docs
//! is the core's `G(P, t)` plus `κ` with, per point `j`,
//!
//! ```text
//! P_j = 1/(s + ρ_j),   t_j = y_j − m(x_j),   κ_j = −½ log 2π(s + ρ_j),
//! ```
//!
//! so the chain rule from the core's adjoints `∂G/∂log P_j` and `∂G/∂t_j` is
//!
//! ```text
//! ∂ℓ/∂log s   = Σ_j (∂G/∂log P_j + ½) · (−s/(s + ρ_j))
//! ∂ℓ/∂log ρ_j =     (∂G/∂log P_j + ½) · (−ρ_j/(s + ρ_j))        (j in the support)
//! ∂ℓ/∂m(x_j)  = −∂G/∂t_j.
//! ```
//!
//! The support's `ρ` is optimised in logs: Adam and L-BFGS then move it on the scale it
//! varies on, and it stays positive.

use faer::{Mat, MatRef};

use super::super::sparse::collapsed::{collapsed_bound, Factors, Wanted};
use super::super::sparse::KUU_JITTER;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;

/// The box of `log ρ_j` in the optimisation: `ρ ∈ [10⁻¹⁰, 10¹⁰]` (in the units of `y²`).
pub(super) const LOG_RHO_BOUNDS: (f64, f64) = (-23.025850929940457, 23.025850929940457);

/// The training data the bound is a function of.
pub(super) struct Problem<'a> {
    pub x: MatRef<'a, f64>,
    pub y: &'a [f64],
}

/// The bound at one parameter setting.
pub(super) struct Evaluation {
    pub value: f64,
    pub factors: Factors,
    /// In the order kernel log-parameters, `log σ²`, mean parameters, Z (column-major, if it
    /// was wanted), then `log ρ_j` for `j` in `support` order.
    pub grad: Option<Vec<f64>>,
}

impl Problem<'_> {
    /// The bound (and, unless `wanted` is [`Wanted::Value`], its gradient) at the given
    /// parameters; `rho` has one entry per training point, and `support` lists the points whose
    /// `log ρ` gradient is wanted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn evaluate(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        noise: f64,
        z: MatRef<'_, f64>,
        rho: &[f64],
        support: &[usize],
        wanted: Wanted,
    ) -> Result<Evaluation, ModelError> {
        let prior = mean.eval(self.x);
        let t: Vec<f64> = self.y.iter().zip(&prior).map(|(y, m)| y - m).collect();
        let p: Vec<f64> = rho.iter().map(|r| 1.0 / (noise + r)).collect();
        let kappa: f64 = p
            .iter()
            .map(|p| -0.5 * (2.0 * std::f64::consts::PI / p).ln())
            .sum();
        let core = collapsed_bound(kernel, self.x, z, KUU_JITTER, &p, &t, wanted)?;
        let grad = core.grad.map(|g| {
            // ∂(G + κ)/∂log P_j: κ_j = ½ log P_j − ½ log 2π.
            let log_p_bar: Vec<f64> = g.log_p.iter().map(|v| v + 0.5).collect();
            let d_noise: f64 = (0..rho.len()).map(|j| -log_p_bar[j] * noise * p[j]).sum();
            let d_prior: Vec<f64> = g.t.iter().map(|v| -v).collect();
            let mut out = g.kernel;
            out.push(d_noise);
            out.extend(mean.grad_contract(self.x, &d_prior));
            if let Some(gz) = g.z {
                for c in 0..z.ncols() {
                    out.extend((0..z.nrows()).map(|a| gz[(a, c)]));
                }
            }
            out.extend(support.iter().map(|&j| -log_p_bar[j] * rho[j] * p[j]));
            out
        });
        Ok(Evaluation {
            value: core.value + kappa,
            factors: core.factors,
            grad,
        })
    }
}

/// Where each parameter sits in the flat vector: kernel log-parameters, `log σ²`, the mean's
/// parameters, the inducing inputs column by column (if learned), then `log ρ_j` of the support.
pub(super) struct Layout {
    pub n_kernel: usize,
    pub n_mean: usize,
    pub z_shape: (usize, usize),
    pub learn_z: bool,
}

/// The parameters unpacked from a flat vector.
pub(super) struct Params {
    pub kernel: Kernel,
    pub noise: f64,
    pub mean: Mean,
    pub z: Mat<f64>,
    /// One entry per training point (0 outside the support).
    pub rho: Vec<f64>,
}

impl Layout {
    fn n_hyper(&self) -> usize {
        self.n_kernel + 1 + self.n_mean
    }

    fn n_z(&self) -> usize {
        if self.learn_z {
            self.z_shape.0 * self.z_shape.1
        } else {
            0
        }
    }

    /// The flat vector of `params` with the support `support`.
    pub(super) fn pack(&self, params: &Params, support: &[usize]) -> Vec<f64> {
        let mut v = params.kernel.log_params();
        v.push(params.noise.ln());
        v.extend(params.mean.params());
        if self.learn_z {
            for c in 0..params.z.ncols() {
                v.extend((0..params.z.nrows()).map(|a| params.z[(a, c)]));
            }
        }
        v.extend(support.iter().map(|&j| params.rho[j].ln()));
        v
    }

    /// Bounds of the flat vector; a fixed noise or mean is a box of zero width at its value.
    pub(super) fn bounds(
        &self,
        kernel: &Kernel,
        fixed_noise: Option<f64>,
        fixed_mean: Option<&Mean>,
        support: usize,
    ) -> Vec<(f64, f64)> {
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let mut b = kernel.log_bounds();
        b.push(match fixed_noise {
            Some(v) => (v.ln(), v.ln()),
            None => (NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()),
        });
        match fixed_mean {
            Some(m) => b.extend(m.params().into_iter().map(|v| (v, v))),
            None => b.extend(std::iter::repeat_n(free, self.n_mean)),
        }
        b.extend(std::iter::repeat_n(free, self.n_z()));
        b.extend(std::iter::repeat_n(LOG_RHO_BOUNDS, support));
        b
    }

    /// The parameters at `v` for support `support` of `n` points (the inducing inputs are those
    /// of `start` when they are not learned).
    pub(super) fn unpack(
        &self,
        v: &[f64],
        start: &Params,
        support: &[usize],
        n: usize,
    ) -> Result<Params, ModelError> {
        let mut kernel = start.kernel.clone();
        kernel.set_log_params(&v[..self.n_kernel])?;
        let noise = v[self.n_kernel].exp();
        let mut mean = start.mean.clone();
        mean.set_params(&v[self.n_kernel + 1..self.n_hyper()])?;
        let z_end = self.n_hyper() + self.n_z();
        let z = if self.learn_z {
            let (m, d) = self.z_shape;
            let zs = &v[self.n_hyper()..z_end];
            if let Some(i) = zs.iter().position(|x| !x.is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "inducing input entry {i} is not finite ({})",
                    zs[i]
                )));
            }
            Mat::from_fn(m, d, |a, c| zs[c * m + a])
        } else {
            start.z.clone()
        };
        let mut rho = vec![0.0; n];
        for (&j, &r) in support.iter().zip(&v[z_end..]) {
            rho[j] = r.exp();
        }
        Ok(Params {
            kernel,
            noise,
            mean,
            z,
            rho,
        })
    }
}
