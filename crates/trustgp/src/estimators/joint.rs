//! The joint predictive distribution of one output at a set of inputs, in the data's units:
//! what `predict(return_cov=True)` and posterior sample paths need beyond the marginals.

use faer::{Mat, MatRef};

use super::regressor::{Fitted, Regressor};
use crate::models::ModelError;
use crate::posterior::{with_task, JointGaussian, Marginals, Posterior};

impl Regressor {
    /// The joint distribution of output `output` at raw inputs `x` (columns in the order of
    /// [`Regressor::inputs`]), in the data's units. With `latent` it is the posterior of the
    /// latent function; otherwise that of new observations, whose diagonal is the predictive
    /// variance of [`Regressor::predict`] (the likelihood's extra variance — σ² for a Gaussian —
    /// is independent between points, so only the diagonal changes). Its diagonal and mean
    /// equal [`Regressor::predict`]'s squared std and mean.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for an output index out of range, or inputs
    /// [`Regressor::standardized_inputs`] refuses; the model's prediction errors.
    pub fn predict_joint(
        &self,
        x: MatRef<'_, f64>,
        output: usize,
        latent: bool,
    ) -> Result<JointGaussian, ModelError> {
        if output >= self.targets.len() {
            return Err(ModelError::Invalid(format!(
                "output {output} does not exist (the model has {} output(s): {})",
                self.targets.len(),
                self.targets.join(", ")
            )));
        }
        let xs = self.standardized_inputs(x)?;
        let mut joint = match &self.fitted {
            Fitted::PerTarget(outputs) => outputs[output].gp.posterior()?.joint(xs.as_ref())?,
            Fitted::Joint(model, _) => model.joint(with_task(xs.as_ref(), output).as_ref())?,
        };
        let m = joint.mean.len();
        if !latent {
            let latent_marginals = Marginals {
                mean: joint.mean.clone(),
                var: (0..m).map(|i| joint.cov[(i, i)]).collect(),
            };
            let likelihood = &self.likelihoods()?[output];
            let observed = likelihood.predict_marginals(&latent_marginals);
            for i in 0..m {
                joint.cov[(i, i)] += observed.var[i] - latent_marginals.var[i];
            }
            joint.mean = observed.mean;
        }
        let st = &self.standardizer;
        let scale = st.inverse_y_std(output, 1.0);
        Ok(JointGaussian {
            mean: joint
                .mean
                .iter()
                .map(|&v| st.inverse_y_mean(output, v))
                .collect(),
            cov: Mat::from_fn(m, m, |i, j| joint.cov[(i, j)] * scale * scale),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::estimators::ModelOptions;

    fn data(t: usize) -> Dataset {
        let x = Mat::from_fn(7, 2, |i, j| ((i * 3 + j * 5) % 7) as f64 / 3.0 - 1.0);
        let y = Mat::from_fn(7, t, |i, k| (x[(i, 0)] * (k + 1) as f64).sin() + x[(i, 1)]);
        let names = |p: &str, k: usize| (0..k).map(|i| format!("{p}{i}")).collect();
        Dataset::from_matrices(x, y, names("x", 2), names("y", t)).unwrap()
    }

    fn fit(model: &str, kernel: &str, standardize: bool, t: usize) -> Regressor {
        let cfg = ModelOptions {
            model: model.into(),
            kernel: Some(kernel.into()),
            noise: Some(0.1),
            optimize: false,
            standardize,
            ..ModelOptions::default()
        }
        .check()
        .unwrap();
        Regressor::fit(&data(t), &cfg).unwrap()
    }

    /// `A⁻¹ B` by Gauss–Jordan elimination with partial pivoting (tiny systems only).
    fn solve(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
        let n = a.nrows();
        let (mut a, mut b) = (a.clone(), b.clone());
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| a[(i, c)].abs().total_cmp(&a[(j, c)].abs()))
                .unwrap();
            for j in 0..n {
                let t = a[(c, j)];
                a[(c, j)] = a[(p, j)];
                a[(p, j)] = t;
            }
            for j in 0..b.ncols() {
                let t = b[(c, j)];
                b[(c, j)] = b[(p, j)];
                b[(p, j)] = t;
            }
            for i in (0..n).filter(|&i| i != c) {
                let f = a[(i, c)] / a[(c, c)];
                for j in 0..n {
                    a[(i, j)] -= f * a[(c, j)];
                }
                for j in 0..b.ncols() {
                    b[(i, j)] -= f * b[(c, j)];
                }
            }
        }
        Mat::from_fn(n, b.ncols(), |i, j| b[(i, j)] / a[(i, i)])
    }

    #[test]
    fn exact_gp_joint_matches_the_textbook_formula() {
        let model = fit("gp", "const(var=1.5) * se(ls=0.8)", false, 1);
        let d = data(1);
        let xt = Mat::from_fn(4, 2, |i, j| i as f64 * 0.4 - 0.7 + j as f64 * 0.1);
        let k = |a: MatRef<'_, f64>, b: MatRef<'_, f64>| {
            Mat::from_fn(a.nrows(), b.nrows(), |i, j| {
                let r2: f64 = (0..2).map(|c| (a[(i, c)] - b[(j, c)]).powi(2)).sum();
                1.5 * (-0.5 * r2 / 0.64).exp()
            })
        };
        let mut kxx = k(d.x.as_ref(), d.x.as_ref());
        for i in 0..7 {
            kxx[(i, i)] += 0.1;
        }
        let kxs = k(d.x.as_ref(), xt.as_ref());
        let y = Mat::from_fn(7, 1, |i, _| d.y[(i, 0)]);
        let alpha = solve(&kxx, &y);
        let v = solve(&kxx, &kxs);
        let kss = k(xt.as_ref(), xt.as_ref());
        let latent = model.predict_joint(xt.as_ref(), 0, true).unwrap();
        let noisy = model.predict_joint(xt.as_ref(), 0, false).unwrap();
        for a in 0..4 {
            let mean: f64 = (0..7).map(|i| kxs[(i, a)] * alpha[(i, 0)]).sum();
            assert!((latent.mean[a] - mean).abs() < 1e-10, "{a}");
            assert_eq!(latent.mean[a], noisy.mean[a]);
            for b in 0..4 {
                let cov = kss[(a, b)] - (0..7).map(|i| kxs[(i, a)] * v[(i, b)]).sum::<f64>();
                assert!((latent.cov[(a, b)] - cov).abs() < 1e-10, "{a},{b}");
                let extra = if a == b { 0.1 } else { 0.0 };
                assert!((noisy.cov[(a, b)] - latent.cov[(a, b)] - extra).abs() < 1e-12);
            }
        }
    }

    /// The joint's mean and diagonal are `predict`'s mean and variance, in the data's units,
    /// for a standardised per-target model and a multi-output one.
    #[test]
    fn joint_diagonal_is_predict_in_data_units() {
        let xt = Mat::from_fn(5, 2, |i, j| i as f64 * 0.3 - 0.5 - j as f64 * 0.2);
        for (model, kernel) in [("gp", "const * se"), ("mogp", "se")] {
            let r = fit(model, kernel, true, 2);
            for latent in [true, false] {
                let p = r.predict(xt.as_ref(), latent).unwrap();
                for (t, out) in p.iter().enumerate() {
                    let j = r.predict_joint(xt.as_ref(), t, latent).unwrap();
                    for a in 0..5 {
                        let scale = out.std[a].powi(2).max(1e-300);
                        assert!((j.mean[a] - out.mean[a]).abs() < 1e-9, "{model}");
                        assert!((j.cov[(a, a)] - out.std[a].powi(2)).abs() < 1e-9 * scale.max(1.0));
                    }
                }
            }
            let e = r.predict_joint(xt.as_ref(), 2, true).unwrap_err();
            assert!(e.to_string().contains("output 2 does not exist"), "{e}");
        }
    }
}
