//! Random-feature prior samples against the kernel they stand for: the feature covariance of
//! one draw of many frequencies, and the covariance of many sample paths, both against
//! `Kernel::cross` (tolerances from the central limit theorem), for every supported kernel.

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::super::{Kernel, KernelError, SpectralKernel};

/// How many standard errors a Monte Carlo estimate may be off.
const STANDARD_ERRORS: f64 = 5.0;

/// Every supported shape: each stationary kind, isotropic and ARD, active dims, constants
/// scaling a stationary factor, and sums that share the frequencies.
const SUPPORTED: [&str; 7] = [
    "se(ls=0.7)",
    "const(var=2.5) * se(ls=[0.6, 1.1, 0.9])",
    "matern12(ls=[0.9, 1.4], dims=[2, 0])",
    "matern32(var=1.7, ls=[0.8, 0.5, 1.2])",
    "const(var=0.8) * matern52(ls=[0.7, 1.3, 1.0])",
    "se(var=0.6, ls=0.8, dims=[1]) + matern32(var=1.4, ls=[1.1, 0.9, 0.7]) + const(var=0.3)",
    "const(var=1.2)",
];

/// Five inputs in 3-D at distances of about one lengthscale.
fn inputs() -> Mat<f64> {
    let rows = [
        [0.0, 0.0, 0.0],
        [0.3, -0.2, 0.5],
        [-0.6, 0.4, 0.1],
        [0.9, 0.8, -0.7],
        [0.1, -1.0, 0.6],
    ];
    Mat::from_fn(5, 3, |i, c| rows[i][c])
}

#[test]
fn feature_covariance_tends_to_the_kernel() {
    // Given the frequencies, Σ_j φ_j(x)φ_j(x') = Σ_t var_t/F_t Σ_j cos(ω_jᵀ(x − x')/ℓ) + c: a
    // mean of F_t cosines per term, each in [−1, 1] (variance ≤ 1) with mean k_t/var_t, so its
    // standard deviation is at most √(Σ_t var_t²/F_t) ≤ var/√(min_t F_t), and every term here
    // gets at least 30% of the frequencies. A million of them: about 2e-3·var.
    let x = inputs();
    let frequencies = 1_000_000;
    for (seed, expr) in SUPPORTED.iter().enumerate() {
        let kernel = Kernel::parse(expr).unwrap();
        let spectral = SpectralKernel::new(&kernel).unwrap();
        let mut rng = StdRng::seed_from_u64(seed as u64);
        let path = spectral.sample(3, frequencies, &mut rng).unwrap();
        let approx = path.feature_covariance(x.as_ref(), x.as_ref()).unwrap();
        let exact = kernel.cross(x.as_ref(), x.as_ref());
        let variance = spectral.variance();
        let sd = variance / (0.3 * frequencies as f64).sqrt();
        for i in 0..5 {
            // cos² + sin² = 1: the diagonal is the variance exactly.
            assert!(
                (approx[(i, i)] - variance).abs() <= 1e-12 * variance,
                "{expr}: diagonal {i}: {} vs {variance}",
                approx[(i, i)]
            );
            assert!((exact[(i, i)] - variance).abs() <= 1e-12 * variance);
            for k in 0..i {
                let err = (approx[(i, k)] - exact[(i, k)]).abs();
                assert!(
                    err <= STANDARD_ERRORS * sd,
                    "{expr}: ({i}, {k}): {} vs kernel {} (tolerance {:.1e})",
                    approx[(i, k)],
                    exact[(i, k)],
                    STANDARD_ERRORS * sd
                );
            }
        }
    }
}

#[test]
fn sample_paths_have_the_kernel_as_covariance() {
    // Each path draws its own frequencies and weights, so E[f̃(x)f̃(x')] is the kernel exactly
    // (few frequencies suffice); the tolerance is 5 standard errors of each sample second
    // moment, estimated from the samples themselves.
    let x = inputs();
    let paths = 20_000;
    for (seed, expr) in SUPPORTED.iter().enumerate() {
        let kernel = Kernel::parse(expr).unwrap();
        let spectral = SpectralKernel::new(&kernel).unwrap();
        let mut rng = StdRng::seed_from_u64(100 + seed as u64);
        let values: Vec<Vec<f64>> = (0..paths)
            .map(|_| {
                spectral
                    .sample(3, 8, &mut rng)
                    .unwrap()
                    .eval(x.as_ref())
                    .unwrap()
            })
            .collect();
        let exact = kernel.cross(x.as_ref(), x.as_ref());
        for i in 0..5 {
            for k in 0..=i {
                let products: Vec<f64> = values.iter().map(|v| v[i] * v[k]).collect();
                let mean = products.iter().sum::<f64>() / paths as f64;
                let var =
                    products.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (paths - 1) as f64;
                let se = (var / paths as f64).sqrt();
                assert!(
                    (mean - exact[(i, k)]).abs() <= STANDARD_ERRORS * se,
                    "{expr}: ({i}, {k}): {mean} vs kernel {} (se {se:.1e})",
                    exact[(i, k)]
                );
            }
        }
    }
}

#[test]
fn the_same_generator_state_gives_the_same_path() {
    let x = inputs();
    let spectral = SpectralKernel::new(&Kernel::parse(SUPPORTED[5]).unwrap()).unwrap();
    let draw = |seed| {
        spectral
            .sample(3, 64, &mut StdRng::seed_from_u64(seed))
            .unwrap()
            .eval(x.as_ref())
            .unwrap()
    };
    assert_eq!(draw(3), draw(3));
    assert_ne!(draw(3), draw(4));
}

#[test]
fn unsupported_kernels_are_named() {
    for (expr, named) in [
        ("rq(ls=1.0)", "`rq`"),
        ("se(ls=1.0) + per(ls=1.0)", "`per`"),
        ("lin", "`lin`"),
        ("se(ls=1.0) + white(var=0.1)", "`white`"),
        ("se(ls=1.0) * matern52(ls=2.0)", "two stationary kernels"),
        ("se", "unset lengthscales"),
        (
            "const * (se(ls=1.0) + matern12(ls=1.0))",
            "sum inside a product",
        ),
    ] {
        let err = SpectralKernel::new(&Kernel::parse(expr).unwrap()).unwrap_err();
        assert!(
            matches!(err, KernelError::NoSpectralFeatures(_)) && err.to_string().contains(named),
            "{expr}: {err}"
        );
    }
    let spectral = SpectralKernel::new(&Kernel::parse(SUPPORTED[2]).unwrap()).unwrap();
    let mut rng = StdRng::seed_from_u64(0);
    // dims=[2, 0] needs three columns; zero frequencies is no path; a path drawn for 3 columns
    // is not evaluated on 2.
    assert!(spectral.sample(2, 8, &mut rng).is_err());
    assert!(spectral.sample(3, 0, &mut rng).is_err());
    let path = spectral.sample(3, 8, &mut rng).unwrap();
    assert!(path.eval(Mat::<f64>::zeros(1, 2).as_ref()).is_err());
}
