//! `experiments imputation` and `experiments navitoclax`: Figures 2 and 1 of the MO-RCGP paper.
//!
//! * Imputation (spec §5.1): N = 120 inputs on [0, 1], two outputs from an ICM (SE, ℓ = 0.05,
//!   B = A Aᵀ with A = [[1.414, 0], [0.849, 0.529]]) plus noise of variance 0.05; output 1 is
//!   removed on 0.3 < x < 0.7 and three output-2 values with inputs in [0.45, 0.55] are replaced
//!   by draws from N(5, 0.5²). Both models use the true hyperparameters; MO-RCGP ε = (0, 0.025).
//!   Reported: RMSE of the imputed output 1 against the true latent function in the gap.
//! * Navitoclax (spec §5.6): viability of cell lines P12-ICHIKAWA and ARH-77 over 21 doses;
//!   prior mean 0.5; MOGP by marginal likelihood (σ₀² = 0.005), MO-RCGP by weighted LOO-CV
//!   (ε = 0.2 each, MCD support 0.9, started from the MOGP's noise, ℓ₀ = 2). Reported: each
//!   model's P12-ICHIKAWA prediction at the outlying dose and the largest pull towards it.

use std::path::PathBuf;

use faer::Mat;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use serde_json::json;
use trustgp::fit::FitOptions;
use trustgp::kernels::{Coregion, Covariance, Kernel, LmcTerm, MultiOutputKernel};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::means::{PriorMean, TaskMean};
use trustgp::models::robust::mogp::MultiOutputGp;
use trustgp::models::robust::multi_output::{MultiOutputConfig, MultiOutputKind, MultiOutputModel};
use trustgp::models::robust::tasks::{all_outputs, TaskEntries};
use trustgp::models::robust::{conditional_weights, RobustGp};

use crate::figure::{panels_svg, Curve, Panel};

type BoxError = Box<dyn std::error::Error>;

/// Arguments of `imputation`.
#[derive(clap::Args, Debug)]
pub struct ImputationArgs {
    /// Seed of the synthetic data.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the SVG figure here.
    #[arg(long, default_value = "results/mo_rcgp_imputation.svg")]
    plot: PathBuf,
}

/// Arguments of `navitoclax`.
#[derive(clap::Args, Debug)]
pub struct NavitoclaxArgs {
    /// The two-cell-line table (log10_dose, P12-ICHIKAWA, ARH-77).
    #[arg(
        long,
        default_value = "../shared/data/gdsc_navitoclax_dose_response/navitoclax_P12-ICHIKAWA_ARH-77_wide.csv"
    )]
    data: PathBuf,
    /// Write the SVG figure here.
    #[arg(long, default_value = "results/mo_rcgp_navitoclax.svg")]
    plot: PathBuf,
}

fn curve(label: &str, colour: &'static str, x: &[f64], mean: &[f64], var: &[f64]) -> Curve {
    Curve {
        label: label.into(),
        colour,
        x: x.to_vec(),
        mean: mean.to_vec(),
        std: var.iter().map(|v| v.max(0.0).sqrt()).collect(),
    }
}

/// Run the imputation experiment.
pub fn imputation(a: &ImputationArgs) -> Result<(), BoxError> {
    let n = 120;
    let noise: f64 = 0.05;
    let mut rng = StdRng::seed_from_u64(a.seed);
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(0.0..1.0));
    let coregion = Coregion::new(
        Mat::from_fn(2, 2, |i, j| [[1.414, 0.0], [0.849, 0.529]][i][j]),
        None,
    )?;
    let k = MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse("se(ls=0.05)")?,
        coregion,
    }])?;
    let xa = all_outputs(x.as_ref(), 2);
    let mut kk = k.matrix(xa.as_ref());
    for i in 0..kk.nrows() {
        kk[(i, i)] += 1e-8;
    }
    let l = Cholesky::factor(&kk, "ICM prior", Parallelism::Sequential)?;
    let z: Vec<f64> = (0..2 * n).map(|_| rng.sample(StandardNormal)).collect();
    let f: Vec<f64> = (0..2 * n)
        .map(|i| (0..=i).map(|j| l.l()[(i, j)] * z[j]).sum())
        .collect();
    let mut y = Mat::from_fn(n, 2, |i, t| {
        f[t * n + i] + noise.sqrt() * rng.sample::<f64, _>(StandardNormal)
    });
    let mut centre: Vec<usize> = (0..n)
        .filter(|&i| (0.45..=0.55).contains(&x[(i, 0)]))
        .collect();
    centre.shuffle(&mut rng);
    let outliers: Vec<usize> = centre.into_iter().take(3).collect();
    for &i in &outliers {
        y[(i, 1)] = 5.0 + 0.5 * rng.sample::<f64, _>(StandardNormal);
    }
    let gap: Vec<usize> = (0..n)
        .filter(|&i| x[(i, 0)] > 0.3 && x[(i, 0)] < 0.7)
        .collect();
    for &i in &gap {
        y[(i, 0)] = f64::NAN;
    }
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let means: Vec<f64> = (0..2)
        .map(|t| {
            let v: Vec<f64> = (0..n)
                .map(|i| y[(i, t)])
                .filter(|v| v.is_finite())
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect();
    let mean = TaskMean(means);
    let group = e.noise_groups(false);
    let sigma = [noise, noise];
    let mogp = MultiOutputGp::at(k.clone(), mean.clone(), e.x.as_ref(), &e.y, &group, &sigma)?;
    let mut c = k.terms()[0].coregion.b();
    for t in 0..2 {
        c[(t, t)] += noise;
    }
    let prior = mean.eval(e.x.as_ref());
    let w = conditional_weights(&e, &prior, c.as_ref(), &[0.0, 0.025])?;
    let morcgp = RobustGp::at(k, mean, e.x.as_ref(), &e.y, &group, &sigma, w)?;
    // Imputation error on the gap, against the true latent output 1.
    let xg = Mat::from_fn(gap.len(), 1, |i, _| x[(gap[i], 0)]);
    let xga = all_outputs(xg.as_ref(), 2);
    let gs = vec![0; xga.nrows()];
    let rmse = |m: &[f64]| {
        (gap.iter()
            .enumerate()
            .map(|(k, &i)| (m[k] - f[i]).powi(2))
            .sum::<f64>()
            / gap.len() as f64)
            .sqrt()
    };
    let pm = mogp.predict(xga.as_ref(), true, &gs);
    let pr = morcgp.predict(xga.as_ref(), true, &gs);
    println!(
        "{}",
        json!({"gap_points": gap.len(), "outliers": outliers.len(),
               "imputation_rmse_output1": {"mogp": rmse(&pm.mean), "mo_rcgp": rmse(&pr.mean)}})
    );
    // Figure over a grid.
    let grid: Vec<f64> = (0..=200).map(|i| i as f64 / 200.0).collect();
    let xs = all_outputs(Mat::from_fn(grid.len(), 1, |i, _| grid[i]).as_ref(), 2);
    let gs = vec![0; xs.nrows()];
    let (qm, qr) = (
        mogp.predict(xs.as_ref(), true, &gs),
        morcgp.predict(xs.as_ref(), true, &gs),
    );
    let m = grid.len();
    let panels: Vec<Panel> = (0..2)
        .map(|t| Panel {
            title: format!(
                "output {} ({})",
                t + 1,
                if t == 0 {
                    "missing on 0.3 < x < 0.7"
                } else {
                    "three focused outliers"
                }
            ),
            points: (0..n)
                .filter(|&i| y[(i, t)].is_finite())
                .map(|i| (x[(i, 0)], y[(i, t)], t == 1 && outliers.contains(&i)))
                .collect(),
            curves: vec![
                curve(
                    "MOGP",
                    "steelblue",
                    &grid,
                    &qm.mean[t * m..(t + 1) * m],
                    &qm.var[t * m..(t + 1) * m],
                ),
                curve(
                    "MO-RCGP",
                    "darkorange",
                    &grid,
                    &qr.mean[t * m..(t + 1) * m],
                    &qr.var[t * m..(t + 1) * m],
                ),
            ],
        })
        .collect();
    std::fs::write(&a.plot, panels_svg(&panels))
        .map_err(|e| format!("{}: {e}", a.plot.display()))?;
    eprintln!("wrote {}", a.plot.display());
    Ok(())
}

/// Run the Navitoclax experiment.
pub fn navitoclax(a: &NavitoclaxArgs) -> Result<(), BoxError> {
    let targets = vec!["P12-ICHIKAWA".to_string(), "ARH-77".to_string()];
    let data = trustgp::data::read_csv(&a.data, &targets, None)?;
    let base = |kind, noise, ls: f64| -> Result<MultiOutputConfig, BoxError> {
        Ok(MultiOutputConfig {
            kind,
            kernels: vec![Kernel::parse(&format!("se(ls={ls})"))?],
            rank: None,
            shared_noise: false,
            noise,
            epsilon: vec![0.2, 0.2],
            mcd_support: Some(0.9),
            task_means: Some(vec![0.5, 0.5]),
            fit: FitOptions::default(),
        })
    };
    let mogp = MultiOutputModel::fit(
        data.x.as_ref(),
        data.y.as_ref(),
        &base(MultiOutputKind::Mogp, 0.005, 2.0)?,
    )?;
    let start_noise = mogp.noise().iter().sum::<f64>() / mogp.noise().len() as f64;
    let morcgp = MultiOutputModel::fit(
        data.x.as_ref(),
        data.y.as_ref(),
        &base(MultiOutputKind::MoRcgp, start_noise, 2.0)?,
    )?;
    // The outlying P12-ICHIKAWA viability: the largest value above 0.5 beyond dose 10^-1.
    let n = data.n();
    let outlier = (0..n)
        .filter(|&i| data.x[(i, 0)] > -1.0)
        .max_by(|&i, &j| data.y[(i, 0)].total_cmp(&data.y[(j, 0)]));
    let at = |m: &MultiOutputModel, i: usize| m.predict(data.x.as_ref().subrows(i, 1))[0].mean[0];
    let grid: Vec<f64> = (0..=200).map(|k| -3.0 + 4.0 * k as f64 / 200.0).collect();
    let xg = Mat::from_fn(grid.len(), 1, |i, _| grid[i]);
    let (pm, pr) = (mogp.predict(xg.as_ref()), morcgp.predict(xg.as_ref()));
    println!(
        "{}",
        json!({
            "outlier": outlier.map(|i| json!({"log10_dose": data.x[(i, 0)], "viability": data.y[(i, 0)],
                "mogp_mean": at(&mogp, i), "mo_rcgp_mean": at(&morcgp, i)})),
            "noise": {"mogp": mogp.noise(), "mo_rcgp": morcgp.noise()},
        })
    );
    let panels: Vec<Panel> = (0..2)
        .map(|t| Panel {
            title: format!("Navitoclax, {}", targets[t]),
            points: (0..n)
                .filter(|&i| data.y[(i, t)].is_finite())
                .map(|i| (data.x[(i, 0)], data.y[(i, t)], t == 0 && Some(i) == outlier))
                .collect(),
            curves: vec![
                curve("MOGP", "steelblue", &grid, &pm[t].mean, &pm[t].var),
                curve("MO-RCGP", "darkorange", &grid, &pr[t].mean, &pr[t].var),
            ],
        })
        .collect();
    std::fs::write(&a.plot, panels_svg(&panels))
        .map_err(|e| format!("{}: {e}", a.plot.display()))?;
    eprintln!("wrote {}", a.plot.display());
    Ok(())
}
