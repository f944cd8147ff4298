//! Observation noise comes from the likelihood: for every model kind, through the
//! [`Regressor`], the prediction of `y` is the model's likelihood applied to its posterior
//! marginals, and the latent prediction is the posterior marginals. The expected numbers are
//! computed here from the [`Posterior`] interface and the closed-form predictive of each
//! likelihood (Gaussian: `v + σ²`; Student-t: `v + s² ν/(ν − 2)`), not from the code under test.

use faer::{Mat, MatRef};
use trustgp::data::{read_csv_str, Dataset};
use trustgp::estimators::regressor::{Fitted, SingleOutput};
use trustgp::estimators::{ModelKind, OutputPrediction, Regressor, RegressorConfig};
use trustgp::models::approximate::ApproxModel;
use trustgp::posterior::{with_task, Marginals, Posterior};

/// Two correlated outputs of two inputs on 40 rows, with every 7th `y1` shifted by +4.
fn data() -> Dataset {
    let mut s = String::from("a,b,y1,y2\n");
    for i in 0..40 {
        let a = i as f64 * 0.23 - 4.0;
        let b = (i as f64 * 0.9).cos() * 2.0;
        let f = (0.7 * a).sin() + 0.4 * b;
        let noise = 0.1 * ((i * 37 % 11) as f64 - 5.0) / 5.0;
        let shift = if i % 7 == 3 { 4.0 } else { 0.0 };
        s.push_str(&format!(
            "{a},{b},{},{}\n",
            f + noise + shift,
            0.6 * f - 0.3 * a + noise
        ));
    }
    read_csv_str(&s, "mem.csv", &["y1".into(), "y2".into()], None).unwrap()
}

/// Test inputs in original units, inside and outside the training range.
fn test_inputs() -> Mat<f64> {
    Mat::from_fn(9, 2, |i, j| {
        if j == 0 {
            i as f64 * 1.1 - 5.0
        } else {
            (i as f64 * 0.4).sin() * 2.5
        }
    })
}

/// Which closed-form predictive a model's new observations follow.
enum Noise {
    /// Gaussian with variance σ².
    Gaussian(f64),
    /// Student-t with ν degrees of freedom and scale² s².
    StudentT { nu: f64, scale2: f64 },
}

impl Noise {
    /// The variance a new observation adds to the latent variance.
    fn variance(&self) -> f64 {
        match *self {
            Noise::Gaussian(s2) => s2,
            Noise::StudentT { nu, scale2 } => scale2 * nu / (nu - 2.0),
        }
    }
}

/// The latent posterior marginals (standardised units) of output `t` at standardised `xs`,
/// with the observation model read from the fitted parameters.
fn posterior_and_noise(r: &Regressor, t: usize, xs: MatRef<'_, f64>) -> (Marginals, Noise) {
    match &r.fitted {
        Fitted::PerTarget(outputs) => match &outputs[t].gp {
            SingleOutput::Gp(g) => (g.marginals(xs).unwrap(), Noise::Gaussian(g.hyper().noise)),
            SingleOutput::Rcgp(g, _) => (g.marginals(xs).unwrap(), Noise::Gaussian(g.noise()[0])),
            SingleOutput::Approx(ApproxModel::Sparse(g), _) => {
                (g.marginals(xs).unwrap(), Noise::Gaussian(g.noise()))
            }
            SingleOutput::Approx(ApproxModel::Ca(g), _) => {
                (g.marginals(xs).unwrap(), Noise::Gaussian(g.noise()))
            }
            SingleOutput::Approx(ApproxModel::Rrp(g), _) => {
                (g.marginals(xs).unwrap(), Noise::Gaussian(g.noise()))
            }
            SingleOutput::Approx(ApproxModel::Svgp(g, _), _) => {
                let (kind, params) = g.likelihood();
                let names = kind.param_names();
                let at = |name: &str| params[names.iter().position(|n| *n == name).unwrap()];
                let noise = match kind.name() {
                    "gaussian" => Noise::Gaussian(at("noise")),
                    _ => Noise::StudentT {
                        nu: at("nu"),
                        scale2: at("scale2"),
                    },
                };
                (g.marginals(xs).unwrap(), noise)
            }
            SingleOutput::Vbks(v) => {
                let latent = v.mixture.predict(xs, true).unwrap();
                let noise = v.noise();
                // Each kernel's own noise added before mixing (the mixture's y-predictive)
                // equals the latent mixture plus the weighted mean noise.
                let y = v.mixture.predict(xs, false).unwrap();
                for i in 0..xs.nrows() {
                    assert_close(y.var[i], latent.var[i] + noise, 1e-12, "vbks y variance");
                    assert_eq!(y.mean[i], latent.mean[i]);
                }
                (latent, Noise::Gaussian(noise))
            }
        },
        Fitted::Joint(model, _) => {
            let noise = model.noise();
            let s2 = if noise.len() == 1 { noise[0] } else { noise[t] };
            (
                model.marginals(with_task(xs, t).as_ref()).unwrap(),
                Noise::Gaussian(s2),
            )
        }
    }
}

/// `|a − b| ≤ tol · max(|a|, |b|, 1e-300)`.
fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300),
        "{what}: {a} vs {b}"
    );
}

/// Fits `cfg` and checks both predictions of every output against the posterior and the
/// closed-form likelihood; returns the observation models seen.
fn check(cfg: RegressorConfig) -> Vec<Noise> {
    let d = data();
    let r = Regressor::fit(&d, &cfg).unwrap();
    let x = test_inputs();
    let xs = r.standardizer.transform_x(x.as_ref());
    let latent: Vec<OutputPrediction> = r.predict(x.as_ref(), true).unwrap();
    let observed: Vec<OutputPrediction> = r.predict(x.as_ref(), false).unwrap();
    let likelihoods = r.likelihoods().unwrap();
    let outputs = d.n_targets();
    assert_eq!((latent.len(), observed.len()), (outputs, outputs));
    let mut seen = Vec::new();
    for t in 0..outputs {
        let (post, noise) = posterior_and_noise(&r, t, xs.as_ref());
        let name = format!("{:?} output {t}", cfg.model);
        let via_likelihood = likelihoods[t].predict_marginals(&post);
        for i in 0..x.nrows() {
            let mean = r.standardizer.inverse_y_mean(t, post.mean[i]);
            let std = |v: f64| r.standardizer.inverse_y_std(t, v.sqrt());
            // The posterior layer and the models' own predictive code are different
            // algorithms; they agree to rounding.
            assert_close(
                latent[t].mean[i],
                mean,
                1e-9,
                &format!("{name} latent mean {i}"),
            );
            assert_close(
                latent[t].std[i],
                std(post.var[i]),
                1e-9,
                &format!("{name} latent std {i}"),
            );
            assert_close(
                observed[t].mean[i],
                mean,
                1e-9,
                &format!("{name} y mean {i}"),
            );
            let var = post.var[i] + noise.variance();
            assert_close(
                observed[t].std[i],
                std(var),
                1e-9,
                &format!("{name} y std {i}"),
            );
            // The model's likelihood, applied to the posterior, is the same predictive.
            assert_eq!(via_likelihood.mean[i], post.mean[i]);
            assert_close(
                via_likelihood.var[i],
                var,
                1e-14,
                &format!("{name} likelihood {i}"),
            );
        }
        seen.push(noise);
    }
    seen
}

fn config(model: ModelKind) -> RegressorConfig {
    let mut cfg = RegressorConfig {
        model,
        ..RegressorConfig::default()
    };
    // Kernel selection over two candidates, briefly: its likelihood is what is checked.
    cfg.vbks.kernels = "se; se + lin".into();
    cfg.vbks.epochs = Some(2);
    cfg
}

#[test]
fn every_gaussian_model_predicts_y_through_its_gaussian_likelihood() {
    for kind in ModelKind::ALL {
        for noise in check(config(kind)) {
            assert!(
                matches!(noise, Noise::Gaussian(s2) if s2 > 0.0),
                "{kind:?} has a Gaussian likelihood"
            );
        }
    }
}

#[test]
fn student_t_svgp_predicts_y_with_the_student_t_variance() {
    let mut cfg = config(ModelKind::Svgp);
    cfg.approx.student_t = true;
    let seen = check(cfg);
    assert_eq!(seen.len(), 2);
    for noise in seen {
        assert!(
            matches!(noise, Noise::StudentT { nu, scale2 } if nu > 2.0 && scale2 > 0.0),
            "a Student-t output with a finite predictive variance"
        );
    }
}

#[test]
fn shared_noise_gives_every_output_the_same_likelihood() {
    let mut cfg = config(ModelKind::Mogp);
    cfg.shared_noise = true;
    let seen = check(cfg);
    let s2: Vec<f64> = seen.iter().map(Noise::variance).collect();
    assert_eq!(s2.len(), 2);
    assert_eq!(s2[0], s2[1]);
}
