//! The latent form to verify (spec §2.2): `mean(x) = m0 + wᵀx + k(x, Z) t`,
//! `var(x) = k(x, x) − k(x, Z) S k(Z, x)` with `S` dense and symmetric, and what every box
//! bound needs of it once per model (the kernel's decomposition, `|S|`, bounds of the
//! eigenvalues of `S`).

use faer::{Mat, MatRef, Side};

use super::decomposition::{KernelDecomposition, PointSandwiches};
use super::linear::AffineMean;
use super::region::Region;
use super::rounding;
use super::variance_qp::Spectrum;
use super::VerifyError;
use crate::kernels::Kernel;
use crate::means::PriorMean;
use crate::posterior::LinearGaussianForm;

/// A latent Gaussian process in linear-Gaussian form over a [`Kernel`], ready for box bounds.
#[derive(Clone, Debug)]
pub struct LatentForm {
    kernel: Kernel,
    decomposition: KernelDecomposition,
    support: Mat<f64>,
    t: Vec<f64>,
    s: Mat<f64>,
    abs_s: Mat<f64>,
    mean: AffineMean,
    prior_var: f64,
    /// A lower bound of the smallest eigenvalue of `S`.
    lambda_min: f64,
    /// An upper bound of the largest eigenvalue of `S`.
    lambda_max: f64,
    /// `max_i Σ_l |S_il|` (bounds `|k|ᵀ|S||k| ≤ this · ‖k‖²`, for the point margins).
    abs_row_max: f64,
    /// The eigendecomposition of `S` for the solver bounds, computed on first use.
    spectrum: std::sync::OnceLock<Option<std::sync::Arc<Spectrum>>>,
}

/// Mean and variance at one point, each with a certified bracket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointMoments {
    /// Computed mean.
    pub mean: f64,
    /// Bracket half-width of the mean.
    pub mean_margin: f64,
    /// Computed variance (clamped at 0).
    pub var: f64,
    /// Bracket half-width of the variance.
    pub var_margin: f64,
}

impl LatentForm {
    /// A form from its parts: support points (one per row), `t`, `S` (symmetrised here), a
    /// constant prior mean `m0` plus `wᵀx` (`w` empty for none).
    ///
    /// # Errors
    /// On mismatched sizes, non-finite entries, an empty support, or an unsupported kernel.
    pub fn new(
        kernel: Kernel,
        support: Mat<f64>,
        t: Vec<f64>,
        s: Mat<f64>,
        m0: f64,
        w: Vec<f64>,
    ) -> Result<LatentForm, VerifyError> {
        let (n, d) = (support.nrows(), support.ncols());
        if n == 0 {
            return Err(VerifyError::UnsupportedModel(
                "the form has no support points".into(),
            ));
        }
        if t.len() != n || s.nrows() != n || s.ncols() != n {
            return Err(VerifyError::Invalid(format!(
                "form: {n} support points but t has {} entries and S is {}×{}",
                t.len(),
                s.nrows(),
                s.ncols()
            )));
        }
        if !w.is_empty() && w.len() != d {
            return Err(VerifyError::Invalid(format!(
                "form: the prior mean has {} weights for {d} inputs",
                w.len()
            )));
        }
        let finite = (0..n).all(|i| (0..d).all(|j| support[(i, j)].is_finite()))
            && t.iter().all(|v| v.is_finite())
            && (0..n).all(|i| (0..n).all(|j| s[(i, j)].is_finite()))
            && m0.is_finite()
            && w.iter().all(|v| v.is_finite());
        if !finite {
            return Err(VerifyError::Invalid(
                "form: a non-finite entry in Z, t, S or the mean".into(),
            ));
        }
        kernel
            .validate(d)
            .map_err(|e| VerifyError::Invalid(format!("form: {e}")))?;
        let decomposition = KernelDecomposition::new(&kernel, d)?;
        let s = Mat::from_fn(n, n, |i, j| 0.5 * (s[(i, j)] + s[(j, i)]));
        let abs_s = Mat::from_fn(n, n, |i, j| s[(i, j)].abs());
        let abs_row_max = (0..n)
            .map(|i| (0..n).map(|j| abs_s[(i, j)]).sum::<f64>())
            .fold(0.0, f64::max);
        let eig = s
            .self_adjoint_eigenvalues(Side::Lower)
            .map_err(|e| VerifyError::Invalid(format!("form: eigenvalues of S failed: {e:?}")))?;
        let lo = eig.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = eig.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Backward-stable symmetric eigensolvers are accurate to O(n ε ‖S‖); take 64 n ε.
        let err = 64.0 * n as f64 * f64::EPSILON * lo.abs().max(hi.abs()) + 1e-300;
        let prior_var = kernel.diag(support.as_ref().subrows(0, 1))[0];
        Ok(LatentForm {
            kernel,
            decomposition,
            support,
            t,
            s,
            abs_s,
            mean: AffineMean { m0, w },
            prior_var,
            lambda_min: lo - err,
            lambda_max: hi + err,
            abs_row_max,
            spectrum: std::sync::OnceLock::new(),
        })
    }

    /// The form of any fitted model in linear-Gaussian form over a [`Kernel`] whose prior mean
    /// is affine (`S` materialised from its signed terms, O(N²·rank) once).
    ///
    /// # Errors
    /// If the prior mean is not affine, or as for [`LatentForm::new`].
    pub fn of<F>(model: &F) -> Result<LatentForm, VerifyError>
    where
        F: LinearGaussianForm<Covariance = Kernel>,
    {
        let lg = model.linear_gaussian();
        let support = lg.support().to_owned();
        let d = support.ncols();
        let (m0, w) = affine_mean(lg.prior_mean(), support.as_ref())?;
        LatentForm::new(
            lg.covariance().clone(),
            support,
            lg.t().to_vec(),
            lg.s_matrix(),
            m0,
            if w.iter().all(|v| *v == 0.0) {
                Vec::new()
            } else {
                w
            },
        )
        .and_then(|f| {
            if f.dim() == d {
                Ok(f)
            } else {
                Err(VerifyError::Invalid(
                    "form: inconsistent input width".into(),
                ))
            }
        })
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.support.ncols()
    }

    /// Number of support points.
    pub fn n(&self) -> usize {
        self.support.nrows()
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The kernel's decomposition.
    pub fn decomposition(&self) -> &KernelDecomposition {
        &self.decomposition
    }

    /// Support points.
    pub fn support(&self) -> MatRef<'_, f64> {
        self.support.as_ref()
    }

    /// `t`.
    pub fn t(&self) -> &[f64] {
        &self.t
    }

    /// `S` (symmetrised).
    pub fn s(&self) -> MatRef<'_, f64> {
        self.s.as_ref()
    }

    /// `|S|` entrywise.
    pub fn abs_s(&self) -> MatRef<'_, f64> {
        self.abs_s.as_ref()
    }

    /// The affine prior mean.
    pub fn mean(&self) -> &AffineMean {
        &self.mean
    }

    /// The prior variance `k(x, x)` (constant: every supported kernel is stationary).
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }

    /// Bounds `[λ_min, λ_max]` enclosing the eigenvalues of `S`.
    pub fn eigen_bounds(&self) -> (f64, f64) {
        (self.lambda_min, self.lambda_max)
    }

    /// The eigendecomposition of `S` (once per form; `None` if it failed), for the solver
    /// variance bounds ([`super::variance_qp`]).
    pub fn spectrum(&self) -> Option<&Spectrum> {
        self.spectrum
            .get_or_init(|| Spectrum::of(self.s.as_ref()).ok())
            .as_deref()
    }

    /// The per-support-point kernel sandwiches over `region`.
    pub fn sandwiches(&self, region: &Region) -> PointSandwiches {
        self.decomposition.sandwiches(self.support.as_ref(), region)
    }

    /// Mean and variance at the rows of `xs`, with bracket half-widths for rounding.
    pub fn moments(&self, xs: MatRef<'_, f64>) -> Vec<PointMoments> {
        let kz = self.kernel.cross(self.support.as_ref(), xs);
        let sk = &self.s * &kz;
        let n = self.n();
        let slack = rounding::REL * (n as f64 / 2000.0).max(1.0);
        (0..xs.nrows())
            .map(|a| {
                let lin: f64 = self
                    .mean
                    .w
                    .iter()
                    .enumerate()
                    .map(|(j, w)| w * xs[(a, j)])
                    .sum();
                let mut mean = self.mean.m0 + lin;
                let mut mean_scale = self.mean.m0.abs() + lin.abs();
                let mut q = 0.0;
                let mut k2 = 0.0;
                for i in 0..n {
                    let k = kz[(i, a)];
                    mean += self.t[i] * k;
                    mean_scale += (self.t[i] * k).abs();
                    q += k * sk[(i, a)];
                    k2 += k * k;
                }
                let var_scale = self.prior_var + self.abs_row_max * k2;
                PointMoments {
                    mean,
                    mean_margin: slack * mean_scale + 1e-300,
                    var: (self.prior_var - q).max(0.0),
                    var_margin: slack * var_scale + 1e-300,
                }
            })
            .collect()
    }

    /// [`LatentForm::moments`] at one point.
    pub fn moments_at(&self, x: &[f64]) -> PointMoments {
        let xs = MatRef::from_row_major_slice(x, 1, x.len());
        self.moments(xs)[0]
    }
}

/// `(m0, w)` of an affine prior mean, checked at two points of the support's range.
fn affine_mean<M: PriorMean>(
    mean: &M,
    support: MatRef<'_, f64>,
) -> Result<(f64, Vec<f64>), VerifyError> {
    let d = support.ncols();
    let zero = Mat::<f64>::zeros(1, d);
    let m0 = mean.eval(zero.as_ref())[0];
    let g = mean.grad_inputs(zero.as_ref());
    let w: Vec<f64> = (0..d).map(|j| g[(0, j)]).collect();
    for i in [0, support.nrows() - 1] {
        let row = support.subrows(i, 1);
        let v = mean.eval(row)[0];
        let lin = m0 + (0..d).map(|j| w[j] * row[(0, j)]).sum::<f64>();
        let scale = 1.0 + v.abs() + lin.abs();
        if (v - lin).abs() > 1e-9 * scale {
            return Err(VerifyError::UnsupportedModel(
                "the prior mean is not affine in the inputs".into(),
            ));
        }
    }
    Ok((m0, w))
}
