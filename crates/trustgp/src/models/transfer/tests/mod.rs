//! Tests of the safe-learning models against independent computations: explicit kernels and
//! dense inverses on tiny problems, central finite differences, the exact GP, and the
//! invariants of `safe-transfer.md` §4 (items 6, 7, 10).

mod hgp;
mod lmc;
mod single_task;
mod source_prior;
mod warm;

use faer::{Mat, MatRef, Side};

use crate::kernels::{BaseKernel, BaseKind, Kernel, Lengthscale};
use crate::sequential::safe::{FunctionModel, SourceTask};

/// The unit-variance Matérn-5/2 kernel written out from its formula.
pub(super) fn matern52(a: &[f64], b: &[f64], ls: &[f64]) -> f64 {
    let r = (a.iter().zip(b).zip(ls))
        .map(|((u, v), l)| ((u - v) / l).powi(2))
        .sum::<f64>()
        .sqrt();
    let s5 = 5f64.sqrt();
    (1.0 + s5 * r + 5.0 / 3.0 * r * r) * (-s5 * r).exp()
}

/// A Matérn-5/2 kernel with ARD lengthscales `ls` and variance `var`.
pub(super) fn matern_kernel(var: f64, ls: &[f64]) -> Kernel {
    let scale = BaseKernel::new(BaseKind::Const).with_var(var).unwrap();
    let m = BaseKernel::new(BaseKind::Matern52)
        .with_lengthscale(Lengthscale::Ard(ls.to_vec()))
        .unwrap();
    Kernel::product(vec![Kernel::Base(scale), Kernel::Base(m)])
}

/// Inverse and log-determinant of a symmetric positive-definite matrix through its
/// eigendecomposition (independent of the Cholesky code under test).
pub(super) fn dense_inverse_logdet(a: &Mat<f64>) -> (Mat<f64>, f64) {
    let n = a.nrows();
    let eig = a.self_adjoint_eigen(Side::Lower).unwrap();
    let values: Vec<f64> = (0..n).map(|i| eig.S()[i]).collect();
    assert!(values[0] > 0.0, "not positive definite: {values:?}");
    let u = eig.U();
    let inv = Mat::from_fn(n, n, |i, j| {
        (0..n).map(|k| u[(i, k)] * u[(j, k)] / values[k]).sum()
    });
    (inv, values.iter().map(|v| v.ln()).sum())
}

/// The posterior mean and variance `k*ᵀ Ω⁻¹ y`, `k** − k*ᵀ Ω⁻¹ k*` from the dense matrices.
pub(super) fn dense_posterior(
    omega: &Mat<f64>,
    cross: &Mat<f64>,
    prior_var: &[f64],
    y: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (inv, _) = dense_inverse_logdet(omega);
    let n = y.len();
    let mean = (0..cross.ncols())
        .map(|j| {
            (0..n)
                .map(|a| {
                    (0..n)
                        .map(|b| cross[(a, j)] * inv[(a, b)] * y[b])
                        .sum::<f64>()
                })
                .sum()
        })
        .collect();
    let var = (0..cross.ncols())
        .map(|j| {
            let q: f64 = (0..n)
                .map(|a| {
                    (0..n)
                        .map(|b| cross[(a, j)] * inv[(a, b)] * cross[(b, j)])
                        .sum::<f64>()
                })
                .sum();
            prior_var[j] - q
        })
        .collect();
    (mean, var)
}

/// `n` deterministic points spread over the unit box `[0, 1]^d` (a Kronecker sequence),
/// shifted by `offset` (mod 1).
pub(super) fn inputs(n: usize, d: usize, offset: f64) -> Mat<f64> {
    let alpha = [0.618_033_988_7, 0.754_877_666_2, 0.569_840_290_9];
    Mat::from_fn(n, d, |i, j| {
        ((i + 1) as f64 * alpha[j % 3] + offset + 0.1 * j as f64).fract()
    })
}

/// Row `i` of `x`.
pub(super) fn row(x: MatRef<'_, f64>, i: usize) -> Vec<f64> {
    (0..x.ncols()).map(|j| x[(i, j)]).collect()
}

/// A smooth test function of standardised size, and a related one (`shift` away).
pub(super) fn target_fn(x: &[f64], shift: f64) -> f64 {
    let s: f64 = x
        .iter()
        .enumerate()
        .map(|(j, v)| (j as f64 + 1.0) * v)
        .sum();
    (2.5 * s).sin() + 0.3 * (3.0 * x[0]).cos() + shift * x[0]
}

/// Values of [`target_fn`] at the rows of `x`, plus a small deterministic "noise".
pub(super) fn values(x: &Mat<f64>, shift: f64) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| target_fn(&row(x.as_ref(), i), shift) + 0.01 * ((i * 7 % 5) as f64 - 2.0))
        .collect()
}

/// A source task on `n` points.
pub(super) fn source(n: usize, d: usize, offset: f64, shift: f64) -> SourceTask {
    let x = inputs(n, d, offset);
    let y = values(&x, shift);
    SourceTask { x, y }
}

/// `a` on top of `b`.
pub(super) fn stack(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows() + b.nrows(), a.ncols(), |i, j| {
        if i < a.nrows() {
            a[(i, j)]
        } else {
            b[(i - a.nrows(), j)]
        }
    })
}

/// Spec §4.10 for a model with fixed hyperparameters: conditioning on more data never
/// increases a posterior variance, and observing the posterior mean at a new point moves no
/// mean. `model` already holds the hyperparameters; every update keeps them (`refit = false`).
pub(super) fn check_conditioning_invariants(model: &mut dyn FunctionModel, d: usize) {
    let x = inputs(8, d, 0.0);
    let y = values(&x, 0.0);
    let test = inputs(25, d, 0.37);
    model.update(x.as_ref(), &y, false, 0).unwrap();
    let before = model.predict(test.as_ref()).unwrap();

    let more = inputs(6, d, 0.71);
    let x1 = stack(&x, &more);
    let y1: Vec<f64> = y.iter().copied().chain(values(&more, 0.0)).collect();
    model.update(x1.as_ref(), &y1, false, 0).unwrap();
    let after = model.predict(test.as_ref()).unwrap();
    let mut largest_drop = 0.0f64;
    for (b, a) in before.var.iter().zip(&after.var) {
        assert!(*a <= b + 1e-12, "a variance grew: {b} → {a}");
        largest_drop = largest_drop.max(b - a);
    }
    // The new data are close to some test points: the check above is not vacuous.
    assert!(largest_drop > 1e-3, "{largest_drop}");

    let new = inputs(1, d, 0.123);
    let at_new = model.predict(new.as_ref()).unwrap().mean[0];
    let x2 = stack(&x1, &new);
    let y2: Vec<f64> = y1.iter().copied().chain([at_new]).collect();
    model.update(x2.as_ref(), &y2, false, 0).unwrap();
    let last = model.predict(test.as_ref()).unwrap();
    for i in 0..test.nrows() {
        assert!(
            (last.mean[i] - after.mean[i]).abs() <= 1e-10 * (1.0 + after.mean[i].abs()),
            "mean {i} moved: {} → {}",
            after.mean[i],
            last.mean[i]
        );
        assert!(last.var[i] <= after.var[i] + 1e-12);
    }
}
