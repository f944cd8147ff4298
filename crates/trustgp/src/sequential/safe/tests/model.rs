//! A test-only [`FunctionModel`]: the repository's exact conjugate posterior with FIXED
//! hyperparameters (Matérn-5/2), optionally pooling the source data with the target's (a crude
//! "transfer" that lets tests see source data reach the target model), and a log of every
//! update (rows, refit flag, seed) for schedule tests.

use std::sync::{Arc, Mutex};

use faer::{Mat, MatRef};

use crate::kernels::Kernel;
use crate::linalg::Parallelism;
use crate::means::Mean;
use crate::models::conjugate::ConjugatePosterior;
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::{FunctionModel, SourceTask};

/// One call of [`FunctionModel::update`]: rows, refit, seed.
pub type UpdateLog = Arc<Mutex<Vec<(usize, bool, u64)>>>;

pub struct FixedGp {
    kernel: Kernel,
    noise: f64,
    sources: Vec<SourceTask>,
    posterior: Option<ConjugatePosterior>,
    pub log: UpdateLog,
}

impl FixedGp {
    /// Matérn-5/2 with lengthscale `ls` and variance `var`, noise variance `noise`.
    pub fn new(ls: f64, var: f64, noise: f64) -> FixedGp {
        FixedGp {
            kernel: Kernel::parse(&format!("matern52(ls={ls}, var={var})")).unwrap(),
            noise,
            sources: Vec::new(),
            posterior: None,
            log: UpdateLog::default(),
        }
    }

    /// The same, conditioning on `sources` too (pooled with the target data).
    pub fn pooled(ls: f64, var: f64, noise: f64, sources: Vec<SourceTask>) -> FixedGp {
        FixedGp {
            sources,
            ..FixedGp::new(ls, var, noise)
        }
    }

    /// The model conditioned on `(x, y)` at once.
    pub fn fitted(ls: f64, var: f64, noise: f64, x: MatRef<'_, f64>, y: &[f64]) -> FixedGp {
        let mut m = FixedGp::new(ls, var, noise);
        m.update(x, y, true, 0).unwrap();
        m
    }
}

impl FunctionModel for FixedGp {
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        self.log.lock().unwrap().push((x.nrows(), refit, seed));
        let n_src: usize = self.sources.iter().map(|s| s.x.nrows()).sum();
        let n = n_src + x.nrows();
        let mut all_x = Mat::zeros(n, x.ncols());
        let mut all_y = Vec::with_capacity(n);
        let mut row = 0;
        for s in &self.sources {
            for i in 0..s.x.nrows() {
                for c in 0..x.ncols() {
                    all_x[(row, c)] = s.x[(i, c)];
                }
                all_y.push(s.y[i]);
                row += 1;
            }
        }
        for i in 0..x.nrows() {
            for c in 0..x.ncols() {
                all_x[(row, c)] = x[(i, c)];
            }
            all_y.push(y[i]);
            row += 1;
        }
        let d = vec![self.noise; n];
        self.posterior = Some(ConjugatePosterior::new(
            self.kernel.clone(),
            Mean::Zero,
            all_x,
            &all_y,
            &d,
            Parallelism::Sequential,
        )?);
        Ok(())
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        match &self.posterior {
            Some(p) => Ok(p.marginals(x)),
            None => Err(ModelError::Invalid("predict before update".into())),
        }
    }

    fn noise_variance(&self) -> f64 {
        self.noise
    }

    fn fit_seconds(&self) -> f64 {
        0.0
    }
}

/// A model whose marginals are given per row of a pool, by the pool row in input column 0:
/// lets tests choose means and variances freely.
pub struct TableModel {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
    pub noise: f64,
}

impl FunctionModel for TableModel {
    fn update(&mut self, _: MatRef<'_, f64>, _: &[f64], _: bool, _: u64) -> Result<(), ModelError> {
        Ok(())
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let rows: Vec<usize> = (0..x.nrows()).map(|i| x[(i, 0)] as usize).collect();
        Ok(Marginals {
            mean: rows.iter().map(|&r| self.mean[r]).collect(),
            var: rows.iter().map(|&r| self.var[r]).collect(),
        })
    }

    fn noise_variance(&self) -> f64 {
        self.noise
    }

    fn fit_seconds(&self) -> f64 {
        0.0
    }
}

/// The pool `0, 1, …, n−1` as a one-column matrix (for [`TableModel`]).
pub fn index_pool(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 1, |i, _| i as f64)
}
