//! Standardised fits are equivariant to the scale of the data: inputs and targets ×1e-300 or
//! ×1e200 give the fit of the original data (predictions scaled by the same factor), and a
//! target of 1e308 gives a usable model with finite predictions.

use faer::{Mat, MatRef};
use trustgp::data::Standardizer;
use trustgp::fit::FitOptions;
use trustgp::kernels::Kernel;
use trustgp::means::Mean;
use trustgp::models::exact::ExactGp;
use trustgp::models::hyper::GpHyper;

/// A deterministic smooth 2-D problem.
fn data(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        ((i * (7 + 5 * j) + 3 * j) % 23) as f64 / 6.0 - 1.9
    });
    let y = (0..n)
        .map(|i| 2.0 * (1.3 * x[(i, 0)]).sin() + x[(i, 1)] + 0.1 * ((i * 13) % 7) as f64)
        .collect();
    (x, y)
}

/// Standardise, fit `const * se` with a zero mean, and predict noisy observations at `x`
/// in original units (means and stds).
fn fit_and_predict(x: MatRef<'_, f64>, y: &[f64]) -> (ExactGp, Vec<f64>, Vec<f64>) {
    let ym = Mat::from_fn(y.len(), 1, |i, _| y[i]);
    let (st, constant) = Standardizer::fit(x, ym.as_ref()).unwrap();
    assert!(constant.is_empty(), "{constant:?}");
    let xs = st.transform_x(x);
    let ys = st.transform_y(ym.as_ref());
    let ys: Vec<f64> = (0..y.len()).map(|i| ys[(i, 0)]).collect();
    let init = GpHyper {
        kernel: Kernel::parse("const * se").unwrap(),
        mean: Mean::Zero,
        noise: 0.1,
    };
    let gp = ExactGp::fit(xs.as_ref(), &ys, init, &FitOptions::default()).unwrap();
    let p = gp.predict(xs.as_ref(), false).unwrap();
    let mean = p.mean.iter().map(|&m| st.inverse_y_mean(0, m)).collect();
    let std = p
        .var
        .iter()
        .map(|&v| st.inverse_y_std(0, v.sqrt()))
        .collect();
    (gp, mean, std)
}

#[test]
fn a_fit_on_data_at_any_scale_is_the_fit_of_the_original_data() {
    let (x, y) = data(40);
    let (gp, mean, std) = fit_and_predict(x.as_ref(), &y);
    for factor in [1e-300, 1e200] {
        let xf = Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] * factor);
        let yf: Vec<f64> = y.iter().map(|v| v * factor).collect();
        let (g, m, s) = fit_and_predict(xf.as_ref(), &yf);
        // The standardised data agree to rounding (1e-16), so does the fit.
        assert!(
            (g.lml() - gp.lml()).abs() <= 1e-9 * gp.lml().abs(),
            "×{factor:e}: LML {} vs {}",
            g.lml(),
            gp.lml()
        );
        let (a, b) = (g.hyper().to_vec(), gp.hyper().to_vec());
        for (u, v) in a.iter().zip(&b) {
            assert!(
                (u - v).abs() <= 1e-6 * (1.0 + v.abs()),
                "×{factor:e}: {a:?} vs {b:?}"
            );
        }
        for i in 0..y.len() {
            assert!((m[i] / factor - mean[i]).abs() <= 1e-6 * (1.0 + mean[i].abs()));
            assert!((s[i] / factor - std[i]).abs() <= 1e-6 * std[i]);
        }
    }
}

#[test]
fn a_target_of_1e308_gives_finite_predictions() {
    let (x, mut y) = data(40);
    y[5] = 1e308;
    let (gp, mean, std) = fit_and_predict(x.as_ref(), &y);
    assert!(gp.lml().is_finite());
    assert!(
        mean.iter().chain(&std).all(|v| v.is_finite()),
        "{mean:?} {std:?}"
    );
    // The outlier dominates the scale: its own prediction lies between the others and it.
    assert!(mean[5] > 0.0 && mean[5] <= 1e308, "{}", mean[5]);
}
