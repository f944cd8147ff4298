//! Thompson sampling on a candidate set: draw joint posterior samples at the candidates and
//! take the argmax of each (`rcagp.md` §3.5, "Thompson-sampling").
//!
//! [`thompson_candidates`] builds the candidate set of the reference code (TuRBO's): each
//! candidate is the incumbent with every coordinate replaced, with probability
//! `min(20/d, 1)`, by the coordinate of a scrambled-Sobol point of the box; a candidate with no
//! coordinate replaced gets one replaced at random, so that none repeats the incumbent. The
//! default count is `min(5000, max(2000, 200 d))`.
//!
//! [`thompson_sample`] draws `q` joint samples at the candidates and picks, for each sample in
//! turn, its argmax among the candidates not yet picked, as BoTorch's `MaxPosteriorSampling`
//! does without replacement. Up to [`EXACT_THOMPSON_MAX`] candidates the samples are exact,
//! [`Posterior::sample_seeded`] (the Cholesky factor of the candidates' joint covariance: cubic
//! in the number of candidates, a few seconds at 5000); beyond it they are pathwise,
//! [`Posterior::pathwise_sample`] (random-feature prior paths updated by Matheron's rule: linear
//! in the candidates, with the posterior's mean and covariance exactly), falling back to exact
//! samples for a model or kernel without random features ([`ThompsonRoute`] says which ran).

use faer::Mat;
use faer::MatRef;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::models::ModelError;
use crate::posterior::{PathwiseSamples, Posterior};
use crate::sequential::optimize::sobol_points;

/// The default number of candidates in `d` inputs: `min(5000, max(2000, 200 d))`.
pub fn default_candidate_count(d: usize) -> usize {
    (200 * d).clamp(2000, 5000)
}

/// `count` candidates around `incumbent` in the box `bounds`, as the module documentation
/// describes; the same `seed` gives the same set.
///
/// # Errors
/// [`ModelError::Invalid`] if `count` is 0 or above the Sobol sequence's length (2¹⁶), the
/// bounds are empty, not finite or have `lo ≥ hi`, there are more inputs than the Sobol
/// sequence's dimension, or `incumbent` does not have one value inside each bound.
pub fn thompson_candidates(
    incumbent: &[f64],
    bounds: &[(f64, f64)],
    count: usize,
    seed: u32,
) -> Result<Mat<f64>, ModelError> {
    let d = bounds.len();
    if d == 0 {
        return Err(ModelError::Invalid(
            "bounds must give at least one input's (lo, hi)".into(),
        ));
    }
    for (c, &(lo, hi)) in bounds.iter().enumerate() {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(ModelError::Invalid(format!(
                "bounds of input {c} must be finite with lo < hi, got ({lo}, {hi})"
            )));
        }
    }
    if incumbent.len() != d {
        return Err(ModelError::Invalid(format!(
            "the incumbent has {} values but the bounds give {d} inputs",
            incumbent.len()
        )));
    }
    for (c, (&x, &(lo, hi))) in incumbent.iter().zip(bounds).enumerate() {
        // Written so that NaN fails the check.
        if !(lo <= x && x <= hi) {
            return Err(ModelError::Invalid(format!(
                "incumbent input {c} must lie in its bounds [{lo}, {hi}], got {x}"
            )));
        }
    }
    if count == 0 {
        return Err(ModelError::Invalid(
            "Thompson sampling needs at least one candidate, got 0".into(),
        ));
    }
    let free: Vec<usize> = (0..d).collect();
    let sobol = sobol_points(count, &free, bounds, incumbent, seed)?;
    let p = (20.0 / d as f64).min(1.0);
    let mut rng = StdRng::seed_from_u64(u64::from(seed));
    let mut out = Mat::from_fn(count, d, |_, c| incumbent[c]);
    for i in 0..count {
        let mut replaced = false;
        for c in 0..d {
            if rng.random::<f64>() < p {
                out[(i, c)] = sobol[(i, c)];
                replaced = true;
            }
        }
        if !replaced {
            let c = rng.random_range(0..d);
            out[(i, c)] = sobol[(i, c)];
        }
    }
    Ok(out)
}

/// The most candidates on which [`thompson_sample`] draws exact joint samples (an m×m
/// Cholesky factor, cubic in m); beyond, pathwise samples (linear in m).
pub const EXACT_THOMPSON_MAX: usize = 2000;

/// Random frequencies per pathwise sample path: enough that each path is close to Gaussian
/// (its mean and covariance are exact whatever the number).
pub const PATHWISE_FREQUENCIES: usize = 1024;

/// How [`thompson_sample`] drew its samples.
#[derive(Clone, Debug, PartialEq)]
pub enum ThompsonRoute {
    /// Exact joint samples ([`Posterior::sample_seeded`]).
    Exact,
    /// Pathwise samples ([`Posterior::pathwise_sample`]).
    Pathwise,
    /// Exact joint samples beyond the threshold, because the model or kernel has no pathwise
    /// samples (the reason).
    ExactFallback(String),
}

/// The result of [`thompson_sample`].
#[derive(Clone, Debug, PartialEq)]
pub struct ThompsonPicks {
    /// The index of each pick among the candidates, in the order of the samples.
    pub indices: Vec<usize>,
    /// The picked candidates, one per row.
    pub points: Mat<f64>,
    /// How the samples were drawn.
    pub route: ThompsonRoute,
}

/// `q` picks among the rows of `candidates` by Thompson sampling on `posterior`: one joint
/// sample per pick (seeded by `seed`; exact up to [`EXACT_THOMPSON_MAX`] candidates, pathwise
/// beyond), each pick the sample's argmax among the candidates not picked before.
///
/// # Errors
/// As for [`thompson_sample_with`].
pub fn thompson_sample(
    posterior: &dyn Posterior,
    candidates: MatRef<'_, f64>,
    q: usize,
    seed: u64,
) -> Result<ThompsonPicks, ModelError> {
    thompson_sample_with(
        posterior,
        candidates,
        q,
        seed,
        EXACT_THOMPSON_MAX,
        PATHWISE_FREQUENCIES,
    )
}

/// [`thompson_sample`] with exact samples up to `exact_max` candidates and pathwise samples
/// with `frequencies` random frequencies per path beyond.
///
/// # Errors
/// [`ModelError::Invalid`] if `q` is 0 or exceeds the number of candidates, or `frequencies`
/// is 0 where pathwise samples are drawn; the posterior's error for invalid candidates or a
/// joint covariance it cannot factorise.
pub fn thompson_sample_with(
    posterior: &dyn Posterior,
    candidates: MatRef<'_, f64>,
    q: usize,
    seed: u64,
    exact_max: usize,
    frequencies: usize,
) -> Result<ThompsonPicks, ModelError> {
    let m = candidates.nrows();
    if q == 0 || q > m {
        return Err(ModelError::Invalid(format!(
            "Thompson sampling picks between 1 and the {m} candidates, got q = {q}"
        )));
    }
    let (samples, route) = if m <= exact_max {
        (
            posterior.sample_seeded(candidates, q, seed)?,
            ThompsonRoute::Exact,
        )
    } else {
        match posterior.pathwise_sample(candidates, q, frequencies, seed)? {
            PathwiseSamples::Samples(s) => (s, ThompsonRoute::Pathwise),
            PathwiseSamples::Unsupported(why) => (
                posterior.sample_seeded(candidates, q, seed)?,
                ThompsonRoute::ExactFallback(why),
            ),
        }
    };
    let mut taken = vec![false; m];
    let mut indices = Vec::with_capacity(q);
    for j in 0..q {
        // The first of equal maxima wins, so ties resolve the same way every time.
        let best = (0..m)
            .filter(|&i| !taken[i])
            .fold(None::<usize>, |b, i| match b {
                Some(k) if samples[(k, j)] >= samples[(i, j)] => Some(k),
                _ => Some(i),
            })
            .ok_or_else(|| ModelError::Invalid("no candidate left to pick".into()))?;
        taken[best] = true;
        indices.push(best);
    }
    let points = Mat::from_fn(q, candidates.ncols(), |a, c| candidates[(indices[a], c)]);
    Ok(ThompsonPicks {
        indices,
        points,
        route,
    })
}
