//! Unit tests of the kernels module, with shared helpers.

mod cross_gradients;
mod gradients;
mod parsing;
mod product_variance;
mod spectral;
mod values;

use faer::{Mat, MatRef};

use super::{Kernel, ProductVariance};

/// Small deterministic generator (64-bit LCG) so tests need no `rand`.
pub(super) struct Lcg(u64);

impl Lcg {
    pub(super) fn new(seed: u64) -> Self {
        Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [lo, hi).
    pub(super) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// An n×d matrix of uniform entries in [−2, 2).
    pub(super) fn matrix(&mut self, n: usize, d: usize) -> Mat<f64> {
        Mat::from_fn(n, d, |_, _| self.uniform(-2.0, 2.0))
    }
}

/// Parses, initialises on `x` and moves the hyperparameters away from their
/// defaults (so that no derivative is accidentally symmetric or zero).
pub(super) fn kernel_for(expr: &str, x: MatRef<'_, f64>, rng: &mut Lcg) -> Kernel {
    kernel_with(expr, ProductVariance::FirstFactor, x, rng)
}

/// [`kernel_for`] with the variance policy `products` in every product.
pub(super) fn kernel_with(
    expr: &str,
    products: ProductVariance,
    x: MatRef<'_, f64>,
    rng: &mut Lcg,
) -> Kernel {
    let mut k = Kernel::parse_with(expr, products).unwrap_or_else(|e| panic!("{expr}: {e}"));
    k.initialize(x).unwrap();
    let p: Vec<f64> = k
        .log_params()
        .iter()
        .map(|v| v + rng.uniform(-0.3, 0.3))
        .collect();
    k.set_log_params(&p).unwrap();
    k
}

/// Asserts |a − b| ≤ tol·max(|a|, |b|, floor).
pub(super) fn assert_close(a: f64, b: f64, tol: f64, floor: f64, what: &str) {
    let scale = a.abs().max(b.abs()).max(floor);
    assert!(
        (a - b).abs() <= tol * scale,
        "{what}: {a} vs {b} (tol {tol}, scale {scale})"
    );
}
