//! Bayesian model averaging: a weighted mixture of per-kernel SVGP predictives (VBKS spec
//! §2.11, eq. 15), the prediction of VBKS (top kernels), VBKS-s (one kernel, weight 1) and
//! the Random baseline.

use faer::MatRef;

use crate::models::svgp::Svgp;
use crate::models::ModelError;
use crate::posterior::Marginals;

use super::grammar::Structure;

/// The first two moments of the mixture `Σ_i w_i N(μ_i, σ_i²)` at every point, in the
/// centred form of eq. 15 (`σ² = Σ w_i σ_i² + Σ w_i (μ_i − μ)²`, which does not cancel when
/// `|μ| ≫ σ`). Weights are normalised to sum to 1; component variances are clamped at 0.
///
/// # Panics
/// If `weights` and `components` differ in length, are empty, the weights are not
/// non-negative with a positive sum, or the components have different lengths.
pub fn mixture_moments(weights: &[f64], components: &[Marginals]) -> Marginals {
    assert_eq!(weights.len(), components.len(), "one weight per component");
    assert!(!weights.is_empty(), "a mixture needs a component");
    let total: f64 = weights.iter().sum();
    assert!(
        weights.iter().all(|w| *w >= 0.0) && total > 0.0,
        "mixture weights must be non-negative with a positive sum"
    );
    let n = components[0].mean.len();
    assert!(
        components
            .iter()
            .all(|c| c.mean.len() == n && c.var.len() == n),
        "every component covers the same points"
    );
    let w: Vec<f64> = weights.iter().map(|v| v / total).collect();
    let mut out = Marginals {
        mean: vec![0.0; n],
        var: vec![0.0; n],
    };
    for j in 0..n {
        let mean: f64 = w.iter().zip(components).map(|(w, c)| w * c.mean[j]).sum();
        let var: f64 = w
            .iter()
            .zip(components)
            .map(|(w, c)| w * (c.var[j].max(0.0) + (c.mean[j] - mean).powi(2)))
            .sum();
        out.mean[j] = mean;
        out.var[j] = var;
    }
    out
}

/// One kernel of a model average: its structure, its position in the candidate space, its
/// fitted SVGP and its weight.
#[derive(Clone, Debug)]
pub struct Component {
    /// The kernel structure.
    pub structure: Structure,
    /// Its index in the candidate space (0-based).
    pub index: usize,
    /// Its weight in the average (the weights of a [`Mixture`] sum to 1).
    pub weight: f64,
    /// The kernel's fitted sparse GP.
    pub model: Svgp,
}

/// A Bayesian model average of per-kernel SVGPs (a mixture posterior).
#[derive(Clone, Debug)]
pub struct Mixture {
    components: Vec<Component>,
}

impl Mixture {
    /// The mixture of these components; weights are normalised to sum to 1.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for no component, a negative or non-finite weight, a zero sum,
    /// or components with different input widths.
    pub fn new(mut components: Vec<Component>) -> Result<Mixture, ModelError> {
        let total: f64 = components.iter().map(|c| c.weight).sum();
        if components.is_empty()
            || components
                .iter()
                .any(|c| !(c.weight.is_finite() && c.weight >= 0.0))
            || !(total > 0.0 && total.is_finite())
        {
            return Err(ModelError::Invalid(
                "a model average needs at least one kernel, with non-negative finite weights of \
                 positive sum"
                    .into(),
            ));
        }
        let d = components[0].model.input_dim();
        if components.iter().any(|c| c.model.input_dim() != d) {
            return Err(ModelError::Invalid(
                "every kernel of a model average must have the same number of inputs".into(),
            ));
        }
        components.iter_mut().for_each(|c| c.weight /= total);
        Ok(Mixture { components })
    }

    /// The components, by decreasing weight as built by VBKS.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// Number of input columns.
    pub fn input_dim(&self) -> usize {
        self.components[0].model.input_dim()
    }

    /// The mixture's mean and variance at the rows of `xs`: of the latent function, or
    /// (`latent` false) of a new observation, each kernel's own noise variance added to its
    /// latent variance before mixing (spec §2.11).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `xs` has the wrong width.
    pub fn predict(&self, xs: MatRef<'_, f64>, latent: bool) -> Result<Marginals, ModelError> {
        let parts = self
            .components
            .iter()
            .map(|c| {
                let mut m = c.model.try_predict(xs)?;
                if !latent {
                    let noise = c.model.predictive_noise();
                    m.var.iter_mut().for_each(|v| *v += noise);
                }
                Ok(m)
            })
            .collect::<Result<Vec<_>, ModelError>>()?;
        let weights: Vec<f64> = self.components.iter().map(|c| c.weight).collect();
        Ok(mixture_moments(&weights, &parts))
    }
}
