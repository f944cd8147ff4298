//! The Student-t likelihood of one entry: its normalising constant, and the derivatives in the
//! latent value and in the log noise variance that the Laplace approximation needs.

use std::f64::consts::PI;

/// The log density of the Student-t likelihood `p(y | f)` with scale² `sigma2` and `nu`
/// degrees of freedom.
pub fn student_t_log_pdf(y: f64, f: f64, sigma2: f64, nu: f64) -> f64 {
    let r = y - f;
    log_normaliser(sigma2, nu) - 0.5 * (nu + 1.0) * (r * r / (nu * sigma2)).ln_1p()
}

/// The variance of a Student-t observation about its latent value: `σ² ν/(ν−2)` for `ν > 2`,
/// infinite otherwise (the distribution then has no variance).
pub fn student_t_noise_variance(sigma2: f64, nu: f64) -> f64 {
    if nu > 2.0 {
        sigma2 * nu / (nu - 2.0)
    } else {
        f64::INFINITY
    }
}

/// `ln Γ(x + ½) − ln Γ(x)` for `x > 0`. Computed directly: for `ν = 1e7` the two log-gammas are
/// ~7e7 each and their difference would lose eight digits. The recurrence
/// `D(x) = D(x+1) + ln(x/(x+½))` lifts `x` to 30, where the asymptotic series
/// `½ ln x − 1/(8x) + 1/(192x³) − 1/(640x⁵) + 17/(14336x⁷)` is accurate to 1e-16.
pub(crate) fn ln_gamma_half_ratio(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 30.0 {
        acc += (x / (x + 0.5)).ln();
        x += 1.0;
    }
    let z = 1.0 / x;
    let z2 = z * z;
    acc + 0.5 * x.ln()
        + z * (-1.0 / 8.0 + z2 * (1.0 / 192.0 + z2 * (-1.0 / 640.0 + z2 * 17.0 / 14336.0)))
}

/// `d/dx [ln Γ(x + ½) − ln Γ(x)] = ψ(x + ½) − ψ(x)` for `x > 0`, by the derivatives of the
/// recurrence and the series of [`ln_gamma_half_ratio`] (the degrees of freedom are learned by
/// the Student-t SVGP).
pub(crate) fn ln_gamma_half_ratio_derivative(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 30.0 {
        acc += 1.0 / x - 1.0 / (x + 0.5);
        x += 1.0;
    }
    let z = 1.0 / x;
    let z2 = z * z;
    acc + 0.5 * z
        + z2 * (1.0 / 8.0 + z2 * (-1.0 / 64.0 + z2 * (1.0 / 128.0 - z2 * 119.0 / 14336.0)))
}

/// `ln [Γ((ν+1)/2) / (Γ(ν/2) √(νπ) σ)]`.
fn log_normaliser(sigma2: f64, nu: f64) -> f64 {
    ln_gamma_half_ratio(0.5 * nu) - 0.5 * (nu * PI).ln() - 0.5 * sigma2.ln()
}

/// The likelihood of every entry at fixed noise scales.
pub(super) struct Likelihood<'a> {
    pub(super) y: &'a [f64],
    pub(super) group: &'a [usize],
    pub(super) sigma2: Vec<f64>,
    log_norm: Vec<f64>,
    pub(super) nu: f64,
}

/// `ℓ`, `ℓ'`, `W = −ℓ''` and `ℓ'''` of one entry.
#[derive(Clone, Copy)]
pub(super) struct Derivs {
    pub(super) l: f64,
    pub(super) d1: f64,
    pub(super) w: f64,
    pub(super) d3: f64,
}

impl<'a> Likelihood<'a> {
    pub(super) fn new(y: &'a [f64], group: &'a [usize], noise: &[f64], nu: f64) -> Self {
        Likelihood {
            y,
            group,
            sigma2: noise.to_vec(),
            log_norm: noise.iter().map(|&s2| log_normaliser(s2, nu)).collect(),
            nu,
        }
    }

    pub(super) fn log_density(&self, j: usize, f: f64) -> f64 {
        let (r, s2) = (self.y[j] - f, self.sigma2[self.group[j]]);
        self.log_norm[self.group[j]] - 0.5 * (self.nu + 1.0) * (r * r / (self.nu * s2)).ln_1p()
    }

    pub(super) fn derivs(&self, j: usize, f: f64) -> Derivs {
        let nu1 = self.nu + 1.0;
        let r = self.y[j] - f;
        let vs = self.nu * self.sigma2[self.group[j]];
        let u = vs + r * r;
        Derivs {
            l: self.log_density(j, f),
            d1: nu1 * r / u,
            w: nu1 * (vs - r * r) / (u * u),
            d3: 2.0 * nu1 * r * (r * r - 3.0 * vs) / (u * u * u),
        }
    }

    /// Derivatives of `ℓ`, `ℓ'` and `W` with respect to `η = ln σ²` of the entry's group.
    pub(super) fn noise_derivs(&self, j: usize, f: f64) -> (f64, f64, f64) {
        let nu1 = self.nu + 1.0;
        let r = self.y[j] - f;
        let vs = self.nu * self.sigma2[self.group[j]];
        let u = vs + r * r;
        (
            -0.5 + 0.5 * nu1 * r * r / u,
            -nu1 * vs * r / (u * u),
            nu1 * vs * (3.0 * r * r - vs) / (u * u * u),
        )
    }

    /// `(ν+1)/(νσ² + r²) = W + 2(ν+1)r²/u² ≥ max(W, 0)`: the curvature of the quadratic that
    /// touches `ℓ` at `f` from below (`ℓ` is convex in `r²`).
    pub(super) fn minoriser_curvature(&self, j: usize, f: f64) -> f64 {
        let r = self.y[j] - f;
        (self.nu + 1.0) / (self.nu * self.sigma2[self.group[j]] + r * r)
    }

    /// `Ψ = Σ ℓ(f) − ½ aᵀ(f − m)`.
    pub(super) fn psi(&self, f: &[f64], a: &[f64], prior: &[f64]) -> f64 {
        (0..f.len())
            .map(|j| self.log_density(j, f[j]) - 0.5 * a[j] * (f[j] - prior[j]))
            .sum()
    }
}
