//! Tests of outlier contamination: spec parsing, which rows change, by how much, and errors.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

const KINDS: [OutlierKind; 3] = [
    OutlierKind::Uniform,
    OutlierKind::Asymmetric,
    OutlierKind::Focused,
];
const PROTOCOLS: [Protocol; 2] = [Protocol::MoRcgp, Protocol::Rcagp];

/// `n` rows with inputs `a`, `b` and targets `y1` (missing on rows ≡ 3 mod 7) and `y2`.
fn dataset(n: usize) -> Dataset {
    let mut rng = StdRng::seed_from_u64(99);
    let rows: Vec<[f64; 3]> = (0..n)
        .map(|_| {
            [
                10.0 * rng.random::<f64>(),
                rng.random::<f64>() - 0.5,
                rng.random(),
            ]
        })
        .collect();
    Dataset {
        input_names: vec!["a".into(), "b".into()],
        target_names: vec!["y1".into(), "y2".into()],
        x: Mat::from_fn(n, 2, |i, j| rows[i][j]),
        y: Mat::from_fn(n, 2, |i, t| match t {
            0 if i % 7 == 3 => f64::NAN,
            0 => 10.0 + 3.0 * rows[i][0].sin() + rows[i][2],
            _ => 2.0 * rows[i][1] + i as f64,
        }),
    }
}

/// Training rows (80%: rows not divisible by 5) and test rows.
fn split(n: usize) -> (Vec<usize>, Vec<usize>) {
    (0..n).partition(|i| i % 5 != 0)
}

fn spec(kind: OutlierKind, fraction: f64) -> ContaminationSpec {
    ContaminationSpec {
        kind,
        fraction,
        column: None,
    }
}

/// Observed values of target `t` on `rows`.
fn observed(ds: &Dataset, rows: &[usize], t: usize) -> Vec<f64> {
    rows.iter()
        .map(|&i| ds.y[(i, t)])
        .filter(|v| !v.is_nan())
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn pop_std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
}

/// Median by counting: the value(s) with as many others below as above.
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    (s[(n - 1) / 2] + s[n / 2]) / 2.0
}

fn mad(v: &[f64]) -> f64 {
    let m = median(v);
    median(&v.iter().map(|x| (x - m).abs()).collect::<Vec<_>>())
}

/// Rows where any input or target differs bit for bit (NaN equals NaN).
fn changed_rows(a: &Dataset, b: &Dataset) -> Vec<usize> {
    let differs = |p: f64, q: f64| p.to_bits() != q.to_bits();
    (0..a.n())
        .filter(|&i| {
            (0..a.d()).any(|j| differs(a.x[(i, j)], b.x[(i, j)]))
                || (0..a.n_targets()).any(|t| differs(a.y[(i, t)], b.y[(i, t)]))
        })
        .collect()
}

fn count(fraction: f64, n_obs: usize) -> usize {
    ((fraction * n_obs as f64).round() as usize).max(1)
}

#[test]
fn parse_valid_forms() {
    let s = ContaminationSpec::parse("uniform:0.1").unwrap();
    assert_eq!(s, spec(OutlierKind::Uniform, 0.1));
    let s = ContaminationSpec::parse("asymmetric:0.25:y2").unwrap();
    assert_eq!((s.kind, s.fraction), (OutlierKind::Asymmetric, 0.25));
    assert_eq!(s.column.as_deref(), Some("y2"));
    assert_eq!(
        ContaminationSpec::parse("focused:0.05").unwrap(),
        spec(OutlierKind::Focused, 0.05)
    );
    // Spaces around fields are ignored, as in CSV headers.
    let s = ContaminationSpec::parse(" focused : 5e-1 : heating load ").unwrap();
    assert_eq!((s.kind, s.fraction), (OutlierKind::Focused, 0.5));
    assert_eq!(s.column.as_deref(), Some("heating load"));
    for text in ["uniform:0.1", "asymmetric:0.25:y2", "focused:0.005:a b"] {
        let s = ContaminationSpec::parse(text).unwrap();
        assert_eq!(s.to_string(), text);
        assert_eq!(ContaminationSpec::parse(&s.to_string()).unwrap(), s);
    }
}

#[test]
fn parse_rejects_malformed_specs() {
    let cases = [
        ("", "missing outlier kind"),
        (":0.1", "missing outlier kind"),
        ("gaussian:0.1", "unknown outlier kind \"gaussian\""),
        ("Uniform:0.1", "unknown outlier kind \"Uniform\""),
        ("uniform", "missing fraction"),
        ("uniform:", "missing fraction"),
        ("uniform:abc", "fraction \"abc\" is not a number"),
        ("uniform:10%", "fraction \"10%\" is not a number"),
        ("uniform:0", "fraction 0 is not strictly between 0 and 1"),
        ("uniform:1", "fraction 1 is not strictly between 0 and 1"),
        (
            "uniform:-0.1",
            "fraction -0.1 is not strictly between 0 and 1",
        ),
        (
            "uniform:1.5",
            "fraction 1.5 is not strictly between 0 and 1",
        ),
        (
            "uniform:NaN",
            "fraction NaN is not strictly between 0 and 1",
        ),
        (
            "uniform:inf",
            "fraction inf is not strictly between 0 and 1",
        ),
        ("uniform:0.1:", "empty column name"),
        ("uniform:0.1: ", "empty column name"),
        (
            "uniform:0.1:y:z",
            "4 fields separated by ':', at most 3 allowed",
        ),
    ];
    for (text, problem) in cases {
        let err = ContaminationSpec::parse(text).unwrap_err();
        assert!(matches!(err, DataError::BadContaminationSpec { .. }));
        let m = err.to_string();
        assert!(m.contains(&format!("contamination spec \"{text}\"")), "{m}");
        assert!(m.contains(problem), "{text}: {m}");
        assert!(m.contains("expected KIND:FRACTION[:COLUMN]"), "{m}");
    }
}

#[test]
fn protocol_names() {
    assert_eq!(Protocol::default(), Protocol::Rcagp);
    for p in PROTOCOLS {
        assert_eq!(Protocol::parse(p.name()).unwrap(), p);
    }
    assert_eq!(Protocol::parse("morcgp").unwrap(), Protocol::MoRcgp);
    let m = Protocol::parse("gp").unwrap_err().to_string();
    assert!(m.contains("\"gp\"") && m.contains("\"rcagp\"") && m.contains("\"mo-rcgp\""));
}

#[test]
fn median_and_mad_of_known_values() {
    assert_eq!(median_mad(vec![100.0, 1.0, 3.0, 2.0, 4.0]), (3.0, 1.0));
    // Even count: mean of the middle pair; deviations 1.5, 0.5, 0.5, 1.5.
    assert_eq!(median_mad(vec![4.0, 1.0, 3.0, 2.0]), (2.5, 1.0));
    assert_eq!(median_mad(vec![7.0]), (7.0, 0.0));
}

#[test]
fn changes_exactly_the_chosen_training_rows() {
    let n = 60;
    let (train, test) = split(n);
    let clean = dataset(n);
    let n_obs = observed(&clean, &train, 0).len();
    assert_eq!(n_obs, 41);
    for kind in KINDS {
        for protocol in PROTOCOLS {
            for (fraction, k) in [(0.01, 1), (0.1, 4), (0.25, 10), (0.5, 21), (0.99, 41)] {
                assert_eq!(count(fraction, n_obs), k);
                let mut ds = clean.clone();
                let s = spec(kind, fraction);
                let r = contaminate(&mut ds, &train, &s, protocol, 5).unwrap();
                let what = format!("{s} {protocol:?}");
                assert_eq!(r.column, 0);
                assert_eq!(r.rows.len(), k, "{what}");
                assert!(r.rows.windows(2).all(|w| w[0] < w[1]), "{what}");
                // Nothing else changed: not the test rows, not the other training rows.
                assert_eq!(changed_rows(&clean, &ds), r.rows, "{what}");
                for &i in &r.rows {
                    assert!(train.contains(&i) && !test.contains(&i), "{what}: row {i}");
                    assert!(!clean.y[(i, 0)].is_nan(), "{what}: row {i}");
                    assert_ne!(ds.y[(i, 0)], clean.y[(i, 0)], "{what}: row {i}");
                    assert!(ds.y[(i, 0)].is_finite());
                    // The other target column is untouched.
                    assert_eq!(ds.y[(i, 1)].to_bits(), clean.y[(i, 1)].to_bits());
                }
                assert_eq!(r.inputs_changed, kind == OutlierKind::Focused, "{what}");
                if kind != OutlierKind::Focused {
                    assert!(ds.x == clean.x, "{what}");
                }
                let sigma = pop_std(&observed(&clean, &train, 0));
                assert!((r.target_std - sigma).abs() <= 1e-12 * sigma);
            }
        }
    }
}

#[test]
fn target_std_is_the_population_std_of_the_clean_training_targets() {
    // Training targets 1, 3, 1, 3 (and a missing one): mean 2, σ̄ = 1 exactly. The test row's
    // 1000 and the missing cell must not enter σ̄.
    let mut ds = Dataset {
        input_names: vec!["x".into()],
        target_names: vec!["y".into()],
        x: Mat::from_fn(6, 1, |i, _| i as f64),
        y: Mat::from_fn(6, 1, |i, _| [1.0, 3.0, f64::NAN, 1.0, 3.0, 1000.0][i]),
    };
    let s = spec(OutlierKind::Asymmetric, 0.5);
    let before = ds.clone();
    let r = contaminate(&mut ds, &[0, 1, 2, 3, 4], &s, Protocol::MoRcgp, 1).unwrap();
    assert_eq!(r.target_std, 1.0);
    assert_eq!(r.rows.len(), 2);
    for &i in &r.rows {
        let shift = ds.y[(i, 0)] - before.y[(i, 0)];
        assert!((6.0..=9.0).contains(&shift), "shift {shift}");
    }
    assert_eq!(ds.y[(5, 0)], 1000.0);
}

#[test]
fn asymmetric_shifts_lie_in_the_protocol_range() {
    let n = 400;
    let (train, _) = split(n);
    let clean = dataset(n);
    for (protocol, low) in [(Protocol::MoRcgp, 6.0), (Protocol::Rcagp, 3.0)] {
        let mut ds = clean.clone();
        let s = spec(OutlierKind::Asymmetric, 0.3);
        let r = contaminate(&mut ds, &train, &s, protocol, 11).unwrap();
        let sigma = pop_std(&observed(&clean, &train, 0));
        let shifts: Vec<f64> = r
            .rows
            .iter()
            .map(|&i| ds.y[(i, 0)] - clean.y[(i, 0)])
            .collect();
        for &z in &shifts {
            assert!(z >= low * sigma * (1.0 - 1e-12), "{protocol:?}: {z}");
            assert!(z <= 9.0 * sigma * (1.0 + 1e-12), "{protocol:?}: {z}");
        }
        // The draws fill the range rather than sitting at one end.
        let lo = shifts.iter().copied().fold(f64::INFINITY, f64::min) / sigma;
        let hi = shifts.iter().copied().fold(f64::NEG_INFINITY, f64::max) / sigma;
        assert!(lo < low + 0.5 && hi > 8.5, "{protocol:?}: [{lo}, {hi}]");
    }
}

#[test]
fn uniform_signs_are_balanced() {
    let n = 200;
    let (train, _) = split(n);
    let clean = dataset(n);
    let sigma = pop_std(&observed(&clean, &train, 0));
    let mut parities = [false; 2];
    for (protocol, low) in [(Protocol::MoRcgp, 6.0), (Protocol::Rcagp, 3.0)] {
        for fraction in [0.01, 0.02, 0.1, 0.15, 0.3, 0.5] {
            let mut ds = clean.clone();
            let s = spec(OutlierKind::Uniform, fraction);
            let r = contaminate(&mut ds, &train, &s, protocol, 3).unwrap();
            parities[r.rows.len() % 2] = true;
            let (mut up, mut down) = (0, 0);
            for &i in &r.rows {
                let z = ds.y[(i, 0)] - clean.y[(i, 0)];
                assert!(z.abs() >= low * sigma * (1.0 - 1e-12), "{z}");
                assert!(z.abs() <= 9.0 * sigma * (1.0 + 1e-12), "{z}");
                if z > 0.0 {
                    up += 1;
                } else {
                    down += 1;
                }
            }
            assert!(
                up - down == 0 || up - down == 1,
                "{s}: {up} up, {down} down"
            );
        }
    }
    assert_eq!(
        parities,
        [true, true],
        "both odd and even counts are exercised"
    );
}

#[test]
fn focused_outliers_sit_at_the_input_medians() {
    let n = 300;
    let (train, _) = split(n);
    let clean = dataset(n);
    let y_obs = observed(&clean, &train, 0);
    let (sigma, mean_y, med_y, mad_y) =
        (pop_std(&y_obs), mean(&y_obs), median(&y_obs), mad(&y_obs));
    assert!(mad_y > 0.5, "a non-trivial interval: MAD_y = {mad_y}");
    for protocol in PROTOCOLS {
        let mut ds = clean.clone();
        let s = spec(OutlierKind::Focused, 0.1);
        let r = contaminate(&mut ds, &train, &s, protocol, 8).unwrap();
        assert!(r.inputs_changed);
        assert_eq!(r.rows.len(), count(0.1, y_obs.len()));
        for j in 0..2 {
            // Medians and MADs over all training rows, missing targets or not.
            let col: Vec<f64> = train.iter().map(|&i| clean.x[(i, j)]).collect();
            let (m, a) = (median(&col), mad(&col));
            assert!(a > 0.0);
            for &i in &r.rows {
                let x = ds.x[(i, j)];
                assert!(
                    x >= m && x <= m + 0.1 * a + 1e-12,
                    "{protocol:?} x{j} = {x}"
                );
            }
        }
        let base = match protocol {
            Protocol::MoRcgp => mean_y + 6.0 * sigma,
            Protocol::Rcagp => med_y - 3.0 * sigma,
        };
        for &i in &r.rows {
            let y = ds.y[(i, 0)];
            let tol = 1e-12 * base.abs();
            assert!(
                y >= base - tol && y <= base + 0.1 * mad_y + tol,
                "{protocol:?} y = {y}"
            );
        }
    }
}

#[test]
fn same_seed_same_data_different_seed_different_rows() {
    let n = 1000;
    let (train, _) = split(n);
    let clean = dataset(n);
    for kind in KINDS {
        let s = spec(kind, 0.1);
        let run = |seed| {
            let mut ds = clean.clone();
            let r = contaminate(&mut ds, &train, &s, Protocol::Rcagp, seed).unwrap();
            (ds, r)
        };
        let (a, ra) = run(7);
        let (b, rb) = run(7);
        assert_eq!(ra, rb);
        assert!(changed_rows(&a, &b).is_empty(), "{s}: same seed, same data");
        let (_, rc) = run(8);
        assert_eq!(rc.rows.len(), ra.rows.len());
        assert_ne!(rc.rows, ra.rows, "{s}: another seed, other rows");
    }
}

#[test]
fn order_and_repeats_of_train_rows_do_not_matter() {
    let n = 100;
    let (train, _) = split(n);
    let clean = dataset(n);
    let mut messy: Vec<usize> = train.iter().rev().copied().collect();
    messy.extend_from_slice(&train[..10]);
    let s = spec(OutlierKind::Uniform, 0.2);
    let (mut a, mut b) = (clean.clone(), clean.clone());
    let ra = contaminate(&mut a, &train, &s, Protocol::MoRcgp, 4).unwrap();
    let rb = contaminate(&mut b, &messy, &s, Protocol::MoRcgp, 4).unwrap();
    assert_eq!(ra, rb);
    assert!(changed_rows(&a, &b).is_empty());
    assert_eq!(ra.rows.len(), count(0.2, observed(&clean, &train, 0).len()));
}

#[test]
fn missing_targets_are_never_chosen() {
    let n = 90;
    let mut clean = dataset(n);
    // Two thirds of the targets missing; almost every observed training row gets chosen.
    for i in (0..n).filter(|i| i % 3 != 0) {
        clean.y[(i, 0)] = f64::NAN;
    }
    let train: Vec<usize> = (0..n).collect();
    let n_obs = observed(&clean, &train, 0).len();
    for kind in KINDS {
        let mut ds = clean.clone();
        let r = contaminate(&mut ds, &train, &spec(kind, 0.9), Protocol::Rcagp, 2).unwrap();
        assert_eq!(r.rows.len(), count(0.9, n_obs));
        assert!(r.rows.iter().all(|&i| i % 3 == 0), "{:?}", r.rows);
        assert!((0..n).filter(|i| i % 3 != 0).all(|i| ds.y[(i, 0)].is_nan()));
    }
}

#[test]
fn named_column_is_the_one_contaminated() {
    let n = 80;
    let (train, _) = split(n);
    let clean = dataset(n);
    let mut ds = clean.clone();
    let s = ContaminationSpec::parse("asymmetric:0.2:y2").unwrap();
    let r = contaminate(&mut ds, &train, &s, Protocol::MoRcgp, 1).unwrap();
    assert_eq!(r.column, 1);
    assert_eq!(r.rows.len(), count(0.2, train.len()));
    let sigma = pop_std(&observed(&clean, &train, 1));
    assert!((r.target_std - sigma).abs() <= 1e-12 * sigma);
    for i in 0..n {
        assert_eq!(ds.y[(i, 0)].to_bits(), clean.y[(i, 0)].to_bits());
    }
    for &i in &r.rows {
        let z = ds.y[(i, 1)] - clean.y[(i, 1)];
        assert!(z >= 6.0 * sigma * (1.0 - 1e-12) && z <= 9.0 * sigma * (1.0 + 1e-12));
    }
}

#[test]
fn errors_name_the_problem_and_leave_the_data_alone() {
    let n = 20;
    let (train, _) = split(n);
    let clean = dataset(n);
    let fails = |ds: &mut Dataset, rows: &[usize], s: &ContaminationSpec| {
        let before = ds.clone();
        let m = contaminate(ds, rows, s, Protocol::Rcagp, 0)
            .unwrap_err()
            .to_string();
        assert!(changed_rows(&before, ds).is_empty(), "{m}");
        m
    };
    let asym = spec(OutlierKind::Asymmetric, 0.1);

    let mut ds = clean.clone();
    let s = ContaminationSpec::parse("uniform:0.1:nope").unwrap();
    let m = fails(&mut ds, &train, &s);
    assert!(
        m.contains("\"nope\"") && m.contains("\"y1\", \"y2\""),
        "{m}"
    );

    let m = fails(&mut ds, &[1, 2, 20], &asym);
    assert!(
        m.contains("training row 20 (position 2") && m.contains("below 20"),
        "{m}"
    );

    let m = fails(&mut ds, &[], &asym);
    assert!(
        m.contains("\"y1\"") && m.contains("nothing to contaminate"),
        "{m}"
    );
    // Row 3 (and 10, 17) have a missing y1.
    let m = fails(&mut ds, &[3, 10, 17], &asym);
    assert!(
        m.contains("in the 3 training rows") && m.contains("nothing"),
        "{m}"
    );

    let mut flat = clean.clone();
    for i in 0..n {
        flat.y[(i, 1)] = 4.5;
    }
    let s = ContaminationSpec::parse("focused:0.5:y2").unwrap();
    let m = fails(&mut flat, &train, &s);
    assert!(m.contains("\"y2\"") && m.contains("standard deviation") && m.contains("is 0"));
    let m = fails(&mut ds, &[1], &asym);
    assert!(
        m.contains("standard deviation"),
        "one observed value has no spread: {m}"
    );

    for fraction in [0.0, 1.0, f64::NAN] {
        let m = fails(&mut ds, &train, &spec(OutlierKind::Uniform, fraction));
        assert!(m.contains(&format!("\"uniform:{fraction}\"")), "{m}");
    }

    let mut no_targets = clean.clone();
    no_targets.y = Mat::zeros(n, 0);
    no_targets.target_names.clear();
    let m = fails(&mut no_targets, &train, &asym);
    assert!(m.contains("number of target columns"), "{m}");
    let s = ContaminationSpec::parse("uniform:0.1:y").unwrap();
    assert!(fails(&mut no_targets, &train, &s).contains("available targets: (none)"));
}
