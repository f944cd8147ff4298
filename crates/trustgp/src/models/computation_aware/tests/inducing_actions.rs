//! Dense inducing-point actions `S = k(X, Z)` (spec §2.5, §3.1 "Dense actions") against the
//! dense reference, their gradient through `S`, fitting and model parts; and the streaming of
//! more rows than one chunk holds, for both kinds of actions.

use faer::Mat;

use super::dense::{dense_actions, Dense};
use super::gradients::{check, check_entries};
use super::{entries, kernel, model_with, problem, random_blocks, rebuilt, rel_err, test_inputs};
use crate::kernels::Kernel;
use crate::models::computation_aware::action_set::ActionSet;
use crate::models::computation_aware::actions::BlockActions;
use crate::models::computation_aware::elbo::State;
use crate::models::computation_aware::likelihood::Weighting;
use crate::models::computation_aware::{ActionKind, Actions, CaConfig, CaGp};
use crate::models::inducing::InducingInit;
use crate::models::ModelError;

const C: f64 = 0.8;

/// The model with inducing-point actions at the inputs `z` and the parameters of
/// [`super::model`] (noise 0.2, mean 0.3, β = 1).
fn inducing_model(x: &Mat<f64>, y: &[f64], z: Mat<f64>, robust: bool) -> CaGp {
    model_with(x, y, Actions::Inducing(z), robust, C)
}

#[test]
fn inducing_actions_equal_the_dense_reference() {
    let (x, y) = problem(23, 50, true);
    let z = test_inputs(5, 51);
    let xs = test_inputs(6, 52);
    let s = kernel().cross(x.as_ref(), z.as_ref());
    for robust in [true, false] {
        let gp = inducing_model(&x, &y, z.clone(), robust);
        let dense = Dense::new(&x, &y, &kernel(), 0.2, 0.3, robust.then_some((1.0, C)));
        let (mean, cov) = gp.predict_joint(xs.as_ref());
        let (mean_ref, cov_ref) = dense.posterior(Some(&s), &xs);
        assert!(rel_err(&mean, &mean_ref) < 1e-8, "robust {robust}");
        assert!(rel_err(&entries(&cov), &entries(&cov_ref)) < 1e-8);
        // The dense KL-based ELBO and the spec's closed form with a dense log det(SᵀDS).
        for elbo_ref in [dense.elbo(&s), dense.elbo_closed_form(&s)] {
            assert!(
                (gp.elbo() - elbo_ref).abs() < 1e-8 * elbo_ref.abs(),
                "robust {robust}: {} vs {elbo_ref}",
                gp.elbo()
            );
        }
        assert!(rel_err(&gp.v, &dense.weights(Some(&s))) < 1e-8);
        assert!(gp.elbo() < dense.log_evidence());
    }
}

#[test]
fn inducing_actions_at_the_data_recover_rcgp_and_the_exact_gp() {
    // Z = X: S = K is invertible, so the actions span everything (spec §4 item 1).
    let (x, y) = problem(12, 53, true);
    let xs = test_inputs(5, 54);
    for robust in [true, false] {
        let gp = inducing_model(&x, &y, x.clone(), robust);
        let dense = Dense::new(&x, &y, &kernel(), 0.2, 0.3, robust.then_some((1.0, C)));
        let (mean, cov) = gp.predict_joint(xs.as_ref());
        let (mean_ref, cov_ref) = dense.posterior(None, &xs);
        // S = K is ill-conditioned (κ ≈ 1e5 here), hence 1e-7 rather than 1e-8.
        assert!(rel_err(&mean, &mean_ref) < 1e-7, "robust {robust}");
        assert!(rel_err(&entries(&cov), &entries(&cov_ref)) < 1e-7);
        let lz = dense.log_evidence();
        assert!(
            (gp.elbo() - lz).abs() < 1e-7 * lz.abs(),
            "robust {robust}: {} vs {lz}",
            gp.elbo()
        );
    }
}

#[test]
fn elbo_gradient_flows_through_inducing_actions() {
    // S = k(X, Z) moves with every kernel hyperparameter, and with Z when it is trained.
    let (x, y) = problem(23, 55, true);
    let z = test_inputs(5, 56);
    for (kernel, weighting) in [
        (kernel(), Weighting::Imq { beta: 1.0, c: 0.7 }),
        (kernel(), Weighting::Constant),
        (
            Kernel::parse("const(var=0.8) * se(ls=[0.6, 0.9]) + matern32(var=0.2, ls=1.3)")
                .unwrap(),
            Weighting::Imq { beta: 0.5, c: 1.5 },
        ),
    ] {
        for learn in [false, true] {
            let state = State {
                kernel: kernel.clone(),
                noise: 0.3,
                mean: 0.25,
                actions: ActionSet::Inducing {
                    z: z.clone(),
                    learn,
                },
                weighting,
                centre: None,
            };
            check(state, &x, &y);
        }
    }
}

/// 1100 rows: more than two chunks of 512.
fn large_problem() -> (Mat<f64>, Vec<f64>) {
    problem(1100, 57, true)
}

#[test]
fn streaming_over_several_chunks_equals_the_dense_reference() {
    let (x, y) = large_problem();
    let xs = test_inputs(4, 58);
    let dense = Dense::new(&x, &y, &kernel(), 0.2, 0.3, Some((1.0, C)));
    // Two blocks of 550 rows (each streamed as 512 + 38) and four inducing points (chunks of
    // 512, 512 and 76 rows).
    let blocks = random_blocks(1100, 2, 59);
    let z = test_inputs(4, 60);
    for (actions, s) in [
        (Actions::Blocks(blocks.clone()), dense_actions(&blocks)),
        (
            Actions::Inducing(z.clone()),
            kernel().cross(x.as_ref(), z.as_ref()),
        ),
    ] {
        let gp = model_with(&x, &y, actions, true, C);
        let elbo_ref = dense.elbo(&s);
        assert!(
            (gp.elbo() - elbo_ref).abs() < 1e-8 * elbo_ref.abs(),
            "{} vs {elbo_ref}",
            gp.elbo()
        );
        let (mean, cov) = gp.predict_joint(xs.as_ref());
        let (mean_ref, cov_ref) = dense.posterior(Some(&s), &xs);
        assert!(rel_err(&mean, &mean_ref) < 1e-8);
        assert!(rel_err(&entries(&cov), &entries(&cov_ref)) < 1e-8);
    }
}

#[test]
fn gradient_is_right_across_chunk_boundaries() {
    let (x, y) = large_problem();
    let state = |actions| State {
        kernel: kernel(),
        noise: 0.3,
        mean: 0.25,
        actions,
        weighting: Weighting::Imq { beta: 1.0, c: 0.9 },
        centre: None,
    };
    // Kernel (3), noise, mean and the block entries at both sides of each chunk boundary.
    let blocks = BlockActions::from_blocks(1100, random_blocks(1100, 2, 61)).unwrap();
    let first_action = 5;
    let which: Vec<usize> = (0..first_action)
        .chain(
            [0, 511, 512, 549, 550, 1061, 1062, 1099]
                .iter()
                .map(|j| first_action + j),
        )
        .collect();
    check_entries(state(ActionSet::Blocks(blocks)), &x, &y, Some(&which));
    let z = test_inputs(4, 62);
    check(state(ActionSet::Inducing { z, learn: true }), &x, &y);
}

#[test]
fn fitting_with_inducing_actions() {
    let (x, y) = problem(60, 63, true);
    let cfg = CaConfig {
        actions: 8,
        action_kind: ActionKind::Inducing,
        ..CaConfig::default()
    };
    let gp = CaGp::fit(x.as_ref(), &y, kernel(), 0.5, &cfg, &mut |_, _| {}).unwrap();
    // Z are the seeded k-means centres and stay where they were put.
    let z = InducingInit::KMeans
        .select(x.as_ref(), 8, cfg.seed)
        .unwrap();
    assert_eq!(gp.actions(), Actions::Inducing(z.clone()));
    assert_eq!(gp.action_count(), 8);
    let start = CaGp::from_parts(
        x.clone(),
        y.clone(),
        kernel(),
        0.5,
        y.iter().sum::<f64>() / 60.0,
        Actions::Inducing(z),
        gp.threshold(),
        1.0,
        true,
    )
    .unwrap();
    assert!(
        gp.elbo() > start.elbo() + 1.0,
        "{} vs {}",
        gp.elbo(),
        start.elbo()
    );
    let rebuilt = rebuilt(&gp);
    assert_eq!(rebuilt.elbo(), gp.elbo());
    assert_eq!(rebuilt.predict(x.as_ref()), gp.predict(x.as_ref()));
    // Trained inducing inputs move, and reach at least the fixed ones' ELBO.
    let trained = CaGp::fit(
        x.as_ref(),
        &y,
        kernel(),
        0.5,
        &CaConfig {
            learn_inducing: true,
            ..cfg
        },
        &mut |_, _| {},
    )
    .unwrap();
    assert_ne!(trained.actions(), gp.actions());
    assert!(
        trained.elbo() > gp.elbo() - 1e-6,
        "{} vs {}",
        trained.elbo(),
        gp.elbo()
    );
}

#[test]
fn bad_inducing_actions_are_errors() {
    let (x, y) = problem(12, 64, false);
    let parts = |z: Mat<f64>| match CaGp::from_parts(
        x.clone(),
        y.clone(),
        kernel(),
        0.1,
        0.0,
        Actions::Inducing(z),
        1.0,
        1.0,
        true,
    ) {
        Err(ModelError::Invalid(msg)) => msg,
        other => panic!("expected an error, got {other:?}"),
    };
    assert!(parts(Mat::zeros(0, 2)).contains("inducing actions"));
    assert!(parts(Mat::zeros(13, 2)).contains("between 1 and n = 12"));
    assert!(parts(Mat::zeros(3, 1)).contains("1 columns, the inputs 2"));
    let mut z = test_inputs(3, 65);
    z[(1, 0)] = f64::NAN;
    assert!(parts(z).contains("inducing action 1"));
}
