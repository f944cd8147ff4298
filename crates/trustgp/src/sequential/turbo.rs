//! TuRBO trust regions (Eriksson et al., 2019): a box around the incumbent that grows after a run
//! of successes, shrinks after a run of failures, and restarts when it has become too small.
//!
//! The constants are those of `rcagp.md` §3.5 ("TuRBO variant", taken from the RCaGP reference
//! code): initial side `L₀ = 0.8`, minimum `L_min = 0.5⁷`, maximum `L_max = 1.6`, in units of
//! the domain's side; 10 consecutive successes double `L` (capped at `L_max`), 32 consecutive
//! failures halve it, and `L < L_min` asks for a restart. A batch is a success when its best
//! value beats the best so far by more than `10⁻³·|best|`.
//!
//! The state is plain data with serde support, so a run stored as JSON resumes bit for bit
//! (`serde_json` is built with `float_roundtrip`).

use serde::{Deserialize, Serialize};

/// Initial side length of the region, as a fraction of the domain's side (`rcagp.md` §3.5).
pub const LENGTH_INIT: f64 = 0.8;
/// Below this side length the region restarts (`rcagp.md` §3.5: `0.5⁷`).
pub const LENGTH_MIN: f64 = 0.0078125;
/// The side length never grows beyond this (`rcagp.md` §3.5).
pub const LENGTH_MAX: f64 = 1.6;
/// Consecutive successes that double the side length (`rcagp.md` §3.5).
pub const SUCCESS_TOLERANCE: usize = 10;
/// Consecutive failures that halve the side length (`rcagp.md` §3.5).
pub const FAILURE_TOLERANCE: usize = 32;
/// A batch succeeds when `max y > best + SUCCESS_MARGIN·|best|` (`rcagp.md` §3.5).
pub const SUCCESS_MARGIN: f64 = 1e-3;

/// Invalid input to a [`TrustRegion`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurboError {
    /// The region was created for a dimension of zero.
    #[error("a trust region needs at least one input dimension")]
    ZeroDimension,
    /// A vector has the wrong number of entries.
    #[error("{what} has {found} entries but the trust region has dimension {expected}")]
    DimensionMismatch {
        /// Which argument (`center`, `lower bounds`, `upper bounds`).
        what: &'static str,
        /// The region's dimension.
        expected: usize,
        /// The argument's length.
        found: usize,
    },
    /// A domain bound pair is not finite with `lower < upper`.
    #[error(
        "domain bounds of input {index} are [{lower}, {upper}]; expected finite lower < upper"
    )]
    BadDomain {
        /// The input (column) index.
        index: usize,
        /// The lower bound given.
        lower: f64,
        /// The upper bound given.
        upper: f64,
    },
    /// The centre lies outside the domain or is not finite.
    #[error("center coordinate {index} is {value}, outside the domain [{lower}, {upper}]")]
    CenterOutsideDomain {
        /// The input (column) index.
        index: usize,
        /// The centre coordinate given.
        value: f64,
        /// The domain's lower bound there.
        lower: f64,
        /// The domain's upper bound there.
        upper: f64,
    },
    /// A batch of new values was empty.
    #[error("the batch of new objective values is empty")]
    EmptyBatch,
    /// A new value or the best so far is NaN or infinite.
    #[error("{what} is {value}; expected a finite number")]
    NotFinite {
        /// Which value (`new value i`, `best so far`).
        what: String,
        /// The value given.
        value: f64,
    },
}

/// The state of one TuRBO trust region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrustRegion {
    dim: usize,
    length: f64,
    success_count: usize,
    failure_count: usize,
    restart: bool,
}

impl TrustRegion {
    /// A fresh region for `dim` inputs: side [`LENGTH_INIT`], no successes or failures.
    pub fn new(dim: usize) -> Result<Self, TurboError> {
        if dim == 0 {
            return Err(TurboError::ZeroDimension);
        }
        Ok(TrustRegion {
            dim,
            length: LENGTH_INIT,
            success_count: 0,
            failure_count: 0,
            restart: false,
        })
    }

    /// The number of inputs.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The side length `L`, a fraction of the domain's side.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// Consecutive successes since the last change of `L` or the last failure.
    pub fn success_count(&self) -> usize {
        self.success_count
    }

    /// Consecutive failures since the last change of `L` or the last success.
    pub fn failure_count(&self) -> usize {
        self.failure_count
    }

    /// Whether `L` fell below [`LENGTH_MIN`]: the caller should start over (fresh design, then
    /// [`TrustRegion::restart`]).
    pub fn needs_restart(&self) -> bool {
        self.restart
    }

    /// Resets the region to its initial state (same dimension).
    pub fn restart(&mut self) {
        *self = TrustRegion {
            dim: self.dim,
            length: LENGTH_INIT,
            success_count: 0,
            failure_count: 0,
            restart: false,
        };
    }

    /// Records one iteration's outcome: [`SUCCESS_TOLERANCE`] successes in a row double `L`
    /// (capped at [`LENGTH_MAX`]), [`FAILURE_TOLERANCE`] failures in a row halve it; either
    /// change resets its counter. `L <` [`LENGTH_MIN`] sets the restart flag.
    pub fn update(&mut self, improved: bool) {
        if improved {
            self.success_count += 1;
            self.failure_count = 0;
        } else {
            self.success_count = 0;
            self.failure_count += 1;
        }
        if self.success_count == SUCCESS_TOLERANCE {
            self.length = (2.0 * self.length).min(LENGTH_MAX);
            self.success_count = 0;
        } else if self.failure_count == FAILURE_TOLERANCE {
            self.length /= 2.0;
            self.failure_count = 0;
        }
        if self.length < LENGTH_MIN {
            self.restart = true;
        }
    }

    /// Records a batch of new (clean) objective values against the best value before the batch:
    /// a success when `max(batch) > best + 10⁻³·|best|`. Returns whether it was a success.
    ///
    /// Errors: an empty batch, or a non-finite value or best.
    pub fn update_with(&mut self, batch: &[f64], best: f64) -> Result<bool, TurboError> {
        if batch.is_empty() {
            return Err(TurboError::EmptyBatch);
        }
        if !best.is_finite() {
            return Err(TurboError::NotFinite {
                what: "best so far".into(),
                value: best,
            });
        }
        if let Some((i, &v)) = batch.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(TurboError::NotFinite {
                what: format!("new value {i}"),
                value: v,
            });
        }
        let max = batch.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let improved = max > best + SUCCESS_MARGIN * best.abs();
        self.update(improved);
        Ok(improved)
    }

    /// The region's box: side `L·(ub − lb)` centred at `center` (the incumbent), clipped to the
    /// domain `[lower, upper]`. Returns `(lower, upper)` of the region.
    ///
    /// Errors: lengths differ from the dimension, a domain bound pair is not finite with
    /// `lower < upper`, or the centre is not inside the domain.
    pub fn bounds(
        &self,
        center: &[f64],
        lower: &[f64],
        upper: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), TurboError> {
        for (what, v) in [
            ("center", center),
            ("lower bounds", lower),
            ("upper bounds", upper),
        ] {
            if v.len() != self.dim {
                return Err(TurboError::DimensionMismatch {
                    what,
                    expected: self.dim,
                    found: v.len(),
                });
            }
        }
        let mut lo = Vec::with_capacity(self.dim);
        let mut hi = Vec::with_capacity(self.dim);
        for (index, ((&c, &l), &u)) in center.iter().zip(lower).zip(upper).enumerate() {
            if !(l.is_finite() && u.is_finite() && l < u) {
                return Err(TurboError::BadDomain {
                    index,
                    lower: l,
                    upper: u,
                });
            }
            // `!(l <= c && c <= u)` also rejects NaN.
            if !(l <= c && c <= u) {
                return Err(TurboError::CenterOutsideDomain {
                    index,
                    value: c,
                    lower: l,
                    upper: u,
                });
            }
            let half = 0.5 * self.length * (u - l);
            lo.push((c - half).max(l));
            hi.push((c + half).min(u));
        }
        Ok((lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_spec() {
        assert_eq!(LENGTH_MIN, 0.5f64.powi(7));
        assert_eq!(LENGTH_INIT, 0.8);
        assert_eq!(LENGTH_MAX, 1.6);
    }

    #[test]
    fn expands_after_ten_successes_and_caps() {
        let mut tr = TrustRegion::new(3).unwrap();
        for k in 1..10 {
            tr.update(true);
            assert_eq!(tr.success_count(), k);
            assert_eq!(tr.length(), 0.8);
        }
        tr.update(true);
        assert_eq!((tr.length(), tr.success_count()), (1.6, 0));
        // Already at the cap: ten more successes leave it at 1.6.
        for _ in 0..10 {
            tr.update(true);
        }
        assert_eq!((tr.length(), tr.success_count()), (1.6, 0));
        assert!(!tr.needs_restart());
    }

    #[test]
    fn a_failure_resets_the_success_run_and_vice_versa() {
        let mut tr = TrustRegion::new(2).unwrap();
        for _ in 0..9 {
            tr.update(true);
        }
        tr.update(false);
        assert_eq!((tr.success_count(), tr.failure_count()), (0, 1));
        tr.update(true);
        assert_eq!((tr.success_count(), tr.failure_count()), (1, 0));
        assert_eq!(tr.length(), 0.8);
    }

    #[test]
    fn shrinks_after_32_failures_and_restarts_below_the_minimum() {
        let mut tr = TrustRegion::new(2).unwrap();
        // Hand-computed: 0.8 → 0.4 → 0.2 → 0.1 → 0.05 → 0.025 → 0.0125 → 0.00625 < 0.0078125.
        let expected = [0.4, 0.2, 0.1, 0.05, 0.025, 0.0125, 0.00625];
        for (halving, &want) in expected.iter().enumerate() {
            for k in 1..32 {
                tr.update(false);
                assert_eq!(tr.failure_count(), k);
            }
            assert!(!tr.needs_restart());
            tr.update(false);
            assert_eq!(tr.failure_count(), 0);
            assert!((tr.length() - want).abs() < 1e-15, "halving {halving}");
            assert_eq!(tr.needs_restart(), halving == 6);
        }
        tr.restart();
        assert_eq!(tr, TrustRegion::new(2).unwrap());
    }

    #[test]
    fn update_with_uses_the_relative_margin() {
        let mut tr = TrustRegion::new(1).unwrap();
        // best = −2: threshold −2 + 0.002 = −1.998.
        assert!(!tr.update_with(&[-3.0, -1.999], -2.0).unwrap());
        assert_eq!(tr.failure_count(), 1);
        assert!(tr.update_with(&[-5.0, -1.997], -2.0).unwrap());
        assert_eq!(tr.success_count(), 1);
        // best = 10: threshold 10.01.
        assert!(!tr.update_with(&[10.009], 10.0).unwrap());
        assert!(tr.update_with(&[10.011], 10.0).unwrap());
        assert_eq!(tr.update_with(&[], 1.0), Err(TurboError::EmptyBatch));
        assert!(matches!(
            tr.update_with(&[1.0, f64::NAN], 0.0),
            Err(TurboError::NotFinite { .. })
        ));
        assert!(matches!(
            tr.update_with(&[1.0], f64::INFINITY),
            Err(TurboError::NotFinite { .. })
        ));
    }

    #[test]
    fn box_is_centred_and_clipped_at_a_corner() {
        let tr = TrustRegion::new(2).unwrap();
        let lb = [-5.0, 0.0];
        let ub = [10.0, 15.0];
        // Interior centre: half sides 0.4·15 = 6.
        let (lo, hi) = tr.bounds(&[2.5, 7.5], &lb, &ub).unwrap();
        assert_eq!(lo, vec![-3.5, 1.5]);
        assert_eq!(hi, vec![8.5, 13.5]);
        // Corner centre: clipped on the domain side, full half side inward.
        let (lo, hi) = tr.bounds(&[-5.0, 15.0], &lb, &ub).unwrap();
        assert_eq!(lo, vec![-5.0, 9.0]);
        assert_eq!(hi, vec![1.0, 15.0]);
    }

    #[test]
    fn bounds_reject_bad_input() {
        let tr = TrustRegion::new(2).unwrap();
        assert!(matches!(
            tr.bounds(&[0.5], &[0.0, 0.0], &[1.0, 1.0]),
            Err(TurboError::DimensionMismatch { what: "center", .. })
        ));
        assert!(matches!(
            tr.bounds(&[0.5, 0.5], &[0.0, 1.0], &[1.0, 1.0]),
            Err(TurboError::BadDomain { index: 1, .. })
        ));
        assert!(matches!(
            tr.bounds(&[0.5, 1.5], &[0.0, 0.0], &[1.0, 1.0]),
            Err(TurboError::CenterOutsideDomain { index: 1, .. })
        ));
        assert!(matches!(
            tr.bounds(&[f64::NAN, 0.5], &[0.0, 0.0], &[1.0, 1.0]),
            Err(TurboError::CenterOutsideDomain { index: 0, .. })
        ));
        assert_eq!(TrustRegion::new(0), Err(TurboError::ZeroDimension));
    }

    #[test]
    fn json_round_trip_is_exact() {
        let mut tr = TrustRegion::new(4).unwrap();
        for k in 0..77 {
            tr.update(k % 13 == 0);
        }
        let json = serde_json::to_string(&tr).unwrap();
        let back: TrustRegion = serde_json::from_str(&json).unwrap();
        assert_eq!(back, tr);
        assert_eq!(back.length().to_bits(), tr.length().to_bits());
        // Resumed and original states evolve identically.
        let (mut a, mut b) = (tr, back);
        for k in 0..50 {
            a.update(k % 3 == 0);
            b.update(k % 3 == 0);
        }
        assert_eq!(a, b);
    }
}
