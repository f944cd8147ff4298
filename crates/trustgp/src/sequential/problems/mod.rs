//! Built-in benchmark objectives for Bayesian optimisation, in the **maximisation** convention.
//!
//! The literature states these functions as minimisation problems; every [`Problem`] evaluates
//! the *negated* function, so its maximum is minus the published minimum:
//!
//! * [`Problem::Branin`] — 2-D, box `[−5, 10] × [0, 15]`, minimum `5/(4π) ≈ 0.397887` at
//!   `(−π, 12.275)`, `(π, 2.275)` and `(3π, 2.475)` (Surjanovic & Bingham's library of test
//!   functions; Dixon & Szegő 1978);
//! * [`Problem::Hartmann6`] — 6-D, box `[0, 1]⁶`, minimum `≈ −3.322368` at
//!   `(0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)`, constants as in `rcagp.md`
//!   §5.5, whose task "Hartmann6D" is exactly `−H₆`;
//! * [`Problem::Ackley`] — any dimension `d ≥ 1`, box `[−32.768, 32.768]^d`, `a = 20`,
//!   `b = 0.2`, `c = 2π`, minimum 0 at the origin;
//! * [`Problem::Rover60`] — 60-D, box `[−2/60, 4/60]⁶⁰`, the rover trajectory reward of Wang et
//!   al. (2018) as the RCaGP paper's task "Rover60D" (`rcagp.md` §5.5) defines it; already a
//!   reward (maximised as published), maximum unknown (below `5 − 0.045√2 ≈ 4.936`): see
//!   the `rover` module.
//!
//! Lunar12 (`rcagp.md` §5.5) is not here: it needs the Box2D rigid-body physics of gymnasium's
//! LunarLander, so it is evaluated in Python (`crates/experiments/peers/lunar.py`) and driven
//! through `trustgp suggest`.
//!
//! [`outliers`] holds the seeded corruption of observations used by the robust BO experiments.

pub mod outliers;
mod rover;
#[cfg(test)]
mod tests;

use std::f64::consts::PI;
use std::fmt;

use faer::MatRef;

/// Invalid input to a [`Problem`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProblemError {
    /// The problem name is not known.
    #[error(
        "unknown problem \"{found}\"; expected branin, hartmann6, rover60 or ackley:D (D a positive integer)"
    )]
    UnknownProblem {
        /// The name given.
        found: String,
    },
    /// `Problem::Ackley { dim: 0 }`: a problem needs at least one input.
    #[error("{problem} has no inputs; the dimension must be at least 1")]
    ZeroDimension {
        /// The problem's name.
        problem: String,
    },
    /// A point has the wrong number of coordinates.
    #[error("{problem} takes {expected} inputs but {what} has {found}")]
    DimensionMismatch {
        /// The problem's name.
        problem: String,
        /// Which point (`the point`, `row 3`).
        what: String,
        /// The problem's dimension.
        expected: usize,
        /// The number of coordinates given.
        found: usize,
    },
    /// A coordinate is NaN or infinite.
    #[error("{problem}: coordinate {index} of {what} is {value}; expected a finite number")]
    NotFinite {
        /// The problem's name.
        problem: String,
        /// Which point (`the point`, `row 3`).
        what: String,
        /// The coordinate's index.
        index: usize,
        /// The value given.
        value: f64,
    },
}

/// A built-in benchmark objective (maximised; see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The negated Branin function, 2 inputs.
    Branin,
    /// The negated 6-D Hartmann function.
    Hartmann6,
    /// The negated Ackley function in `dim` inputs.
    Ackley {
        /// The number of inputs, at least 1.
        dim: usize,
    },
    /// The 60-D rover trajectory reward (30 waypoint steps).
    Rover60,
}

/// Hartmann6 weights `α` (`rcagp.md` §5.5).
const H6_ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
/// Hartmann6 matrix `A` (`rcagp.md` §5.5).
const H6_A: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
/// Hartmann6 matrix `P` (`rcagp.md` §5.5), times `10⁴`.
const H6_P: [[f64; 6]; 4] = [
    [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
    [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
    [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
    [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
];
/// Hartmann6's maximum: the published 3.32237 to more digits, 3.32236801141551 (Gavana's
/// global optimisation benchmarks); the six-digit maximiser of [`Problem::maximisers`] comes
/// within 3·10⁻¹¹ of it.
const HARTMANN6_MAX: f64 = 3.32236801141551;
/// Ackley's half side of the box.
const ACKLEY_HALF_SIDE: f64 = 32.768;

impl Problem {
    /// Parses `branin`, `hartmann6`, `rover60` or `ackley:D` (e.g. `ackley:10`); case and
    /// surrounding spaces are ignored.
    pub fn parse(s: &str) -> Result<Self, ProblemError> {
        let unknown = || ProblemError::UnknownProblem {
            found: s.to_string(),
        };
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "branin" => Ok(Problem::Branin),
            "hartmann6" => Ok(Problem::Hartmann6),
            "rover60" => Ok(Problem::Rover60),
            other => {
                let dim = other
                    .strip_prefix("ackley:")
                    .and_then(|d| d.trim().parse::<usize>().ok())
                    .filter(|&d| d >= 1)
                    .ok_or_else(unknown)?;
                Ok(Problem::Ackley { dim })
            }
        }
    }

    /// The number of inputs.
    pub fn dim(&self) -> usize {
        match self {
            Problem::Branin => 2,
            Problem::Hartmann6 => 6,
            Problem::Ackley { dim } => *dim,
            Problem::Rover60 => rover::DIM,
        }
    }

    /// The box `(lower, upper)` the problem is posed on.
    pub fn bounds(&self) -> (Vec<f64>, Vec<f64>) {
        match self {
            Problem::Branin => (vec![-5.0, 0.0], vec![10.0, 15.0]),
            Problem::Hartmann6 => (vec![0.0; 6], vec![1.0; 6]),
            Problem::Ackley { dim } => {
                (vec![-ACKLEY_HALF_SIDE; *dim], vec![ACKLEY_HALF_SIDE; *dim])
            }
            Problem::Rover60 => {
                let (lo, hi) = rover::bounds();
                (vec![lo; rover::DIM], vec![hi; rover::DIM])
            }
        }
    }

    /// The known global maximum (minus the literature's minimum), or `None` where it is not
    /// known (Rover60), so that simple regret cannot be reported there.
    pub fn optimum(&self) -> Option<f64> {
        match self {
            Problem::Branin => Some(-5.0 / (4.0 * PI)),
            Problem::Hartmann6 => Some(HARTMANN6_MAX),
            Problem::Ackley { .. } => Some(0.0),
            Problem::Rover60 => None,
        }
    }

    /// The known global maximisers, as published (Hartmann6's to six digits); empty where
    /// none is known (Rover60).
    pub fn maximisers(&self) -> Vec<Vec<f64>> {
        match self {
            Problem::Branin => vec![vec![-PI, 12.275], vec![PI, 2.275], vec![3.0 * PI, 2.475]],
            Problem::Hartmann6 => vec![vec![
                0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573,
            ]],
            Problem::Ackley { dim } => vec![vec![0.0; *dim]],
            Problem::Rover60 => Vec::new(),
        }
    }

    /// The objective at one point (maximisation convention). Points outside the box are
    /// evaluated too: the formulas are defined everywhere.
    ///
    /// Errors: the point has the wrong length or a non-finite coordinate.
    pub fn evaluate(&self, x: &[f64]) -> Result<f64, ProblemError> {
        self.check(x, || "the point".to_string())?;
        Ok(self.value(x))
    }

    /// The objective at every row of `x` (one point per row).
    ///
    /// Errors: `x` has the wrong number of columns, or a non-finite entry (naming its row).
    pub fn evaluate_rows(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>, ProblemError> {
        if self.dim() == 0 {
            return Err(ProblemError::ZeroDimension {
                problem: self.to_string(),
            });
        }
        if x.ncols() != self.dim() {
            return Err(ProblemError::DimensionMismatch {
                problem: self.to_string(),
                what: "each row".into(),
                expected: self.dim(),
                found: x.ncols(),
            });
        }
        let mut row = vec![0.0; x.ncols()];
        (0..x.nrows())
            .map(|i| {
                for (j, r) in row.iter_mut().enumerate() {
                    *r = x[(i, j)];
                }
                self.check(&row, || format!("row {i}"))?;
                Ok(self.value(&row))
            })
            .collect()
    }

    fn check(&self, x: &[f64], what: impl Fn() -> String) -> Result<(), ProblemError> {
        if self.dim() == 0 {
            return Err(ProblemError::ZeroDimension {
                problem: self.to_string(),
            });
        }
        if x.len() != self.dim() {
            return Err(ProblemError::DimensionMismatch {
                problem: self.to_string(),
                what: what(),
                expected: self.dim(),
                found: x.len(),
            });
        }
        if let Some((index, &value)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProblemError::NotFinite {
                problem: self.to_string(),
                what: what(),
                index,
                value,
            });
        }
        Ok(())
    }

    /// The negated function at a checked point.
    fn value(&self, x: &[f64]) -> f64 {
        match self {
            Problem::Branin => -branin(x[0], x[1]),
            Problem::Hartmann6 => -hartmann6(x),
            Problem::Ackley { .. } => -ackley(x),
            Problem::Rover60 => rover::reward(x),
        }
    }
}

/// Writes the name [`Problem::parse`] reads back: `branin`, `hartmann6`, `ackley:D`,
/// `rover60`.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Branin => write!(f, "branin"),
            Problem::Hartmann6 => write!(f, "hartmann6"),
            Problem::Ackley { dim } => write!(f, "ackley:{dim}"),
            Problem::Rover60 => write!(f, "rover60"),
        }
    }
}

/// Branin: `(x₂ − b x₁² + c x₁ − r)² + s(1 − t) cos x₁ + s` with `b = 5.1/(4π²)`, `c = 5/π`,
/// `r = 6`, `s = 10`, `t = 1/(8π)`.
fn branin(x1: f64, x2: f64) -> f64 {
    branin_with(&BRANIN_CONSTANTS, x1, x2)
}

/// The standard Branin constants `(a, b, c, r, s, t)`.
pub(crate) const BRANIN_CONSTANTS: [f64; 6] = [
    1.0,
    5.1 / (4.0 * PI * PI),
    5.0 / PI,
    6.0,
    10.0,
    1.0 / (8.0 * PI),
];

/// The Branin family `a(x₂ − b x₁² + c x₁ − r)² + s(1 − t) cos x₁ + s` with constants
/// `[a, b, c, r, s, t]` (the safe-learning benchmarks draw random source tasks from it).
pub(crate) fn branin_with(constants: &[f64; 6], x1: f64, x2: f64) -> f64 {
    let [a, b, c, r, s, t] = *constants;
    let inner = x2 - b * x1 * x1 + c * x1 - r;
    a * inner * inner + s * (1.0 - t) * x1.cos() + s
}

/// `H₆(x) = −Σₐ αₐ exp(−Σⱼ Aₐⱼ (xⱼ − Pₐⱼ)²)`.
fn hartmann6(x: &[f64]) -> f64 {
    hartmann(&H6_ALPHA, &H6_A, &H6_P, x)
}

/// The Hartmann family `−Σₐ αₐ exp(−Σⱼ Aₐⱼ (xⱼ − 10⁻⁴ Pₐⱼ)²)` in `D` inputs (`P` given times
/// 10⁴, as published); `x` has `D` entries.
pub(crate) fn hartmann<const D: usize>(
    alpha: &[f64; 4],
    a: &[[f64; D]; 4],
    p: &[[f64; D]; 4],
    x: &[f64],
) -> f64 {
    -alpha
        .iter()
        .zip(a.iter().zip(p))
        .map(|(alpha, (a, p))| {
            let e: f64 = (0..D).map(|j| a[j] * (x[j] - 1e-4 * p[j]).powi(2)).sum();
            alpha * (-e).exp()
        })
        .sum::<f64>()
}

/// Ackley: `−a exp(−b √(mean xᵢ²)) − exp(mean cos(c xᵢ)) + a + e`.
fn ackley(x: &[f64]) -> f64 {
    let (a, b, c) = (20.0, 0.2, 2.0 * PI);
    let d = x.len() as f64;
    let sq = x.iter().map(|v| v * v).sum::<f64>() / d;
    let cos = x.iter().map(|v| (c * v).cos()).sum::<f64>() / d;
    -a * (-b * sq.sqrt()).exp() - cos.exp() + a + std::f64::consts::E
}
