//! Command-line arguments (the contract of `docs/architecture.md`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Trustworthy Gaussian processes.
#[derive(Parser, Debug)]
#[command(name = "trustgp", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Fit a model to a CSV and save it as JSON.
    Fit(FitArgs),
    /// Predict with a saved model: CSV with mean_TARGET, std_TARGET per row.
    Predict(PredictArgs),
    /// Fit on a training split and report test metrics in original units.
    Evaluate(EvaluateArgs),
    /// Run a short demonstration on bundled data (UCI Yacht).
    Demo(DemoArgs),
    /// Suggest the next point to evaluate in a box, from the rows evaluated so far.
    Suggest(SuggestArgs),
    /// Run Bayesian optimisation on a built-in benchmark; report the best clean value.
    Bo(BoArgs),
    /// Run safe active learning (optionally with transfer from source tasks) on a built-in
    /// benchmark; report the paper's metrics.
    SafeAl(SafeAlArgs),
    /// Print a candidate kernel space of kernel selection (vbks): its canonical expressions.
    Kernels(KernelsArgs),
    /// Certified bounds of a prediction over a box around data points (branch and bound).
    Verify(VerifyArgs),
}

/// `trustgp kernels`.
#[derive(Args, Debug)]
pub struct KernelsArgs {
    /// k144, k12, or kernel expressions separated by `;`.
    #[arg(long, default_value = "k144")]
    pub space: String,
    /// Print one JSON object instead of one expression per line.
    #[arg(long)]
    pub json: bool,
}

/// What data and which model: shared by `fit` and `evaluate`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// CSV file with a header row.
    #[arg(long)]
    pub data: PathBuf,
    /// Target column(s), comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub target: Vec<String>,
    /// Input columns, comma-separated (default: every non-target column).
    #[arg(long, value_delimiter = ',')]
    pub inputs: Option<Vec<String>>,
    /// Model: gp, rcgp (robust), mogp (multi-output), mo-rcgp (robust multi-output), or an
    /// approximate model for large data: sgpr, svgp, rcsvgp (robust sparse), cagp
    /// (computation-aware), rcagp (robust computation-aware), rrp (sparse with relevance
    /// pursuit: per-point extra noise for outliers), vbks (kernel selection: a model average
    /// over the most probable of many candidate kernels); gpc: GP classification (the target
    /// column holds class labels, numbers or names).
    #[arg(long, default_value = "gp")]
    pub model: String,
    #[arg(
        long,
        help = "Kernel expression, e.g. \"const * se\", \"se(ls=[1,2]) + per(period=3)\" (default: const * se, ARD)"
    )]
    pub kernel: Option<String>,
    /// Initial noise variance, in standardised target units unless --no-standardize (default 0.1).
    #[arg(long, allow_negative_numbers = true)]
    pub noise: Option<f64>,
    /// Prior mean: zero, constant or linear (default: zero for gp and rcgp, constant — learned —
    /// for the approximate models).
    #[arg(long)]
    pub mean: Option<String>,
    /// Random optimiser restarts in addition to the initial start (0 = one start; at most 1000).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub restarts: usize,
    /// Seed for every random step.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub seed: u64,
    /// Keep the initial hyperparameters (no optimisation).
    #[arg(long)]
    pub no_optimize: bool,
    /// Do not z-score inputs and targets.
    #[arg(long)]
    pub no_standardize: bool,
    /// Robust models: expected fraction of outliers, one value or one per target (default: 0.2
    /// for rcgp, 0.1 for mo-rcgp).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub epsilon: Vec<f64>,
    /// mo-rcgp: centre the weights on the prior mean (rcgp) or on the other outputs (morcgp,
    /// the default).
    #[arg(long)]
    pub weight: Option<String>,
    /// Multi-output models: one noise variance shared by all outputs.
    #[arg(long)]
    pub shared_noise: bool,
    /// Multi-output models: rank of the coregionalisation matrix (default: number of targets).
    #[arg(long, allow_negative_numbers = true)]
    pub rank: Option<usize>,
    /// sgpr, svgp, rcsvgp, rrp, gpc --sparse: number of inducing points (default 100, at most
    /// the rows).
    #[arg(long, allow_negative_numbers = true)]
    pub inducing: Option<usize>,
    /// cagp, rcagp: number of actions (default 25, at most the rows).
    #[arg(long, allow_negative_numbers = true)]
    pub actions: Option<usize>,
    /// cagp, rcagp: blocks (sparse block actions, trained; default) or inducing (dense actions
    /// k(X, Z) at fixed k-means centres Z).
    #[arg(long)]
    pub action_kind: Option<String>,
    /// svgp: likelihood, gaussian (default) or student-t; gpc: logit (default) or probit.
    #[arg(long)]
    pub likelihood: Option<String>,
    /// gpc: inference, laplace (default) or ep (needs --likelihood probit).
    #[arg(long)]
    pub inference: Option<String>,
    /// gpc with --inference ep: a sparse prior, fic, dtc or var (VAR's hyperparameters are
    /// fitted under DTC), over --inducing M training rows chosen at random (seeded by --seed).
    #[arg(long)]
    pub sparse: Option<String>,
    /// gpc with more than two classes: one kernel per class instead of one shared.
    #[arg(long)]
    pub per_class_kernels: bool,
    /// Approximate models: optimiser, lbfgs (default; svgp: adam) or adam.
    #[arg(long)]
    pub optimizer: Option<String>,
    /// Approximate models: maximum optimiser iterations (Adam: steps).
    #[arg(long, allow_negative_numbers = true)]
    pub iterations: Option<usize>,
    /// Approximate models with --optimizer adam: learning rate (default 0.01).
    #[arg(long, allow_negative_numbers = true)]
    pub lr: Option<f64>,
    /// svgp: minibatch size (default 1024, at most the rows).
    #[arg(long, allow_negative_numbers = true)]
    pub batch_size: Option<usize>,
    /// rcsvgp, rcagp: learn the noise variance from the model's own bound with β = 1 (the
    /// RCaGP paper) instead of fixing it at an exact RCGP's estimate on up to 1000 rows.
    #[arg(long)]
    pub free_noise: bool,
    /// vbks: the candidate kernels, k144 (default: the 144 kernels to level 3 of the grammar),
    /// k12, or kernel expressions separated by `;`, e.g. "se; per * lin; (per + rq) * lin".
    #[arg(long)]
    pub kernels: Option<String>,
    /// vbks: kernels kept for the model average (default 10).
    #[arg(long, allow_negative_numbers = true)]
    pub top: Option<usize>,
    /// vbks: passes over the data (default: 1000 minibatch iterations, at least one pass).
    #[arg(long, allow_negative_numbers = true)]
    pub epochs: Option<usize>,
    /// vbks: hyperparameters as point estimates (point, the default) or full (a Gaussian
    /// posterior over each kernel's log-hyperparameters, prior N(0, 1) on each).
    #[arg(long)]
    pub mode: Option<String>,
    /// vbks: where each PER factor's period starts: data (the default: the training series'
    /// periodogram peaks that pass Fisher's g-test at level 0.01, one input column only) or
    /// unit (the spec's period 1 in standardised units).
    #[arg(long)]
    pub period_init: Option<String>,
    /// Start a fit even when its estimated memory exceeds this machine's.
    #[arg(long)]
    pub force: bool,
}

/// `trustgp fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// Data and model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Where to write the model file (JSON).
    #[arg(long)]
    pub out: PathBuf,
}

/// `trustgp predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A model file written by `trustgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// CSV holding (at least) the model's input columns.
    #[arg(long)]
    pub data: PathBuf,
    /// Report the std of the latent function instead of a new noisy observation.
    #[arg(long)]
    pub latent: bool,
    /// Write the CSV here (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `trustgp evaluate`.
#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// Data and model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Fraction of rows held out for testing (seeded by --seed); default 0.2.
    #[arg(long, conflicts_with_all = ["split_file", "split"], allow_negative_numbers = true)]
    pub test_fraction: Option<f64>,
    /// A split file (columns split,set,row) …
    #[arg(long, requires = "split")]
    pub split_file: Option<PathBuf>,
    /// … and the split to use from it.
    #[arg(long, allow_negative_numbers = true, requires = "split_file")]
    pub split: Option<usize>,
    #[arg(
        long,
        help = "Outlier contamination of the training rows: uniform|asymmetric|focused:FRACTION[:COLUMN]"
    )]
    pub contaminate: Option<String>,
    /// Outlier magnitudes: rcagp (shifts of 3–9 target stds) or mo-rcgp (6–9 stds).
    #[arg(long, default_value = "rcagp", requires = "contaminate")]
    pub contaminate_protocol: String,
}

/// `trustgp demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Also draw the held-out predictions against the truth, with 95% intervals, as SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Arguments of `suggest`.
#[derive(Args, Debug)]
pub struct SuggestArgs {
    /// The box, e.g. "x1=0:1,x2=-5:10": its names are the input columns of --data.
    #[arg(long, allow_hyphen_values = true)]
    pub bounds: String,
    /// CSV of the evaluated rows (omitted or without rows: points of the initial design).
    /// With --state, the rows the state has seen must be its first rows, unchanged.
    #[arg(long, requires = "target")]
    pub data: Option<PathBuf>,
    /// The target column of --data.
    #[arg(long)]
    pub target: Option<String>,
    /// maximize or minimize the target.
    #[arg(long, default_value = "maximize")]
    pub direction: String,
    /// Acquisition: logei, ei, pi, ucb, qlogei (batch Monte Carlo LogEI) or ts (Thompson);
    /// with --constraint also entropy (safe active learning: the summed predictive entropy of
    /// the target and the constraints).
    #[arg(long, default_value = "logei")]
    pub acquisition: String,
    /// A safety constraint on an observed column of --data, e.g. "temp<=1.0" or
    /// "temp>=-1.5" (repeat the flag for more; a column may have both bounds). Only points the
    /// models hold safe with probability Φ(√β) per bound are suggested.
    #[arg(long, allow_hyphen_values = true)]
    pub constraint: Vec<String>,
    /// Safety level β of --constraint: a bound holds when μ − √β·s ≥ T (default 4: 97.7 %).
    #[arg(long, default_value_t = 4.0)]
    pub beta: f64,
    /// Candidate points (CSV with the bound names as columns): with --constraint, choose
    /// among them (rows already in --data are skipped) instead of the whole box.
    #[arg(long)]
    pub pool: Option<PathBuf>,
    /// A source task's evaluated rows (same columns as --data; repeat for more sources):
    /// with --constraint, the models transfer what the source tasks show.
    #[arg(long)]
    pub source: Vec<PathBuf>,
    /// Transfer model with --source: efficient-hgp (default), hgp, lmc, source-prior or none.
    #[arg(long)]
    pub transfer: Option<String>,
    /// How many points to suggest (batches: logei/qlogei, ei or ts).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub batch: usize,
    /// Surrogate model: gp, rcgp, sgpr, svgp, rcsvgp, cagp, rcagp or rrp.
    #[arg(long, default_value = "gp")]
    pub model: String,
    /// standard (the whole box), turbo (a trust region kept in --state), eulbo (the point
    /// and a svgp/rcsvgp/cagp/rcagp surrogate optimised jointly), eulbo-turbo, dpp (the
    /// sgpr/svgp/rcsvgp/cagp/rcagp surrogate's 25 inducing inputs picked from the evaluated
    /// rows by a quality-weighted DPP, DPP-BO) or dpp-turbo.
    #[arg(long, default_value = "standard")]
    pub method: String,
    /// Where rcgp and rcagp centre their robust (IMQ) weights: prior (the prior mean, RCGP's
    /// weight) or loo (each observation's leave-one-out mean under a first exact-GP fit, which
    /// tells outliers from good points when maximising; see docs/decisions.md). Default: prior.
    #[arg(long)]
    pub robust_centre: Option<String>,
    /// Expert-guided prior mean of rcgp, rcsvgp and rcagp (rcagp.md §2.12): off, constant:V
    /// (a prior mean in the objective's units) or corrections:COLUMN (the column of --data
    /// holding an expert's corrected value on the rows they flag as outliers, empty elsewhere).
    #[arg(long, default_value = "off")]
    pub expert_mean: String,
    /// With fewer evaluated rows than this, points of the initial design.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub init: usize,
    /// A JSON file keeping the run between calls (trust region, design position, optimiser
    /// seed): read when it exists, created otherwise, rewritten after every call.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Seed of the initial design, the fit and the acquisition's raw samples.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub seed: u32,
    /// Also write the points as CSV here (a header of the bound names, one row per point).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `bo`.
#[derive(Args, Debug)]
pub struct BoArgs {
    /// The benchmark: branin, hartmann6, ackley:D or rover60.
    #[arg(long)]
    pub problem: String,
    /// Evaluations in all, the initial design included.
    #[arg(long, allow_negative_numbers = true)]
    pub budget: usize,
    /// Evaluations of the initial design (scrambled Sobol).
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub init: usize,
    /// Take the initial design from this CSV instead (columns x1, x2, … of the problem's
    /// inputs; other columns are ignored; the objective is evaluated at every row, whose
    /// count replaces --init): to start several tools from the same points.
    #[arg(long)]
    pub init_points: Option<PathBuf>,
    /// Points per iteration after the initial design.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub batch: usize,
    /// Acquisition: logei, ei, pi, ucb, qlogei (batch Monte Carlo LogEI) or ts (Thompson).
    #[arg(long, default_value = "logei")]
    pub acquisition: String,
    /// Surrogate model: gp, rcgp, sgpr, svgp, rcsvgp, cagp, rcagp or rrp.
    #[arg(long, default_value = "gp")]
    pub model: String,
    /// standard (the whole box), turbo (TuRBO trust region), eulbo (the point and a
    /// svgp/rcsvgp/cagp/rcagp surrogate optimised jointly), eulbo-turbo, dpp (the
    /// sgpr/svgp/rcsvgp/cagp/rcagp surrogate's 25 inducing inputs picked from the evaluated
    /// points by a quality-weighted DPP, DPP-BO) or dpp-turbo.
    #[arg(long, default_value = "standard")]
    pub method: String,
    /// Where rcgp and rcagp centre their robust (IMQ) weights: prior (the prior mean, RCGP's
    /// weight) or loo (each observation's leave-one-out mean under a first exact-GP fit, which
    /// tells outliers from good points when maximising; see docs/decisions.md). Default: prior.
    #[arg(long)]
    pub robust_centre: Option<String>,
    /// Expert-guided prior mean of rcgp, rcsvgp and rcagp (rcagp.md §2.12): off, constant:V
    /// (in the objective's units) or simulated (with --outliers: every 20 evaluations the
    /// paper's simulated expert corrects each injected outlier to its clean value plus N(0, 1)
    /// noise in standardised units).
    #[arg(long, default_value = "off")]
    pub expert_mean: String,
    /// Corrupt what the model sees: asymmetric:P or uniform:P (e.g. asymmetric:0.25).
    #[arg(long)]
    pub outliers: Option<String>,
    /// Seed of the design, the fits, the optimiser and the outliers.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub seed: u32,
    /// Write one JSON line per evaluation here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Draw the best clean value against the evaluations as SVG here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Arguments of `safe-al`.
#[derive(Args, Debug)]
pub struct SafeAlArgs {
    /// The benchmark: toy1d, gp1d, gp2d, branin, hartmann3, pengine or gengine.
    #[arg(long)]
    pub problem: String,
    /// sal (no transfer), efficient-hgp (EffTransHGP), hgp (FullTransHGP), lmc
    /// (FullTransLMC) or source-prior (a single-task GP with source-fitted hyperparameters, a
    /// stand-in for Rothfuss et al. 2022).
    #[arg(long, default_value = "efficient-hgp")]
    pub method: String,
    /// Seed of the benchmark's draw, the fits and the pool.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub seed: u64,
    /// Folder of the engine data sets (pengine, gengine).
    #[arg(long, default_value = "../shared/data")]
    pub data_dir: PathBuf,
    /// Queries after the initial data (default: the paper's, Table 2).
    #[arg(long, allow_negative_numbers = true)]
    pub queries: Option<usize>,
    /// Number of source tasks (branin: 1 to 5).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub sources: usize,
    /// Points per source task (default: the paper's, Table 2).
    #[arg(long, allow_negative_numbers = true)]
    pub source_points: Option<usize>,
    /// Safety level β (a bound holds when μ − √β·s ≥ T).
    #[arg(long, default_value_t = 4.0)]
    pub beta: f64,
    /// Write every query and the metrics after each as JSON here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Draw the true and the explored safe set (1-D and 2-D problems) as SVG here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the benchmark as CSV files here (initial.csv, pool.csv, source1.csv, …), to drive
    /// `trustgp suggest` or another tool on the same data, and stop.
    #[arg(long)]
    pub export: Option<PathBuf>,
}

/// `trustgp verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A model file written by `trustgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// CSV holding (at least) the model's input columns: the points to verify around.
    #[arg(long)]
    pub data: PathBuf,
    /// Verify only this data row (0-based, header excluded; default: every row).
    #[arg(long, allow_negative_numbers = true)]
    pub row: Option<usize>,
    /// Radius γ of the ℓ∞ box around each point, in the data's units.
    #[arg(long, allow_negative_numbers = true)]
    pub radius: f64,
    /// Input columns that may move, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// What to bound: mean or variance (latent) of a regression model; probability of a
    /// classifier's class (default: mean for regression).
    #[arg(long)]
    pub quantity: Option<String>,
    /// Target to verify, for a model of several targets (default: the first).
    #[arg(long, conflicts_with = "class")]
    pub output: Option<String>,
    /// Class whose probability is bounded (classifiers).
    #[arg(long)]
    pub class: Option<String>,
    /// Regression: certify that the quantity moves at most δ from its value at the point.
    #[arg(long, allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// Stop when each certified bound is within ε of a value attained in the box.
    #[arg(long, default_value_t = 0.01, allow_negative_numbers = true)]
    pub tolerance: f64,
    /// Maximum number of box splits per bound.
    #[arg(long, allow_negative_numbers = true, default_value_t = 10_000)]
    pub max_iterations: usize,
    /// Time limit per bound, in seconds.
    #[arg(long, allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
    /// Also report the Δγ feature attribution of each free feature.
    #[arg(long)]
    pub attribution: bool,
    /// Also write the JSON here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}
