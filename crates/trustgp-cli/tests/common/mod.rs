//! Helpers every command-line test file shares: running the binary, scratch folders, files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `trustgp` with `args` and the extra environment variables `env`.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trustgp"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Runs `trustgp` with `args`.
pub fn trustgp(args: &[&str]) -> Output {
    run(args, &[])
}

/// A scratch directory unique to one test (`tag` names the test file, `name` the test).
pub fn scratch(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trustgp-{tag}-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `body` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}
