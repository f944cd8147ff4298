//! The model-file form of an approximate model: what each needs besides the kernel, noise,
//! mean and training data that every output record holds.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::{ApproxKind, ApproxModel};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::computation_aware::{Actions, CaGp};
use crate::models::relevance_pursuit::RelevancePursuit;
use crate::models::sparse::{SparseGp, SparseKind};
use crate::models::svgp::{Svgp, SvgpLikelihood};
use crate::models::ModelError;

/// The parameters of an approximate model beyond kernel, noise and mean.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ApproxRecord {
    /// Inducing inputs, one row each (sgpr, svgp, rcsvgp, rrp; cagp and rcagp with
    /// inducing-point actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inducing: Option<Vec<Vec<f64>>>,
    /// The action entries θ_b of each block (cagp, rcagp with block actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<Vec<f64>>>,
    /// Soft threshold c of the IMQ weight (stored for every model that has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// IMQ learning rate β.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Given centres of the IMQ weights, one per training row (rcagp fitted with
    /// [`ApproxOptions::centres`](super::ApproxOptions::centres)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centre: Option<Vec<f64>>,
    /// Expected outlier fraction ε the robust models were fitted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Whitened variational mean m̃ (svgp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variational_mean: Option<Vec<f64>>,
    /// Lower Cholesky factor L̃ of the whitened variational covariance, row by row (svgp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variational_chol: Option<Vec<Vec<f64>>>,
    /// Likelihood of an SVGP: `gaussian` or `student-t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<String>,
    /// The likelihood's parameters, as [`Svgp::likelihood`] returns them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood_params: Option<Vec<f64>>,
    /// The extra noise variance ρ of every training row (rrp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<Vec<f64>>,
}

fn rows(m: MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| m[(i, j)]).collect())
        .collect()
}

/// `rows` as a matrix of `d` columns, every value finite.
fn matrix(rows: &[Vec<f64>], d: usize, what: &str) -> Result<Mat<f64>, ModelError> {
    if rows.is_empty() {
        return Err(ModelError::Invalid(format!("{what}: no rows")));
    }
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != d) {
        return Err(ModelError::Invalid(format!(
            "{what}: row {i} has {} values, expected {d}",
            r.len()
        )));
    }
    if let Some(i) = rows.iter().position(|r| r.iter().any(|v| !v.is_finite())) {
        return Err(ModelError::Invalid(format!(
            "{what}: row {i} holds a value that is not finite"
        )));
    }
    Ok(Mat::from_fn(rows.len(), d, |i, j| rows[i][j]))
}

fn required<T>(v: Option<T>, kind: ApproxKind, field: &str) -> Result<T, ModelError> {
    v.ok_or_else(|| ModelError::Invalid(format!("{kind:?} model: missing field '{field}'")))
}

impl ApproxRecord {
    /// The record of a fitted model.
    pub fn of(model: &ApproxModel) -> ApproxRecord {
        match model {
            ApproxModel::Sparse(g) => ApproxRecord {
                inducing: Some(rows(g.inducing())),
                threshold: Some(g.threshold()),
                beta: Some(g.beta()),
                ..ApproxRecord::default()
            },
            ApproxModel::Ca(g) => ApproxRecord {
                actions: match g.actions() {
                    Actions::Blocks(theta) => Some(theta),
                    Actions::Inducing(_) => None,
                },
                inducing: match g.actions() {
                    Actions::Inducing(z) => Some(rows(z.as_ref())),
                    Actions::Blocks(_) => None,
                },
                threshold: Some(g.threshold()),
                beta: Some(g.beta()),
                centre: g.centre().map(<[f64]>::to_vec),
                ..ApproxRecord::default()
            },
            ApproxModel::Rrp(g) => ApproxRecord {
                inducing: Some(rows(g.inducing())),
                rho: Some(g.rho().to_vec()),
                ..ApproxRecord::default()
            },
            ApproxModel::Svgp(g, _) => {
                let (m, l) = g.variational();
                let (lik, params) = g.likelihood();
                ApproxRecord {
                    inducing: Some(rows(g.inducing())),
                    variational_mean: Some(m.to_vec()),
                    variational_chol: Some(rows(l)),
                    likelihood: Some(
                        match lik {
                            SvgpLikelihood::Gaussian => "gaussian",
                            SvgpLikelihood::StudentT => "student-t",
                        }
                        .into(),
                    ),
                    likelihood_params: Some(params.to_vec()),
                    ..ApproxRecord::default()
                }
            }
        }
    }

    /// Rebuilds the model of `kind` from this record and the output's common fields (`x`, `y`
    /// are the standardised training data, SVGP needs none; `objective` is the stored training
    /// objective, which only SVGP cannot recompute).
    ///
    /// # Errors
    /// A missing or inconsistent field, or a failed factorisation.
    #[allow(clippy::too_many_arguments)]
    pub fn rebuild(
        self,
        kind: ApproxKind,
        d: usize,
        x: Option<Mat<f64>>,
        y: Vec<f64>,
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        objective: f64,
    ) -> Result<ApproxModel, ModelError> {
        let data = |x: Option<Mat<f64>>| required(x, kind, "x_train");
        Ok(match kind {
            ApproxKind::Sgpr | ApproxKind::Rcsvgp => {
                let z = matrix(&required(self.inducing, kind, "inducing")?, d, "inducing")?;
                let sparse = if kind == ApproxKind::Sgpr {
                    SparseKind::Sgpr
                } else {
                    SparseKind::Rcsvgp
                };
                ApproxModel::Sparse(SparseGp::from_parts(
                    sparse,
                    data(x)?,
                    y,
                    kernel,
                    mean,
                    noise,
                    z,
                    required(self.threshold, kind, "threshold")?,
                    required(self.beta, kind, "beta")?,
                )?)
            }
            ApproxKind::Cagp | ApproxKind::Rcagp => {
                let Mean::Constant { c } = mean else {
                    return Err(ModelError::Invalid(format!(
                        "{kind:?} model: the mean must be constant"
                    )));
                };
                let ca = CaGp::from_parts(
                    data(x)?,
                    y,
                    kernel,
                    noise,
                    c,
                    match (self.actions, self.inducing) {
                        (Some(theta), None) => Actions::Blocks(theta),
                        (None, Some(z)) => Actions::Inducing(matrix(&z, d, "inducing")?),
                        (Some(_), Some(_)) => {
                            return Err(ModelError::Invalid(format!(
                                "{kind:?} model: both 'actions' and 'inducing' are given"
                            )))
                        }
                        (None, None) => required(None, kind, "actions (or inducing)")?,
                    },
                    required(self.threshold, kind, "threshold")?,
                    required(self.beta, kind, "beta")?,
                    kind == ApproxKind::Rcagp,
                )?;
                ApproxModel::Ca(match self.centre {
                    Some(centre) => ca.with_centre(centre)?,
                    None => ca,
                })
            }
            ApproxKind::Rrp => {
                let z = matrix(&required(self.inducing, kind, "inducing")?, d, "inducing")?;
                ApproxModel::Rrp(RelevancePursuit::from_parts(
                    data(x)?,
                    y,
                    kernel,
                    mean,
                    noise,
                    z,
                    required(self.rho, kind, "rho")?,
                )?)
            }
            ApproxKind::Svgp => {
                let z = matrix(&required(self.inducing, kind, "inducing")?, d, "inducing")?;
                let m = z.nrows();
                let l = matrix(
                    &required(self.variational_chol, kind, "variational_chol")?,
                    m,
                    "variational_chol",
                )?;
                let likelihood = match required(self.likelihood, kind, "likelihood")?.as_str() {
                    "gaussian" => SvgpLikelihood::Gaussian,
                    "student-t" => SvgpLikelihood::StudentT,
                    other => {
                        return Err(ModelError::Invalid(format!(
                            "svgp model: unknown likelihood '{other}' (gaussian, student-t)"
                        )))
                    }
                };
                let g = Svgp::from_parts(
                    kernel,
                    mean,
                    required(self.likelihood_params, kind, "likelihood_params")?,
                    likelihood,
                    z,
                    required(self.variational_mean, kind, "variational_mean")?,
                    l,
                )?;
                ApproxModel::Svgp(g, objective)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::approximate::ApproxOptions;

    /// An RCaGP fitted with given IMQ centres keeps them in its record and predicts the same
    /// after a rebuild; without them the rebuilt model is another model.
    #[test]
    fn rcagp_with_given_centres_round_trips() {
        let n = 30;
        let x = Mat::from_fn(n, 1, |i, _| -1.0 + 2.0 * i as f64 / (n - 1) as f64);
        let y: Vec<f64> = (0..n)
            .map(|i| (3.0 * x[(i, 0)]).sin() + if i % 7 == 2 { 2.0 } else { 0.0 })
            .collect();
        let centre: Vec<f64> = (0..n).map(|i| (3.0 * x[(i, 0)]).sin() * 0.9).collect();
        let mut kernel = Kernel::parse("const * matern52").unwrap();
        kernel.initialize(x.as_ref()).unwrap();
        let mean = Mean::Constant { c: 0.1 };
        let opts = ApproxOptions {
            actions: Some(6),
            centres: Some(centre.clone()),
            ..ApproxOptions::default()
        };
        let model = ApproxModel::fit(
            ApproxKind::Rcagp,
            x.as_ref(),
            &y,
            kernel,
            mean,
            0.1,
            0.2,
            &opts,
            0,
            &mut |_, _| {},
        )
        .unwrap();
        let ApproxModel::Ca(ca) = &model else {
            panic!("rcagp")
        };
        assert_eq!(ca.centre(), Some(centre.as_slice()));
        let record = ApproxRecord::of(&model);
        assert_eq!(record.centre.as_deref(), Some(centre.as_slice()));
        let rebuild = |r: ApproxRecord| {
            r.rebuild(
                ApproxKind::Rcagp,
                1,
                Some(x.clone()),
                y.clone(),
                ca.kernel().clone(),
                Mean::Constant { c: ca.mean() },
                ca.noise(),
                ca.elbo(),
            )
            .unwrap()
        };
        let xt = Mat::from_fn(9, 1, |i, _| -0.9 + 0.2 * i as f64);
        let want = model.predict(xt.as_ref()).unwrap().mean;
        let again = rebuild(record.clone()).predict(xt.as_ref()).unwrap().mean;
        for (a, b) in want.iter().zip(&again) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        let without = ApproxRecord {
            centre: None,
            ..record
        };
        let other = rebuild(without).predict(xt.as_ref()).unwrap().mean;
        assert!(want.iter().zip(&other).any(|(a, b)| (a - b).abs() > 1e-6));
    }
}
