//! VBKS's final-stretch settling (issue 25, `selection::Settle`): on noise-free data a
//! constant-rate Adam leaves the local ELBO estimates `L*` wherever the jittering iterate
//! happens to be at the last checkpoint; a decaying rate with iterate averaging ends higher and
//! steadier across seeds. Numbers measured here.

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

/// The final local ELBO `L*` of a one-kernel run.
fn final_elbo(c: &VbksConfig) -> f64 {
    let (x, y) = noise_free(150, 11);
    let space = KernelSpace::parse("per * lin").unwrap();
    let run = Vbks::fit(x.as_ref(), &y, &space, c, &mut |_| {}).unwrap();
    run.history().last().unwrap().local_elbos[0]
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
}

fn spread(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Over six seeds (the property, not one trajectory: a change of rounding reshuffles each
/// run's iterates), the settled run's final `L*` is higher and far steadier than the
/// constant rate's, and decay without averaging is not enough.
#[test]
fn settling_ends_higher_and_steadier_than_constant_rate_adam() {
    let settle = |average| {
        Some(Settle {
            fraction: 0.3,
            average,
            ..Settle::default()
        })
    };
    let finals = |s: Option<Settle>| -> Vec<f64> {
        (0..6)
            .map(|seed| final_elbo(&VbksConfig { seed, ..config(s) }))
            .collect()
    };
    let constant = finals(None);
    let settled = finals(settle(true));
    let decay_only = finals(settle(false));
    // Measured (seeds 0–5): settled −204.5, −204.2, −202.5, −204.8, −206.3, −207.7 (spread
    // 5.3 nats); constant −205.1, −213.6, −203.7, −210.7, −213.5, −984.1 (the iterate sat at
    // a bad point at its last checkpoint); decay alone −510.3, −207.5, −345.5, −203.2,
    // −206.7, −205.6 (it freezes wherever the decay found the iterate). With the rounding of
    // the dense SVGP step (before the whitened small-batch path) the same seeds gave settled
    // spread 11.2 and medians −206.5 vs −209.1: hence the margins below.
    assert!(spread(&settled) < 20.0, "settled {settled:?}");
    assert!(
        median(&settled) > median(&constant) + 1.0,
        "{settled:?} vs {constant:?}"
    );
    let worst = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        worst(&settled) > worst(&constant),
        "{settled:?} vs {constant:?}"
    );
    assert!(
        spread(&settled) < spread(&decay_only),
        "{settled:?} vs {decay_only:?}"
    );
    // Seeded: the same settings give the same bits.
    let c = VbksConfig {
        seed: 4,
        ..config(settle(true))
    };
    assert_eq!(final_elbo(&c), settled[4]);
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
