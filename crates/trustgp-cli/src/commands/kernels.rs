//! `trustgp kernels`: print a candidate kernel space of kernel selection.

use serde_json::json;
use trustgp::selection::KernelSpace;

use super::{print_json, CliError};
use crate::args::KernelsArgs;

/// Run the subcommand.
pub fn run(a: &KernelsArgs) -> Result<(), CliError> {
    let space = KernelSpace::parse(&a.space).map_err(|e| format!("--space: {e}"))?;
    let kernels: Vec<String> = space.kernels().iter().map(|k| k.to_string()).collect();
    if a.json {
        return print_json(&json!({
            "space": a.space.trim(),
            "count": kernels.len(),
            "kernels": kernels,
        }));
    }
    for k in kernels {
        println!("{k}");
    }
    Ok(())
}
