use faer::Mat;

use crate::data::Standardizer;
use crate::sequential::safe::scaling::{output_scaling, standardise_constraint, UnitBox};
use crate::sequential::safe::{Constraint, TaskData};

#[test]
fn unit_box_round_trip_and_errors() {
    let b = UnitBox::new(&[(-1.0, 3.0), (10.0, 12.0)]).unwrap();
    let x = Mat::from_fn(3, 2, |i, c| {
        if c == 0 {
            -1.0 + 2.0 * i as f64
        } else {
            10.0 + i as f64
        }
    });
    let u = b.to_unit(x.as_ref(), "x").unwrap();
    assert_eq!((u[(0, 0)], u[(1, 0)], u[(2, 0)]), (0.0, 0.5, 1.0));
    assert_eq!((u[(0, 1)], u[(1, 1)], u[(2, 1)]), (0.0, 0.5, 1.0));
    assert_eq!(b.from_unit(&[0.25, 0.75]), vec![0.0, 11.5]);
    assert!(UnitBox::new(&[]).is_err());
    assert!(UnitBox::new(&[(0.0, f64::NAN)])
        .unwrap_err()
        .to_string()
        .contains("input 0"));
    let e = b
        .to_unit(Mat::zeros(1, 3).as_ref(), "pool")
        .unwrap_err()
        .to_string();
    assert!(e.contains("pool must have 2 input columns"), "{e}");
}

#[test]
fn thresholds_follow_their_column() {
    let task = TaskData {
        x: Mat::zeros(4, 1),
        outputs: Mat::from_fn(4, 2, |i, j| {
            if j == 0 {
                i as f64
            } else {
                10.0 * i as f64 - 5.0
            }
        }),
    };
    let s: Standardizer = output_scaling(&task, "t").unwrap();
    let c = Constraint {
        output: 1,
        lower: Some(0.0),
        upper: Some(20.0),
    };
    let m = standardise_constraint(&c, &s);
    // The standardised data and thresholds keep their order: z ≥ T ⇔ z' ≥ T'.
    let (mean, sd) = (10.0, 125.0f64.sqrt());
    assert!((m.lower.unwrap() - (0.0 - mean) / sd).abs() < 1e-14);
    assert!((m.upper.unwrap() - (20.0 - mean) / sd).abs() < 1e-14);
    let mut bad = task.clone();
    bad.outputs[(2, 1)] = f64::NAN;
    assert!(output_scaling(&bad, "source task 3")
        .unwrap_err()
        .to_string()
        .contains("source task 3 outputs must be finite: row 2, column 1"));
}
