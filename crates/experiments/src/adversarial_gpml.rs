//! Fig. 3's training protocol as the paper ran it: GPML's `minimize` (conjugate gradients,
//! [`minimize_cg_budgets`]) for a budget of evaluations of the approximate log marginal
//! likelihood — the paper's "epochs" (§7.2: "the number of marginal likelihood evaluations
//! (epochs) performed during MLE hyper-parameter optimisation") — from the reference code's
//! start: `covSEard` with every ℓ = 1 and sf = 1, zero mean, probit link (`likErf`).
//!
//! GPML optimises `hyp.cov = (log ℓ₁, …, log ℓ_d, log sf)`; trustgp's `const(var) · se(ls=[…])`
//! has the log parameters `(log σ², log ℓ₁, …, log ℓ_d)` with `σ² = sf²`. The path of conjugate
//! gradients depends on the coordinates, so the objective is written in GPML's (the gradient in
//! `log sf` is twice the one in `log σ²`). Each evaluation's mode (Laplace) or sites (EP) start
//! the next one, as GPML's `infLaplace`/`infEP` keep theirs.

use std::time::Instant;

use trustgp::estimators::classifier::{sorted_classes, Classifier};
use trustgp::kernels::Kernel;
use trustgp::likelihoods::Link;
use trustgp::models::classification::ep::{ep_evidence, Probit};
use trustgp::models::classification::laplace::laplace_evidence;
use trustgp::models::classification::EpSettings;
use trustgp::optim::minimize_cg_budgets;

use crate::adversarial::{options, BoxError};
use crate::adversarial_data::Task;

/// One budget's model.
pub struct Fitted {
    /// The model at the hyperparameters the budget reached.
    pub classifier: Classifier,
    /// Evaluations used (at most the budget; fewer if the run ended early).
    pub evaluations: usize,
    /// Line searches that succeeded within them.
    pub line_searches: usize,
    /// `σ²` and the lengthscales reached.
    pub var: f64,
    /// The lengthscales (one per input).
    pub lengthscales: Vec<f64>,
    /// Seconds of the optimisation up to this budget plus the model's construction.
    pub seconds: f64,
}

/// The start kernel: `const(var=1) · se` with one lengthscale 1 per input.
pub fn start_kernel(d: usize) -> Result<Kernel, BoxError> {
    let ones = vec!["1"; d].join(", ");
    Ok(Kernel::parse(&format!("const(var=1) * se(ls=[{ones}])"))?)
}

/// GPML's `(log ℓ, log sf)` as the kernel's log parameters `(log σ², log ℓ)`.
pub fn to_kernel_params(u: &[f64]) -> Vec<f64> {
    let d = u.len() - 1;
    std::iter::once(2.0 * u[d])
        .chain(u[..d].iter().copied())
        .collect()
}

/// A gradient in the kernel's log parameters as one in GPML's coordinates.
pub fn to_gpml_gradient(g: &[f64]) -> Vec<f64> {
    g[1..]
        .iter()
        .copied()
        .chain(std::iter::once(2.0 * g[0]))
        .collect()
}

/// An objective's value and gradient, or why it could not be evaluated.
type ValueGradient = Result<(f64, Vec<f64>), String>;

/// The negated approximate log marginal likelihood of `inference` (`laplace` or `ep`, probit)
/// and its gradient in GPML's coordinates, warm-starting every evaluation from the last.
pub fn negative_evidence<'a>(
    x: faer::MatRef<'a, f64>,
    y: &'a [f64],
    inference: &'a str,
) -> Result<impl FnMut(&[f64]) -> ValueGradient + 'a, BoxError> {
    if !matches!(inference, "laplace" | "ep") {
        return Err(format!("inference must be laplace or ep, not '{inference}'").into());
    }
    let mut kernel = start_kernel(x.ncols())?;
    let settings = EpSettings::default();
    let mut warm: Option<Vec<f64>> = None;
    Ok(move |u: &[f64]| -> Result<(f64, Vec<f64>), String> {
        kernel
            .set_log_params(&to_kernel_params(u))
            .map_err(|e| e.to_string())?;
        let (value, grad, state) = if inference == "laplace" {
            let r = laplace_evidence(&kernel, x, y, Link::Probit, warm.as_deref(), true)
                .map_err(|e| e.to_string())?;
            (r.value, r.grad, r.alpha)
        } else {
            let r = ep_evidence(&kernel, x, y, &Probit, &settings, warm.as_deref(), true)
                .map_err(|e| e.to_string())?;
            (r.value, r.grad, [r.tau, r.nu].concat())
        };
        warm = Some(state);
        Ok((-value, to_gpml_gradient(&grad).iter().map(|g| -g).collect()))
    })
}

/// Trains `inference` on the task's training rows by GPML's `minimize` from the reference
/// code's start and returns the model each budget reaches (one run of the largest).
///
/// # Errors
/// A bad inference name, a failed first evaluation or a model that cannot be built.
pub fn fit_budgets(
    task: &Task,
    inference: &str,
    budgets: &[usize],
) -> Result<Vec<Fitted>, BoxError> {
    let classes = sorted_classes(&task.y_train);
    if classes.len() != 2 {
        return Err(format!("{}: {} classes, not 2", task.name, classes.len()).into());
    }
    let y: Vec<f64> = task
        .y_train
        .iter()
        .map(|l| if *l == classes[1] { 1.0 } else { -1.0 })
        .collect();
    let d = task.x_train.ncols();
    let mut objective = negative_evidence(task.x_train.as_ref(), &y, inference)?;
    // Seconds at the end of each evaluation, to time every budget from the one run.
    let clock = Instant::now();
    let mut times = Vec::new();
    let mut timed = |u: &[f64]| {
        let r = objective(u);
        times.push(clock.elapsed().as_secs_f64());
        r
    };
    let start = vec![0.0; d + 1];
    let results = minimize_cg_budgets(&mut timed, &start, budgets)?;
    let mut config = options("probit", inference).check()?;
    config.fit.optimize = false;
    results
        .iter()
        .map(|r| {
            let build = Instant::now();
            let v = to_kernel_params(&r.x);
            let mut kernel = start_kernel(d)?;
            kernel.set_log_params(&v)?;
            config.kernel = kernel;
            let classifier = Classifier::fit(
                task.x_train.as_ref(),
                &task.y_train,
                &task.input_names(),
                "y",
                &config,
            )?;
            Ok(Fitted {
                classifier,
                evaluations: r.n_evals,
                line_searches: r.n_iter,
                var: v[0].exp(),
                lengthscales: v[1..].iter().map(|l| l.exp()).collect(),
                seconds: times[r.n_evals - 1] + build.elapsed().as_secs_f64(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// 30 rows in 3 inputs, labelled by the sign of a smooth function.
    fn task() -> Task {
        let mut rng = StdRng::seed_from_u64(3);
        let x = Mat::from_fn(30, 3, |_, _| rng.random_range(-2.0f64..2.0));
        let y: Vec<String> = (0..30)
            .map(|i| {
                let s = x[(i, 0)] + (2.0 * x[(i, 1)]).sin() - 0.3 * x[(i, 2)];
                if s > 0.0 { "b" } else { "a" }.to_string()
            })
            .collect();
        Task {
            name: "tiny",
            x_train: x.clone(),
            y_train: y.clone(),
            x_test: x,
            y_test: y,
            image: false,
            paper_accuracy: 1.0,
        }
    }

    fn labels(t: &Task) -> Vec<f64> {
        t.y_train
            .iter()
            .map(|l| if l == "b" { 1.0 } else { -1.0 })
            .collect()
    }

    #[test]
    fn the_objective_gradient_in_gpml_coordinates_matches_central_differences() {
        let t = task();
        let y = labels(&t);
        let u = [0.3, -0.2, 0.5, 0.4];
        for inference in ["laplace", "ep"] {
            let mut f = negative_evidence(t.x_train.as_ref(), &y, inference).unwrap();
            let (_, g) = f(&u).unwrap();
            let h = 1e-5;
            for j in 0..u.len() {
                let (mut up, mut down) = (u.to_vec(), u.to_vec());
                up[j] += h;
                down[j] -= h;
                let fd = (f(&up).unwrap().0 - f(&down).unwrap().0) / (2.0 * h);
                assert!(
                    (g[j] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
                    "{inference} component {j}: {} vs {fd}",
                    g[j]
                );
            }
        }
    }

    #[test]
    fn the_coordinates_map_both_ways() {
        let u = [0.1, -0.7, 0.25];
        assert_eq!(to_kernel_params(&u), vec![0.5, 0.1, -0.7]);
        assert_eq!(to_gpml_gradient(&[1.0, 2.0, 3.0]), vec![2.0, 3.0, 2.0]);
        let k = start_kernel(2).unwrap();
        // σ² first, then the lengthscales, all at 1.
        assert_eq!(k.log_params(), vec![0.0; 3]);
        assert!(k.param_names()[0].ends_with("var"), "{:?}", k.param_names());
    }

    #[test]
    fn each_budget_gives_the_model_at_the_point_it_reached() {
        let t = task();
        let y = labels(&t);
        for inference in ["laplace", "ep"] {
            let fits = fit_budgets(&t, inference, &[1, 5, 12]).unwrap();
            // Budget 1 keeps the start.
            assert_eq!(fits[0].var, 1.0);
            assert!(fits[0].lengthscales.iter().all(|&l| l == 1.0));
            let mut f = negative_evidence(t.x_train.as_ref(), &y, inference).unwrap();
            for (fit, budget) in fits.iter().zip([1, 5, 12]) {
                assert!(fit.evaluations <= budget);
                // The model's evidence is the objective's at the hyperparameters reached.
                let u: Vec<f64> = fit
                    .lengthscales
                    .iter()
                    .map(|l| l.ln())
                    .chain(std::iter::once(0.5 * fit.var.ln()))
                    .collect();
                let value = -f(&u).unwrap().0;
                let lml = fit.classifier.lml();
                assert!(
                    (lml - value).abs() < 1e-6 * (1.0 + value.abs()),
                    "{lml} vs {value}"
                );
            }
            // Training raised the evidence.
            assert!(fits[2].classifier.lml() > fits[0].classifier.lml());
        }
    }
}
