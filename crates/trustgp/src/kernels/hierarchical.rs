//! The hierarchical multi-task kernel of the HGP transfer models (`safe-transfer.md` §2.8,
//! §2.10), on task-indexed inputs (the ordinary input columns, then a task column, as for
//! [`MultiOutputKernel`](super::MultiOutputKernel)).
//!
//! With levels `k_0, …, k_{T−1}` (each a kernel on the ordinary inputs with its own variance)
//! and tasks `0, …, T−1`,
//!
//! ```text
//! k((x, a), (x', b)) = Σ_{i ≤ min(a, b)} k_i(x, x'):
//! ```
//!
//! task 0 is `k_0`, task 1 is `k_0 + k_1`, …; generatively `g_a = h_0 + … + h_a` with
//! independent `h_i ~ GP(0, k_i)`, each task the one before plus a residual. For transfer the
//! sources are tasks `0..P` in order and the target is the last task `P`: with one source
//! this is `[[k_s, k_s], [k_s, k_s + k_t]]`. The order of the tasks matters.
//!
//! Each level only sees the rows of tasks `≥ i`, so every evaluation and gradient contraction
//! runs level by level on those rows.

use std::ops::Range;

use faer::{Mat, MatRef};

use super::{BaseKernel, BaseKind, Covariance, Kernel, KernelError, Lengthscale};

/// The hierarchical (HGP) covariance over `T` tasks; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct HierarchicalKernel {
    levels: Vec<Kernel>,
}

/// The task index of row `i` of a task-indexed input (its last column).
fn task(x: MatRef<'_, f64>, i: usize) -> usize {
    x[(i, x.ncols() - 1)] as usize
}

/// The rows of `x` whose task is at least `level`, and those rows' ordinary input columns.
fn rows_from(x: MatRef<'_, f64>, level: usize) -> (Vec<usize>, Mat<f64>) {
    let rows: Vec<usize> = (0..x.nrows()).filter(|&i| task(x, i) >= level).collect();
    let d = x.ncols() - 1;
    let sub = Mat::from_fn(rows.len(), d, |a, c| x[(rows[a], c)]);
    (rows, sub)
}

impl HierarchicalKernel {
    /// The kernel with levels `k_0, …, k_{T−1}` (at least one).
    ///
    /// # Errors
    /// No level given.
    pub fn new(levels: Vec<Kernel>) -> Result<Self, KernelError> {
        if levels.is_empty() {
            return Err(KernelError::MultiOutput(
                "a hierarchical kernel needs at least one level".into(),
            ));
        }
        Ok(HierarchicalKernel { levels })
    }

    /// Levels that are each a Matérn-5/2 with ARD lengthscales `lengthscale` on all `d` inputs
    /// and variance `variances[i]` (the paper's choice, §2.2).
    ///
    /// # Errors
    /// `d = 0`, no variance, or a lengthscale or variance that is not a positive number.
    pub fn matern52(d: usize, lengthscale: f64, variances: &[f64]) -> Result<Self, KernelError> {
        if d == 0 {
            return Err(KernelError::MultiOutput(
                "a hierarchical kernel needs at least one input column".into(),
            ));
        }
        let levels = variances
            .iter()
            .map(|&v| {
                BaseKernel::new(BaseKind::Matern52)
                    .with_var(v)?
                    .with_lengthscale(Lengthscale::Ard(vec![lengthscale; d]))
                    .map(Kernel::Base)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(levels)
    }

    /// The levels `k_0, …, k_{T−1}`.
    pub fn levels(&self) -> &[Kernel] {
        &self.levels
    }

    /// Number of tasks `T` (= number of levels).
    pub fn n_tasks(&self) -> usize {
        self.levels.len()
    }

    /// The parameter range of level `i` in the flat vector of [`Covariance::params`].
    pub fn level_params(&self, i: usize) -> Range<usize> {
        let start: usize = self.levels[..i].iter().map(Kernel::n_params).sum();
        start..start + self.levels[i].n_params()
    }

    /// The covariance of the rows of `x1` and `x2` summed over the given levels only:
    /// `Σ_{i ∈ levels, i ≤ min(a, b)} k_i(x, x')`. With `x1` and `x2` the same matrix the
    /// result is exactly symmetric.
    ///
    /// # Panics
    /// If the inputs fail [`Covariance::check_inputs`] or a level is out of range.
    pub fn cross_levels(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        levels: Range<usize>,
    ) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(x1.nrows(), x2.nrows());
        let same = std::ptr::eq(x1.as_ptr(), x2.as_ptr())
            && x1.nrows() == x2.nrows()
            && x1.row_stride() == x2.row_stride()
            && x1.col_stride() == x2.col_stride();
        for i in levels {
            let (r1, s1) = rows_from(x1, i);
            if same {
                let k = self.levels[i].matrix(s1.as_ref());
                for (b, &jb) in r1.iter().enumerate() {
                    for (a, &ia) in r1.iter().enumerate() {
                        out[(ia, jb)] += k[(a, b)];
                    }
                }
            } else {
                let (r2, s2) = rows_from(x2, i);
                let k = self.levels[i].cross(s1.as_ref(), s2.as_ref());
                for (b, &jb) in r2.iter().enumerate() {
                    for (a, &ia) in r1.iter().enumerate() {
                        out[(ia, jb)] += k[(a, b)];
                    }
                }
            }
        }
        out
    }

    /// The diagonal summed over the given levels only.
    ///
    /// # Panics
    /// As [`HierarchicalKernel::cross_levels`].
    pub fn diag_levels(&self, x: MatRef<'_, f64>, levels: Range<usize>) -> Vec<f64> {
        let mut out = vec![0.0; x.nrows()];
        for i in levels {
            let (rows, sub) = rows_from(x, i);
            for (a, v) in self.levels[i].diag(sub.as_ref()).into_iter().enumerate() {
                out[rows[a]] += v;
            }
        }
        out
    }
}

impl Covariance for HierarchicalKernel {
    fn matrix(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        self.cross_levels(x, x, 0..self.n_tasks())
    }

    fn cross(&self, x1: MatRef<'_, f64>, x2: MatRef<'_, f64>) -> Mat<f64> {
        self.cross_levels(x1, x2, 0..self.n_tasks())
    }

    fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        self.diag_levels(x, 0..self.n_tasks())
    }

    fn check_inputs(&self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        if x.ncols() < 2 {
            return Err(KernelError::MultiOutput(
                "task-indexed inputs need the input columns plus a task column".into(),
            ));
        }
        let t = self.n_tasks();
        if let Some(i) = (0..x.nrows()).find(|&i| {
            let v = x[(i, x.ncols() - 1)];
            !(v >= 0.0 && v < t as f64 && v.fract() == 0.0)
        }) {
            return Err(KernelError::MultiOutput(format!(
                "row {i} has task index {} (expected an integer in 0..{t})",
                x[(i, x.ncols() - 1)]
            )));
        }
        self.levels
            .iter()
            .try_for_each(|k| k.validate(x.ncols() - 1))
    }

    fn grad_inputs_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64> {
        // Each level's contraction on its rows, scattered back; the task column gets zero.
        let mut g = Mat::<f64>::zeros(x1.nrows(), x1.ncols());
        for (i, level) in self.levels.iter().enumerate() {
            let ((r1, s1), (r2, s2)) = (rows_from(x1, i), rows_from(x2, i));
            if r1.is_empty() || r2.is_empty() {
                continue;
            }
            let ws = Mat::from_fn(r1.len(), r2.len(), |a, b| w[(r1[a], r2[b])]);
            let gi = level.grad_inputs_cross(s1.as_ref(), s2.as_ref(), ws.as_ref());
            for c in 0..s1.ncols() {
                for (a, &ia) in r1.iter().enumerate() {
                    g[(ia, c)] += gi[(a, c)];
                }
            }
        }
        g
    }

    fn n_params(&self) -> usize {
        self.levels.iter().map(Kernel::n_params).sum()
    }

    // Level by level, each kernel's log-parameters.
    fn params(&self) -> Vec<f64> {
        self.levels.iter().flat_map(Kernel::log_params).collect()
    }

    fn set_params(&mut self, p: &[f64]) -> Result<(), KernelError> {
        let expected = Covariance::n_params(self);
        if p.len() != expected {
            return Err(KernelError::ParamCount {
                expected,
                got: p.len(),
            });
        }
        // Set a copy, so that nothing changes on error.
        let mut levels = self.levels.clone();
        let mut offset = 0;
        for k in &mut levels {
            let nk = k.n_params();
            k.set_log_params(&p[offset..offset + nk])?;
            offset += nk;
        }
        self.levels = levels;
        Ok(())
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        self.levels.iter().flat_map(Kernel::log_bounds).collect()
    }

    // Names such as `level1.k0.matern52.ls[0]`.
    fn param_names(&self) -> Vec<String> {
        (self.levels.iter().enumerate())
            .flat_map(|(i, k)| {
                k.param_names()
                    .into_iter()
                    .map(move |n| format!("level{i}.{n}"))
            })
            .collect()
    }

    fn grad_contract(&self, x: MatRef<'_, f64>, w: MatRef<'_, f64>, out: &mut [f64]) {
        let mut offset = 0;
        for (i, level) in self.levels.iter().enumerate() {
            let nk = level.n_params();
            let (rows, sub) = rows_from(x, i);
            if !rows.is_empty() {
                // The rows keep their order, so the lower triangle of W stays the lower one.
                let ws = Mat::from_fn(rows.len(), rows.len(), |a, b| w[(rows[a], rows[b])]);
                level.grad_contract(sub.as_ref(), ws.as_ref(), &mut out[offset..offset + nk]);
            }
            offset += nk;
        }
    }

    // Every level carries its own variance: `c K` scales each of them.
    fn scaled(&self, c: f64) -> Option<Self> {
        let levels = (self.levels.iter())
            .map(|k| Covariance::scaled(k, c))
            .collect::<Option<Vec<_>>>()?;
        Some(HierarchicalKernel { levels })
    }
}

#[cfg(test)]
mod tests;
