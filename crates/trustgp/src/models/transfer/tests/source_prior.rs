//! The source-prior stand-in for Rothfuss et al. 2022.

use super::*;
use crate::models::exact::ExactGp;
use crate::models::transfer::{SingleTaskGp, SourcePriorGp, TransferFitOptions};

fn options() -> TransferFitOptions {
    TransferFitOptions {
        restarts: 3,
        seed: 21,
        ..TransferFitOptions::single_task()
    }
}

#[test]
fn hyperparameters_are_sals_fit_on_the_pooled_sources_and_stay_frozen() {
    let sources = vec![source(15, 2, 0.0, 0.2), source(10, 2, 0.4, 0.2)];
    let model = SourcePriorGp::new(sources.clone(), options()).unwrap();
    // SAL's fit (same options and seed) on every source point pooled.
    let pooled_x = stack(&sources[0].x, &sources[1].x);
    let pooled_y: Vec<f64> = sources.iter().flat_map(|s| s.y.clone()).collect();
    let mut sal = SingleTaskGp::new(options());
    sal.update(pooled_x.as_ref(), &pooled_y, true, 21).unwrap();
    assert_eq!(model.hyper(), sal.hyper().unwrap());
    // One source holding the same points gives the same prior.
    let one = SourcePriorGp::new(
        vec![SourceTask {
            x: pooled_x,
            y: pooled_y,
        }],
        options(),
    )
    .unwrap();
    assert_eq!(one.hyper(), model.hyper());

    // Conditioned on the target only, with the frozen values, whatever `refit` says.
    let mut model = model;
    let frozen = model.hyper().clone();
    assert_eq!(model.fit_seconds(), 0.0);
    let e = model
        .predict(sources[0].x.as_ref())
        .unwrap_err()
        .to_string();
    assert!(e.contains("call update"), "{e}");
    let x = inputs(6, 2, 0.8);
    let y = values(&x, 0.0);
    model.update(x.as_ref(), &y, true, 5).unwrap();
    assert_eq!(model.hyper(), &frozen);
    assert_eq!(model.single_task().hyper(), Some(&frozen));
    assert_eq!(model.fit_seconds(), 0.0);
    assert_eq!(model.noise_variance(), frozen.noise);
    let test = inputs(8, 2, 0.15);
    let exact = ExactGp::at(frozen, x.as_ref(), &y, 0.0).unwrap();
    assert_eq!(
        model.predict(test.as_ref()).unwrap(),
        exact.predict(test.as_ref(), true).unwrap()
    );
}

#[test]
fn fixed_hyperparameters_give_the_conditioning_invariants() {
    let mut model = SourcePriorGp::new(vec![source(20, 2, 0.0, 0.0)], options()).unwrap();
    let frozen = model.hyper().clone();
    check_conditioning_invariants(&mut model, 2);
    assert_eq!(model.hyper(), &frozen);
}

#[test]
fn bad_sources_are_errors_that_say_what_is_wrong() {
    let msg = |s: Vec<SourceTask>| SourcePriorGp::new(s, options()).unwrap_err().to_string();
    assert!(msg(vec![]).contains("no source task"));
    let mut bad = vec![source(5, 2, 0.0, 0.0), source(5, 2, 0.3, 0.0)];
    bad[1].y[3] = f64::NAN;
    let e = msg(bad);
    assert!(e.contains("source task 1") && e.contains("row 3"), "{e}");
    let e = msg(vec![source(5, 2, 0.0, 0.0), source(5, 1, 0.3, 0.0)]);
    assert!(e.contains("source task 1 has 1 input columns"), "{e}");
    let model = SourcePriorGp::new(vec![source(5, 2, 0.0, 0.0)], options()).unwrap();
    let mut model = model;
    let e = model
        .update(inputs(3, 3, 0.0).as_ref(), &[0.0; 3], false, 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 columns"), "{e}");
}
