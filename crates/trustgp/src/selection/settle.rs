//! How VBKS's training settles in its last stretch (issue 25, a [choice] beyond the spec, which
//! fixes Adam at a constant learning rate, §2.8).
//!
//! Why: on noise-free data the noise variance falls towards its floor and the local ELBO's
//! curvature in the hyperparameters grows like `n/σ²`. A constant Adam step (each coordinate
//! moves by about `lr` per step whatever the gradient's scale) then keeps the iterate circling
//! the sharp optimum, and the `L*_i` estimated at the checkpoints jitter by far more than the
//! gaps between the leading kernels (hundreds of nats on the synthetic data of spec §6.1). Over
//! the final `fraction` of the `T` iterations this module
//!
//! * decays the learning rate on a cosine from `lr` to `lr · lr_floor` at `T` — piecewise
//!   constant, one value per stage (between two checkpoints), the value at the stage's
//!   midpoint: Adam starts afresh at every checkpoint anyway; and
//! * optionally (full-θ mode) averages the iterates (Polyak–Ruppert): a stage in the final
//!   stretch returns the mean of its iterates from its midpoint on (the first half lets the
//!   fresh Adam moments settle), `L*_i` is estimated there and the next stage starts from it.

/// The final-stretch settings (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settle {
    /// The final share of the iterations over which the learning rate decays, in `(0, 1]`.
    pub fraction: f64,
    /// The learning rate at the last iteration as a multiple of the base rate, in `(0, 1]`.
    pub lr_floor: f64,
    /// Full-θ mode: return each final-stretch stage's iterate average instead of its last
    /// iterate.
    pub average: bool,
}

impl Default for Settle {
    /// Decay to `lr/100` over the last half, with iterate averaging.
    fn default() -> Self {
        Settle {
            fraction: 0.5,
            lr_floor: 0.01,
            average: true,
        }
    }
}

impl Settle {
    /// Checks the settings; the message names the bad one.
    ///
    /// # Errors
    /// A `fraction` or `lr_floor` outside `(0, 1]`.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("fraction", self.fraction), ("lr floor", self.lr_floor)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(format!(
                    "settle {name}: expected a number in (0, 1], got {v}"
                ));
            }
        }
        Ok(())
    }

    /// The learning-rate multiplier at iteration `t` of `total`: 1 before the final stretch,
    /// then `floor + (1 − floor)·(1 + cos(π s))/2` with `s` the share of the stretch done.
    pub fn factor(&self, t: f64, total: usize) -> f64 {
        let total = total as f64;
        let start = (1.0 - self.fraction) * total;
        if t <= start {
            return 1.0;
        }
        let s = ((t - start) / (self.fraction * total)).min(1.0);
        self.lr_floor + (1.0 - self.lr_floor) * 0.5 * (1.0 + (std::f64::consts::PI * s).cos())
    }

    /// The learning rate of the stage of iterations `start..end` out of `total`, base rate
    /// `lr`: the multiplier at the stage's midpoint.
    pub fn stage_lr(&self, lr: f64, (start, end): (usize, usize), total: usize) -> f64 {
        lr * self.factor(0.5 * (start + end) as f64, total)
    }

    /// The step of the stage `start..end` (out of `total`) from which its iterates are
    /// averaged (counted from the stage's start), or `None` when the stage keeps its last
    /// iterate: averaging is on and the stage ends inside the final stretch.
    pub fn average_from(&self, (start, end): (usize, usize), total: usize) -> Option<usize> {
        let stretch = (1.0 - self.fraction) * total as f64;
        (self.average && end as f64 > stretch && end > start).then(|| (end - start) / 2)
    }
}

/// A running mean of parameter vectors (the averaged iterate), summed in the order given, so a
/// seeded run averages to the same bits.
#[derive(Clone, Debug, Default)]
pub(crate) struct IterateMean {
    sum: Vec<f64>,
    count: usize,
}

impl IterateMean {
    /// Adds one iterate (all of the same length).
    pub(crate) fn add(&mut self, x: &[f64]) {
        if self.count == 0 {
            self.sum = x.to_vec();
        } else {
            self.sum.iter_mut().zip(x).for_each(|(s, v)| *s += v);
        }
        self.count += 1;
    }

    /// The mean so far (`None` before the first iterate).
    pub(crate) fn mean(&self) -> Option<Vec<f64>> {
        (self.count > 0).then(|| self.sum.iter().map(|s| s / self.count as f64).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_decay_runs_from_one_to_the_floor_over_the_final_stretch() {
        let s = Settle {
            fraction: 0.4,
            lr_floor: 0.01,
            average: false,
        };
        // Before and at the stretch's start: the base rate.
        assert_eq!(s.factor(0.0, 1000), 1.0);
        assert_eq!(s.factor(600.0, 1000), 1.0);
        // Midway the cosine is at its midpoint, (1 + floor)/2; at T the floor.
        assert!((s.factor(800.0, 1000) - 0.505).abs() < 1e-12);
        assert!((s.factor(1000.0, 1000) - 0.01).abs() < 1e-12);
        // A quarter in: floor + (1 − floor)(1 + cos(π/4))/2, computed by hand.
        let quarter = 0.01 + 0.99 * 0.5 * (1.0 + std::f64::consts::FRAC_1_SQRT_2);
        assert!((s.factor(700.0, 1000) - quarter).abs() < 1e-12);
        // Monotone non-increasing.
        let f: Vec<f64> = (0..=100).map(|t| s.factor(10.0 * t as f64, 1000)).collect();
        assert!(f.windows(2).all(|w| w[1] <= w[0]));
        // A stage's rate is the base rate times the multiplier at its midpoint.
        assert!((s.stage_lr(0.02, (750, 850), 1000) - 0.02 * 0.505).abs() < 1e-15);
    }

    #[test]
    fn only_final_stretch_stages_average_from_their_midpoint() {
        let s = Settle {
            fraction: 0.5,
            lr_floor: 0.1,
            average: true,
        };
        assert_eq!(s.average_from((0, 250), 1000), None);
        assert_eq!(s.average_from((250, 500), 1000), None);
        assert_eq!(s.average_from((500, 750), 1000), Some(125));
        assert_eq!(s.average_from((750, 1000), 1000), Some(125));
        let off = Settle {
            average: false,
            ..s
        };
        assert_eq!(off.average_from((750, 1000), 1000), None);
    }

    #[test]
    fn bad_settings_are_named() {
        let bad = Settle {
            fraction: 0.0,
            ..Settle::default()
        };
        assert!(bad.validate().unwrap_err().contains("fraction"));
        let bad = Settle {
            lr_floor: 1.5,
            ..Settle::default()
        };
        assert!(bad.validate().unwrap_err().contains("lr floor"));
        assert!(Settle::default().validate().is_ok());
    }

    #[test]
    fn iterate_mean_is_the_plain_mean() {
        let mut m = IterateMean::default();
        assert!(m.mean().is_none());
        for x in [[1.0, -2.0], [3.0, 4.0], [5.0, 1.0]] {
            m.add(&x);
        }
        assert_eq!(m.mean().unwrap(), vec![3.0, 1.0]);
    }
}
