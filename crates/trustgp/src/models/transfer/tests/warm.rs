//! Warm refits (`TransferFitOptions::warm_restarts`): the start points, and that on small
//! problems a warm refit reaches an optimum at least as good as the paper's cold one.

use faer::Mat;

use super::*;
use crate::models::transfer::{EfficientHgp, SingleTaskGp, TransferFitOptions};

#[test]
fn warm_refits_start_from_the_previous_optimum_the_initial_values_and_their_own_restarts() {
    let x0 = [-1.6, 0.8, -4.6];
    let previous = [-1.0, 0.5, -3.0];
    let bounds = [(-10.0, 10.0); 3];
    let cold = TransferFitOptions::default();
    let warm = TransferFitOptions {
        warm_restarts: Some(1),
        ..TransferFitOptions::default()
    };
    let r = cold.restarts;
    // The first fit (no previous optimum) is the same either way: x0 and `restarts` draws.
    let first = warm.starts(&x0, None, &bounds, 3);
    assert_eq!(first, cold.starts(&x0, None, &bounds, 3));
    assert_eq!((first.len(), first[0].as_slice()), (1 + r, &x0[..]));
    // A refit: x0, the previous optimum, then `restarts` (cold) or `warm_restarts` draws.
    let c = cold.starts(&x0, Some(&previous), &bounds, 3);
    let w = warm.starts(&x0, Some(&previous), &bounds, 3);
    assert_eq!((c.len(), w.len()), (2 + r, 3));
    assert_eq!((w[0].as_slice(), w[1].as_slice()), (&x0[..], &previous[..]));
    assert_eq!(w[..], c[..3]);
    // The models that lead with their current values: the same sets, in their order.
    let c = cold.starts_from_current(&previous, &x0, &bounds, 3);
    let w = warm.starts_from_current(&previous, &x0, &bounds, 3);
    assert_eq!((c.len(), w.len()), (1 + r, 3));
    assert_eq!((w[0].as_slice(), w[1].as_slice()), (&previous[..], &x0[..]));
    assert_eq!(w[2], c[1]);
    // Before any fit the current values are the initial ones: a cold fit either way.
    assert_eq!(
        warm.starts_from_current(&x0, &x0, &bounds, 3),
        cold.starts_from_current(&x0, &x0, &bounds, 3)
    );
}

/// The data of a refit schedule: `n0` target rows, then `step` more before each of `refits`
/// refits (a stand-in for the queries), on the smooth function of `tests/mod.rs`.
fn schedule(n0: usize, step: usize, refits: usize, d: usize) -> Vec<(Mat<f64>, Vec<f64>)> {
    let all = inputs(n0 + step * refits, d, 0.05);
    let y = values(&all, 0.4);
    (0..=refits)
        .map(|k| {
            let n = n0 + step * k;
            (all.subrows(0, n).to_owned(), y[..n].to_vec())
        })
        .collect()
}

#[test]
fn a_warm_refit_of_efftranshgp_is_at_least_as_good_as_a_cold_one() {
    let d = 2;
    let sources = vec![source(40, d, 0.3, 0.0)];
    let cold_opts = TransferFitOptions::default();
    let warm_opts = TransferFitOptions {
        warm_restarts: Some(0),
        ..TransferFitOptions::default()
    };
    let mut cold = EfficientHgp::new(sources.clone(), cold_opts).unwrap();
    let mut warm = EfficientHgp::new(sources, warm_opts).unwrap();
    for (k, (x, y)) in schedule(12, 6, 4, d).iter().enumerate() {
        cold.update(x.as_ref(), y, true, 10 + k as u64).unwrap();
        warm.update(x.as_ref(), y, true, 10 + k as u64).unwrap();
        // The source group is fitted once, identically (only refits differ), so the full
        // likelihoods differ by the conditional ones, the target group's objective.
        assert_eq!(
            cold.kernel().unwrap().levels()[0],
            warm.kernel().unwrap().levels()[0]
        );
        let (c, w) = (cold.lml().unwrap(), warm.lml().unwrap());
        if k == 0 {
            assert_eq!(c, w, "the first fit is cold either way");
        }
        assert!(
            w >= c - 1e-6 * c.abs().max(1.0),
            "refit {k}: warm {w} < cold {c}"
        );
    }
}

#[test]
fn a_warm_refit_of_sals_gp_is_at_least_as_good_as_a_cold_one() {
    let d = 2;
    let warm_opts = TransferFitOptions {
        warm_restarts: Some(0),
        ..TransferFitOptions::single_task()
    };
    let mut cold = SingleTaskGp::new(TransferFitOptions::single_task());
    let mut warm = SingleTaskGp::new(warm_opts);
    for (k, (x, y)) in schedule(12, 6, 4, d).iter().enumerate() {
        cold.update(x.as_ref(), y, true, 20 + k as u64).unwrap();
        warm.update(x.as_ref(), y, true, 20 + k as u64).unwrap();
        let c = cold.exact().unwrap().lml();
        let w = warm.exact().unwrap().lml();
        if k == 0 {
            assert_eq!(c, w, "the first fit is cold either way");
        }
        assert!(
            w >= c - 1e-6 * c.abs().max(1.0),
            "refit {k}: warm {w} < cold {c}"
        );
    }
}
