//! `experiments bench-verify`: the speed of a certified probability bound (issue 24).
//!
//! Synthetic2D as the reference code builds it (two 2-D standard normals, class +1 shifted
//! along the first input and class −1 along the second, inputs z-scored), a probit-style
//! Laplace-like latent form over all training points with an se kernel: `S = (K + W⁻¹)⁻¹` with
//! `W = w I`, `t = S ŷ` (`ŷ = ±scale`), built as an exact GP with noise `1/w` (the classifier
//! is wired in at merge; this form has the same shape and cost). For each of `--points` test
//! points it bounds `min` and `max` of the probit class probability over the ℓ∞ ball of
//! `--radius` to `--tolerance` and prints one JSON line per point, then a summary line.

use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::json;
use trustgp::kernels::Kernel;
use trustgp::means::Mean;
use trustgp::models::exact::ExactGp;
use trustgp::models::hyper::GpHyper;
use trustgp::verify::{
    verify, BinaryLink, BnbOptions, LatentForm, Quantity, Region, VarianceMethod,
};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Training points (half per class).
    #[arg(long, default_value_t = 1000)]
    n: usize,
    /// Test points to bound.
    #[arg(long, default_value_t = 20)]
    points: usize,
    /// Radius γ of the ℓ∞ box (standardised units).
    #[arg(long, default_value_t = 0.1)]
    radius: f64,
    /// Tolerance ε of each bound.
    #[arg(long, default_value_t = 0.01)]
    tolerance: f64,
    /// Shift of the classes.
    #[arg(long, default_value_t = 5.0)]
    shift: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Variance bounds: closed-form, solver (Clarabel QP/LP) or both.
    #[arg(long, default_value = "closed-form")]
    variance: String,
    /// Branch-and-bound iteration cap per search.
    #[arg(long, default_value_t = 10_000)]
    max_iterations: usize,
}

/// Synthetic2D: inputs (z-scored) and labels ±1.
pub(crate) fn synthetic(n: usize, shift: f64, rng: &mut StdRng) -> (Mat<f64>, Vec<f64>) {
    let mut x = Mat::<f64>::zeros(n, 2);
    let mut y = vec![0.0; n];
    for i in 0..n {
        let positive = i % 2 == 0;
        for j in 0..2 {
            let z: f64 = StandardNormal.sample(rng);
            x[(i, j)] = z + if (j == 0) == positive { shift } else { 0.0 };
        }
        y[i] = if positive { 1.0 } else { -1.0 };
    }
    for j in 0..2 {
        let m = (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64;
        let s = ((0..n).map(|i| (x[(i, j)] - m).powi(2)).sum::<f64>() / n as f64).sqrt();
        for i in 0..n {
            x[(i, j)] = (x[(i, j)] - m) / s;
        }
    }
    (x, y)
}

/// Run the benchmark.
pub fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(a.seed);
    let (x, y) = synthetic(a.n, a.shift, &mut rng);
    let (xt, _) = synthetic(a.points, a.shift, &mut rng);
    let start = Instant::now();
    // Laplace-like: W = 0.2 (a logistic W ≤ 1/4), targets ±2 so that t stays O(1).
    let hyper = GpHyper {
        kernel: Kernel::parse("se(var=4.0, ls=0.5)")?,
        mean: Mean::Zero,
        noise: 1.0 / 0.2,
    };
    let yhat: Vec<f64> = y.iter().map(|v| 2.0 * v).collect();
    let gp = ExactGp::at(hyper, x.as_ref(), &yhat, 0.0)?;
    let form = LatentForm::of(&gp)?;
    let setup = start.elapsed().as_secs_f64();
    let variance = match a.variance.as_str() {
        "closed-form" => VarianceMethod::ClosedForm,
        "solver" => VarianceMethod::Solver,
        "both" => VarianceMethod::Both,
        v => {
            return Err(format!("--variance must be closed-form, solver or both, got {v:?}").into())
        }
    };
    let options = BnbOptions {
        tolerance: a.tolerance,
        max_iterations: a.max_iterations,
        variance,
        ..BnbOptions::default()
    };
    let mut times = Vec::new();
    let mut iterations = 0;
    for p in 0..a.points {
        let centre = [xt[(p, 0)], xt[(p, 1)]];
        let region = Region::ball(&centre, a.radius, None)?;
        let v = verify(
            &form,
            Quantity::Probability(BinaryLink::Probit),
            &region,
            &options,
        )?;
        times.push(v.seconds);
        iterations += v.iterations;
        println!(
            "{}",
            json!({
                "point": p, "x": centre, "lower": v.lower, "upper": v.upper,
                "min_found": v.min_found, "max_found": v.max_found, "gap": v.gap,
                "iterations": v.iterations, "seconds": v.seconds,
                "exit": [v.exit_min.name(), v.exit_max.name()],
            })
        );
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({
            "n": a.n, "points": a.points, "radius": a.radius, "tolerance": a.tolerance,
            "variance": a.variance,
            "setup_seconds": setup,
            "seconds_mean": times.iter().sum::<f64>() / times.len().max(1) as f64,
            "seconds_median": sorted.get(sorted.len() / 2),
            "seconds_max": sorted.last(),
            "threads": rayon::current_num_threads(),
            "iterations_mean": iterations as f64 / a.points.max(1) as f64,
        })
    );
    Ok(())
}
