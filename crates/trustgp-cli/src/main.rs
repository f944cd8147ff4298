//! `trustgp`: the command-line tool. Thin by design: parse arguments, call the library, print
//! one JSON object (or CSV) on stdout and human text on stderr.

mod args;
mod commands;
mod plot;
mod progress;

use clap::Parser;

fn main() {
    // Repeated fits allocate and free the same large matrices: keep their pages for reuse.
    trustgp::linalg::reuse_freed_memory();
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Fit(a) => commands::fit::run(&a),
        args::Command::Predict(a) => commands::predict::run(&a),
        args::Command::Evaluate(a) => commands::evaluate::run(&a),
        args::Command::Demo(a) => commands::demo::run(&a),
        args::Command::Suggest(a) => commands::suggest::run(&a),
        args::Command::Bo(a) => commands::bo::run(&a),
        args::Command::SafeAl(a) => commands::safe_al::run(&a),
        args::Command::Kernels(a) => commands::kernels::run(&a),
        args::Command::Verify(a) => commands::verify::run(&a),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
