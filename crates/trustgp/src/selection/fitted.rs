//! What a VBKS fit leaves for prediction and for the user: the model average over the kept
//! kernels and the kernel posterior (the most probable kernels with their probabilities).

use serde::{Deserialize, Serialize};

use super::mixture::Mixture;
use super::periods::InitialPeriods;
use super::vbks::Vbks;
use super::SelectionError;

/// Kernels listed in a fit's kernel posterior at most (the most probable ones).
pub const LISTED_KERNELS: usize = 20;

/// One kernel of the posterior `q(k)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelProbability {
    /// The kernel's canonical structure, e.g. `(se + per) * lin`.
    pub kernel: String,
    /// Its posterior probability `q(k)` over the whole candidate space.
    pub probability: f64,
    /// Its local ELBO `L*` (in the model's, i.e. standardised, units).
    pub local_elbo: f64,
}

/// A fitted kernel selection: the model average VBKS predicts with, and the kernel posterior.
#[derive(Clone, Debug)]
pub struct SelectedModel {
    /// The model average over the kept kernels (weights `q̃(k)`, summing to 1).
    pub mixture: Mixture,
    /// The most probable kernels, by decreasing `q(k)` (at most [`LISTED_KERNELS`], only
    /// kernels with positive probability).
    pub posterior: Vec<KernelProbability>,
    /// The full ELBO (8) at the last checkpoint.
    pub elbo: f64,
    /// How the PER factors' periods started, in the units VBKS saw (standardised); `None`
    /// for a model read from a file written before this was recorded.
    pub periods: Option<InitialPeriods>,
}

impl SelectedModel {
    /// The model average and kernel posterior of a VBKS run.
    ///
    /// # Errors
    /// As for [`Vbks::mixture`].
    pub fn of(run: &Vbks) -> Result<SelectedModel, SelectionError> {
        let q = run.probabilities();
        let l = run.local_elbos();
        let mut order: Vec<usize> = (0..q.len()).filter(|&i| q[i] > 0.0).collect();
        order.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
        order.truncate(LISTED_KERNELS);
        Ok(SelectedModel {
            mixture: run.mixture()?,
            posterior: order
                .into_iter()
                .map(|i| KernelProbability {
                    kernel: run.space().kernels()[i].to_string(),
                    probability: q[i],
                    local_elbo: l[i],
                })
                .collect(),
            elbo: run.history().last().map_or(f64::NAN, |c| c.elbo),
            periods: Some(run.initial_periods().clone()),
        })
    }

    /// The noise variance of a new observation averaged over the kept kernels, `Σ w_i σ²_i`:
    /// a Gaussian likelihood with this variance turns the mixture's latent moments into
    /// exactly its predictive moments for `y` (each kernel's noise added before mixing).
    pub fn noise(&self) -> f64 {
        self.mixture
            .components()
            .iter()
            .map(|c| c.weight * c.model.predictive_noise())
            .sum()
    }
}
