//! Binary classifiers through the estimators: sampled soundness of the data-units bounds of
//! both classes' probabilities and latent moments (10⁵ points of the box), against the models'
//! own predictions (Gauss–Hermite quadrature for the logit, closed form for the probit).

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::estimators::classifier::ClassifierModel;
use crate::estimators::{Classifier, ClassifierOptions};
use crate::verify::bnb::BnbOptions;
use crate::verify::classification::verify_classifier;
use crate::verify::link::BinaryLink;
use crate::verify::quantity::Quantity;

/// Two moons-ish classes in data units far from standardised (offsets and scales), so that a
/// wrong box mapping shows.
fn data(n: usize, seed: u64) -> (Mat<f64>, Vec<String>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x: Mat<f64> = Mat::from_fn(n, 2, |_, j| {
        if j == 0 {
            rng.random_range(0.0..10.0)
        } else {
            50.0 + rng.random_range(-3.0..3.0)
        }
    });
    let labels = (0..n)
        .map(|i| {
            let s = (x[(i, 0)] * 0.7).sin() + (x[(i, 1)] - 50.0) * 0.4;
            if s + rng.random_range(-0.3..0.3) > 0.0 {
                "up".to_string()
            } else {
                "down".to_string()
            }
        })
        .collect();
    (x, labels)
}

fn fit(likelihood: &str, inference: &str) -> Classifier {
    let (x, labels) = data(50, 3);
    let cfg = ClassifierOptions {
        likelihood: Some(likelihood.into()),
        inference: Some(inference.into()),
        optimize: true,
        standardize: true,
        ..ClassifierOptions::default()
    }
    .check()
    .unwrap();
    Classifier::fit(x.as_ref(), &labels, &["a".into(), "b".into()], "t", &cfg).unwrap()
}

#[test]
fn probability_and_latent_bounds_hold_at_sampled_points() {
    let options = BnbOptions {
        tolerance: 1e-2,
        // Soundness is what this test checks, at whatever gap the search stops; closing the
        // gap to ε is checked on hand-built forms (`bnb` tests), where it is cheap.
        max_iterations: 300,
        ..BnbOptions::default()
    };
    for (likelihood, inference) in [("logit", "laplace"), ("probit", "ep")] {
        let clf = fit(likelihood, inference);
        assert_eq!(clf.classes, ["down", "up"]);
        let ClassifierModel::Binary(model) = &clf.model else {
            panic!("two classes give a binary model")
        };
        let centre = [4.0, 50.5];
        let radius = 0.8;
        let mut rng = StdRng::seed_from_u64(9);
        let m = 100_000;
        let xs = Mat::from_fn(m, 2, |_, j| centre[j] + rng.random_range(-radius..=radius));
        let proba = clf.predict_proba(xs.as_ref()).unwrap();
        let latent = model
            .linear_gaussian()
            .marginals(clf.standardizer.transform_x(xs.as_ref()).as_ref())
            .unwrap();
        // The reference quadrature (logit) is accurate to ~1e-10; the probit is closed form.
        let slack = if likelihood == "logit" { 1e-9 } else { 1e-12 };
        for class in [0, 1] {
            let sign = if class == 1 { 1.0 } else { -1.0 };
            for quantity in [
                Quantity::Probability(BinaryLink::Probit),
                Quantity::Mean,
                Quantity::Variance,
            ] {
                let v = verify_classifier(&clf, class, quantity, &centre, radius, None, &options)
                    .unwrap();
                assert!(v.lower <= v.min_found && v.max_found <= v.upper);
                assert!(v.gap.is_finite() && v.gap >= 0.0, "gap {}", v.gap);
                for i in 0..m {
                    let q = match quantity {
                        Quantity::Probability(_) => proba[(i, class)],
                        Quantity::Mean => sign * latent.mean[i],
                        Quantity::Variance => latent.var[i],
                    };
                    assert!(
                        v.lower - slack <= q && q <= v.upper + slack,
                        "{inference} class {class} {quantity:?}: {q} outside [{}, {}]",
                        v.lower,
                        v.upper
                    );
                }
                let inside = |x: &[f64]| (0..2).all(|j| (x[j] - centre[j]).abs() <= radius + 1e-12);
                assert!(inside(&v.argmin) && inside(&v.argmax));
            }
        }
    }
}

#[test]
fn the_two_classes_mirror_each_other() {
    let clf = fit("logit", "laplace");
    let options = BnbOptions::default();
    let q = Quantity::Probability(BinaryLink::Logistic);
    let a = verify_classifier(&clf, 0, q, &[2.0, 49.0], 0.5, None, &options).unwrap();
    let b = verify_classifier(&clf, 1, q, &[2.0, 49.0], 0.5, None, &options).unwrap();
    assert!((a.lower - (1.0 - b.upper)).abs() < 1e-10);
    assert!((a.upper - (1.0 - b.lower)).abs() < 1e-10);
    assert_eq!(a.argmin, b.argmax);
    assert!(verify_classifier(&clf, 2, q, &[2.0, 49.0], 0.5, None, &options).is_err());
    assert!(verify_classifier(&clf, 1, q, &[2.0], 0.5, None, &options).is_err());
}
