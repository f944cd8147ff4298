//! `experiments bench-softmax`: how tight the certified softmax class-probability bounds are
//! (issue 24, task softmax2), for two, three and four classes.
//!
//! For each number of classes a multi-class Laplace classifier with one shared se kernel is
//! fitted at fixed hyperparameters on seeded 2-D data (the classes are slabs along a direction,
//! as in the library's softmax tests). Then, per class:
//! * the **point floor**: the width of the certified bracket `[lo, hi] ∋ π_c(x)` at a point
//!   (a degenerate box: no relaxation, only the latent-space scheme), the largest over
//!   `--points` points;
//! * the **box gap**: branch and bound on the ℓ∞ box of `--radius` around each point to
//!   tolerance 10⁻⁴ with `--max-iterations`; the gap it reaches (its floor on boxes), and the
//!   time per search.
//!
//! One JSON line per number of classes.

use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use trustgp::kernels::Kernel;
use trustgp::models::classification::multiclass::{ClassKernels, MulticlassLaplace};
use trustgp::verify::{verify_softmax, BnbOptions, Region, SoftmaxForm};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Training points.
    #[arg(long, default_value_t = 30)]
    n: usize,
    /// Points (and boxes) per number of classes.
    #[arg(long, default_value_t = 6)]
    points: usize,
    /// Radius of the boxes.
    #[arg(long, default_value_t = 0.05)]
    radius: f64,
    /// Branch-and-bound iteration cap per search.
    #[arg(long, default_value_t = 100)]
    max_iterations: usize,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Seeded 2-D inputs in `[−2, 2]²`, labels from slabs of `x₀ + x₁/2` plus noise (each class at
/// least once).
fn data(n: usize, classes: usize, rng: &mut StdRng) -> (Mat<f64>, Vec<usize>) {
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            if i < classes {
                i
            } else {
                let v = x[(i, 0)] + 0.5 * x[(i, 1)] + rng.random_range(-0.5..0.5);
                ((v + 2.5) * classes as f64 / 5.0)
                    .floor()
                    .clamp(0.0, classes as f64 - 1.0) as usize
            }
        })
        .collect();
    (x, y)
}

/// Runs the measurement.
///
/// # Errors
/// A failed fit or bound.
pub fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    for classes in 2..=4 {
        let mut rng = StdRng::seed_from_u64(a.seed + classes as u64);
        let (x, y) = data(a.n, classes, &mut rng);
        let kernel = Kernel::parse("se(ls=0.9, var=2.0)")?;
        let model = MulticlassLaplace::at(x.as_ref(), &y, classes, ClassKernels::Shared(kernel))?;
        let form = SoftmaxForm::new(&model.latent_form())?;
        let opts = BnbOptions {
            tolerance: 1e-4,
            max_iterations: a.max_iterations,
            ..BnbOptions::default()
        };
        let (mut floor, mut gap, mut seconds, mut searches) = (0.0_f64, 0.0_f64, 0.0, 0);
        let mut gaps = Vec::new();
        for _ in 0..a.points {
            let p: Vec<f64> = (0..2).map(|_| rng.random_range(-1.5..1.5)).collect();
            for (lo, hi) in form.probability_bracket(&p) {
                floor = floor.max(hi - lo);
            }
            let region = Region::ball(&p, a.radius, None)?;
            for c in 0..classes {
                let t = Instant::now();
                let v = verify_softmax(&form, c, &region, &opts)?;
                seconds += t.elapsed().as_secs_f64();
                searches += 2;
                gap = gap.max(v.gap);
                gaps.push(v.gap);
            }
        }
        gaps.sort_by(f64::total_cmp);
        println!(
            "{}",
            json!({
                "classes": classes,
                "point_floor_max": floor,
                "box_gap_max": gap,
                "box_gap_median": gaps[gaps.len() / 2],
                "radius": a.radius,
                "max_iterations": a.max_iterations,
                "seconds_per_search": seconds / searches as f64,
            })
        );
    }
    Ok(())
}
