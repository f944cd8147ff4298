//! Spec §4 item 11: the analytic ELBO gradient against central finite differences.

use super::{kernel, problem, random_blocks};
use crate::kernels::Kernel;
use crate::models::computation_aware::action_set::ActionSet;
use crate::models::computation_aware::actions::BlockActions;
use crate::models::computation_aware::elbo::{forward, gradient, State};
use crate::models::computation_aware::likelihood::Weighting;

/// The ELBO as a function of `[log θ_kernel, log σ², m0, Θ]`.
fn elbo_at(template: &State, x: faer::MatRef<'_, f64>, y: &[f64], v: &[f64]) -> f64 {
    let nk = template.kernel.n_params();
    let mut s = template.clone();
    s.kernel.set_log_params(&v[..nk]).unwrap();
    s.noise = v[nk].exp();
    s.mean = v[nk + 1];
    s.actions.set_flat(&v[nk + 2..]);
    forward(x, y, &s).unwrap().elbo
}

/// Checks every partial derivative of the ELBO at `state`.
pub(super) fn check(state: State, x: &faer::Mat<f64>, y: &[f64]) {
    check_entries(state, x, y, None);
}

/// Checks the partial derivatives of the ELBO at `state` with the given indices into the flat
/// vector `[log θ_kernel, log σ², m0, Θ]` (all of them for `None`).
pub(super) fn check_entries(state: State, x: &faer::Mat<f64>, y: &[f64], which: Option<&[usize]>) {
    let fw = forward(x.as_ref(), y, &state).unwrap();
    let g = gradient(x.as_ref(), &state, &fw);
    let mut v = state.kernel.log_params();
    v.push(state.noise.ln());
    v.push(state.mean);
    v.extend(state.actions.flat());
    let mut an = g.kernel.clone();
    an.push(g.log_noise);
    an.push(g.mean);
    an.extend(&g.actions);
    assert_eq!(an.len(), v.len());
    // Errors relative to the largest partial derivative: FD round-off scales with the ELBO.
    let scale = an.iter().fold(1.0f64, |m, a| m.max(a.abs()));
    let h = 1e-5;
    let all: Vec<usize> = (0..v.len()).collect();
    for &k in which.unwrap_or(&all) {
        let (mut lo, mut hi) = (v.clone(), v.clone());
        lo[k] -= h;
        hi[k] += h;
        let fd =
            (elbo_at(&state, x.as_ref(), y, &hi) - elbo_at(&state, x.as_ref(), y, &lo)) / (2.0 * h);
        assert!(
            (fd - an[k]).abs() < 1e-8 * scale,
            "parameter {k} of {}: analytic {} vs finite difference {fd} ({:?})",
            v.len(),
            an[k],
            state.weighting
        );
    }
}

#[test]
fn elbo_gradient_matches_finite_differences() {
    // 23 rows in 4 unequal blocks, outliers, an ARD composite kernel.
    let (x, y) = problem(23, 30, true);
    for weighting in [
        Weighting::Imq { beta: 1.0, c: 0.7 },
        Weighting::Imq { beta: 0.4, c: 2.0 },
        Weighting::Constant,
    ] {
        let state = State {
            kernel: kernel(),
            noise: 0.3,
            mean: 0.25,
            actions: ActionSet::Blocks(
                BlockActions::from_blocks(23, random_blocks(23, 4, 31)).unwrap(),
            ),
            weighting,
            centre: None,
        };
        check(state, &x, &y);
    }
}

/// With given IMQ centres (fixed, not the mean) the weights no longer move with m0: the
/// gradient in m0, σ² and the rest still matches finite differences.
#[test]
fn elbo_gradient_with_given_centres_matches_finite_differences() {
    let (x, y) = problem(23, 30, true);
    let centre: Vec<f64> = (0..23).map(|j| 0.1 * (j as f64 * 0.7).sin()).collect();
    for weighting in [
        Weighting::Imq { beta: 1.0, c: 0.7 },
        Weighting::Imq { beta: 0.4, c: 2.0 },
    ] {
        let state = State {
            kernel: kernel(),
            noise: 0.3,
            mean: 0.25,
            actions: ActionSet::Blocks(
                BlockActions::from_blocks(23, random_blocks(23, 4, 31)).unwrap(),
            ),
            weighting,
            centre: Some(centre.clone()),
        };
        check(state, &x, &y);
    }
}

#[test]
fn elbo_gradient_matches_finite_differences_for_sums_and_full_rank_actions() {
    let (x, y) = problem(14, 32, true);
    let state = State {
        kernel: Kernel::parse("const(var=0.8) * se(ls=[0.6, 0.9]) + matern32(var=0.2, ls=1.3)")
            .unwrap(),
        noise: 0.15,
        mean: -0.1,
        actions: ActionSet::Blocks(
            BlockActions::from_blocks(14, random_blocks(14, 14, 33)).unwrap(),
        ),
        weighting: Weighting::Imq { beta: 1.0, c: 0.9 },
        centre: None,
    };
    check(state, &x, &y);
}
