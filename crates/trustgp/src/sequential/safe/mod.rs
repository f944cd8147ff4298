//! Safe active learning and safe Bayesian optimisation, with transfer from related tasks
//! (`safe-transfer.md`): every modelled function (the target `f` and each safety function
//! `q^j`) has its own model of the target task, a [`FunctionModel`]; a candidate is safe when
//! every constraint's β-scaled bound holds; the acquisition is maximised over the safe set only.
//!
//! Units: the loop hands models inputs scaled to the unit box shared by all tasks and outputs
//! standardised per task and per output (sources by their own statistics, the target by its
//! initial data); thresholds are mapped by the same affine map.
//!
//! * [`safe_set`] — β ↔ α, the per-constraint bound checks (noisy or noise-free, two-sided
//!   rules) and safety probabilities.
//! * [`acquisition`] — summed, max or target-only predictive entropy; safe UCB and LogEI.
//! * [`propose`] — the safe pool candidate with the best acquisition, chunk by chunk;
//!   [`continuous`] — the same over a box (Sobol design + a compass search inside the safe set).
//! * [`run`] — the loop on a [`SafeBenchmark`] with any model factory, and its JSON result.
//! * [`metrics`] — connected safe regions on a grid, TP/FP safe areas, safe-query ratio;
//!   [`scaling`] — unit box, per-task standardisation and threshold mapping; [`theory`] — the
//!   explorable radius of single-task safe learning (Thm 4.2).

pub mod acquisition;
pub mod continuous;
mod error;
pub mod factory;
pub mod metrics;
pub mod propose;
pub mod replay;
pub mod run;
pub mod safe_set;
pub mod scaling;
pub mod suggest;
#[cfg(test)]
mod tests;
pub mod theory;

pub mod benchmarks;

use faer::{Mat, MatRef};

use crate::models::ModelError;
use crate::posterior::Marginals;

pub use self::acquisition::{AcquisitionOptions, SafeAcquisition};
pub use self::continuous::{propose_continuous, ContinuousOptions, ContinuousProposal};
pub use self::error::SafeError;
pub use self::factory::{function_model, function_model_with, sal_fit_options};
pub use self::propose::{
    evaluate_pool, propose_from_pool, PoolEvaluation, Proposal, ProposeOptions,
};
pub use self::run::{
    run_benchmark, ModelFactory, QueryRecord, SafeMetrics, SafeRun, SafeRunOptions, StopReason,
    TargetScaling,
};
pub use self::safe_set::{SafeSet, SafeSetOptions, TwoSidedRule, DEFAULT_BETA};
pub use self::suggest::{join_bounds, safe_suggest, BoundSpec, SafeSuggestOptions, SafeSuggestion};

/// Observations of one task: inputs (n×d, one row per point) and one column per modelled
/// function, `[f, q^1, …, q^J]` (just `[f]` when `f` is also the safety function).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskData {
    /// Inputs, n×d.
    pub x: Mat<f64>,
    /// Outputs, n×(1+J).
    pub outputs: Mat<f64>,
}

impl TaskData {
    /// Number of points.
    pub fn n(&self) -> usize {
        self.x.nrows()
    }

    /// Column `j` of the outputs.
    pub fn output(&self, j: usize) -> Vec<f64> {
        (0..self.outputs.nrows())
            .map(|i| self.outputs[(i, j)])
            .collect()
    }
}

/// Observations of one function on one source task (standardised units, see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceTask {
    /// Inputs, n×d.
    pub x: Mat<f64>,
    /// Observed values, one per row of `x`.
    pub y: Vec<f64>,
}

/// A safety constraint on one output column: `lower ≤ z ≤ upper` (either may be absent).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Constraint {
    /// The output column (of [`TaskData::outputs`]) the constraint is on.
    pub output: usize,
    /// The lower threshold `T` (safe when `z ≥ T`).
    pub lower: Option<f64>,
    /// The upper threshold `U` (safe when `z ≤ U`).
    pub upper: Option<f64>,
}

/// The true safety of a regular grid over the box (`D ≤ 2`), for counting the disjoint safe
/// regions that the queries reached.
#[derive(Clone, Debug, PartialEq)]
pub struct SafetyGrid {
    /// Points per dimension.
    pub shape: Vec<usize>,
    /// The grid points (row-major order, the last input varying fastest), one per row.
    pub points: Mat<f64>,
    /// Whether each grid point is truly safe.
    pub safe: Vec<bool>,
}

/// A built-in safe-learning benchmark (`safe-transfer.md` §5.2), in its own units: inputs in
/// the box `bounds`, outputs as observed.
#[derive(Clone, Debug, PartialEq)]
pub struct SafeBenchmark {
    /// The problem's name (`gp1d`, `branin`, …).
    pub name: String,
    /// The input box, one `(lo, hi)` per input.
    pub bounds: Vec<(f64, f64)>,
    /// The target task's safety constraints, on its output columns.
    pub constraints: Vec<Constraint>,
    /// The source tasks' noisy observations, with the target's output columns.
    pub sources: Vec<TaskData>,
    /// The safe initial target observations.
    pub initial: TaskData,
    /// The target's candidate inputs and the (noisy) outputs that querying each returns.
    pub candidates: TaskData,
    /// The true safety of each candidate (noise-free where the truth is known).
    pub candidate_safe: Vec<bool>,
    /// `Some(m)`: before each query the pool is a fresh seeded random subset of `m` unqueried
    /// candidates (GEngine); `None`: the pool is every unqueried candidate.
    pub pool_size: Option<usize>,
    /// Test points in the true safe region with noise-free values of `f` (for the RMSE).
    pub test: TaskData,
    /// The true safety on a grid (`D ≤ 2`), for the region count.
    pub grid: Option<SafetyGrid>,
    /// Number of queries after the initial data.
    pub n_query: usize,
    /// Hyperparameters are refitted before the first query and then every this many queries
    /// (1 for all but GEngine's 50).
    pub refit_every: usize,
    /// The fit settings the authors' code gives SAL's single-task GPs on this data set.
    pub sal_fit: SalFit,
}

/// The fit settings of SAL's single-task GPs in the authors' scripts (`safe-transfer.md` §6
/// \[code\]), which differ by data set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SalFit {
    /// The simulator scripts (GP1D, GP2D, Branin, Hartmann3, PEngine): 10 restarts from
    /// noise std 0.01 ([`TransferFitOptions::single_task`](crate::models::transfer::TransferFitOptions::single_task)).
    #[default]
    Simulator,
    /// The GEngine scripts: 5 restarts from noise std 0.1, as the transfer models there
    /// ([`TransferFitOptions::default`](crate::models::transfer::TransferFitOptions)).
    Engine,
}

/// How the model of one function uses the source tasks (`safe-transfer.md` §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TransferMethod {
    /// No transfer: a single-task GP on the target data (SAL).
    None,
    /// FullTransLMC: a linear model of coregionalisation over (sources, target), all
    /// parameters refitted jointly.
    Lmc,
    /// FullTransHGP: the hierarchical GP, all parameters refitted jointly.
    Hgp,
    /// EffTransHGP: the hierarchical GP with the source part fitted once and frozen, its
    /// Cholesky factor cached and the target rows appended by a block Cholesky.
    EfficientHgp,
    /// The labelled stand-in for Rothfuss et al. 2022 (§5.1 \[choice\]): a single-task GP whose
    /// hyperparameters are fitted on the source data and frozen, conditioned on the target only.
    SourcePrior,
}

impl TransferMethod {
    /// Every method, in the order of the paper's tables.
    pub const ALL: [TransferMethod; 5] = [
        TransferMethod::EfficientHgp,
        TransferMethod::Hgp,
        TransferMethod::Lmc,
        TransferMethod::SourcePrior,
        TransferMethod::None,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            TransferMethod::None => "none",
            TransferMethod::Lmc => "lmc",
            TransferMethod::Hgp => "hgp",
            TransferMethod::EfficientHgp => "efficient-hgp",
            TransferMethod::SourcePrior => "source-prior",
        }
    }

    /// The method named `name` (also accepts `sal` for [`TransferMethod::None`]).
    pub fn parse(name: &str) -> Option<TransferMethod> {
        match name {
            "sal" => Some(TransferMethod::None),
            _ => TransferMethod::ALL.into_iter().find(|m| m.name() == name),
        }
    }
}

/// The model of one function on the target task, as the safe loop sees it. Implemented by the
/// single-task GP (SAL) and by the transfer GPs; the source data, if any, were given when the
/// model was built.
pub trait FunctionModel: Send + Sync {
    /// Conditions on the target observations `(x, y)` (all of them, not only new ones): when
    /// `refit`, the free hyperparameters are refitted first (seeded by `seed`), otherwise the old
    /// ones are kept. A model may reuse work from earlier calls when `x` extends the earlier
    /// inputs by appended rows.
    ///
    /// # Errors
    /// Bad data or a failed fit or factorisation.
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError>;

    /// The latent posterior mean and variance of the target function at `x`.
    ///
    /// # Errors
    /// Called before [`FunctionModel::update`], or wrong dimensions.
    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError>;

    /// The target task's observation noise variance.
    fn noise_variance(&self) -> f64;

    /// Seconds spent in the last hyperparameter fit (0 when the last update did not refit).
    fn fit_seconds(&self) -> f64;

    /// The log marginal likelihood the model's current hyperparameters reach on the data of
    /// its last update, as its fit maximises it (a transfer GP: of the source and target data
    /// together); `None` before the first update or for a model that does not fit one.
    fn log_evidence(&self) -> Option<f64> {
        None
    }
}
