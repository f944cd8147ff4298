//! `experiments adversarial`: the adversarial-bounds paper's experiments (issue 24,
//! `adversarial-bounds.md` §5) at sizes that run in minutes on a small machine.
//!
//! Per data set (Synthetic2D, SPAM, MNIST38, [`crate::adversarial_data`]) a reference model —
//! binary Laplace with the logit link, `const · se` (isotropic, ℓ = σ² = 1 to start) fitted by
//! maximum evidence — gives the accuracy table and, for image tasks, each test point's salient
//! pixels (kept for every later model so that all compare on the same boxes). Then:
//!
//! * Fig. 2 ([`crate::adversarial_fig2`]): bounds of the predicted class's probability against
//!   γ, with the GPFGS attack, for a few test points;
//! * Fig. 3 ([`crate::adversarial_fig3`]): Laplace against EP along training (GPML's
//!   conjugate gradients stopped after 10, 40 and 100 evidence evaluations, as the paper): the
//!   spread δ at γ = 0.1 and the largest certified radius;
//! * Fig. 4 ([`crate::adversarial_fig4`]): sparse EP (FIC, DTC, VAR) on MNIST38 against the
//!   training and inducing set sizes;
//! * Figs. 5–6, binary part ([`crate::adversarial_fig5`]): global Δ attribution on
//!   Synthetic2D and SPAM;
//! * Figs. 5–6, multi-class part ([`crate::adversarial_fig6`]): MNIST358 Δ heatmaps, budget
//!   curves and minimal adversarial examples of a softmax GPC.
//!
//! Everything goes to `--out` (README.md with the tables and the paper's claims beside ours,
//! one SVG per Fig. 2 panel set, JSON lines of every measurement).

use std::fmt::Write as _;
use std::path::PathBuf;

use trustgp::estimators::classifier::{
    classification_metrics, BinaryModel, Classifier, ClassifierModel, ClassifierOptions,
};
use trustgp::verify::BnbOptions;

use crate::adversarial_attack::{salient, Certifier, Perturbation};
use crate::adversarial_data::{mnist38, spam, synthetic2d, Task};

/// Error type of the experiments.
pub type BoxError = Box<dyn std::error::Error>;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Folder of the shared data (holds classif_uci_spambase/ and classif_mnist_5k/).
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Output folder.
    #[arg(long, default_value = "results/adversarial")]
    pub out: PathBuf,
    /// Seed of the data splits (and of Synthetic2D).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Training rows per data set (the paper: 1000).
    #[arg(long, default_value_t = 500)]
    pub train: usize,
    /// Test rows per data set (accuracy; the paper: 200, 1000 for Fig. 4).
    #[arg(long, default_value_t = 200)]
    pub test: usize,
    /// Test points of Figs. 3 and 4 (the paper: 50).
    #[arg(long, default_value_t = 10)]
    pub points: usize,
    /// Test points of Fig. 2 (the paper: 1).
    #[arg(long, default_value_t = 2)]
    pub fig2_points: usize,
    /// Budgets of evidence evaluations of Fig. 3's fits (the paper's "epochs"; 1 keeps the
    /// untrained start).
    #[arg(long, value_delimiter = ',', default_value = "10,40,100")]
    pub epochs: Vec<usize>,
    /// How Fig. 3 trains: `gpml` (GPML's conjugate gradients from the reference code's ARD
    /// start, the paper's protocol) or `lbfgs-cap` (trustgp's isotropic L-BFGS-B fit with its
    /// evaluations capped).
    #[arg(long, value_enum, default_value_t = Protocol::Gpml)]
    pub fig3_protocol: Protocol,
    /// Fig. 4: training set sizes (at most --train).
    #[arg(long, value_delimiter = ',', default_value = "250,500")]
    pub fig4_train: Vec<usize>,
    /// Fig. 4: inducing set sizes.
    #[arg(long, value_delimiter = ',', default_value = "50,100,200")]
    pub fig4_inducing: Vec<usize>,
    /// Salient pixels perturbed in MNIST38 (the paper: ≤ 10 by SIFT).
    #[arg(long, default_value_t = 10)]
    pub pixels: usize,
    /// Branch-and-bound iteration cap per search.
    #[arg(long, default_value_t = 3000)]
    pub max_iterations: usize,
    /// Branch-and-bound time limit per search (seconds).
    #[arg(long, default_value_t = 2.0)]
    pub time_limit: f64,
    /// Figures to run (5: Figs. 5–6, the binary attribution part; 6: their MNIST358 part).
    #[arg(long, value_delimiter = ',', default_value = "2,3,4,5,6")]
    pub figures: Vec<u8>,
    /// Binary data sets of Figs. 2–5 (a subset of synthetic2d, spam, mnist38; Fig. 4 needs
    /// mnist38).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "synthetic2d,spam,mnist38"
    )]
    pub datasets: Vec<String>,
    /// MNIST358 (Figs. 5–6, softmax): training rows.
    #[arg(long, default_value_t = 300)]
    pub mc_train: usize,
    /// MNIST358: evidence evaluations of the softmax fit.
    #[arg(long, default_value_t = 30)]
    pub mc_evaluations: usize,
    /// MNIST358: the one-sided radius γ of the Δ boxes and of the budget moves.
    #[arg(long, default_value_t = 0.5)]
    pub mc_gamma: f64,
    /// MNIST358: branch-and-bound iterations per Δ search (the reference code: 50).
    #[arg(long, default_value_t = 50)]
    pub mc_iterations: usize,
    /// MNIST358: the most pixels a budget curve moves.
    #[arg(long, default_value_t = 40)]
    pub mc_budget: usize,
}

/// Fig. 3's training protocol.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// GPML's `minimize` for a budget of evaluations (the paper's).
    Gpml,
    /// trustgp's L-BFGS-B fit with its evaluations capped.
    LbfgsCap,
}

impl Protocol {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Gpml => "gpml",
            Protocol::LbfgsCap => "lbfgs-cap",
        }
    }
}

/// A data set with its reference model and the per-point perturbations.
pub struct Prepared {
    /// The data.
    pub task: Task,
    /// Laplace/logit, fully optimised.
    pub reference: Classifier,
    /// Its test accuracy.
    pub accuracy: f64,
    /// Perturbation of each of the first test points (salient pixels for images).
    pub perturbations: Vec<Perturbation>,
}

/// Options of `gpc` as the experiments use them: `const · se` from ℓ = σ² = 1 (the reference
/// code's start), inputs already in box units (no standardisation inside the model).
pub fn options(likelihood: &str, inference: &str) -> ClassifierOptions {
    ClassifierOptions {
        kernel: Some("const(var=1) * se(ls=1)".into()),
        likelihood: Some(likelihood.into()),
        inference: Some(inference.into()),
        optimize: true,
        standardize: false,
        ..ClassifierOptions::default()
    }
}

/// Fits `options` to the task's training rows with at most `evaluations` evidence evaluations
/// (`None`: the optimiser's defaults).
///
/// # Errors
/// Invalid options or a failed fit.
pub fn fit(
    task: &Task,
    options: &ClassifierOptions,
    evaluations: Option<usize>,
) -> Result<Classifier, BoxError> {
    let mut config = options.check()?;
    if let Some(e) = evaluations {
        config.fit.lbfgs.max_evals = e;
        config.fit.lbfgs.max_iter = e;
    }
    Ok(Classifier::fit(
        task.x_train.as_ref(),
        &task.y_train,
        &task.input_names(),
        "y",
        &config,
    )?)
}

/// Test accuracy.
///
/// # Errors
/// A prediction failure or a test label unseen in training.
pub fn accuracy(clf: &Classifier, task: &Task) -> Result<f64, BoxError> {
    let proba = clf.predict_proba(task.x_test.as_ref())?;
    Ok(classification_metrics(&clf.classes, proba.as_ref(), &task.y_test)?.0)
}

/// Evidence evaluations the fit of a dense binary model used (0 for other models).
pub fn evaluations(clf: &Classifier) -> usize {
    let starts = match &clf.model {
        ClassifierModel::Binary(BinaryModel::Laplace(m)) => m.starts(),
        ClassifierModel::Binary(BinaryModel::Ep(m)) => m.starts(),
        _ => &[],
    };
    starts.iter().map(|s| s.evaluations).sum()
}

/// Test row `i` as a vector.
pub fn test_point(task: &Task, i: usize) -> Vec<f64> {
    (0..task.x_test.ncols())
        .map(|j| task.x_test[(i, j)])
        .collect()
}

/// The median (the mean of the middle two for an even count); NaN for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

impl Args {
    /// Branch-and-bound options at `tolerance`.
    pub fn bnb(&self, tolerance: f64) -> BnbOptions {
        BnbOptions {
            tolerance,
            max_iterations: self.max_iterations,
            time_limit: Some(std::time::Duration::from_secs_f64(self.time_limit)),
            ..BnbOptions::default()
        }
    }
}

fn prepare(a: &Args, task: Task) -> Result<Prepared, BoxError> {
    let clock = std::time::Instant::now();
    let reference = fit(&task, &options("logit", "laplace"), None)?;
    let accuracy = accuracy(&reference, &task)?;
    let cert = Certifier::of(&reference)?;
    let n = a.points.max(a.fig2_points).min(task.x_test.nrows());
    let perturbations = (0..n)
        .map(|i| {
            if task.image {
                Perturbation {
                    free: Some(salient(&cert, &test_point(&task, i), a.pixels)),
                    clip: Some((0.0, 1.0)),
                }
            } else {
                Perturbation::default()
            }
        })
        .collect();
    eprintln!(
        "{}: reference Laplace/logit fit, accuracy {accuracy:.3}, {:.1} s",
        task.name,
        clock.elapsed().as_secs_f64()
    );
    Ok(Prepared {
        task,
        reference,
        accuracy,
        perturbations,
    })
}

/// Run the experiments.
pub fn run(a: &Args) -> Result<(), BoxError> {
    if a.points == 0 || a.epochs.is_empty() {
        return Err("--points and --epochs must be non-empty".into());
    }
    std::fs::create_dir_all(&a.out)?;
    let clock = std::time::Instant::now();
    // The binary data sets are only needed by Figs. 2–5.
    let binary = a.figures.iter().any(|f| (2..=5).contains(f));
    let mut tasks = Vec::new();
    for name in a.datasets.iter().filter(|_| binary) {
        tasks.push(match name.as_str() {
            "synthetic2d" => synthetic2d(a.train, a.test, a.seed)?,
            "spam" => spam(&a.data, a.train, a.test, a.seed)?,
            "mnist38" => mnist38(&a.data, a.train, a.test, a.seed)?,
            other => {
                return Err(format!(
                    "--datasets: unknown data set '{other}' (expected synthetic2d, spam or mnist38)"
                )
                .into())
            }
        });
    }
    let prepared = tasks
        .into_iter()
        .map(|t| prepare(a, t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut md = crate::provenance::header("Adversarial robustness guarantees for GPs: Figs. 2–6");
    md.push_str(&sizes(a));
    if binary {
        md.push_str(&accuracy_table(&prepared));
    }
    if a.figures.contains(&2) {
        md.push_str(&crate::adversarial_fig2::run(a, &prepared)?);
    }
    if a.figures.contains(&3) {
        md.push_str(&crate::adversarial_fig3::run(a, &prepared)?);
    }
    if a.figures.contains(&4) {
        let mnist = prepared
            .iter()
            .find(|p| p.task.name == "MNIST38")
            .ok_or("Fig. 4 needs MNIST38: add mnist38 to --datasets")?;
        md.push_str(&crate::adversarial_fig4::run(a, mnist)?);
    }
    if a.figures.contains(&5) {
        md.push_str(&crate::adversarial_fig5::run(a, &prepared)?);
    }
    if a.figures.contains(&6) {
        md.push_str(&crate::adversarial_fig6::run(a)?);
    }
    let _ = writeln!(
        md,
        "\nTotal wall-clock time: {:.0} s.",
        clock.elapsed().as_secs_f64()
    );
    std::fs::write(a.out.join("README.md"), md)?;
    eprintln!("wrote {}", a.out.join("README.md").display());
    Ok(())
}

fn sizes(a: &Args) -> String {
    format!(
        "## Set-up (reduced to run in minutes on a shared 2-core machine)\n\n\
         * Training rows per data set: {train} (paper: 1000); test rows for accuracy: {test} \
         (paper: 200; 1000 for Fig. 4). MNIST38 has 1000 rows of digits 3 and 8 in \
         `classif_mnist_5k`.\n\
         * Test points: Fig. 2 {f2} per data set (paper: 1); Figs. 3–4 {p} (paper: 50).\n\
         * Models: binary GPC with `const · se` (isotropic), zero mean, hyperparameters by \
         maximum evidence (L-BFGS-B from ℓ = σ² = 1, the reference code's start). Fig. 2 and \
         the accuracy table: Laplace with the logit link; Fig. 3: Laplace and EP both with the \
         probit link (EP is probit-only; the same link keeps the comparison about the \
         inference); Fig. 4: sparse EP.\n\
         * Data: Synthetic2D as the reference code (600 per class, shift 5, z-scored); SPAM: \
         the reference code's 11 Spambase columns, z-scored with training statistics; \
         MNIST38: pixels/255, 2×2 average pooling (196 inputs). Boxes are ℓ∞ balls in these \
         units; MNIST38 boxes perturb only the {px} pixels with the largest |∂π/∂x| at the \
         test point under the reference model (a stand-in for the paper's SIFT keypoint \
         pixels; no SIFT implementation is available here) and are clipped to [0, 1].\n\
         * Branch and bound: ε = 0.01 (Synthetic2D) / 0.02 (SPAM, MNIST38) as the reference \
         code, at most {it} splits and {tl} s per search; bounds are sound at every exit \
         (anytime).\n\n",
        train = a.train,
        test = a.test,
        f2 = a.fig2_points,
        p = a.points,
        px = a.pixels,
        it = a.max_iterations,
        tl = a.time_limit,
    )
}

/// The tolerance of a data set's bounds (the reference code's).
pub fn tolerance(task: &Task) -> f64 {
    if task.name == "Synthetic2D" {
        0.01
    } else {
        0.02
    }
}

fn accuracy_table(prepared: &[Prepared]) -> String {
    let mut s = String::from(
        "## Test accuracy (Laplace, logit)\n\n| data set | train | test | ours | paper |\n|---|---|---|---|---|\n",
    );
    for p in prepared {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1}% | ≈{:.0}% |",
            p.task.name,
            p.task.x_train.nrows(),
            p.task.x_test.nrows(),
            100.0 * p.accuracy,
            100.0 * p.task.paper_accuracy
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_even_and_nan() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[f64::NAN, 5.0]), 5.0);
        assert!(median(&[]).is_nan());
    }
}
