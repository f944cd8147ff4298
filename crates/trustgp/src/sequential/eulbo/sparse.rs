//! RCSVGP and SGPR ([`SparseGp`], collapsed bounds) as EULBO models: the joint gradient is
//! [`SparseGp::joint_evaluation_batch`]'s (batches included), over the kernel, the noise, the mean's parameters and (if
//! [`Trainable::inducing`]) the inducing inputs.

use faer::MatRef;

use super::{EulboModel, Trainable};
use crate::models::computation_aware::{JointAdjoints, JointEvaluation};
use crate::models::sparse::SparseGp;
use crate::models::ModelError;

impl EulboModel for SparseGp {
    fn n_data(&self) -> usize {
        self.y().len()
    }

    fn input_dim(&self) -> usize {
        self.x().ncols()
    }

    fn parameters(&self, learn: Trainable) -> Result<Vec<f64>, ModelError> {
        Ok(SparseGp::parameters(self, learn.inducing))
    }

    fn parameter_bounds(&self, learn: Trainable) -> Result<Vec<(f64, f64)>, ModelError> {
        Ok(SparseGp::parameter_bounds(
            self,
            learn.mean,
            learn.noise,
            learn.inducing,
        ))
    }

    fn with_parameters(&self, v: &[f64], learn: Trainable) -> Result<Self, ModelError> {
        SparseGp::with_parameters(self, v, learn.inducing)
    }

    fn joint_evaluation(
        &self,
        v: &[f64],
        learn: Trainable,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        SparseGp::joint_evaluation_batch(self, v, learn.inducing, elbo_weight, xq, adjoints)
    }
}
