//! The predictive of the collapsed models (SGPR: Titsias; RCSVGP: spec §2.8), from the factors
//! of the [core](super::collapsed):
//!
//! ```text
//! mean(x)   = m(x) + k(x, Z) α
//! var(x)    = k(x, x) − ‖L⁻¹ k(Z, x)‖² + ‖L_B⁻¹ L⁻¹ k(Z, x)‖²
//!           = k(x, x) − k_xu K_uu⁻¹ k_ux + k_xu (K_uu + K_uf P K_fu)⁻¹ k_ux
//! ```
//!
//! Test points are taken in blocks, so memory is O(m × block) and no test×test matrix is formed
//! except by [`Factors::joint`].

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::collapsed::{col_dot, Factors};
use crate::kernels::Kernel;
use crate::linalg::Parallelism;
use crate::means::Mean;
use crate::posterior::Marginals;

/// Test points per block.
const PREDICT_BLOCK: usize = 512;

impl Factors {
    /// `(k(Z, xs), L⁻¹ k(Z, xs), L_B⁻¹ L⁻¹ k(Z, xs))` for a block of test points.
    fn project(&self, kernel: &Kernel, z: MatRef<'_, f64>, xs: MatRef<'_, f64>) -> [Mat<f64>; 3] {
        let kus = kernel.cross(z, xs);
        let mut a = kus.clone();
        self.l_uu.solve_lower_in_place(a.as_mut());
        let mut v = a.clone();
        self.l_b.solve_lower_in_place(v.as_mut());
        [kus, a, v]
    }

    fn marginals_block(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        z: MatRef<'_, f64>,
        xs: MatRef<'_, f64>,
    ) -> Marginals {
        let [kus, a, v] = self.project(kernel, z, xs);
        let prior = mean.eval(xs);
        let kss = kernel.diag(xs);
        let alpha = MatRef::from_column_major_slice(&self.alpha, self.alpha.len(), 1);
        let (mut mean_out, mut var) = (prior, kss);
        for j in 0..xs.nrows() {
            mean_out[j] += (0..z.nrows())
                .map(|i| kus[(i, j)] * alpha[(i, 0)])
                .sum::<f64>();
            var[j] = (var[j] - col_dot(a.as_ref(), a.as_ref(), j)
                + col_dot(v.as_ref(), v.as_ref(), j))
            .max(0.0);
        }
        Marginals {
            mean: mean_out,
            var,
        }
    }

    /// Latent predictive mean and variance at the rows of `xs`.
    pub(in crate::models) fn marginals(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        z: MatRef<'_, f64>,
        xs: MatRef<'_, f64>,
    ) -> Marginals {
        let n = xs.nrows();
        let blocks: Vec<(usize, usize)> = (0..n)
            .step_by(PREDICT_BLOCK)
            .map(|s| (s, PREDICT_BLOCK.min(n - s)))
            .collect();
        let run =
            |&(s, len): &(usize, usize)| self.marginals_block(kernel, mean, z, xs.subrows(s, len));
        // Blocks are independent: spread them over cores unless the factors' own solves are
        // parallel (never nest rayon inside faer's parallel calls).
        let parts: Vec<Marginals> = if self.l_uu.parallelism() == Parallelism::Sequential {
            blocks.par_iter().map(run).collect()
        } else {
            blocks.iter().map(run).collect()
        };
        let mut out = Marginals {
            mean: Vec::with_capacity(n),
            var: Vec::with_capacity(n),
        };
        for p in parts {
            out.mean.extend(p.mean);
            out.var.extend(p.var);
        }
        out
    }

    /// Latent predictive mean and full covariance at the rows of `xs`.
    pub(in crate::models) fn joint(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        z: MatRef<'_, f64>,
        xs: MatRef<'_, f64>,
    ) -> (Vec<f64>, Mat<f64>) {
        let mean_out = self.marginals(kernel, mean, z, xs).mean;
        let [_, a, v] = self.project(kernel, z, xs);
        let mut cov = kernel.matrix(xs);
        cov -= a.transpose() * &a;
        cov += v.transpose() * &v;
        (mean_out, cov)
    }
}
