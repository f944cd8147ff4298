//! SVGP ([`Svgp`], uncollapsed and whitened) as an EULBO model. An [`Svgp`] does not keep its
//! training data, so [`SvgpOnData`] pairs it with the rows its ELBO is taken over. The joint
//! gradient is [`Svgp::joint_evaluation_batch`]'s (batches included).

use faer::{Mat, MatRef};

use super::{EulboModel, Trainable};
use crate::models::computation_aware::{JointAdjoints, JointEvaluation};
use crate::models::svgp::Svgp;
use crate::models::ModelError;

/// An [`Svgp`] with the training data of its (full-data) ELBO.
#[derive(Clone, Debug)]
pub struct SvgpOnData {
    /// The model.
    pub model: Svgp,
    x: Mat<f64>,
    y: Vec<f64>,
}

impl SvgpOnData {
    /// `model` with training inputs `x` (n×d) and targets `y`.
    ///
    /// # Errors
    /// [`ModelError`] for non-finite or inconsistent data, or inputs of the wrong width.
    pub fn new(model: Svgp, x: Mat<f64>, y: Vec<f64>) -> Result<SvgpOnData, ModelError> {
        // The ELBO checks the data and its width.
        model.elbo(x.as_ref(), &y)?;
        Ok(SvgpOnData { model, x, y })
    }

    /// The training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn y(&self) -> &[f64] {
        &self.y
    }
}

impl EulboModel for SvgpOnData {
    fn n_data(&self) -> usize {
        self.y.len()
    }

    fn input_dim(&self) -> usize {
        self.model.input_dim()
    }

    fn parameters(&self, learn: Trainable) -> Result<Vec<f64>, ModelError> {
        self.model.parameters(learn.inducing)
    }

    fn parameter_bounds(&self, learn: Trainable) -> Result<Vec<(f64, f64)>, ModelError> {
        self.model
            .parameter_bounds(learn.mean, learn.noise, learn.inducing)
    }

    fn with_parameters(&self, v: &[f64], learn: Trainable) -> Result<Self, ModelError> {
        Ok(SvgpOnData {
            model: self.model.with_parameters(v, learn.inducing)?,
            x: self.x.clone(),
            y: self.y.clone(),
        })
    }

    fn joint_evaluation(
        &self,
        v: &[f64],
        learn: Trainable,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        self.model.joint_evaluation_batch(
            self.x.as_ref(),
            &self.y,
            v,
            learn.inducing,
            elbo_weight,
            xq,
            adjoints,
        )
    }
}
