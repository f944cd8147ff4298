use faer::Mat;

use super::*;

fn err(text: &str) -> String {
    parse_bounds(text).unwrap_err().to_string()
}

fn unit(name: &str) -> Bound {
    Bound {
        name: name.into(),
        lo: 0.0,
        hi: 1.0,
    }
}

/// Rows `(x, f(x))` of a 1-D function, input `x`, target `y`.
fn rows(xs: &[f64], f: impl Fn(f64) -> f64) -> Dataset {
    Dataset {
        input_names: vec!["x".into()],
        target_names: vec!["y".into()],
        x: Mat::from_fn(xs.len(), 1, |i, _| xs[i]),
        y: Mat::from_fn(xs.len(), 1, |i, _| f(xs[i])),
    }
}

#[test]
fn bounds_parse_names_and_ranges() {
    let b = parse_bounds("x1=0:1, x2 = -5:10").unwrap();
    assert_eq!(
        b,
        vec![
            Bound {
                name: "x1".into(),
                lo: 0.0,
                hi: 1.0
            },
            Bound {
                name: "x2".into(),
                lo: -5.0,
                hi: 10.0
            }
        ]
    );
}

#[test]
fn malformed_bounds_are_errors_naming_the_entry() {
    assert!(err("x1").contains("'x1' is not of the form name=lo:hi"));
    assert!(err("x1=0").contains("no ':'"));
    assert!(err("=0:1").contains("empty name"));
    assert!(err("x1=a:1").contains("'a' is not a finite number"));
    assert!(err("x1=0:inf").contains("'inf' is not a finite number"));
    assert!(err("x1=NaN:1").contains("'NaN' is not a finite number"));
    assert!(err("x1=1:1").contains("lo < hi"));
    assert!(err("x1=2:1").contains("lo < hi"));
    assert!(err("x1=0:1,x1=0:2").contains("'x1' is given more than once"));
    assert!(err("").contains("not of the form"));
}

#[test]
fn acquisition_names_round_trip() {
    for a in [
        SuggestAcquisition::LogEi,
        SuggestAcquisition::Ei,
        SuggestAcquisition::Pi,
        SuggestAcquisition::Ucb,
        SuggestAcquisition::QLogEi,
        SuggestAcquisition::Ts,
    ] {
        assert_eq!(SuggestAcquisition::parse(a.name()).unwrap(), a);
    }
    let e = SuggestAcquisition::parse("qei").unwrap_err().to_string();
    assert!(
        e.contains("'qei'") && e.contains("logei, ei, pi, ucb, qlogei or ts"),
        "{e}"
    );
}

#[test]
fn without_rows_the_point_is_seeded_and_inside_the_box() {
    let bounds = parse_bounds("a=0:1,b=-5:10,c=100:100.5").unwrap();
    let at = |seed| {
        let opts = SuggestOptions {
            seed,
            ..SuggestOptions::default()
        };
        suggest(&bounds, None, &opts).unwrap()
    };
    let p = at(3);
    assert!(p.model.is_none() && p.acquisition_value.is_none());
    for (v, b) in p.x.iter().zip(&bounds) {
        assert!(b.lo <= *v && *v <= b.hi, "{v} outside [{}, {}]", b.lo, b.hi);
    }
    assert_eq!(p.x, at(3).x);
    assert_ne!(p.x, at(4).x);
    // Data with no rows is the same as no data.
    let empty = Dataset {
        input_names: vec!["a".into(), "b".into(), "c".into()],
        target_names: vec!["y".into()],
        x: Mat::zeros(0, 3),
        y: Mat::zeros(0, 1),
    };
    let opts = SuggestOptions {
        seed: 3,
        ..SuggestOptions::default()
    };
    assert_eq!(suggest(&bounds, Some(&empty), &opts).unwrap().x, p.x);
}

#[test]
fn data_must_match_the_bounds() {
    let data = rows(&[0.1, 0.5], |x| x);
    let e = suggest(&[unit("z")], Some(&data), &SuggestOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bounds' names"), "{e}");
    let mut missing = data.clone();
    missing.y[(1, 0)] = f64::NAN;
    let e = suggest(&[unit("x")], Some(&missing), &SuggestOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 2 has no target value"), "{e}");
    let bad = [Bound {
        name: "x".into(),
        lo: 1.0,
        hi: 0.0,
    }];
    assert!(suggest(&bad, None, &SuggestOptions::default()).is_err());
}

/// Ten suggest/evaluate steps on `f` over `bound` from three points; the evaluated `x` closest
/// to `target`.
fn closest_in(bound: &Bound, opts: &SuggestOptions, f: impl Fn(f64) -> f64, target: f64) -> f64 {
    let w = bound.hi - bound.lo;
    let mut xs: Vec<f64> = [0.05, 0.6, 0.95].iter().map(|u| bound.lo + u * w).collect();
    for _ in 0..10 {
        let s = suggest(std::slice::from_ref(bound), Some(&rows(&xs, &f)), opts).unwrap();
        assert!((bound.lo..=bound.hi).contains(&s.x[0]), "{}", s.x[0]);
        assert!(s.acquisition_value.is_some_and(f64::is_finite));
        xs.push(s.x[0]);
    }
    xs.iter()
        .map(|x| (x - target).abs())
        .fold(f64::INFINITY, f64::min)
}

fn closest_after_loop(opts: &SuggestOptions, f: impl Fn(f64) -> f64, target: f64) -> f64 {
    closest_in(&unit("x"), opts, f, target)
}

#[test]
fn the_loop_works_in_the_data_units_of_a_wide_box() {
    // Inputs standardised far from [0, 1]: a wrong map between the box and the model's units
    // would search the wrong interval.
    let bound = Bound {
        name: "x".into(),
        lo: -5.0,
        hi: 10.0,
    };
    let gap = closest_in(
        &bound,
        &SuggestOptions::default(),
        |x| -(x - 4.0).powi(2),
        4.0,
    );
    // 0.05 of the box width, as on [0, 1].
    assert!(gap < 0.75, "closest {gap}");
}

#[test]
fn the_loop_finds_the_maximiser() {
    for acquisition in [SuggestAcquisition::LogEi, SuggestAcquisition::Ucb] {
        let opts = SuggestOptions {
            acquisition,
            ..SuggestOptions::default()
        };
        let gap = closest_after_loop(&opts, |x| -(x - 0.3) * (x - 0.3), 0.3);
        assert!(gap < 0.05, "{acquisition:?}: closest {gap}");
    }
}

#[test]
fn minimize_finds_the_minimiser() {
    let opts = SuggestOptions {
        minimize: true,
        ..SuggestOptions::default()
    };
    // The same function maximised would end at the box's edges, far from 0.7.
    let gap = closest_after_loop(&opts, |x| (x - 0.7) * (x - 0.7), 0.7);
    assert!(gap < 0.05, "closest {gap}");
}

#[test]
fn rows_outside_the_box_are_refused_naming_row_and_input() {
    let data = rows(&[0.2, 1.5], |x| x);
    let e = suggest(&[unit("x")], Some(&data), &SuggestOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("point 2, input 'x': 1.5 is not inside [0, 1]"),
        "{e}"
    );
}
