//! Central finite differences of the ELBO (full data and minibatch) in every parameter group:
//! `m̃`, `L̃` (log diagonal), the hyperparameters of a composite ARD kernel, the likelihood's
//! parameters, the mean's, and the inducing inputs.

use faer::{Mat, MatRef};

use super::super::elbo::{evaluate, Need, Rows};
use super::super::layout::Layout;
use super::super::state::{State, Whitened};
use super::*;

fn value(state: &State, x: MatRef<'_, f64>, y: &[f64], rows: Rows<'_>) -> f64 {
    let w = Whitened::new(state).unwrap();
    evaluate(state, &w, x, y, rows, Need::Value).unwrap().value
}

/// Checks every packed gradient entry against a central difference, naming the group.
fn check(state: &State, x: MatRef<'_, f64>, y: &[f64], rows: Rows<'_>) {
    let layout = Layout::new(state, true, true);
    let p0 = layout.pack(state).unwrap();
    let w = Whitened::new(state).unwrap();
    let elbo = evaluate(
        state,
        &w,
        x,
        y,
        rows,
        Need::Gradient {
            z: true,
            variational: true,
        },
    )
    .unwrap();
    assert!((elbo.value - value(state, x, y, rows)).abs() < 1e-12 * elbo.value.abs());
    let grad = layout.pack_grad(state, elbo.grad.as_ref().unwrap());
    assert_eq!(grad.len(), p0.len());
    let m = state.m();
    let sizes = [
        ("m̃", m),
        ("L̃", m * (m + 1) / 2),
        ("kernel", state.kernel.n_params()),
        ("likelihood", state.likelihood.n_params()),
        ("mean", state.mean.n_params()),
        ("Z", m * state.z.ncols()),
    ];
    let groups: Vec<&str> = sizes
        .iter()
        .flat_map(|&(name, k)| std::iter::repeat_n(name, k))
        .collect();
    assert_eq!(groups.len(), p0.len());
    let at = |p: &[f64]| value(&layout.unpack(state, p).unwrap(), x, y, rows);
    let h = 1e-5;
    for (j, group) in groups.iter().enumerate() {
        let (mut up, mut down) = (p0.clone(), p0.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (at(&up) - at(&down)) / (2.0 * h);
        let tol = 1e-6 * grad[j].abs().max(1.0);
        assert!(
            (fd - grad[j]).abs() < tol,
            "{group} (entry {j}): analytic {} vs difference {fd}",
            grad[j]
        );
    }
}

#[test]
fn gaussian_gradient_matches_central_differences() {
    let (x, y) = data(40, 0.3, 21);
    let mean = Mean::Linear {
        w: vec![0.3, -0.2],
        b: 0.1,
    };
    let s = state(SvgpLikelihood::Gaussian, vec![0.15], mean, 6, 22);
    check(&s, x.as_ref(), &y, Rows::All);
    let batch: Vec<usize> = (0..40).filter(|i| i % 3 != 1).collect();
    check(&s, x.as_ref(), &y, Rows::Batch(&batch));
}

/// Over more rows than one block, so that the blocked accumulation is covered too.
#[test]
fn student_t_gradient_matches_central_differences() {
    let (x, mut y) = data(1100, 0.2, 23);
    y[5] += 6.0;
    y[700] -= 4.0;
    let s = state(
        SvgpLikelihood::StudentT,
        vec![3.3, 0.08],
        Mean::Constant { c: 0.2 },
        6,
        24,
    );
    check(&s, x.as_ref(), &y, Rows::All);
    let batch: Vec<usize> = (0..37).map(|i| (i * 29 + 3) % 1100).collect();
    let linear = State {
        mean: Mean::Linear {
            w: vec![-0.1, 0.25],
            b: 0.0,
        },
        ..s
    };
    check(&linear, x.as_ref(), &y, Rows::Batch(&batch));
}

/// A minibatch of fewer rows than inducing points takes the whitened path (the `m × m`
/// statistics accumulated from `A = L⁻¹ K_uf`); its gradient matches central differences too.
#[test]
fn small_batch_gradient_matches_central_differences() {
    let (x, y) = data(30, 0.3, 31);
    let s = state(
        SvgpLikelihood::Gaussian,
        vec![0.2],
        Mean::Constant { c: 0.1 },
        12,
        32,
    );
    let batch: Vec<usize> = vec![3, 17, 8, 25, 0, 11, 29];
    check(&s, x.as_ref(), &y, Rows::Batch(&batch));
}

/// The whitened path (blocks of `b < m` rows) and the `P` path (larger blocks) give the same
/// value, statistics and gradient: the rows `x₇` stacked twice, all 14 as one block (`P`
/// path), against the first 7 as a minibatch scaled by 14/7 (whitened path) — both are
/// `2·(data term of x₇) − KL`.
#[test]
fn whitened_and_p_paths_agree() {
    let (x7, y7) = data(7, 0.3, 33);
    let x = Mat::from_fn(14, 2, |i, c| x7[(i % 7, c)]);
    let y: Vec<f64> = (0..14).map(|i| y7[i % 7]).collect();
    for (lik, params) in [
        (SvgpLikelihood::Gaussian, vec![0.2]),
        (SvgpLikelihood::StudentT, vec![4.0, 0.1]),
    ] {
        let s = state(lik, params, Mean::Constant { c: 0.1 }, 12, 34);
        let w = Whitened::new(&s).unwrap();
        let need = Need::Gradient {
            z: true,
            variational: true,
        };
        let batch: Vec<usize> = (0..7).collect();
        let small = evaluate(&s, &w, x.as_ref(), &y, Rows::Batch(&batch), need).unwrap();
        let w = Whitened::new(&s).unwrap();
        let large = evaluate(&s, &w, x.as_ref(), &y, Rows::All, need).unwrap();
        assert!((small.value - large.value).abs() < 1e-10 * large.value.abs());
        assert!(max_rel(&small.h, &large.h) < 1e-10);
        let flat = |a: &Mat<f64>| {
            (0..a.ncols())
                .flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>())
                .collect::<Vec<f64>>()
        };
        assert!(max_rel(&flat(&small.g), &flat(&large.g)) < 1e-10);
        let layout = Layout::new(&s, true, true);
        let gs = layout.pack_grad(&s, small.grad.as_ref().unwrap());
        let gl = layout.pack_grad(&s, large.grad.as_ref().unwrap());
        assert!(max_rel(&gs, &gl) < 1e-10, "{lik:?}");
    }
}
