//! The README's numbers cannot go stale: every number it quotes from a command sits under a
//! `<!-- check: ARGS => PATH=VALUE, … -->` comment, and this test runs `trustgp ARGS` from the
//! repository root, reads `PATH` (dot-separated keys and array indices) from the JSON it prints,
//! and asserts that it rounds to `VALUE` at the digits shown. Each `VALUE` must also appear
//! verbatim in the README text that follows its comment (after any comments stacked below it) up
//! to the next comment or heading, so the prose and the check cannot drift apart.
//!
//! Commands that read `../shared/data` run where that folder exists (CI, a developer's checkout)
//! and are reported as skipped on a bare clone, whose tests must not need it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One `<!-- check: … -->` comment of the README.
#[derive(Debug)]
struct Check {
    /// 1-based line of the comment.
    line: usize,
    /// The arguments after `trustgp`.
    args: Vec<String>,
    /// `(json path, number as written)` pairs.
    expect: Vec<(String, String)>,
    /// The README text that the numbers must appear in.
    prose: String,
}

const OPEN: &str = "<!-- check:";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Splits a command line on spaces, keeping double-quoted parts whole.
fn split_args(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_checks(readme: &str) -> Vec<Check> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut checks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(start) = line.find(OPEN) else {
            continue;
        };
        let body = line[start + OPEN.len()..]
            .split("-->")
            .next()
            .unwrap_or_else(|| panic!("README line {}: unclosed check comment", i + 1));
        let (cmd, values) = body
            .split_once("=>")
            .unwrap_or_else(|| panic!("README line {}: expected ARGS => PATH=VALUE", i + 1));
        let expect = values
            .split(',')
            .map(|kv| {
                let (k, v) = kv.trim().split_once('=').unwrap_or_else(|| {
                    panic!("README line {}: expected PATH=VALUE, got {kv:?}", i + 1)
                });
                (k.trim().to_string(), v.trim().to_string())
            })
            .collect();
        // Comments stacked on consecutive lines share the text that follows the last of them.
        let prose: Vec<&str> = lines[i + 1..]
            .iter()
            .skip_while(|l| l.contains(OPEN))
            .take_while(|l| !l.contains(OPEN) && !l.starts_with('#'))
            .copied()
            .collect();
        checks.push(Check {
            line: i + 1,
            args: split_args(cmd),
            expect,
            prose: prose.join("\n"),
        });
    }
    checks
}

/// The value at a dot-separated path of keys and array indices.
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, key| match v {
        Value::Array(a) => a.get(key.parse::<usize>().ok()?),
        _ => v.get(key),
    })
}

/// `predict`'s CSV as a JSON array of rows keyed by the header, so that `0.mean_y` is the first
/// row's `mean_y`; `None` unless every row has the header's width and only numbers.
fn csv_rows(text: &str) -> Option<Value> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let rows = lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            (cells.len() == header.len()).then_some(())?;
            let row = header
                .iter()
                .zip(cells)
                .map(|(h, c)| Some((h.to_string(), Value::from(c.parse::<f64>().ok()?))))
                .collect::<Option<serde_json::Map<_, _>>>()?;
            Some(Value::Object(row))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Value::Array(rows))
}

/// Whether `actual` rounds to `written` at the number of decimals written.
fn rounds_to(actual: f64, written: &str) -> bool {
    let Ok(expected) = written.parse::<f64>() else {
        return false;
    };
    let decimals = written.split_once('.').map_or(0, |(_, f)| f.len());
    let half_unit = 0.5 * 10f64.powi(-(decimals as i32));
    (actual - expected).abs() <= half_unit * (1.0 + 1e-9)
}

fn needs_shared(c: &Check) -> bool {
    c.args.iter().any(|a| a.starts_with("../shared"))
}

fn run(c: &Check, root: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_trustgp"))
        .args(&c.args)
        .current_dir(root)
        .output()
        .unwrap();
    let cmd = format!("README line {}: trustgp {}", c.line, c.args.join(" "));
    if !out.status.success() {
        return vec![format!(
            "{cmd}: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )];
    }
    let json: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => match csv_rows(&String::from_utf8_lossy(&out.stdout)) {
            Some(rows) => rows,
            None => return vec![format!("{cmd}: stdout is neither JSON nor CSV: {e}")],
        },
    };
    let mut failures = Vec::new();
    for (path, written) in &c.expect {
        if !c.prose.contains(written.as_str()) {
            failures.push(format!(
                "{cmd}: {written} (for {path}) does not appear in the text under the comment"
            ));
        }
        match lookup(&json, path).and_then(Value::as_f64) {
            Some(actual) if rounds_to(actual, written) => {}
            Some(actual) => failures.push(format!(
                "{cmd}: {path} is {actual}, the README says {written}"
            )),
            None => failures.push(format!("{cmd}: no number at {path} in the output")),
        }
    }
    failures
}

#[test]
fn every_checked_readme_number_is_what_the_command_prints() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let checks = parse_checks(&readme);
    assert!(
        checks.len() >= 3,
        "expected the README's numbers to carry check comments, found {}",
        checks.len()
    );
    let shared = root.join("../shared/data").is_dir();
    let mut failures = Vec::new();
    for c in &checks {
        if needs_shared(c) && !shared {
            eprintln!(
                "skipped README line {} (needs ../shared/data, absent here)",
                c.line
            );
            continue;
        }
        failures.extend(run(c, &root));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_check_format_is_read_as_documented() {
    let text = "intro\n<!-- check: evaluate --kernel \"const * se\" --seed 1 => mae=1.52, per_output.0.rmse=3.7 -->\n<!-- check: fit => lml=5 -->\nMAE **1.52** and RMSE 3.7\n## next\n1.52";
    let checks = parse_checks(text);
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1].prose, "MAE **1.52** and RMSE 3.7");
    let c = &checks[0];
    assert_eq!(c.line, 2);
    assert_eq!(
        c.args,
        ["evaluate", "--kernel", "const * se", "--seed", "1"]
    );
    assert_eq!(
        c.expect,
        [
            ("mae".to_string(), "1.52".to_string()),
            ("per_output.0.rmse".to_string(), "3.7".to_string())
        ]
    );
    assert_eq!(c.prose, "MAE **1.52** and RMSE 3.7");
    let json: Value = serde_json::json!({"per_output": [{"rmse": 3.74}]});
    assert_eq!(
        lookup(&json, "per_output.0.rmse").and_then(Value::as_f64),
        Some(3.74)
    );
    assert!(lookup(&json, "per_output.1.rmse").is_none());
    let rows = csv_rows("mean_y,std_y\n0.5,1e-3\n2,3\n").unwrap();
    assert_eq!(lookup(&rows, "1.mean_y").and_then(Value::as_f64), Some(2.0));
    assert_eq!(lookup(&rows, "0.std_y").and_then(Value::as_f64), Some(1e-3));
    assert!(csv_rows("a,b\n1\n").is_none());
    assert!(csv_rows("a\nx\n").is_none());
}

#[test]
fn rounding_accepts_the_digits_shown_and_nothing_more() {
    assert!(rounds_to(1.524_999, "1.52"));
    assert!(rounds_to(1.515_001, "1.52"));
    assert!(!rounds_to(1.525_1, "1.52"));
    assert!(!rounds_to(2.61, "1.52"));
    assert!(rounds_to(28.0, "28"));
    assert!(!rounds_to(29.0, "28"));
    assert!(!rounds_to(1.0, "n/a"));
}
