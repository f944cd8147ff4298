//! Why single-task safe learning stays local (`safe-transfer.md` §2.11, Thm 4.2): with a
//! stationary kernel whose correlation falls below `δ` beyond a distance `r`, a point farther
//! than `r` from every observed input has safety probability at most
//!
//! ```text
//! Φ( (Nδ/σ² − T) / √(k_scale − Nδ²/σ²) )      for 0 < δ < √k_scale · σ/√N,
//! ```
//!
//! so it can never enter the safe set when that bound is below `Φ(√β)`. The explorable radius
//! is `r` for the largest such `δ` ([`largest_delta`], by bisection: the argument increases in
//! `δ`), found as the root of the kernel's profile ([`kernel_root`]).

use super::error::{invalid, SafeError};
use crate::kernels::Kernel;
use crate::sequential::acquisition::normal::cdf;

/// Bisection steps: the bracket shrinks by 2⁻²⁰⁰, far below any `f64` spacing.
const BISECTIONS: usize = 200;

/// The setting of Thm 4.2: `n` observations with noise variance `noise_var`, the threshold
/// `threshold` (a lower bound `q ≥ T`, in standardised units) and the kernel's maximum
/// `k_scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TheoremSetting {
    /// Number of observations `N` (at least 1).
    pub n: usize,
    /// Observation noise variance `σ² > 0`.
    pub noise_var: f64,
    /// The threshold `T`.
    pub threshold: f64,
    /// The kernel's maximum `k_scale`, in `(0, 1]`.
    pub k_scale: f64,
}

impl TheoremSetting {
    fn check(&self) -> Result<(), SafeError> {
        if self.n == 0 {
            return invalid("the theorem needs at least one observation (n ≥ 1)");
        }
        if !(self.noise_var.is_finite() && self.noise_var > 0.0) {
            return invalid(format!(
                "noise_var must be finite and positive, got {}",
                self.noise_var
            ));
        }
        if !self.threshold.is_finite() {
            return invalid(format!("threshold must be finite, got {}", self.threshold));
        }
        if !(self.k_scale > 0.0 && self.k_scale <= 1.0) {
            return invalid(format!(
                "k_scale (the kernel's maximum) must lie in (0, 1] as Thm 4.2 assumes, got {}",
                self.k_scale
            ));
        }
        Ok(())
    }

    /// The largest admissible `δ`, `√k_scale · σ/√N` (excluded).
    pub fn delta_limit(&self) -> f64 {
        (self.k_scale * self.noise_var / self.n as f64).sqrt()
    }

    /// The argument of `Φ` in the bound at `delta`.
    ///
    /// # Errors
    /// [`SafeError::Invalid`] for a bad setting or `delta` outside `(0, delta_limit)`.
    pub fn bound_argument(&self, delta: f64) -> Result<f64, SafeError> {
        self.check()?;
        let limit = self.delta_limit();
        if !(delta > 0.0 && delta < limit) {
            return invalid(format!(
                "delta must lie in (0, √k_scale·σ/√N = {limit}), got {delta}"
            ));
        }
        Ok(self.argument(delta))
    }

    fn argument(&self, delta: f64) -> f64 {
        let n = self.n as f64;
        (n * delta / self.noise_var - self.threshold)
            / (self.k_scale - n * delta * delta / self.noise_var).sqrt()
    }

    /// The bound `Φ(argument)` on the safety probability beyond the radius of `delta`.
    ///
    /// # Errors
    /// As for [`TheoremSetting::bound_argument`].
    pub fn bound(&self, delta: f64) -> Result<f64, SafeError> {
        Ok(cdf(self.bound_argument(delta)?))
    }
}

/// The largest `δ` whose bound argument is at most `sqrt_beta` (so the bound is at most
/// `Φ(√β)` and no point beyond its radius is ever safe), by bisection.
///
/// # Errors
/// [`SafeError::Invalid`] for a bad setting or `sqrt_beta ≤ 0`, or when no `δ` exists: the
/// prior alone certifies safety (`−T/√k_scale > √β`, Cor 4.3's excluded case).
pub fn largest_delta(setting: &TheoremSetting, sqrt_beta: f64) -> Result<f64, SafeError> {
    setting.check()?;
    if !(sqrt_beta.is_finite() && sqrt_beta > 0.0) {
        return invalid(format!(
            "sqrt_beta must be finite and positive, got {sqrt_beta}"
        ));
    }
    // As δ → 0 the argument tends to −T/√k_scale.
    if -setting.threshold / setting.k_scale.sqrt() >= sqrt_beta {
        return invalid(format!(
            "no δ exists: −T/√k_scale = {} ≥ √β = {sqrt_beta}, so the prior alone certifies \
             safety (Cor. 4.3)",
            -setting.threshold / setting.k_scale.sqrt()
        ));
    }
    // Invariant: argument(lo) ≤ √β < argument(hi) (the argument → +∞ at the limit).
    let (mut lo, mut hi) = (0.0, setting.delta_limit());
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let a = setting.argument(mid);
        if a <= sqrt_beta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The distance `u ≥ 0` where the decreasing profile `profile` (with `profile(0) = 1`) falls to
/// `level ∈ (0, 1)`, by bisection on a bracket doubled until it holds the root.
///
/// # Errors
/// [`SafeError::Invalid`] for `level` outside `(0, 1)` or a profile that does not fall to
/// `level` within `2⁶⁰`.
pub fn kernel_root(profile: &dyn Fn(f64) -> f64, level: f64) -> Result<f64, SafeError> {
    if !(level > 0.0 && level < 1.0) {
        return invalid(format!(
            "the kernel level δ/k_scale must lie in (0, 1), got {level}"
        ));
    }
    let mut hi = 1.0;
    while profile(hi) > level {
        hi *= 2.0;
        if hi > 2f64.powi(60) {
            return invalid(format!(
                "the kernel profile does not fall to {level} (is it stationary and decaying?)"
            ));
        }
    }
    let mut lo = 0.0;
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if profile(mid) > level {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // `hi` satisfies profile(hi) ≤ level: a valid (sufficient) radius.
    Ok(hi)
}

/// The unit-variance profile `k̃(u) = k(0, u e₁)/k(0, 0)` of a stationary kernel of one
/// input (unit lengthscale gives `u` in lengthscales).
pub fn kernel_profile(kernel: &Kernel) -> impl Fn(f64) -> f64 + '_ {
    move |u: f64| {
        let origin = faer::Mat::from_fn(1, 1, |_, _| 0.0);
        let at = faer::Mat::from_fn(1, 1, |_, _| u);
        kernel.cross(origin.as_ref(), at.as_ref())[(0, 0)] / kernel.diag(origin.as_ref())[0]
    }
}

/// The explorable radius of single-task safe learning: the distance `r = u ℓ` beyond which no
/// point is ever certified safe, for a kernel of unit-variance profile `profile`, lengthscale
/// `lengthscale` and maximum `setting.k_scale`.
///
/// # Errors
/// As for [`largest_delta`] and [`kernel_root`], or a lengthscale that is not positive.
pub fn explorable_radius(
    setting: &TheoremSetting,
    sqrt_beta: f64,
    profile: &dyn Fn(f64) -> f64,
    lengthscale: f64,
) -> Result<f64, SafeError> {
    if !(lengthscale.is_finite() && lengthscale > 0.0) {
        return invalid(format!(
            "lengthscale must be finite and positive, got {lengthscale}"
        ));
    }
    let delta = largest_delta(setting, sqrt_beta)?;
    Ok(kernel_root(profile, delta / setting.k_scale)? * lengthscale)
}
