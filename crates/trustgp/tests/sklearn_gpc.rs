//! External agreement: binary Laplace GP classification (logit link) against scikit-learn's
//! `GaussianProcessClassifier(optimizer=None)` at fixed hyperparameters
//! (`fixtures/sklearn_gpc.json`, written by `crates/experiments/peers/gpc_sklearn_fixture.py`).
//!
//! scikit-learn's labels 0/1 are trustgp's −1/+1; its kernel `ConstantKernel(c) * RBF(ℓ)` is
//! `const(var=c) * se(ls=ℓ)`. The approximate log marginal likelihood and the latent
//! predictions agree to rounding; `predict_proba` agrees exactly with trustgp's
//! [`LogitIntegral::ErfMixture`] (the same approximation) and, by quadrature, to the accuracy
//! of that approximation.

use std::path::PathBuf;

use faer::Mat;
use serde_json::Value;
use trustgp::kernels::Kernel;
use trustgp::likelihoods::{Link, LogitIntegral};
use trustgp::models::classification::laplace::laplace_evidence;
use trustgp::models::classification::BinaryLaplace;

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sklearn_gpc.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn matrix(v: &Value) -> Mat<f64> {
    let rows: Vec<Vec<f64>> = v.as_array().unwrap().iter().map(floats).collect();
    Mat::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn kernel(case: &Value) -> Kernel {
    let ls = floats(&case["lengthscales"]);
    let ls = if ls.len() == 1 {
        format!("{}", ls[0])
    } else {
        format!(
            "[{}]",
            ls.iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let c = case["constant"].as_f64().unwrap();
    Kernel::parse(&format!("const(var={c}) * se(ls={ls})")).unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn binary_laplace_logit_agrees_with_scikit_learn() {
    let cases = fixture();
    for case in cases["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let x = matrix(&case["x_train"]);
        let xs = matrix(&case["x_test"]);
        let y: Vec<f64> = floats(&case["y_train"])
            .iter()
            .map(|&v| if v == 1.0 { 1.0 } else { -1.0 })
            .collect();
        let k = kernel(case);
        let mut model = BinaryLaplace::at(x.as_ref(), &y, k.clone(), Link::Logit).unwrap();
        let lml = case["lml"].as_f64().unwrap();
        assert!(
            rel(model.lml(), lml) < 1e-6,
            "{name}: lml {} vs {lml}",
            model.lml()
        );
        // The fit's objective (the log-concave form, B = I + W½KW½) agrees with the model's
        // (the generic factored form) to rounding.
        let direct = laplace_evidence(&k, x.as_ref(), &y, Link::Logit, None, false).unwrap();
        assert!(
            rel(direct.value, model.lml()) < 1e-12,
            "{name}: {} vs {}",
            direct.value,
            model.lml()
        );

        let latent = model.predict_latent(xs.as_ref()).unwrap();
        for (i, (m, v)) in floats(&case["latent_mean"])
            .iter()
            .zip(floats(&case["latent_var"]))
            .enumerate()
        {
            assert!((latent.mean[i] - m).abs() < 1e-7, "{name}: mean {i}");
            assert!((latent.var[i] - v).abs() < 1e-7, "{name}: var {i}");
        }
        let sk = floats(&case["proba"]);
        let quadrature = model.predict_proba(xs.as_ref()).unwrap();
        let lik = model
            .likelihood()
            .with_logit_integral(LogitIntegral::ErfMixture);
        model.set_likelihood(lik).unwrap();
        let mixture = model.predict_proba(xs.as_ref()).unwrap();
        let mut worst = 0.0f64;
        for i in 0..sk.len() {
            assert!((mixture[i] - sk[i]).abs() < 1e-7, "{name}: mixture {i}");
            // scikit-learn's approximation is within 2e-3 of the integral.
            worst = worst.max((quadrature[i] - sk[i]).abs());
            assert!(
                (quadrature[i] - sk[i]).abs() < 2e-3,
                "{name}: quadrature {i}"
            );
        }
        eprintln!(
            "{name}: lml rel err {:.1e}, worst |quadrature − sklearn| {worst:.1e}",
            rel(model.lml(), lml)
        );
    }
}
