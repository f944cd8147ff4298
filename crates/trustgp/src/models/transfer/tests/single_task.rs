//! SAL's single-task GP.

use faer::Mat;

use super::*;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::transfer::{SingleTaskGp, TransferFitOptions};

fn fixed_hyper() -> GpHyper {
    GpHyper {
        kernel: matern_kernel(1.7, &[0.3, 0.5]),
        mean: Mean::Zero,
        noise: 0.02,
    }
}

/// Few restarts keep the tests fast; the scheme is the same.
fn options() -> TransferFitOptions {
    TransferFitOptions {
        restarts: 3,
        ..TransferFitOptions::single_task()
    }
}

#[test]
fn conditions_as_the_exact_gp_and_the_explicit_formulas_at_fixed_hyperparameters() {
    let h = fixed_hyper();
    let x = inputs(15, 2, 0.0);
    let y = values(&x, 0.0);
    let test = inputs(7, 2, 0.41);
    let mut gp = SingleTaskGp::new(options());
    gp.set_hyper(h.clone()).unwrap();
    gp.update(x.as_ref(), &y, false, 0).unwrap();
    let ours = gp.predict(test.as_ref()).unwrap();
    // The repo's exact GP at the same hyperparameters: the very same computation.
    let exact = ExactGp::at(h.clone(), x.as_ref(), &y, 0.0).unwrap();
    assert_eq!(ours, exact.predict(test.as_ref(), true).unwrap());
    // The formulas of §2.2 with the kernel written out and a dense inverse.
    let (n, m) = (x.nrows(), test.nrows());
    let k = |a: &[f64], b: &[f64]| 1.7 * matern52(a, b, &[0.3, 0.5]);
    let omega = Mat::from_fn(n, n, |i, j| {
        k(&row(x.as_ref(), i), &row(x.as_ref(), j)) + if i == j { 0.02 } else { 0.0 }
    });
    let cross = Mat::from_fn(n, m, |i, j| k(&row(x.as_ref(), i), &row(test.as_ref(), j)));
    let (mean, var) = dense_posterior(&omega, &cross, &vec![1.7; m], &y);
    for j in 0..m {
        assert!(
            (ours.mean[j] - mean[j]).abs() < 1e-10,
            "{} vs {}",
            ours.mean[j],
            mean[j]
        );
        assert!(
            (ours.var[j] - var[j]).abs() < 1e-10,
            "{} vs {}",
            ours.var[j],
            var[j]
        );
    }
    assert_eq!(gp.noise_variance(), 0.02);
}

#[test]
fn starts_from_the_papers_initial_values() {
    let x = inputs(10, 3, 0.0);
    let y = values(&x, 0.0);
    let mut gp = SingleTaskGp::new(TransferFitOptions::single_task());
    assert_eq!(gp.noise_variance(), 1e-4);
    gp.update(x.as_ref(), &y, false, 0).unwrap();
    let h = gp.hyper().unwrap();
    assert_eq!(h.mean, Mean::Zero);
    assert_eq!(h.noise, 0.01f64.powi(2));
    assert_eq!(h.kernel, matern_kernel(1.0, &[0.2; 3]));
    assert_eq!(
        h.kernel.to_string().replace(' ', ""),
        "const(var=1)*matern52(ls=[0.2,0.2,0.2])"
    );
}

#[test]
fn conditioning_more_data_never_raises_a_variance_and_observing_the_mean_moves_no_mean() {
    let mut gp = SingleTaskGp::new(options());
    gp.set_hyper(fixed_hyper()).unwrap();
    check_conditioning_invariants(&mut gp, 2);
    assert_eq!(gp.hyper(), Some(&fixed_hyper()));
}

#[test]
fn a_refit_fits_well_and_is_no_worse_than_its_warm_start_or_the_initial_values() {
    let x = inputs(30, 2, 0.0);
    let y = values(&x, 0.0);
    let mut gp = SingleTaskGp::new(options());
    gp.update(x.as_ref(), &y, true, 11).unwrap();
    assert!(gp.fit_seconds() > 0.0);
    let first = gp.hyper().unwrap().clone();
    let lml = gp.exact().unwrap().lml();
    let init = ExactGp::at(initial(2), x.as_ref(), &y, 0.0).unwrap();
    assert!(lml >= init.lml(), "{lml} < {}", init.lml());
    // Good predictions of the smooth function away from the data.
    let test = inputs(40, 2, 0.29);
    let p = gp.predict(test.as_ref()).unwrap();
    let rmse = ((0..40)
        .map(|i| (p.mean[i] - target_fn(&row(test.as_ref(), i), 0.0)).powi(2))
        .sum::<f64>()
        / 40.0)
        .sqrt();
    assert!(rmse < 0.15, "rmse {rmse}");
    // The same optimum as the repo's exact-GP fit with its own (wider) restarts.
    let opts = crate::fit::FitOptions {
        restarts: 10,
        ..Default::default()
    };
    let reference = ExactGp::fit(x.as_ref(), &y, initial(2), &opts).unwrap();
    assert!(lml >= reference.lml() - 1e-6, "{lml} < {}", reference.lml());
    // With more data, the refit starts from the last optimum: it ends at least as high.
    let more = inputs(10, 2, 0.5);
    let x1 = stack(&x, &more);
    let y1: Vec<f64> = y.iter().copied().chain(values(&more, 0.0)).collect();
    let warm = ExactGp::at(first, x1.as_ref(), &y1, 0.0).unwrap().lml();
    gp.update(x1.as_ref(), &y1, true, 12).unwrap();
    let refit = gp.exact().unwrap().lml();
    assert!(refit >= warm, "{refit} < {warm}");
}

/// The initial hyperparameters of SAL for `d` inputs.
fn initial(d: usize) -> GpHyper {
    GpHyper {
        kernel: matern_kernel(1.0, &vec![0.2; d]),
        mean: Mean::Zero,
        noise: 1e-4,
    }
}

#[test]
fn without_a_refit_the_hyperparameters_stay_bit_identical_and_no_time_is_counted() {
    let x = inputs(20, 2, 0.0);
    let y = values(&x, 0.0);
    let mut gp = SingleTaskGp::new(options());
    gp.update(x.as_ref(), &y, true, 3).unwrap();
    let fitted = gp.hyper().unwrap().clone();
    assert!(gp.fit_seconds() > 0.0);
    let more = inputs(25, 2, 0.3);
    let ym = values(&more, 0.0);
    gp.update(more.as_ref(), &ym, false, 4).unwrap();
    assert_eq!(gp.hyper().unwrap(), &fitted);
    assert_eq!(gp.fit_seconds(), 0.0);
    let exact = ExactGp::at(fitted.clone(), more.as_ref(), &ym, 0.0).unwrap();
    let test = inputs(5, 2, 0.9);
    assert_eq!(
        gp.predict(test.as_ref()).unwrap(),
        exact.predict(test.as_ref(), true).unwrap()
    );
    // A refit on the new data does move them.
    gp.update(more.as_ref(), &ym, true, 4).unwrap();
    assert_ne!(gp.hyper().unwrap(), &fitted);
}

#[test]
fn seeded_fits_are_bit_identical() {
    let x = inputs(25, 2, 0.0);
    let y = values(&x, 0.0);
    let test = inputs(9, 2, 0.6);
    let fit = |seed: u64| {
        let mut gp = SingleTaskGp::new(options());
        gp.update(x.as_ref(), &y, true, seed).unwrap();
        (
            gp.hyper().unwrap().clone(),
            gp.predict(test.as_ref()).unwrap(),
        )
    };
    let (h1, p1) = fit(5);
    let (h2, p2) = fit(5);
    assert_eq!(h1, h2);
    assert_eq!(p1, p2);
}

#[test]
fn bad_input_is_an_error_that_says_what_is_wrong() {
    let x = inputs(6, 2, 0.0);
    let y = values(&x, 0.0);
    let mut gp = SingleTaskGp::new(options());
    let msg = |r: Result<(), crate::models::ModelError>| r.unwrap_err().to_string();
    let e = gp.predict(x.as_ref()).unwrap_err().to_string();
    assert!(e.contains("call update"), "{e}");
    let mut bad = x.clone();
    bad[(3, 1)] = f64::NAN;
    let e = msg(gp.update(bad.as_ref(), &y, true, 0));
    assert!(e.contains("row 3, column 1"), "{e}");
    let mut yb = y.clone();
    yb[2] = f64::INFINITY;
    let e = msg(gp.update(x.as_ref(), &yb, true, 0));
    assert!(e.contains("row 2"), "{e}");
    let e = msg(gp.update(x.as_ref(), &y[..5], false, 0));
    assert!(e.contains("6 input rows but 5 targets"), "{e}");
    let e = msg(gp.update(Mat::<f64>::zeros(0, 2).as_ref(), &[], false, 0));
    assert!(e.contains("at least one row"), "{e}");
    // Nothing was kept from the failed calls.
    assert!(gp.hyper().is_none() && gp.exact().is_none());
    gp.update(x.as_ref(), &y, false, 0).unwrap();
    let e = msg(gp.update(inputs(6, 3, 0.0).as_ref(), &y, false, 0));
    assert!(e.contains("3 columns") && e.contains("2 inputs"), "{e}");
    let e = gp
        .predict(inputs(2, 1, 0.0).as_ref())
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 columns"), "{e}");
    let mut t = inputs(2, 2, 0.0);
    t[(1, 0)] = f64::NAN;
    let e = gp.predict(t.as_ref()).unwrap_err().to_string();
    assert!(e.contains("row 1, column 0"), "{e}");
    let e = msg(gp.set_hyper(GpHyper {
        noise: 0.0,
        ..fixed_hyper()
    }));
    assert!(e.contains("noise"), "{e}");
    let e = msg(gp.set_hyper(GpHyper {
        kernel: matern_kernel(1.0, &[0.2; 3]),
        ..fixed_hyper()
    }));
    assert!(e.contains('3') && e.contains('2'), "{e}");
    let mut silly = SingleTaskGp::new(TransferFitOptions {
        initial_lengthscale: -1.0,
        ..options()
    });
    let e = msg(silly.update(x.as_ref(), &y, true, 0));
    assert!(e.contains("initial_lengthscale"), "{e}");
}
