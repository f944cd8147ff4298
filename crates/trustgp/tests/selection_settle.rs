//! VBKS's final-stretch settling (issue 25, `selection::Settle`): on noise-free data a
//! constant-rate Adam leaves the local ELBO estimates `L*` jittering between checkpoints; a
//! decaying rate with iterate averaging ends higher and steadier. Numbers measured here.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use trustgp::selection::{
    BeliefConfig, KernelSpace, PeriodInit, Settle, Vbks, VbksConfig, VbksMode,
};
use trustgp::Mat;

/// Noise-free data: a periodic signal times a linear trend on [−2, 2] (standardised scale).
fn noise_free(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let t: f64 = x[(i, 0)];
            (3.0 * t).sin() * t
        })
        .collect();
    (x, y)
}

fn config(settle: Option<Settle>) -> VbksConfig {
    VbksConfig {
        inducing: 10,
        batch_size: 16,
        iterations: 3000,
        checkpoints: 20,
        mode: VbksMode::Full,
        eval_samples: 8,
        predict_samples: 4,
        belief: BeliefConfig {
            cold_steps: 50,
            warm_steps: 20,
            posterior_samples: 50,
            ..BeliefConfig::default()
        },
        settle,
        // The numbers below were measured with the spec's initial period 1: the data show
        // only 1.9 cycles of period 2π/3, too few for the periodogram's peaks (which need
        // two); from a data-driven start the settled L* of this noise-free per·lin run fall
        // checkpoint after checkpoint (−401 → −1755 over the last five).
        period_init: PeriodInit::Unit,
        seed: 3,
        ..VbksConfig::default()
    }
}

/// The local ELBOs of the last `last` checkpoints of a one-kernel run.
fn trace(c: &VbksConfig, last: usize) -> Vec<f64> {
    let (x, y) = noise_free(150, 11);
    let space = KernelSpace::parse("per * lin").unwrap();
    let run = Vbks::fit(x.as_ref(), &y, &space, c, &mut |_| {}).unwrap();
    let h = run.history();
    h[h.len() - last..]
        .iter()
        .map(|c| c.local_elbos[0])
        .collect()
}

fn max_jump(v: &[f64]) -> f64 {
    v.windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max)
}

#[test]
fn settling_ends_higher_and_steadier_than_constant_rate_adam() {
    let constant = trace(&config(None), 6);
    let settled_cfg = config(Some(Settle {
        fraction: 0.3,
        ..Settle::default()
    }));
    let settled = trace(&settled_cfg, 6);
    let decay_only = trace(
        &config(Some(Settle {
            fraction: 0.3,
            average: false,
            ..Settle::default()
        })),
        6,
    );
    // Measured (seed 3): the last six L* of the constant rate jump by up to 15.0 nats between
    // checkpoints and end at −206.2; decay alone jumps by up to 5.9; decay with averaging by
    // up to 1.6 and ends at −202.8.
    let (jc, js, jd) = (
        max_jump(&constant),
        max_jump(&settled),
        max_jump(&decay_only),
    );
    assert!(jc > 10.0, "constant-rate jumps {constant:?}");
    assert!(js < 3.0 && js < jc / 4.0, "settled jumps {settled:?}");
    assert!(jd < jc / 2.0, "decay-only jumps {decay_only:?}");
    assert!(
        settled[5] > constant[5] + 2.0,
        "{settled:?} vs {constant:?}"
    );
    // Averaging makes the estimates steadier than decay alone.
    assert!(js < jd, "{settled:?} vs {decay_only:?}");
    // Seeded: the same settings give the same bits.
    assert_eq!(trace(&settled_cfg, 6), settled);
}

#[test]
fn bad_settle_settings_are_clear_errors() {
    let (x, y) = noise_free(40, 1);
    let space = KernelSpace::parse("se").unwrap();
    let run = |c: VbksConfig| {
        Vbks::fit(x.as_ref(), &y, &space, &c, &mut |_| {})
            .unwrap_err()
            .to_string()
    };
    let small = VbksConfig {
        iterations: 20,
        checkpoints: 2,
        ..config(None)
    };
    let err = run(VbksConfig {
        settle: Some(Settle {
            fraction: 1.5,
            ..Settle::default()
        }),
        ..small.clone()
    });
    assert!(err.contains("settle fraction"), "{err}");
    // Point mode's sparse GPs cannot average their iterates.
    let err = run(VbksConfig {
        mode: VbksMode::Point,
        settle: Some(Settle::default()),
        ..small.clone()
    });
    assert!(err.contains("averaging needs full-θ mode"), "{err}");
    let err = run(VbksConfig {
        theta_samples: 0,
        ..small
    });
    assert!(err.contains("θ-samples per step"), "{err}");
}
