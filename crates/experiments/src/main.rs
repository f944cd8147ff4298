//! Benchmarks and paper reproductions for trustgp, one subcommand each. Results are printed
//! as JSON lines on stdout (and written under `results/` where noted).

mod adversarial;
mod adversarial_attack;
mod adversarial_data;
mod adversarial_fig2;
mod adversarial_fig3;
mod adversarial_fig4;
mod adversarial_fig5;
mod adversarial_fig6;
mod adversarial_gpml;
mod bench_exact;
mod bench_gpc;
mod bench_robust;
mod bench_scale;
mod bench_softmax;
mod bench_verify;
mod energy;
mod figure;
mod flash_crash;
mod mo_figures;
mod provenance;
mod rcagp_models;
mod rcagp_paper;
mod rcagp_uci;
mod safe_ablation;
mod safe_table4;
mod safe_table4_md;
mod safe_tables;
mod safe_transfer;
mod scale_models;
mod table1;
mod vbks_forecast;
mod vbks_forecast_data;
mod vbks_real;
mod vbks_real_data;
mod vbks_synthetic;
mod vbks_synthetic_exact;
mod vbks_timing;

use clap::{Parser, Subcommand};

/// trustgp experiments.
#[derive(Parser, Debug)]
#[command(name = "experiments", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Adversarial-bounds paper Figs. 2–6 (binary) and accuracies: certified bounds, GPFGS, Laplace vs EP, sparse EP.
    Adversarial(adversarial::Args),
    /// Time the exact GP (one LML+gradient evaluation, one full fit) on kin8nm subsets.
    BenchExact(bench_exact::Args),
    /// Time binary Laplace GP classification against scikit-learn's on Synthetic2D-like data.
    BenchGpc(bench_gpc::Args),
    /// Time MOGP and MO-RCGP fits on Energy (576 rows × 2 outputs).
    BenchRobust(bench_robust::Args),
    /// Scalable models on kin40k, and SVGP on a million synthetic rows: time, memory, RMSE.
    BenchScale(bench_scale::Args),
    /// Time certified probability bounds (verify) on a Synthetic2D-like probit form.
    BenchVerify(bench_verify::Args),
    /// The tightness of certified softmax class-probability bounds for 2, 3 and 4 classes.
    BenchSoftmax(bench_softmax::Args),
    /// RCaGP paper Table 1 / S1 / S2: SVGP, CaGP, RCSVGP, RCaGP, Student-t on four UCI sets.
    RcagpUci(rcagp_uci::Args),
    /// MO-RCGP paper Tables 2 and 3: Energy, MOGP vs MO-RCGP under four outlier scenarios.
    Energy(energy::Args),
    /// MO-RCGP paper Table 1: synthetic T = 3, MOGP vs both MO-RCGP weights.
    Table1(table1::Args),
    /// Safe-transfer paper Tables 3, 4, 5 and Fig. 4: SAL vs the transfer GPs.
    SafeTransfer(safe_transfer::Args),
    /// Safe-transfer paper Table 4, like for like: every stored run's last refit replayed alone, on one thread.
    SafeTable4(safe_table4::Args),
    /// Safe-transfer paper Fig. 9 (N_source ablation) and Fig. 10 (multi-source), reduced.
    SafeAblation(safe_ablation::Args),
    /// DJIA flash crash (2013-04-23): GP vs RCGP, with an SVG figure.
    FlashCrash(flash_crash::Args),
    /// MO-RCGP paper Figure 2: imputing a missing range next to focused outliers.
    Imputation(mo_figures::ImputationArgs),
    /// MO-RCGP paper Figure 1: Navitoclax dose-response of two cell lines.
    Navitoclax(mo_figures::NavitoclaxArgs),
    /// VBKS forecasts of unseen series (80 % past → 20 % future) against the GP with const * se.
    VbksForecast(vbks_forecast::Args),
    /// VBKS paper Tables 2–3: VBKS vs VBKS-s vs Random on Swissgrid or the Intel lab.
    VbksReal(vbks_real::Args),
    /// VBKS paper Fig. 2: the true kernel's posterior probability against the data used.
    VbksSynthetic(vbks_synthetic::Args),
    /// VBKS: time per iteration against the number of kernels K and inducing points M.
    VbksTiming(vbks_timing::Args),
}

fn main() {
    // Repeated fits allocate and free the same large matrices: keep their pages for reuse.
    trustgp::linalg::reuse_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Adversarial(a) => adversarial::run(&a),
        Command::BenchExact(a) => bench_exact::run(&a),
        Command::BenchGpc(a) => bench_gpc::run(&a),
        Command::BenchRobust(a) => bench_robust::run(&a),
        Command::BenchScale(a) => bench_scale::run(&a),
        Command::BenchVerify(a) => bench_verify::run(&a),
        Command::BenchSoftmax(a) => bench_softmax::run(&a),
        Command::RcagpUci(a) => rcagp_uci::run(&a),
        Command::Energy(a) => energy::run(&a),
        Command::Table1(a) => table1::run(&a),
        Command::SafeTransfer(a) => {
            safe_transfer::run(&a).map_err(|e| e as Box<dyn std::error::Error>)
        }
        Command::SafeTable4(a) => safe_table4::run(&a).map_err(|e| e as Box<dyn std::error::Error>),
        Command::SafeAblation(a) => {
            safe_ablation::run(&a).map_err(|e| e as Box<dyn std::error::Error>)
        }
        Command::FlashCrash(a) => flash_crash::run(&a),
        Command::Imputation(a) => mo_figures::imputation(&a),
        Command::Navitoclax(a) => mo_figures::navitoclax(&a),
        Command::VbksForecast(a) => vbks_forecast::run(&a),
        Command::VbksReal(a) => vbks_real::run(&a),
        Command::VbksSynthetic(a) => vbks_synthetic::run(&a),
        Command::VbksTiming(a) => vbks_timing::run(&a),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
