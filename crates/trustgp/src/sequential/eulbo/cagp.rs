//! CaGP and RCaGP (block or inducing-point actions) as EULBO models: the joint gradient is
//! [`CaGp::joint_evaluation_batch`]'s (batches included).

use faer::MatRef;

use super::{EulboModel, Trainable};
use crate::models::computation_aware::{CaGp, JointAdjoints, JointEvaluation};
use crate::models::ModelError;

impl EulboModel for CaGp {
    fn n_data(&self) -> usize {
        self.y().len()
    }

    fn input_dim(&self) -> usize {
        self.x().ncols()
    }

    fn parameters(&self, learn: Trainable) -> Result<Vec<f64>, ModelError> {
        Ok(CaGp::parameters(self, learn.mean))
    }

    fn parameter_bounds(&self, learn: Trainable) -> Result<Vec<(f64, f64)>, ModelError> {
        Ok(CaGp::parameter_bounds(self, learn.mean, learn.noise))
    }

    fn with_parameters(&self, v: &[f64], learn: Trainable) -> Result<Self, ModelError> {
        CaGp::with_parameters(self, v, learn.mean)
    }

    fn joint_evaluation(
        &self,
        v: &[f64],
        learn: Trainable,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        CaGp::joint_evaluation_batch(self, v, learn.mean, elbo_weight, xq, adjoints)
    }
}
