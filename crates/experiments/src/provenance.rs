//! The header every results file starts with: the command that made it and the commit it ran at.

/// Markdown lines naming the command line and the git commit (or "unknown" outside a checkout).
pub fn header(title: &str) -> String {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    format!("# {title}\n\nCommand: `{command}`  \nCommit: `{commit}`\n\n")
}
