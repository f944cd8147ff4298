//! Outward rounding (spec §6.1): every computed bound is widened by a margin relative to the
//! magnitude of the terms it was summed from, so that it holds for the real-number quantity.
//!
//! The margin `REL · scale` with `REL = 1e-12` is far above the rounding error of the `O(N)`
//! sums and the few-ulp errors of `exp`/`Φ` (`N ε_mach ≈ 2·10⁻¹³` for `N = 1000`), and far
//! below any tolerance a user asks for.

/// Relative margin.
pub const REL: f64 = 1e-12;

/// An absolute floor so that a bound of exactly representable zero terms still moves.
const TINY: f64 = 1e-300;

/// `x` moved down by the margin of terms whose absolute values sum to `scale`.
pub fn down(x: f64, scale: f64) -> f64 {
    x - (REL * scale.abs() + TINY)
}

/// `x` moved up by the margin of terms whose absolute values sum to `scale`.
pub fn up(x: f64, scale: f64) -> f64 {
    x + (REL * scale.abs() + TINY)
}
