//! The normal quantile against reference values (Python's `statistics.NormalDist.inv_cdf`,
//! Wichura's AS 241, accurate to about 1e-16) and as the inverse of Φ, and the quasi-random
//! normal base samples.

use super::super::normal::{cdf, quantile};
use super::super::sobol_normal;
use super::assert_relative;

#[test]
fn quantile_matches_reference_values() {
    for (p, want) in [
        (1e-10, -6.361_340_902_404_056),
        (0.3, -0.524_400_512_708_040_7),
        (0.975, 1.959_963_984_540_053_6),
    ] {
        assert_relative(quantile(p), want, 4e-16, &format!("quantile({p})"));
    }
    assert_eq!(quantile(0.5), 0.0);
    assert_eq!(quantile(0.0), f64::NEG_INFINITY);
    assert_eq!(quantile(1.0), f64::INFINITY);
    assert!(quantile(-0.1).is_nan() && quantile(1.1).is_nan() && quantile(f64::NAN).is_nan());
}

#[test]
fn quantile_inverts_the_distribution_function() {
    // Across both of Acklam's regions and deep into the lower tail: Φ(Φ⁻¹(p)) = p to a few
    // units in the last place (Φ's slope amplifies the rounding of x by |x|·φ(x)/Φ(x)·ε).
    let mut p = 1e-300;
    while p < 0.5 {
        let x = quantile(p);
        let tol = 8.0 * f64::EPSILON * (1.0 + x * x);
        assert_relative(cdf(x), p, tol, &format!("Φ(Φ⁻¹({p:e}))"));
        // Symmetry is exact by construction.
        assert_eq!(quantile(1.0 - p), -quantile(1.0 - (1.0 - p)));
        p *= 3.7;
    }
}

#[test]
fn sobol_normals_are_seeded_and_standard() {
    let (n, d) = (4096, 3);
    let z = sobol_normal(n, d, 7).unwrap();
    assert_eq!(z, sobol_normal(n, d, 7).unwrap());
    assert_ne!(z, sobol_normal(n, d, 8).unwrap());
    for j in 0..d {
        let mean = z.col(j).iter().sum::<f64>() / n as f64;
        let var = z.col(j).iter().map(|v| v * v).sum::<f64>() / n as f64;
        // Pseudo-random draws would be off by about 1/√n = 0.016; a scrambled Sobol set
        // stratifies each margin into n cells, so both moments are far closer.
        assert!(mean.abs() < 1e-3, "column {j} mean {mean}");
        assert!((var - 1.0).abs() < 1e-2, "column {j} variance {var}");
        assert!(z.col(j).iter().all(|v| v.is_finite()));
    }
    for j in 1..d {
        let c = (0..n).map(|i| z[(i, 0)] * z[(i, j)]).sum::<f64>() / n as f64;
        assert!(c.abs() < 1e-2, "covariance (0, {j}) = {c}");
    }
    assert!(sobol_normal(0, 2, 0).is_err());
    assert!(sobol_normal(1 << 17, 2, 0).is_err());
    assert!(sobol_normal(4, 1000, 0).is_err());
}
