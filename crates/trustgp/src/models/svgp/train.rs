//! Training: one optimiser step per minibatch through the shared loop
//! [`maximize`](crate::fit::maximize).
//!
//! * An epoch is a seeded shuffled pass over the data, cut into `⌈n/b⌉` batches of nearly equal
//!   size (each a uniformly random subset, so every batch estimate is unbiased and none is a
//!   tiny remainder). With `b = n` the objective is the exact full-data ELBO.
//! * The optimiser sees the ELBO divided by `n` (and so does the observer): Adam is then used
//!   with the same learning rate and early-stopping tolerance whatever the data size. The
//!   report's objective is scaled back to a sum over the data.
//! * L-BFGS is accepted on the full batch only, and then without natural gradients.
//! * With natural gradients (Gaussian likelihood, Adam), the optimiser moves only the
//!   hyperparameters; every evaluation is followed by a natural-gradient step on `(m̃, S̃)`
//!   from the same minibatch statistics (step 1 on the full batch, [`MINIBATCH_STEP`]
//!   otherwise), and after training `q` is set to its exact optimum for the final
//!   hyperparameters by one more pass over the data, which removes the minibatch noise from it
//!   (kernel selection on long series may make that pass read a random subset of rows).

use faer::MatRef;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::elbo::{evaluate, Need, Rows};
use super::layout::Layout;
use super::natural::{natural_step, MINIBATCH_STEP};
use super::state::{State, Whitened};
use super::{SvgpConfig, SvgpLikelihood};
use crate::fit::{maximize, FitReport, Optimizer};
use crate::models::ModelError;

/// Seeded minibatches: shuffled passes over `0..n`, each cut into nearly equal batches.
pub(crate) struct Batches {
    order: Vec<usize>,
    /// Batch boundaries within `order`, `0 = b_0 < b_1 < … = n`.
    bounds: Vec<usize>,
    next: usize,
    rng: StdRng,
}

impl Batches {
    /// Batches of at most `size` rows out of `n` (`1 ≤ size ≤ n`).
    pub(crate) fn new(n: usize, size: usize, seed: u64) -> Batches {
        let count = n.div_ceil(size);
        Batches {
            order: (0..n).collect(),
            bounds: (0..=count).map(|k| k * n / count).collect(),
            next: count,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The next batch; a new epoch (a fresh shuffle) starts when the last one is used up.
    pub(crate) fn next_batch(&mut self) -> &[usize] {
        if self.next + 1 == self.bounds.len() {
            self.order.shuffle(&mut self.rng);
            self.next = 0;
        }
        self.next += 1;
        &self.order[self.bounds[self.next - 1]..self.bounds[self.next]]
    }
}

/// Trains `init` on `(x, y)`; returns the final state and the optimiser's report. With natural
/// gradients the closing pass that sets `q` to its optimum reads `final_rows` (scaled by
/// `n/|rows|`, an unbiased estimate of the data term) or, for `None`, every row.
pub(super) fn train(
    x: MatRef<'_, f64>,
    y: &[f64],
    init: State,
    config: &SvgpConfig,
    final_rows: Option<&[usize]>,
    observe: &mut dyn FnMut(usize, f64),
) -> Result<(State, FitReport), ModelError> {
    let n = x.nrows();
    let batch = config.batch_size.min(n);
    let adam = matches!(config.optimizer, Optimizer::Adam(_));
    if !adam && batch < n {
        return Err(ModelError::Invalid(format!(
            "L-BFGS needs the deterministic full-data ELBO: set the minibatch size to at least \
             the number of rows ({n}), or use Adam"
        )));
    }
    // L-BFGS needs a fixed objective, which natural-gradient steps inside it would change.
    let natural = config.natural_gradients && init.likelihood == SvgpLikelihood::Gaussian && adam;
    let gamma = if batch == n { 1.0 } else { MINIBATCH_STEP };
    let layout = Layout::new(&init, !natural, config.learn_inducing);
    let x0 = layout.pack(&init)?;
    let bounds = layout.bounds(&init);
    let names = layout.names(&init);
    let mut batches = Batches::new(n, batch, config.seed);
    let mut q = (init.m_tilde.clone(), init.l_tilde.clone());
    let need = Need::Gradient {
        z: config.learn_inducing,
        variational: !natural,
    };
    let objective = |p: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
        let mut state = layout.unpack(&init, p)?;
        if natural {
            (state.m_tilde, state.l_tilde) = q.clone();
        }
        let w = Whitened::new(&state)?;
        let rows = if batch == n {
            Rows::All
        } else {
            Rows::Batch(batches.next_batch())
        };
        let elbo = evaluate(&state, &w, x, y, rows, need)?;
        if natural {
            q = natural_step(&state, &elbo, gamma)?;
        }
        let grad = elbo.grad.as_ref().map_or_else(Vec::new, |g| {
            layout
                .pack_grad(&state, g)
                .into_iter()
                .map(|v| v / n as f64)
                .collect()
        });
        Ok((elbo.value / n as f64, grad))
    };
    let (p, mut report) = maximize(objective, &x0, &bounds, &names, &config.optimizer, observe)?;
    // Reported like `Svgp::elbo`: a sum over the data, not a per-datum value.
    report.objective *= n as f64;
    report.initial_objective *= n as f64;
    report.highest_objective *= n as f64;
    let mut state = layout.unpack(&init, &p)?;
    if natural {
        (state.m_tilde, state.l_tilde) = q;
        let w = Whitened::new(&state)?;
        let rows = final_rows.map_or(Rows::All, Rows::Batch);
        let stats = evaluate(&state, &w, x, y, rows, Need::Statistics)?;
        (state.m_tilde, state.l_tilde) = natural_step(&state, &stats, 1.0)?;
    }
    Ok((state, report))
}
