//! The feasible box: input validation, projection and the projected gradient.

use super::error::OptimError;

/// Checks that `x0` and `bounds` describe a well-posed box-constrained problem.
pub(crate) fn validate(x0: &[f64], bounds: &[(f64, f64)]) -> Result<(), OptimError> {
    if x0.len() != bounds.len() {
        return Err(OptimError::DimensionMismatch {
            x0: x0.len(),
            bounds: bounds.len(),
        });
    }
    for (index, &(lo, hi)) in bounds.iter().enumerate() {
        // `lo <= hi` is false for NaN; the infinity checks reject boxes with no finite point,
        // where projection would produce an infinite coordinate.
        let valid = lo <= hi && lo < f64::INFINITY && hi > f64::NEG_INFINITY;
        if !valid {
            return Err(OptimError::InvalidBound { index, lo, hi });
        }
    }
    if let Some(index) = x0.iter().position(|v| !v.is_finite()) {
        return Err(OptimError::NonFiniteStart {
            index,
            value: x0[index],
        });
    }
    Ok(())
}

/// Clamps `x` into the box in place.
pub(crate) fn project(x: &mut [f64], bounds: &[(f64, f64)]) {
    for (xi, &(lo, hi)) in x.iter_mut().zip(bounds) {
        *xi = xi.clamp(lo, hi);
    }
}

/// `‖P(x − g) − x‖∞`, SciPy's L-BFGS-B stationarity measure: zero exactly at a KKT point of the
/// box-constrained problem, and equal to `‖g‖∞` for unconstrained variables.
pub(crate) fn projected_gradient_norm(x: &[f64], g: &[f64], bounds: &[(f64, f64)]) -> f64 {
    x.iter()
        .zip(g)
        .zip(bounds)
        .map(|((&xi, &gi), &(lo, hi))| ((xi - gi).clamp(lo, hi) - xi).abs())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projected_gradient_ignores_outward_gradient_at_bound() {
        let bounds = [(0.0, 1.0), (f64::NEG_INFINITY, f64::INFINITY)];
        // At the lower bound with a positive gradient the variable cannot move: measure 0.
        assert_eq!(
            projected_gradient_norm(&[0.0, 3.0], &[5.0, 0.0], &bounds),
            0.0
        );
        // Distance to the bound caps the measure; the free variable reports |g|.
        assert_eq!(
            projected_gradient_norm(&[0.25, 3.0], &[5.0, 0.0], &bounds),
            0.25
        );
        assert_eq!(
            projected_gradient_norm(&[0.5, 3.0], &[0.0, -2.0], &bounds),
            2.0
        );
    }

    #[test]
    fn validate_rejects_empty_boxes() {
        let x0 = [0.0];
        assert!(validate(&x0, &[(f64::INFINITY, f64::INFINITY)]).is_err());
        assert!(validate(&x0, &[(f64::NEG_INFINITY, f64::NEG_INFINITY)]).is_err());
        assert!(validate(&x0, &[(1.0, 1.0)]).is_ok());
    }
}
