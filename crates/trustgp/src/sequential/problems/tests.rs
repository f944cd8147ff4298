use std::f64::consts::PI;

use faer::Mat;

use super::*;

const ALL: [Problem; 5] = [
    Problem::Branin,
    Problem::Hartmann6,
    Problem::Ackley { dim: 1 },
    Problem::Ackley { dim: 5 },
    Problem::Rover60,
];

#[test]
fn branin_minimisers_give_the_published_minimum() {
    for x in Problem::Branin.maximisers() {
        let v = Problem::Branin.evaluate(&x).unwrap();
        // Published 0.397887; closed form at the minimisers, where the square vanishes and
        // cos x₁ = −1: 10 − 10(1 − 1/(8π)) = 5/(4π).
        assert!((v + 0.397887).abs() < 1e-6, "{x:?}: {v}");
        assert!((v + 5.0 / (4.0 * PI)).abs() < 1e-13, "{x:?}: {v}");
        assert!((v - Problem::Branin.optimum().unwrap()).abs() < 1e-13);
    }
}

#[test]
fn hartmann6_maximiser_gives_the_published_maximum() {
    let x = &Problem::Hartmann6.maximisers()[0];
    let v = Problem::Hartmann6.evaluate(x).unwrap();
    // The published 3.32237 has five decimals: it is within half a unit of the fifth.
    assert!((v - 3.32237).abs() < 5e-6, "{v}");
    // An independent Python evaluation of −H₆ at the published point.
    assert!((v - 3.322368011391339).abs() < 1e-13, "{v}");
    assert!(
        (v - Problem::Hartmann6.optimum().unwrap()).abs() < 1e-10,
        "{v}"
    );
}

#[test]
fn ackley_is_zero_at_the_origin_and_matches_reference_values() {
    for dim in [1, 5] {
        let p = Problem::Ackley { dim };
        let v = p.evaluate(&vec![0.0; dim]).unwrap();
        assert!(v.abs() < 1e-14, "dim {dim}: {v}");
    }
    // Independent Python evaluations of the Ackley formula.
    let v = Problem::Ackley { dim: 2 }.evaluate(&[1.0, 1.0]).unwrap();
    assert!((v + 3.6253849384403627).abs() < 1e-13);
    let v = Problem::Ackley { dim: 3 }
        .evaluate(&[0.5, -1.5, 2.0])
        .unwrap();
    assert!((v + 7.102062941907507).abs() < 1e-13);
}

#[test]
fn branin_matches_reference_values_away_from_the_optimum() {
    // Independent Python evaluations of the Branin formula.
    let v = Problem::Branin.evaluate(&[0.0, 0.0]).unwrap();
    assert!((v + 55.602112642270264).abs() < 1e-12);
    let v = Problem::Branin.evaluate(&[1.0, 2.0]).unwrap();
    assert!((v + 21.62763539206238).abs() < 1e-12);
}

#[test]
fn maximisers_are_local_maxima_inside_the_box() {
    for p in ALL {
        let (lb, ub) = p.bounds();
        assert_eq!((lb.len(), ub.len()), (p.dim(), p.dim()));
        for x in p.maximisers() {
            assert!(x
                .iter()
                .zip(&lb)
                .zip(&ub)
                .all(|((v, l), u)| l <= v && v <= u));
            let best = p.evaluate(&x).unwrap();
            assert!((best - p.optimum().unwrap()).abs() < 1e-10, "{p}");
            for j in 0..p.dim() {
                for h in [-1e-4, 1e-4] {
                    let mut y = x.clone();
                    y[j] += h;
                    let v = p.evaluate(&y).unwrap();
                    assert!(
                        v < best,
                        "{p} at {x:?}, coordinate {j} moved by {h}: {v} ≥ {best}"
                    );
                }
            }
        }
    }
}

#[test]
fn only_rover60_has_no_known_optimum() {
    for p in ALL {
        let unknown = p == Problem::Rover60;
        assert_eq!(p.optimum().is_none(), unknown, "{p}");
        assert_eq!(p.maximisers().is_empty(), unknown, "{p}");
    }
    assert_eq!(Problem::Rover60.dim(), 60);
    let (lb, ub) = Problem::Rover60.bounds();
    assert!(lb.iter().all(|&v| v == -2.0 / 60.0) && ub.iter().all(|&v| v == 4.0 / 60.0));
    // A reward is above the bound 5 − 0.05 · 0.9√2 that every path to the goal pays.
    assert!(Problem::Rover60.evaluate(&vec![0.03; 60]).unwrap() < 5.0 - 0.045 * 2f64.sqrt());
}

#[test]
fn rows_are_evaluated_like_points() {
    for p in ALL {
        let x = Mat::from_fn(4, p.dim(), |i, j| 0.1 * (i as f64) - 0.03 * (j as f64));
        let values = p.evaluate_rows(x.as_ref()).unwrap();
        for (i, v) in values.iter().enumerate() {
            let row: Vec<f64> = (0..p.dim()).map(|j| x[(i, j)]).collect();
            assert_eq!(*v, p.evaluate(&row).unwrap());
        }
    }
}

#[test]
fn wrong_dimensions_and_non_finite_points_are_clear_errors() {
    let err = Problem::Branin.evaluate(&[1.0]).unwrap_err();
    assert_eq!(err.to_string(), "branin takes 2 inputs but the point has 1");
    let err = Problem::Hartmann6
        .evaluate_rows(Mat::<f64>::zeros(3, 5).as_ref())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "hartmann6 takes 6 inputs but each row has 5"
    );
    let mut x = Mat::<f64>::zeros(3, 2);
    x[(2, 1)] = f64::NAN;
    let err = Problem::Branin.evaluate_rows(x.as_ref()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "branin: coordinate 1 of row 2 is NaN; expected a finite number"
    );
    assert!(matches!(
        Problem::Ackley { dim: 2 }.evaluate(&[f64::INFINITY, 0.0]),
        Err(ProblemError::NotFinite { index: 0, .. })
    ));
    let empty = Problem::Ackley { dim: 0 };
    assert!(matches!(
        empty.evaluate(&[]),
        Err(ProblemError::ZeroDimension { .. })
    ));
    assert!(matches!(
        empty.evaluate_rows(Mat::<f64>::zeros(2, 0).as_ref()),
        Err(ProblemError::ZeroDimension { .. })
    ));
}

#[test]
fn names_parse_and_print_back() {
    for p in ALL {
        assert_eq!(Problem::parse(&p.to_string()), Ok(p));
    }
    assert_eq!(Problem::parse(" Hartmann6 "), Ok(Problem::Hartmann6));
    assert_eq!(Problem::parse("ROVER60"), Ok(Problem::Rover60));
    assert_eq!(
        Problem::parse("ackley: 12"),
        Ok(Problem::Ackley { dim: 12 })
    );
    for bad in [
        "",
        "rosenbrock",
        "ackley",
        "ackley:0",
        "ackley:x",
        "branin:2",
    ] {
        assert!(
            matches!(
                Problem::parse(bad),
                Err(ProblemError::UnknownProblem { .. })
            ),
            "{bad}"
        );
    }
}
