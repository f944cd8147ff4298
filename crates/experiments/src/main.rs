//! Benchmarks and paper reproductions for trustgp, one subcommand each. Results are printed
//! as JSON lines on stdout (and written under `results/` where noted).

mod bench_exact;
mod energy;
mod table1;

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
    /// Time the exact GP (one LML+gradient evaluation, one full fit) on kin8nm subsets.
    BenchExact(bench_exact::Args),
    /// MO-RCGP paper Tables 2 and 3: Energy, MOGP vs MO-RCGP under four outlier scenarios.
    Energy(energy::Args),
    /// MO-RCGP paper Table 1: synthetic T = 3, MOGP vs both MO-RCGP weights.
    Table1(table1::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::BenchExact(a) => bench_exact::run(&a),
        Command::Energy(a) => energy::run(&a),
        Command::Table1(a) => table1::run(&a),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
