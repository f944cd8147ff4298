//! Prior mean functions: zero, constant and linear, with learnable (unconstrained) parameters.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

/// A prior mean function evaluated on the rows of an input matrix.
pub trait PriorMean: Clone + std::fmt::Debug + Send + Sync {
    /// `m(x_i)` for every row `x_i` of `x`.
    fn eval(&self, x: MatRef<'_, f64>) -> Vec<f64>;
    /// `∂m(x_i)/∂x_i` for every row of `x` (one row per input row, one column per input
    /// column; zero for columns that are not continuous inputs).
    fn grad_inputs(&self, x: MatRef<'_, f64>) -> Mat<f64>;
}

impl PriorMean for Mean {
    fn eval(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        Mean::eval(self, x)
    }
    fn grad_inputs(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let g = self.grad_x(x.ncols());
        Mat::from_fn(x.nrows(), x.ncols(), |_, c| g[c])
    }
}

/// One constant prior mean per output, for task-indexed inputs (the last column holds the
/// output index; see [`MultiOutputKernel`](crate::kernels::MultiOutputKernel)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskMean(pub Vec<f64>);

impl PriorMean for TaskMean {
    fn eval(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        let last = x.ncols() - 1;
        (0..x.nrows())
            .map(|i| self.0[x[(i, last)] as usize])
            .collect()
    }
    /// Zero: the mean of each output is a constant.
    fn grad_inputs(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Mat::zeros(x.nrows(), x.ncols())
    }
}

/// A GP prior mean `m(x)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Mean {
    /// `m(x) = 0`.
    Zero,
    /// `m(x) = c`.
    Constant {
        /// The constant.
        c: f64,
    },
    /// `m(x) = wᵀx + b`.
    Linear {
        /// One weight per input column.
        w: Vec<f64>,
        /// The intercept.
        b: f64,
    },
}

/// Errors building a mean function.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum MeanError {
    /// The name is not one of the known means.
    #[error("unknown mean '{0}': expected one of zero, constant, linear")]
    Unknown(String),
    /// A parameter vector of the wrong length.
    #[error("the {kind} mean has {expected} parameters, got {got}")]
    Length {
        /// Which mean.
        kind: &'static str,
        /// Expected count.
        expected: usize,
        /// Given count.
        got: usize,
    },
    /// A linear mean whose weights do not match the inputs.
    #[error("the linear mean has {weights} weights but the data has {d} input columns")]
    Dimension {
        /// Number of weights.
        weights: usize,
        /// Number of inputs.
        d: usize,
    },
}

impl Mean {
    /// A mean by name with its parameters at zero (`d` inputs): `zero`, `constant` or `linear`.
    pub fn by_name(name: &str, d: usize) -> Result<Mean, MeanError> {
        match name {
            "zero" => Ok(Mean::Zero),
            "constant" => Ok(Mean::Constant { c: 0.0 }),
            "linear" => Ok(Mean::Linear {
                w: vec![0.0; d],
                b: 0.0,
            }),
            other => Err(MeanError::Unknown(other.to_string())),
        }
    }

    /// The short name of this mean.
    pub fn name(&self) -> &'static str {
        match self {
            Mean::Zero => "zero",
            Mean::Constant { .. } => "constant",
            Mean::Linear { .. } => "linear",
        }
    }

    /// Check that the mean fits data with `d` input columns.
    pub fn check_inputs(&self, d: usize) -> Result<(), MeanError> {
        match self {
            Mean::Linear { w, .. } if w.len() != d => Err(MeanError::Dimension {
                weights: w.len(),
                d,
            }),
            _ => Ok(()),
        }
    }

    /// Number of learnable parameters.
    pub fn n_params(&self) -> usize {
        match self {
            Mean::Zero => 0,
            Mean::Constant { .. } => 1,
            Mean::Linear { w, .. } => w.len() + 1,
        }
    }

    /// Parameter names, in the order of [`Mean::params`].
    pub fn param_names(&self) -> Vec<String> {
        match self {
            Mean::Zero => vec![],
            Mean::Constant { .. } => vec!["mean.c".into()],
            Mean::Linear { w, .. } => (0..w.len())
                .map(|i| format!("mean.w[{i}]"))
                .chain(std::iter::once("mean.b".into()))
                .collect(),
        }
    }

    /// The parameters (unconstrained: they are used as they are).
    pub fn params(&self) -> Vec<f64> {
        match self {
            Mean::Zero => vec![],
            Mean::Constant { c } => vec![*c],
            Mean::Linear { w, b } => w.iter().copied().chain(std::iter::once(*b)).collect(),
        }
    }

    /// Set the parameters from a slice of length [`Mean::n_params`].
    pub fn set_params(&mut self, p: &[f64]) -> Result<(), MeanError> {
        if p.len() != self.n_params() {
            return Err(MeanError::Length {
                kind: self.name(),
                expected: self.n_params(),
                got: p.len(),
            });
        }
        match self {
            Mean::Zero => {}
            Mean::Constant { c } => *c = p[0],
            Mean::Linear { w, b } => {
                let d = w.len();
                w.copy_from_slice(&p[..d]);
                *b = p[d];
            }
        }
        Ok(())
    }

    /// `m(x_i)` for every row of `x`.
    pub fn eval(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        (0..x.nrows())
            .map(|i| match self {
                Mean::Zero => 0.0,
                Mean::Constant { c } => *c,
                Mean::Linear { w, b } => {
                    b + w
                        .iter()
                        .enumerate()
                        .map(|(j, wj)| wj * x[(i, j)])
                        .sum::<f64>()
                }
            })
            .collect()
    }

    /// `Σ_i v_i ∂m(x_i)/∂p_j` for every parameter `j` (the chain rule through the mean).
    pub fn grad_contract(&self, x: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
        match self {
            Mean::Zero => vec![],
            Mean::Constant { .. } => vec![v.iter().sum()],
            Mean::Linear { w, .. } => {
                let mut g: Vec<f64> = (0..w.len())
                    .map(|j| (0..x.nrows()).map(|i| v[i] * x[(i, j)]).sum())
                    .collect();
                g.push(v.iter().sum());
                g
            }
        }
    }

    /// `∂m(x)/∂x`, one entry per input column.
    pub fn grad_x(&self, d: usize) -> Vec<f64> {
        match self {
            Mean::Linear { w, .. } => w.clone(),
            _ => vec![0.0; d],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn values_and_gradients() {
        let x = Mat::from_fn(3, 2, |i, j| (i as f64) - 0.5 * j as f64);
        let lin = Mean::Linear {
            w: vec![2.0, -1.0],
            b: 0.5,
        };
        // row 2: x = (2, 1.5) → 2·2 − 1.5 + 0.5 = 3
        assert_eq!(lin.eval(x.as_ref())[2], 3.0);
        let v = [1.0, -2.0, 0.5];
        // Finite differences of vᵀ m(X) in each parameter (linear, so exact up to rounding).
        let g = lin.grad_contract(x.as_ref(), &v);
        let p0 = lin.params();
        for j in 0..p0.len() {
            let mut p = p0.clone();
            p[j] += 1e-3;
            let mut m = lin.clone();
            m.set_params(&p).unwrap();
            let f = |m: &Mean| {
                m.eval(x.as_ref())
                    .iter()
                    .zip(&v)
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
            };
            let fd = (f(&m) - f(&lin)) / 1e-3;
            assert!((fd - g[j]).abs() < 1e-9, "param {j}: {fd} vs {}", g[j]);
        }
        assert_eq!(
            Mean::Constant { c: 4.0 }.grad_contract(x.as_ref(), &v),
            vec![-0.5]
        );
        assert!(Mean::Zero.grad_contract(x.as_ref(), &v).is_empty());
    }

    #[test]
    fn names_lengths_and_errors() {
        assert_eq!(Mean::by_name("linear", 3).unwrap().n_params(), 4);
        assert!(Mean::by_name("quadratic", 3)
            .unwrap_err()
            .to_string()
            .contains("quadratic"));
        let mut c = Mean::Constant { c: 0.0 };
        assert!(c.set_params(&[1.0, 2.0]).is_err());
        assert!(Mean::by_name("linear", 2).unwrap().check_inputs(3).is_err());
        let names = Mean::by_name("linear", 2).unwrap().param_names();
        assert_eq!(names, vec!["mean.w[0]", "mean.w[1]", "mean.b"]);
    }
}
