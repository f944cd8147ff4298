//! The BO baseline of the VBKS paper (§6.2): Bayesian optimisation over the discrete kernel
//! space (Malkomes, Schaff & Garnett 2016, "Bayesian optimization for automated model
//! selection").
//!
//! * **Evidence** of a candidate: its point-mode SVGP ELBO `L*_i` trained alone with VBKS's
//!   settings (the same `M`, `B`, iterations, inducing inputs, minibatches and evaluation
//!   subset as VBKS's candidates: the Random baseline's single-kernel run), so it equals the
//!   kernel's `L*_i` in a VBKS run with the same seed.
//! * **Surrogate**: a GP over the kernels ([`KernelGp`]) whose covariance comes from averaged
//!   Hellinger distances between prior predictives on a seeded 200-row subset
//!   ([`kernel_distances`]), refitted by maximum evidence after every evaluation.
//! * **Acquisition**: expected improvement over the best evidence so far, maximised
//!   exhaustively over the kernels not yet evaluated (ranked by log EI, which keeps its order
//!   where EI underflows; exact ties broken at random with the seed).
//! * **Budget**: `budget` evaluations, the first `initial` drawn uniformly with the seed
//!   (defaults 15 and 3, choices: the paper reports neither, spec A9). The selected kernel is
//!   the evaluated one with the best evidence; it predicts alone.
//!
//! A kernel whose training fails numerically counts against the budget with evidence `−∞` and
//! stays out of the surrogate; while fewer than two evidences are finite the next kernel is
//! drawn at random.

use std::time::Instant;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};

use crate::models::checks::check_training_data;
use crate::sequential::acquisition::ImprovementKind;

use super::kernel_distance::kernel_distances;
use super::kernel_surrogate::KernelGp;
use super::mixture::Mixture;
use super::space::KernelSpace;
use super::vbks::{
    check_config, initial_kernels, stream, BO_DESIGN_STREAM, BO_SUBSET_STREAM, BO_THETA_STREAM,
};
use super::{SelectionError, Vbks, VbksConfig, VbksMode};

/// Settings of [`KernelBo::fit`] (the evidence uses the [`VbksConfig`] given beside them).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelBoConfig {
    /// Evidence evaluations in all, at most the number of kernels (default 15).
    pub budget: usize,
    /// Of these, the first ones drawn uniformly at random (default 3; at least 1).
    pub initial: usize,
    /// Rows of the seeded subset on which kernel distances are computed (default 200, the
    /// paper's; all rows when there are fewer).
    pub subset: usize,
    /// Hyperprior draws averaged in each distance (default 4).
    pub draws: usize,
}

impl Default for KernelBoConfig {
    fn default() -> Self {
        KernelBoConfig {
            budget: 15,
            initial: 3,
            subset: 200,
            draws: 4,
        }
    }
}

/// One evidence evaluation of a BO run.
#[derive(Clone, Debug, PartialEq)]
pub struct BoStep {
    /// The kernel's index in the space.
    pub kernel: usize,
    /// Its evidence `L*` (`−∞` if its training failed).
    pub evidence: f64,
    /// Log expected improvement that chose it (`None` for a random draw).
    pub log_ei: Option<f64>,
    /// Seconds since the run started (distances included) when the evaluation ended.
    pub seconds: f64,
    /// The best kernel so far (index in the space).
    pub best: usize,
    /// Why the training failed, if it did.
    pub failure: Option<String>,
}

/// A finished BO run over kernels: the distances, every evaluation, and the selected kernel's
/// sparse GP.
#[derive(Clone, Debug)]
pub struct KernelBo {
    space: KernelSpace,
    distances: Mat<f64>,
    steps: Vec<BoStep>,
    selected: Vbks,
}

impl KernelBo {
    /// Runs BO over the kernels of `space` on standardised inputs `x` (n×d) and targets `y`;
    /// every evidence is a point-mode single-kernel run with `vbks` (its seed seeds everything
    /// here too); `observe` is called after each evaluation.
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] for bad data or settings (naming which: a budget of 0 or
    /// above the number of kernels, an `initial` of 0 or above the budget, no subset rows or
    /// draws, full-θ mode), or when every evaluated kernel failed; errors of the distances.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        space: &KernelSpace,
        vbks: &VbksConfig,
        bo: &KernelBoConfig,
        observe: &mut dyn FnMut(&BoStep),
    ) -> Result<KernelBo, SelectionError> {
        check_training_data(x, y)?;
        check_config(vbks, x.nrows())?;
        check_bo(bo, space.len(), vbks.mode)?;
        let start = Instant::now();
        let distances = distances(x, y, space, vbks, bo)?;
        let mut rng = StdRng::seed_from_u64(stream(vbks.seed, BO_DESIGN_STREAM));
        let design = sample(&mut rng, space.len(), bo.initial).into_vec();
        let mut steps: Vec<BoStep> = Vec::with_capacity(bo.budget);
        let mut selected: Option<(f64, Vbks)> = None;
        let mut evaluated = vec![false; space.len()];
        while steps.len() < bo.budget {
            let (kernel, log_ei) = match design.get(steps.len()) {
                Some(&i) => (i, None),
                None => next_kernel(&distances, &steps, &evaluated, &mut rng)?,
            };
            evaluated[kernel] = true;
            let (evidence, failure) = match evidence(x, y, space, kernel, vbks) {
                Ok((e, run)) => {
                    if selected.as_ref().is_none_or(|(best, _)| e > *best) {
                        selected = Some((e, run));
                    }
                    (e, None)
                }
                Err(err) => (f64::NEG_INFINITY, Some(err.to_string())),
            };
            let best = best_step(&steps, kernel, evidence);
            let step = BoStep {
                kernel,
                evidence,
                log_ei,
                seconds: start.elapsed().as_secs_f64(),
                best,
                failure,
            };
            observe(&step);
            steps.push(step);
        }
        let (_, selected) = selected.ok_or_else(|| {
            SelectionError::Invalid(format!(
                "BO: every one of the {} evaluated kernels failed to train",
                steps.len()
            ))
        })?;
        Ok(KernelBo {
            space: space.clone(),
            distances,
            steps,
            selected,
        })
    }

    /// The candidate space.
    pub fn space(&self) -> &KernelSpace {
        &self.space
    }

    /// The averaged Hellinger distances between the kernels.
    pub fn distances(&self) -> MatRef<'_, f64> {
        self.distances.as_ref()
    }

    /// Every evaluation, in order.
    pub fn steps(&self) -> &[BoStep] {
        &self.steps
    }

    /// The selected kernel (the best evidence evaluated; index in the space).
    pub fn selected(&self) -> usize {
        self.steps.last().expect("a run has steps").best
    }

    /// The selected kernel's single-kernel run.
    pub fn run(&self) -> &Vbks {
        &self.selected
    }

    /// The selected kernel's sparse GP as a one-component model average (for prediction).
    ///
    /// # Errors
    /// As for [`Vbks::single_best`].
    pub fn model(&self) -> Result<Mixture, SelectionError> {
        self.selected.single_best()
    }
}

fn check_bo(bo: &KernelBoConfig, k: usize, mode: VbksMode) -> Result<(), SelectionError> {
    let bad = |what: String| Err(SelectionError::Invalid(format!("BO: {what}")));
    if bo.budget == 0 || bo.budget > k {
        return bad(format!(
            "budget: expected between 1 and the number of candidate kernels ({k}), got {}",
            bo.budget
        ));
    }
    if bo.initial == 0 || bo.initial > bo.budget {
        return bad(format!(
            "initial random evaluations: expected between 1 and the budget ({}), got {}",
            bo.budget, bo.initial
        ));
    }
    if bo.subset == 0 {
        return bad("subset: expected at least 1 row for the kernel distances, got 0".into());
    }
    if bo.draws == 0 {
        return bad("draws: expected at least 1 hyperparameter draw, got 0".into());
    }
    if mode != VbksMode::Point {
        return bad("the evidence is the point-mode SVGP ELBO: use mode point".into());
    }
    Ok(())
}

/// The kernel distances on the seeded subset, the kernels at VBKS's initial hyperparameters.
fn distances(
    x: MatRef<'_, f64>,
    y: &[f64],
    space: &KernelSpace,
    vbks: &VbksConfig,
    bo: &KernelBoConfig,
) -> Result<Mat<f64>, SelectionError> {
    let n = x.nrows();
    let rows: Vec<usize> = if n <= bo.subset {
        (0..n).collect()
    } else {
        let mut rng = StdRng::seed_from_u64(stream(vbks.seed, BO_SUBSET_STREAM));
        let mut r = sample(&mut rng, n, bo.subset).into_vec();
        r.sort_unstable();
        r
    };
    let x_sub = Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)]);
    let (mut kernels, _) = initial_kernels(space, x, y, vbks)?;
    for (k, s) in kernels.iter_mut().zip(space.kernels()) {
        // Lengthscales from the whole training set, as the sparse GPs start.
        k.initialize(x).map_err(|source| SelectionError::Kernel {
            expr: s.to_string(),
            source,
        })?;
    }
    let seed = stream(vbks.seed, BO_THETA_STREAM);
    kernel_distances(&kernels, x_sub.as_ref(), bo.draws, vbks.noise, seed)
}

/// Kernel `i`'s evidence `L*_i` and its run: trained alone with VBKS's settings.
fn evidence(
    x: MatRef<'_, f64>,
    y: &[f64],
    space: &KernelSpace,
    i: usize,
    vbks: &VbksConfig,
) -> Result<(f64, Vbks), SelectionError> {
    let single = KernelSpace::new(vec![space.kernels()[i].clone()])?;
    let run = Vbks::fit(x, y, &single, vbks, &mut |_| {})?;
    let e = run.local_elbos()[0];
    if e.is_finite() {
        Ok((e, run))
    } else {
        Err(SelectionError::Invalid(format!(
            "kernel {}: its ELBO is not finite",
            space.kernels()[i]
        )))
    }
}

/// The best kernel after adding `(kernel, evidence)` to `steps` (the earlier one on ties).
fn best_step(steps: &[BoStep], kernel: usize, evidence: f64) -> usize {
    match steps.last() {
        Some(last) => {
            let best = steps
                .iter()
                .find(|s| s.kernel == last.best)
                .map_or(f64::NEG_INFINITY, |s| s.evidence);
            if evidence > best {
                kernel
            } else {
                last.best
            }
        }
        None => kernel,
    }
}

/// The next kernel: the unevaluated one of largest log EI under the surrogate fitted to the
/// finite evidences (random among exact ties), or a random unevaluated one while fewer than
/// two are finite.
fn next_kernel(
    distances: &Mat<f64>,
    steps: &[BoStep],
    evaluated: &[bool],
    rng: &mut StdRng,
) -> Result<(usize, Option<f64>), SelectionError> {
    let candidates: Vec<usize> = (0..evaluated.len()).filter(|&i| !evaluated[i]).collect();
    let finite: Vec<&BoStep> = steps.iter().filter(|s| s.evidence.is_finite()).collect();
    if finite.len() < 2 {
        return Ok((candidates[rng.random_range(0..candidates.len())], None));
    }
    let idx: Vec<usize> = finite.iter().map(|s| s.kernel).collect();
    let y: Vec<f64> = finite.iter().map(|s| s.evidence).collect();
    let incumbent = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let gp = KernelGp::fit(distances.as_ref(), &idx, &y)?;
    let values = gp.acquisition(
        distances.as_ref(),
        &candidates,
        ImprovementKind::LogExpected,
        incumbent,
    )?;
    // Ties (e.g. every candidate uncorrelated with the evaluated ones, where the posterior is
    // the prior) are broken at random: the lowest index would bias the search to the front
    // of the space.
    let v = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tied: Vec<usize> = (0..values.len()).filter(|&a| values[a] == v).collect();
    let a = match tied.len() {
        0 => rng.random_range(0..candidates.len()),
        1 => tied[0],
        t => tied[rng.random_range(0..t)],
    };
    Ok((candidates[a], Some(v)))
}
