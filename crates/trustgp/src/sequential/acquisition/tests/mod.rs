//! Checks of the acquisitions: the normal functions and `ln h` against high-precision
//! reference values (mpmath, 60–80 digits), each utility against closed forms and against
//! finite differences in the mean and standard deviation, and, on a fitted exact GP, against
//! Monte Carlo from the posterior and central finite differences in the input.

mod batch;
mod model;
mod normal;
mod pathwise;
mod qmc;
mod thompson;
mod utility;

/// `|got − want| ≤ tol·|want|`, with a message naming `what`.
fn assert_relative(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs(),
        "{what}: got {got:e}, want {want:e} (relative error {:e}, tolerance {tol:e})",
        ((got - want) / want).abs()
    );
}
