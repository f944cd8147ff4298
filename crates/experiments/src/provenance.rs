//! The header every results file starts with: the command that made it, the commit it ran at
//! and the machine it ran on (timings differ severalfold between processor generations).

/// Markdown lines naming the command line, the git commit (or "unknown" outside a checkout) and
/// the machine.
pub fn header(title: &str) -> String {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    format!(
        "# {title}\n\nCommand: `{command}`  \nCommit: `{commit}`  \nMachine: {}\n\n",
        machine()
    )
}

/// The processor (name, and on x86-64 its family and model, which tell generations apart where
/// the name does not, and whether it has AVX-512) and the threads available.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let mut cpu = field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string());
    if let (Some(family), Some(model)) = (field("cpu family"), field("model")) {
        cpu += &format!(" (family {family}, model {model})");
    }
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = std::arch::is_x86_feature_detected!("avx512f");
        cpu += if avx512 { ", AVX-512" } else { ", no AVX-512" };
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {threads} threads")
}
