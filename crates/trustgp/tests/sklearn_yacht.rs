//! External agreement: the exact GP against scikit-learn 1.9.1 on UCI Yacht split 0
//! (`fixtures/sklearn_yacht_split0.json`, copied from `../shared/reference/`).
//!
//! Conventions of the reference: inputs and target z-scored with the training rows' mean and
//! population std; kernel `c · RBF(ℓ, ARD) + WhiteKernel(σ²)`, theta = ln of (c, ℓ₁…ℓ₆, σ²);
//! scikit-learn adds alpha = 1e-10 to the training diagonal; the reported std is that of a new
//! noisy observation.

use std::path::PathBuf;

use faer::Mat;
use serde_json::Value;
use trustgp::data::{read_csv, read_split_file, Standardizer};
use trustgp::fit::FitOptions;
use trustgp::kernels::Kernel;
use trustgp::linalg::Parallelism;
use trustgp::means::Mean;
use trustgp::models::exact::{log_marginal_likelihood, ExactGp};
use trustgp::models::hyper::GpHyper;

const SKLEARN_ALPHA: f64 = 1e-10;

fn repo_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

struct Yacht {
    x_train: Mat<f64>,
    y_train: Vec<f64>,
    x_test: Mat<f64>,
}

fn yacht() -> Yacht {
    let data = read_csv(
        &repo_file("../../data/uci_yacht/data.csv"),
        &["residuary_resistance".to_string()],
        None,
    )
    .unwrap();
    let split =
        read_split_file(&repo_file("tests/fixtures/yacht_split0.csv"), 0, data.n()).unwrap();
    let train = data.select_rows(&split.train);
    let test = data.select_rows(&split.test);
    let (st, _) = Standardizer::fit(train.x.as_ref(), train.y.as_ref()).unwrap();
    let ys = st.transform_y(train.y.as_ref());
    Yacht {
        x_train: st.transform_x(train.x.as_ref()),
        y_train: (0..train.n()).map(|i| ys[(i, 0)]).collect(),
        x_test: st.transform_x(test.x.as_ref()),
    }
}

fn reference() -> Value {
    let text =
        std::fs::read_to_string(repo_file("tests/fixtures/sklearn_yacht_split0.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The hyperparameters of a scikit-learn theta vector ln(c, ℓ₁…ℓ₆, σ²).
fn hyper_from_theta(theta: &[f64], x: &Mat<f64>) -> GpHyper {
    let ls: Vec<String> = theta[1..7]
        .iter()
        .map(|t| format!("{:e}", t.exp()))
        .collect();
    let expr = format!(
        "const(var={:e}) * se(ls=[{}])",
        theta[0].exp(),
        ls.join(",")
    );
    let mut kernel = Kernel::parse(&expr).unwrap();
    kernel.initialize(x.as_ref()).unwrap();
    // Set exactly (the printed values above may lose the last bit).
    kernel.set_log_params(&theta[..7]).unwrap();
    GpHyper {
        kernel,
        mean: Mean::Zero,
        noise: theta[7].exp(),
    }
}

fn assert_rel(a: f64, b: f64, tol: f64, what: &str) {
    let rel = (a - b).abs() / b.abs().max(1e-300);
    assert!(
        rel <= tol,
        "{what}: ours {a} vs scikit-learn {b} (relative {rel:.2e})"
    );
}

#[test]
fn lml_and_gradient_match_sklearn_at_fixed_hyperparameters() {
    let y = yacht();
    let r = reference();
    let fixed = &r["fixed"];
    let theta = floats(&fixed["theta_log_params"]);
    let h = hyper_from_theta(&theta, &y.x_train);
    assert_eq!(y.x_train.nrows(), 277);
    let lml = log_marginal_likelihood(
        &h,
        y.x_train.as_ref(),
        &y.y_train,
        SKLEARN_ALPHA,
        Parallelism::Sequential,
        true,
    )
    .unwrap();
    assert_rel(lml.value, fixed["lml"].as_f64().unwrap(), 1e-10, "lml");
    let g_ref = floats(&fixed["lml_grad_wrt_log_params"]);
    assert_eq!(lml.grad.len(), g_ref.len());
    for (j, (a, b)) in lml.grad.iter().zip(&g_ref).enumerate() {
        // scikit-learn's WhiteKernel gradient is σ² ∂/∂σ², without the alpha on the diagonal,
        // exactly as ours; every entry should agree to rounding.
        assert_rel(*a, *b, 1e-8, &format!("gradient entry {j}"));
    }
}

#[test]
fn predictions_match_sklearn_at_fixed_and_optimised_hyperparameters() {
    let y = yacht();
    let r = reference();
    for key in ["fixed", "optimised"] {
        let case = &r[key];
        let h = hyper_from_theta(&floats(&case["theta_log_params"]), &y.x_train);
        let gp = ExactGp::at(h, y.x_train.as_ref(), &y.y_train, SKLEARN_ALPHA).unwrap();
        let p = gp.predict(y.x_test.as_ref(), false).unwrap();
        for (i, m) in floats(&case["test_mean_first10"]).iter().enumerate() {
            assert_rel(p.mean[i], *m, 1e-8, &format!("{key} test mean {i}"));
        }
        for (i, s) in floats(&case["test_std_first10"]).iter().enumerate() {
            assert_rel(p.var[i].sqrt(), *s, 1e-8, &format!("{key} test std {i}"));
        }
    }
}

#[test]
fn fit_from_the_same_start_reaches_at_least_sklearns_optimum() {
    let y = yacht();
    let r = reference();
    let h = hyper_from_theta(&floats(&r["fixed"]["theta_log_params"]), &y.x_train);
    let gp = ExactGp::fit(
        y.x_train.as_ref(),
        &y.y_train,
        h,
        &FitOptions {
            extra_diag: SKLEARN_ALPHA,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let target = r["optimised"]["lml"].as_f64().unwrap();
    assert!(
        gp.lml() >= target - 1e-3,
        "fitted lml {} < scikit-learn's {target}",
        gp.lml()
    );
}
