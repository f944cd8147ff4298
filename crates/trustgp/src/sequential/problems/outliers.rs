//! Seeded outlier corruption of objective evaluations, for the robust BO experiments.
//!
//! Protocol (`rcagp.md` §3.5, step 2 and step 10 of Algorithm BO, and §5.5 "Outliers"): every
//! evaluation, standardised with the run's fixed `(μ_y, s_y)`, independently becomes an outlier
//! with probability `p` (the paper's `p_out = 0.25`); an asymmetric outlier adds
//! `U(1σ̄, 2σ̄)`, where `σ̄` is the standard deviation of the standardised initial evaluations.
//! The RCaGP reference code draws from `U(1.25σ̄, 2.25σ̄)` instead; [`ObservationOutliers`]
//! keeps the range as a field so either can be run. The spec defines asymmetric outliers only;
//! [`OutlierShape::Uniform`] is our symmetric counterpart (the same magnitude with a random
//! sign, each sign with probability ½), as the UCI experiments pair the two kinds.
//!
//! The random draws of evaluation number `k` of a run depend only on `(seed, k)`, so corrupting
//! the initial design in one call and later evaluations one by one, or resuming a stored run,
//! gives the same outliers as one pass over all evaluations.

use std::fmt;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Invalid input to the outlier corruption.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutlierError {
    /// The spec string could not be read.
    #[error(
        "bad outlier spec \"{spec}\": {problem}; expected asymmetric:P or uniform:P with 0 < P < 1"
    )]
    BadSpec {
        /// The string given.
        spec: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The shift range is not `0 ≤ low ≤ high`, finite.
    #[error("outlier shift range [{low}, {high}] (units of σ̄) must be finite with 0 ≤ low ≤ high")]
    BadRange {
        /// The lower end given.
        low: f64,
        /// The upper end given.
        high: f64,
    },
    /// σ̄ is not positive and finite.
    #[error("σ̄ (the standard deviation of the standardised evaluations) is {0}; expected a positive finite number")]
    BadScale(f64),
}

/// The sign of the outlier shifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutlierShape {
    /// Every outlier is shifted up.
    Asymmetric,
    /// Each outlier is shifted up or down with probability ½.
    Uniform,
}

/// Which evaluations become outliers, and by how much.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservationOutliers {
    /// The sign rule of the shifts.
    pub shape: OutlierShape,
    /// The probability that an evaluation becomes an outlier, in (0, 1).
    pub probability: f64,
    /// The shift magnitude is drawn from `U(low·σ̄, high·σ̄)`; the paper's `low` is 1.
    pub low: f64,
    /// The paper's `high` is 2.
    pub high: f64,
}

/// The corrupted values and which of them are outliers.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrupted {
    /// The values after corruption, in the order given.
    pub y: Vec<f64>,
    /// `true` where the value was shifted.
    pub is_outlier: Vec<bool>,
}

impl ObservationOutliers {
    /// Parses `asymmetric:P` or `uniform:P` (`0 < P < 1`), with the paper's shift range
    /// `[1, 2]`σ̄.
    pub fn parse(s: &str) -> Result<Self, OutlierError> {
        let bad = |problem: String| OutlierError::BadSpec {
            spec: s.to_string(),
            problem,
        };
        let fields: Vec<&str> = s.split(':').map(str::trim).collect();
        if fields.len() != 2 {
            return Err(bad(format!(
                "{} field(s) separated by ':', expected 2",
                fields.len()
            )));
        }
        let shape = match fields[0] {
            "asymmetric" => OutlierShape::Asymmetric,
            "uniform" => OutlierShape::Uniform,
            other => return Err(bad(format!("unknown outlier kind \"{other}\""))),
        };
        let probability: f64 = fields[1]
            .parse()
            .map_err(|_| bad(format!("probability \"{}\" is not a number", fields[1])))?;
        if !(probability > 0.0 && probability < 1.0) {
            return Err(bad(format!(
                "probability {probability} is not strictly between 0 and 1"
            )));
        }
        Ok(ObservationOutliers {
            shape,
            probability,
            low: 1.0,
            high: 2.0,
        })
    }

    /// Corrupts standardised evaluations `y`, which are evaluations number `first_index`,
    /// `first_index + 1`, … of the run; `sigma_bar` is σ̄. Values that are not outliers are
    /// returned unchanged, bit for bit.
    ///
    /// Errors: the shift range is invalid, or `sigma_bar` is not positive and finite.
    pub fn corrupt(
        &self,
        y: &[f64],
        sigma_bar: f64,
        seed: u64,
        first_index: u64,
    ) -> Result<Corrupted, OutlierError> {
        if !(self.low.is_finite() && self.high.is_finite() && 0.0 <= self.low)
            || self.low > self.high
        {
            return Err(OutlierError::BadRange {
                low: self.low,
                high: self.high,
            });
        }
        if !(sigma_bar.is_finite() && sigma_bar > 0.0) {
            return Err(OutlierError::BadScale(sigma_bar));
        }
        let mut out = Corrupted {
            y: Vec::with_capacity(y.len()),
            is_outlier: Vec::with_capacity(y.len()),
        };
        for (k, &v) in (first_index..).zip(y) {
            let mut rng = evaluation_rng(seed, k);
            // All three draws are always made, so evaluation k's outcome never depends on the
            // shape or on what happened to other evaluations.
            let chosen = rng.random::<f64>() < self.probability;
            let magnitude = (self.low + (self.high - self.low) * rng.random::<f64>()) * sigma_bar;
            let down = rng.random::<bool>();
            let shift = match (self.shape, down) {
                (OutlierShape::Uniform, true) => -magnitude,
                _ => magnitude,
            };
            out.y.push(if chosen { v + shift } else { v });
            out.is_outlier.push(chosen);
        }
        Ok(out)
    }
}

/// Writes the spec in the form [`ObservationOutliers::parse`] reads (the shift range is not
/// part of it).
impl fmt::Display for ObservationOutliers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.shape {
            OutlierShape::Asymmetric => "asymmetric",
            OutlierShape::Uniform => "uniform",
        };
        write!(f, "{kind}:{}", self.probability)
    }
}

/// The generator of evaluation `k` of the run seeded `seed`: the key holds both numbers
/// verbatim, so distinct `(seed, k)` pairs never share a stream.
fn evaluation_rng(seed: u64, k: u64) -> StdRng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&k.to_le_bytes());
    StdRng::from_seed(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> ObservationOutliers {
        ObservationOutliers::parse(s).unwrap()
    }

    /// Values that are all distinct, so a shift is visible.
    fn values(n: usize) -> Vec<f64> {
        (0..n).map(|i| (i as f64 * 0.37).sin()).collect()
    }

    #[test]
    fn corrupts_the_stated_fraction_by_the_stated_shifts() {
        let n = 20_000;
        let y = values(n);
        let sigma = 0.8;
        for (s, shape) in [
            ("asymmetric:0.25", OutlierShape::Asymmetric),
            ("uniform:0.1", OutlierShape::Uniform),
        ] {
            let o = spec(s);
            assert_eq!(o.shape, shape);
            let c = o.corrupt(&y, sigma, 7, 0).unwrap();
            let k = c.is_outlier.iter().filter(|&&b| b).count();
            // Binomial(n, p): the fraction is within four standard deviations of p.
            let p = o.probability;
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((k as f64 / n as f64 - p).abs() < 4.0 * sd, "{s}: {k}");
            let mut ups = 0;
            let mut sum = 0.0;
            for ((&after, &before), &outlier) in c.y.iter().zip(&y).zip(&c.is_outlier) {
                let shift = after - before;
                if outlier {
                    let m = shift.abs();
                    // In [1σ̄, 2σ̄], allowing for the rounding of v + shift − v.
                    assert!(m >= sigma - 1e-12 && m <= 2.0 * sigma + 1e-12, "{s}: {m}");
                    ups += usize::from(shift > 0.0);
                    sum += m;
                } else {
                    assert_eq!(after.to_bits(), before.to_bits());
                }
            }
            // Mean magnitude 1.5σ̄; U(1, 2)σ̄ has std σ̄/√12.
            let mean_sd = sigma / 12f64.sqrt() / (k as f64).sqrt();
            assert!((sum / k as f64 - 1.5 * sigma).abs() < 4.0 * mean_sd, "{s}");
            match shape {
                OutlierShape::Asymmetric => assert_eq!(ups, k),
                OutlierShape::Uniform => {
                    let half_sd = 0.5 / (k as f64).sqrt();
                    assert!(
                        (ups as f64 / k as f64 - 0.5).abs() < 4.0 * half_sd,
                        "{ups}/{k}"
                    );
                }
            }
        }
    }

    #[test]
    fn seeded_and_independent_of_how_the_run_is_split() {
        let o = spec("asymmetric:0.25");
        let y = values(300);
        let all = o.corrupt(&y, 1.0, 42, 0).unwrap();
        assert_eq!(all, o.corrupt(&y, 1.0, 42, 0).unwrap());
        assert_ne!(
            all.is_outlier,
            o.corrupt(&y, 1.0, 43, 0).unwrap().is_outlier
        );
        // The initial design in one call, then one evaluation at a time.
        let mut pieces = o.corrupt(&y[..250], 1.0, 42, 0).unwrap();
        for (k, v) in (250u64..).zip(&y[250..]) {
            let c = o.corrupt(&[*v], 1.0, 42, k).unwrap();
            pieces.y.extend(c.y);
            pieces.is_outlier.extend(c.is_outlier);
        }
        assert_eq!(pieces, all);
    }

    #[test]
    fn bad_specs_ranges_and_scales_are_clear_errors() {
        for bad in [
            "",
            "asymmetric",
            "asymmetric:0",
            "asymmetric:1",
            "asymmetric:x",
            "focused:0.1",
            "uniform:0.1:y",
        ] {
            assert!(
                matches!(
                    ObservationOutliers::parse(bad),
                    Err(OutlierError::BadSpec { .. })
                ),
                "{bad}"
            );
        }
        let o = spec("uniform:0.5");
        assert_eq!(ObservationOutliers::parse(&o.to_string()), Ok(o.clone()));
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                o.corrupt(&[1.0], s, 0, 0),
                Err(OutlierError::BadScale(_))
            ));
        }
        let reversed = ObservationOutliers {
            low: 2.0,
            high: 1.0,
            ..o
        };
        assert!(matches!(
            reversed.corrupt(&[1.0], 1.0, 0, 0),
            Err(OutlierError::BadRange { .. })
        ));
    }
}
