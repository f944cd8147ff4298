//! The arithmetic of `experiments safe-transfer`'s tables: mean ± standard error over runs,
//! the paper's numbers (`safe-transfer.md` §5.4) and the "Done when" criteria.

/// Problems in the order of the paper's tables.
pub const PROBLEMS: [&str; 6] = ["gp1d", "gp2d", "branin", "hartmann3", "pengine", "gengine"];
/// Methods (command-line names) in the order of the paper's tables.
pub const METHODS: [&str; 5] = ["efficient-hgp", "hgp", "lmc", "source-prior", "sal"];
/// The methods that transfer from the source task (the stand-in is not counted).
pub const TRANSFER: [&str; 3] = ["efficient-hgp", "hgp", "lmc"];

/// The paper's name of a method (the stand-in keeps its own label: its numbers are not
/// Rothfuss et al.'s).
pub fn paper_name(method: &str) -> &str {
    match method {
        "efficient-hgp" => "EffTransHGP",
        "hgp" => "FullTransHGP",
        "lmc" => "FullTransLMC",
        "source-prior" => "source-prior (stand-in for Rothfuss2022)",
        "sal" => "SAL",
        other => other,
    }
}

/// A paper entry `(mean, s.e.)`; `None` where the paper has no number.
pub type Entry = Option<(f64, f64)>;

/// Table 3 (regions explored): gp1d, gp2d, branin.
pub fn paper_table3(method: &str, problem: &str) -> Entry {
    let col = ["gp1d", "gp2d", "branin"]
        .iter()
        .position(|p| *p == problem)?;
    let row: [(f64, f64); 3] = match method {
        "efficient-hgp" => [(1.79, 0.07), (2.77, 0.13), (2.0, 0.0)],
        "hgp" => [(1.78, 0.07), (3.0, 0.14213), (2.0, 0.0)],
        "lmc" => [(1.78, 0.08), (2.68, 0.14), (2.0, 0.0)],
        "source-prior" => [(1.22, 0.05), (1.07, 0.03), (1.0, 0.0)],
        "sal" => [(1.0, 0.0), (1.29, 0.09), (1.0, 0.0)],
        _ => return None,
    };
    Some(row[col])
}

/// Table 4 (training time of f and q at the last refit, seconds): all six problems.
pub fn paper_table4(method: &str, problem: &str) -> Entry {
    let col = PROBLEMS.iter().position(|p| *p == problem)?;
    let row: [(f64, f64); 6] = match method {
        "efficient-hgp" => [
            (8.947, 0.198),
            (10.73, 0.190),
            (3.754, 0.121),
            (3.662, 0.089),
            (9.596, 0.418),
            (18.525, 2.508),
        ],
        "hgp" => [
            (9.171, 0.133),
            (39.31, 0.639),
            (8.129, 0.267),
            (9.092, 0.467),
            (124.99, 5.608),
            (503.11, 63.94),
        ],
        "lmc" => [
            (26.56, 0.628),
            (202.8, 12.43),
            (21.16, 1.207),
            (34.43, 1.664),
            (615.7, 27.99),
            (4357.8, 661.4),
        ],
        "source-prior" => [(0.0, 0.0); 6],
        "sal" => [
            (6.881, 0.083),
            (8.044, 0.142),
            (4.691, 0.078),
            (4.073, 0.083),
            (4.686, 0.243),
            (10.485, 0.578),
        ],
        _ => return None,
    };
    Some(row[col])
}

/// Table 5 (safe-query ratio): no PEngine column (all its queries were safe).
pub fn paper_table5(method: &str, problem: &str) -> Entry {
    let col = ["gp1d", "gp2d", "branin", "hartmann3", "gengine"]
        .iter()
        .position(|p| *p == problem)?;
    let row: [(f64, f64); 5] = match method {
        "efficient-hgp" => [
            (0.986, 0.001),
            (0.974, 0.002),
            (0.999, 0.0006),
            (0.972, 0.003),
            (0.936, 0.003),
        ],
        "hgp" => [
            (0.979, 0.004),
            (0.952, 0.005),
            (0.9996, 0.0004),
            (0.972, 0.003),
            (0.947, 0.01),
        ],
        "lmc" => [
            (0.984, 0.002),
            (0.969, 0.002),
            (0.993, 0.0009),
            (0.968, 0.003),
            (0.91, 0.008),
        ],
        "source-prior" => [
            (0.975, 0.003),
            (0.905, 0.006),
            (1.0, 0.0),
            (0.84, 0.011),
            (0.765, 0.035),
        ],
        "sal" => [
            (0.995, 0.001),
            (0.958, 0.005),
            (1.0, 0.0),
            (0.966, 0.002),
            (0.954, 0.005),
        ],
        _ => return None,
    };
    Some(row[col])
}

/// Mean and standard error of the mean (sample std / √n; 0 for a single value); `None` for
/// no values.
pub fn mean_se(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() == 1 {
        return Some((mean, 0.0));
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, (var / n).sqrt()))
}

/// `mean ± se (n)` with `digits` decimals, or `–` when there is nothing.
pub fn cell(values: &[f64], digits: usize) -> String {
    match mean_se(values) {
        Some((m, s)) => format!("{m:.digits$} ± {s:.digits$} (n={})", values.len()),
        None => "–".into(),
    }
}

/// The paper's entry as `mean ± se`, or `–`.
pub fn paper_cell(entry: Entry) -> String {
    match entry {
        Some((m, s)) => format!("{m} ± {s}"),
        None => "–".into(),
    }
}

/// Whether a criterion holds, as the word the results file prints.
pub fn verdict(ok: bool) -> &'static str {
    if ok {
        "HOLDS"
    } else {
        "FAILS"
    }
}

/// Table 5's criterion on one problem: our mean safe-query ratio ≥ paper mean − 2 paper s.e.
/// `None` when either side is missing.
pub fn safe_ratio_holds(ours: &[f64], paper: Entry) -> Option<bool> {
    let (m, _) = mean_se(ours)?;
    let (pm, ps) = paper?;
    Some(m >= pm - 2.0 * ps)
}

/// Table 3's criterion on one problem: every transfer method's mean region count is above
/// SAL's. `None` without SAL runs or without any transfer run.
pub fn regions_hold(transfer: &[&[f64]], sal: &[f64]) -> Option<bool> {
    let (s, _) = mean_se(sal)?;
    let means: Vec<f64> = transfer
        .iter()
        .filter_map(|v| mean_se(v).map(|p| p.0))
        .collect();
    if means.is_empty() {
        return None;
    }
    Some(means.iter().all(|&m| m > s))
}

/// Table 4's speed criterion on one problem: our mean time ≤ the paper's mean / 10.
pub fn ten_times_faster(ours: &[f64], paper: Entry) -> Option<bool> {
    let (m, _) = mean_se(ours)?;
    let (pm, _) = paper?;
    Some(m * 10.0 <= pm)
}

/// The spread of a method's mean time over problems: `max / min` of the means (the smallest
/// clamped at 1 ms so that timer noise on a tiny fit does not make the ratio explode); `None`
/// for fewer than two problems.
pub fn time_spread(means: &[f64]) -> Option<f64> {
    if means.len() < 2 {
        return None;
    }
    let hi = means.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lo = means
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min)
        .max(1e-3);
    Some(hi / lo)
}

/// A method against a baseline on the seeds both ran (each seed is its own data set, so an
/// unpaired comparison mixes data sets): `(mean of ours, mean of the baseline, mean ± s.e. of
/// the per-seed difference ours − baseline, number of common seeds)`. Values are `(seed,
/// value)` pairs; `None` without a common seed.
pub fn paired(
    ours: &[(u64, f64)],
    baseline: &[(u64, f64)],
) -> Option<(f64, f64, (f64, f64), usize)> {
    let pairs: Vec<(f64, f64)> = ours
        .iter()
        .filter_map(|(seed, v)| {
            let b = baseline.iter().find(|(s, _)| s == seed)?;
            Some((*v, b.1))
        })
        .collect();
    let a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let d: Vec<f64> = pairs.iter().map(|p| p.0 - p.1).collect();
    Some((mean_se(&a)?.0, mean_se(&b)?.0, mean_se(&d)?, pairs.len()))
}

/// The report step after the first (index ≥ 1) where a method's curve leads a baseline's
/// least: `(step index, mean of the per-seed differences ours − baseline there)`, each step
/// paired on the seeds both ran (`(seed, curve)` pairs, curves of equal length). Step 0 is
/// left out because no query has been made there: it compares the two models' fits to the
/// initial data, not what their queries explored. `None` without a common seed or a second
/// step.
pub fn weakest_step_after_the_first(
    ours: &[(u64, Vec<f64>)],
    baseline: &[(u64, Vec<f64>)],
) -> Option<(usize, f64)> {
    let pairs: Vec<(&Vec<f64>, &Vec<f64>)> = ours
        .iter()
        .filter_map(|(seed, c)| Some((c, &baseline.iter().find(|(s, _)| s == seed)?.1)))
        .collect();
    let len = pairs.iter().map(|(a, b)| a.len().min(b.len())).min()?;
    (1..len)
        .map(|k| {
            let d: Vec<f64> = pairs.iter().map(|(a, b)| a[k] - b[k]).collect();
            (k, mean_se(&d).map_or(f64::NAN, |m| m.0))
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_se_matches_a_hand_computation() {
        // 1, 2, 3, 6: mean 3, sample variance (4 + 1 + 0 + 9) / 3 = 14/3, se = √(14/3 / 4).
        let (m, s) = mean_se(&[1.0, 2.0, 3.0, 6.0]).unwrap();
        assert!((m - 3.0).abs() < 1e-15);
        assert!((s - (14.0_f64 / 12.0).sqrt()).abs() < 1e-15);
        assert_eq!(mean_se(&[2.5]), Some((2.5, 0.0)));
        assert_eq!(mean_se(&[]), None);
        assert_eq!(cell(&[1.0, 3.0], 2), "2.00 ± 1.00 (n=2)");
        assert_eq!(cell(&[], 2), "–");
    }

    #[test]
    fn criteria_flip_at_their_thresholds() {
        // Paper 0.986 ± 0.001: the bound is 0.984.
        let paper = Some((0.986, 0.001));
        assert_eq!(safe_ratio_holds(&[0.985, 0.985], paper), Some(true));
        assert_eq!(safe_ratio_holds(&[0.98, 0.982], paper), Some(false));
        assert_eq!(safe_ratio_holds(&[0.99], None), None);
        let sal = [1.0, 1.0, 2.0];
        let a = [2.0, 2.0];
        let b = [1.0, 2.0];
        assert_eq!(regions_hold(&[&a, &b], &sal), Some(true));
        assert_eq!(regions_hold(&[&a, &[1.0]], &sal), Some(false));
        assert_eq!(regions_hold(&[&a], &[]), None);
        assert_eq!(ten_times_faster(&[0.5], Some((5.0, 0.1))), Some(true));
        assert_eq!(ten_times_faster(&[0.51], Some((5.0, 0.1))), Some(false));
        assert_eq!(time_spread(&[0.2, 0.1, 0.4]), Some(4.0));
        assert_eq!(time_spread(&[0.0, 0.5]), Some(500.0));
        assert_eq!(time_spread(&[1.0]), None);
    }

    #[test]
    fn paired_compares_on_the_common_seeds_only() {
        // Seeds 0 and 2 are common: ours 1, 5; baseline 2, 3; differences −1, 2 (mean 0.5,
        // sample variance 4.5, se √(4.5/2) = 1.5). Seed 1 (ours only) and 7 (baseline only)
        // are left out, though they would move either unpaired mean.
        let ours = [(0, 1.0), (1, 100.0), (2, 5.0)];
        let base = [(2, 3.0), (7, -50.0), (0, 2.0)];
        let (a, b, (d, se), n) = paired(&ours, &base).unwrap();
        assert_eq!(n, 2);
        assert!((a - 3.0).abs() < 1e-15 && (b - 2.5).abs() < 1e-15);
        assert!((d - 0.5).abs() < 1e-15 && (se - 1.5).abs() < 1e-15);
        assert_eq!(paired(&[(1, 1.0)], &[(0, 1.0)]), None);
    }

    #[test]
    fn paper_tables_have_the_spec_shape() {
        // Every method has Table 4 numbers on every problem; Table 5 lacks PEngine only;
        // Table 3 has the three problems with a safety grid in 1-D/2-D.
        for m in METHODS {
            for p in PROBLEMS {
                assert!(paper_table4(m, p).is_some(), "{m} {p}");
                assert_eq!(paper_table5(m, p).is_none(), p == "pengine", "{m} {p}");
                let t3 = matches!(p, "gp1d" | "gp2d" | "branin");
                assert_eq!(paper_table3(m, p).is_some(), t3, "{m} {p}");
            }
        }
        assert_eq!(paper_table4("lmc", "gengine"), Some((4357.8, 661.4)));
        assert_eq!(
            paper_table5("efficient-hgp", "gengine"),
            Some((0.936, 0.003))
        );
    }

    #[test]
    fn the_weakest_step_skips_step_zero_and_pairs_by_seed() {
        // Seed 0 is common to both, seed 1 only ours, seed 2 only the baseline's.
        let ours = vec![(0, vec![0.0, 3.0, 2.0]), (1, vec![9.0, -9.0, -9.0])];
        let base = vec![(0, vec![5.0, 1.0, 1.5]), (2, vec![0.0, 0.0, 0.0])];
        // Differences at steps 1, 2: +2, +0.5 (step 0's −5 is not looked at).
        assert_eq!(weakest_step_after_the_first(&ours, &base), Some((2, 0.5)));
        assert_eq!(weakest_step_after_the_first(&ours[1..], &base), None);
        assert_eq!(
            weakest_step_after_the_first(&[(0, vec![1.0])], &[(0, vec![0.0])]),
            None
        );
    }
}
