//! Random Fourier features (Rahimi & Recht, 2007): approximate prior sample paths of a
//! stationary kernel, what pathwise (Matheron) posterior samples start from.
//!
//! A stationary kernel `var·ρ(‖(x − x')/ℓ‖)` is `var·E_ω[cos(ωᵀ(x − x')/ℓ)]` for `ω` drawn from
//! its spectral density (Bochner): standard normal for `se`; for Matérn ν the multivariate
//! Student-t with `2ν` degrees of freedom, `ω = z·√(2ν/g)`, `z ~ N(0, I)`, `g ~ χ²_{2ν}`
//! (`matern12`, `matern32`, `matern52`: ν = 1/2, 3/2, 5/2). With `F` frequencies the prior sample
//!
//! ```text
//! f̃(x) = √(var/F) Σ_j [a_j cos(ω_jᵀx/ℓ) + b_j sin(ω_jᵀx/ℓ)],   a_j, b_j ~ N(0, 1),
//! ```
//!
//! has covariance `var/F Σ_j cos(ω_jᵀ(x − x')/ℓ)` given the frequencies: exactly `var` on the
//! diagonal, and the kernel on average over the frequencies, with a standard deviation of at
//! most `var/√F` (each cosine lies in [−1, 1]).
//!
//! Supported: `se`, `matern12`, `matern32`, `matern52` (isotropic or ARD lengthscales, any
//! active `dims`), `const` (an exact feature: a constant offset of variance `var`), products
//! of `const` factors with at most one of the stationary kernels (the constants scale its
//! variance), and sums of those, whose stationary terms share the `F` frequencies in proportion
//! to their variances (at least one each). Anything else (`rq`, `per`, `lin`, `white`, products
//! of two stationary kernels) is refused with [`KernelError::NoSpectralFeatures`] naming it.

use faer::{Mat, MatRef};
use rand::Rng;
use rand_distr::{ChiSquared, Distribution, StandardNormal};

use super::{BaseKind, Kernel, KernelError, Lengthscale};

/// One stationary term: `var·ρ(‖(x − x')/ℓ‖)` on the active columns.
#[derive(Clone, Debug, PartialEq)]
struct StationaryTerm {
    /// The base kernel's name, for errors.
    name: &'static str,
    var: f64,
    /// `None` for `se`; `Some(2ν)` for Matérn ν.
    dof: Option<f64>,
    lengthscale: Lengthscale,
    /// Active input columns; `None` means all.
    dims: Option<Vec<usize>>,
}

/// A kernel as random-feature prior samples see it: stationary terms plus a constant.
#[derive(Clone, Debug, PartialEq)]
pub struct SpectralKernel {
    terms: Vec<StationaryTerm>,
    /// The variance of the constant offset (the sum of the `const` terms).
    constant: f64,
}

/// The error naming the unsupported part of a kernel.
fn refuse(kernel: &Kernel, why: &str) -> KernelError {
    KernelError::NoSpectralFeatures(format!("`{kernel}` {why}"))
}

impl SpectralKernel {
    /// The spectral view of `kernel`.
    ///
    /// # Errors
    /// [`KernelError::NoSpectralFeatures`] naming the part of `kernel` that is not supported
    /// (see the module documentation), or whose lengthscales are not set yet.
    pub fn new(kernel: &Kernel) -> Result<Self, KernelError> {
        let mut out = SpectralKernel {
            terms: Vec::new(),
            constant: 0.0,
        };
        out.add(kernel)?;
        Ok(out)
    }

    /// Adds `kernel` as a term of the sum.
    fn add(&mut self, kernel: &Kernel) -> Result<(), KernelError> {
        match kernel {
            Kernel::Sum(terms) => terms.iter().try_for_each(|t| self.add(t)),
            Kernel::Base(_) | Kernel::Product(..) => {
                let (scale, term) = Self::product(kernel)?;
                match term {
                    Some(mut t) => {
                        t.var *= scale;
                        self.terms.push(t);
                    }
                    None => self.constant += scale,
                }
                Ok(())
            }
        }
    }

    /// A base kernel or a product: the product of its `const` variances and its one
    /// stationary factor (with its own variance), if any.
    fn product(kernel: &Kernel) -> Result<(f64, Option<StationaryTerm>), KernelError> {
        let factors = match kernel {
            Kernel::Product(factors, _) => factors.as_slice(),
            _ => std::slice::from_ref(kernel),
        };
        let mut scale = 1.0;
        let mut stationary = None;
        for factor in factors {
            let Kernel::Base(b) = factor else {
                return Err(refuse(kernel, "has a sum inside a product"));
            };
            let dof = match b.kind() {
                BaseKind::Const => {
                    scale *= b.var();
                    continue;
                }
                BaseKind::Se => None,
                BaseKind::Matern12 => Some(1.0),
                BaseKind::Matern32 => Some(3.0),
                BaseKind::Matern52 => Some(5.0),
                other => {
                    return Err(refuse(
                        kernel,
                        &format!(
                            "contains `{}`, which has no random features here (supported: \
                             se, matern12, matern32, matern52, const)",
                            other.name()
                        ),
                    ))
                }
            };
            let lengthscale = match b.lengthscale() {
                Some(Lengthscale::Unset) | None => {
                    return Err(refuse(kernel, "has unset lengthscales"))
                }
                Some(l) => l.clone(),
            };
            if stationary.is_some() {
                return Err(refuse(
                    kernel,
                    "is a product of two stationary kernels (its spectral density is a \
                     convolution, not supported)",
                ));
            }
            stationary = Some(StationaryTerm {
                name: b.kind().name(),
                var: b.var(),
                dof,
                lengthscale,
                dims: b.dims().map(<[usize]>::to_vec),
            });
        }
        Ok((scale, stationary))
    }

    /// The kernel's variance `k(x, x)` (the same at every input).
    pub fn variance(&self) -> f64 {
        self.constant + self.terms.iter().map(|t| t.var).sum::<f64>()
    }

    /// One prior sample path with `frequencies` random frequencies in all (shared by the
    /// stationary terms in proportion to their variances, at least one each) on inputs with
    /// `d` columns, drawn from `rng`.
    ///
    /// # Errors
    /// [`KernelError::NoSpectralFeatures`] if `frequencies` is 0 or an active column is not
    /// below `d`; [`KernelError::LengthscaleCount`] if an ARD term does not have one
    /// lengthscale per active input.
    pub fn sample(
        &self,
        d: usize,
        frequencies: usize,
        rng: &mut dyn rand::RngCore,
    ) -> Result<PriorSample, KernelError> {
        if frequencies == 0 {
            return Err(KernelError::NoSpectralFeatures(
                "the number of random frequencies must be at least 1, got 0".into(),
            ));
        }
        let stationary: f64 = self.terms.iter().map(|t| t.var).sum();
        let mut blocks = Vec::with_capacity(self.terms.len());
        for term in &self.terms {
            let dims: Vec<usize> = term.dims.clone().unwrap_or_else(|| (0..d).collect());
            if let Some(&c) = dims.iter().find(|&&c| c >= d) {
                return Err(KernelError::NoSpectralFeatures(format!(
                    "a kernel term uses input column {c}, but the inputs have {d} columns"
                )));
            }
            if let Lengthscale::Ard(ls) = &term.lengthscale {
                if ls.len() != dims.len() {
                    return Err(KernelError::LengthscaleCount {
                        kernel: term.name,
                        got: ls.len(),
                        expected: dims.len(),
                    });
                }
            }
            let f = ((frequencies as f64 * term.var / stationary).round() as usize).max(1);
            let chi = term
                .dof
                .map(|k| ChiSquared::new(k).expect("2ν is 1, 3 or 5"));
            // Row j is ω_j/ℓ over the active columns.
            let mut omega = Mat::<f64>::zeros(f, dims.len());
            for j in 0..f {
                let scale = chi.map_or(1.0, |c| (term.dof.unwrap_or(1.0) / c.sample(rng)).sqrt());
                for a in 0..dims.len() {
                    let z: f64 = rng.sample(StandardNormal);
                    omega[(j, a)] = z * scale / term.lengthscale.get(a);
                }
            }
            let weights = Mat::from_fn(f, 2, |_, _| rng.sample::<f64, _>(StandardNormal));
            blocks.push(Block {
                amplitude: (term.var / f as f64).sqrt(),
                omega,
                dims,
                weights,
            });
        }
        let offset = self.constant.sqrt() * rng.sample::<f64, _>(StandardNormal);
        Ok(PriorSample {
            d,
            blocks,
            constant: self.constant,
            offset,
        })
    }
}

/// The features of one stationary term of a [`PriorSample`].
#[derive(Clone, Debug)]
struct Block {
    /// `√(var/F)`.
    amplitude: f64,
    /// `ω_j/ℓ` (F × active columns).
    omega: Mat<f64>,
    dims: Vec<usize>,
    /// `a_j` (column 0) and `b_j` (column 1).
    weights: Mat<f64>,
}

/// One random-feature prior sample path, from [`SpectralKernel::sample`].
#[derive(Clone, Debug)]
pub struct PriorSample {
    d: usize,
    blocks: Vec<Block>,
    /// The constant term's variance.
    constant: f64,
    /// The constant term's draw, `√constant · z`.
    offset: f64,
}

impl PriorSample {
    /// The path at the rows of `x` (which must have the `d` columns it was drawn for).
    ///
    /// # Errors
    /// [`KernelError::NoSpectralFeatures`] if `x` has another number of columns.
    pub fn eval(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>, KernelError> {
        if x.ncols() != self.d {
            return Err(KernelError::NoSpectralFeatures(format!(
                "the prior sample was drawn for {} input columns, got {}",
                self.d,
                x.ncols()
            )));
        }
        let mut out = vec![self.offset; x.nrows()];
        for b in &self.blocks {
            for (i, o) in out.iter_mut().enumerate() {
                let mut s = 0.0;
                for j in 0..b.omega.nrows() {
                    let phase: f64 = b
                        .dims
                        .iter()
                        .enumerate()
                        .map(|(a, &c)| b.omega[(j, a)] * x[(i, c)])
                        .sum();
                    let (sin, cos) = phase.sin_cos();
                    s += b.weights[(j, 0)] * cos + b.weights[(j, 1)] * sin;
                }
                *o += b.amplitude * s;
            }
        }
        Ok(out)
    }

    /// The feature covariance `Σ_j φ_j(x) φ_j(x')` of this path's frequencies between the rows
    /// of `x1` and `x2` (what the weights average to): the kernel in expectation over the
    /// frequencies.
    ///
    /// # Errors
    /// As for [`PriorSample::eval`], for either input.
    pub fn feature_covariance(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
    ) -> Result<Mat<f64>, KernelError> {
        for x in [x1, x2] {
            if x.ncols() != self.d {
                return Err(KernelError::NoSpectralFeatures(format!(
                    "the prior sample was drawn for {} input columns, got {}",
                    self.d,
                    x.ncols()
                )));
            }
        }
        let mut out = Mat::from_fn(x1.nrows(), x2.nrows(), |_, _| self.constant);
        for b in &self.blocks {
            for i in 0..x1.nrows() {
                for k in 0..x2.nrows() {
                    let mut s = 0.0;
                    for j in 0..b.omega.nrows() {
                        let phase: f64 = b
                            .dims
                            .iter()
                            .enumerate()
                            .map(|(a, &c)| b.omega[(j, a)] * (x1[(i, c)] - x2[(k, c)]))
                            .sum();
                        s += phase.cos();
                    }
                    out[(i, k)] += b.amplitude * b.amplitude * s;
                }
            }
        }
        Ok(out)
    }
}
