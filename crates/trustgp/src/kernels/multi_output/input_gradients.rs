//! Input gradients of a multi-output kernel: the contraction that posterior input gradients need.

use faer::{Mat, MatRef};

use super::{task, tasks, MultiOutputKernel};

impl MultiOutputKernel {
    /// `Σ_b W_ab ∂k((x1_a, t_a), (x2_b, t_b))/∂x1_a` with
    /// `k = Σ_q B_q[t_a, t_b] κ_q(x_a, x_b)`: each term is its kernel's contraction with the
    /// weights `W_ab B_q[t_a, t_b]`. The task column is discrete and gets zero.
    pub(super) fn inputs_contract(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64> {
        crate::kernels::assert_inputs_cross_shapes(x1, x2, w);
        let d = x1.ncols() - 1;
        let t2 = tasks(x2);
        let mut g = Mat::<f64>::zeros(x1.nrows(), x1.ncols());
        for m in &self.terms {
            let b = m.coregion.b();
            let wb = Mat::from_fn(w.nrows(), w.ncols(), |a, c| {
                w[(a, c)] * b[(task(x1, a), t2[c])]
            });
            let gq = m
                .kernel
                .grad_inputs_cross(Self::inputs(x1), Self::inputs(x2), wb.as_ref());
            for c in 0..d {
                for a in 0..x1.nrows() {
                    g[(a, c)] += gq[(a, c)];
                }
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use crate::kernels::{Coregion, Covariance, Kernel, LmcTerm, MultiOutputKernel};

    /// `Σ_b W_ab ∂k(x1_a, x2_b)/∂x1_a` of a two-term LMC against central differences of
    /// `Σ W∘cross(x1, x2)`, and `∂k(x, x)/∂x` against differences of the diagonal.
    #[test]
    fn input_contractions_match_finite_differences() {
        let term = |k: &str, a: [f64; 3]| LmcTerm {
            kernel: Kernel::parse(k).unwrap(),
            coregion: Coregion::new(Mat::from_fn(3, 1, |i, _| a[i]), Some(vec![0.2, 0.3, 0.1]))
                .unwrap(),
        };
        let mo = MultiOutputKernel::new(vec![
            term("se(ls=[0.7, 1.2])", [1.0, -0.5, 0.8]),
            term("lin(var=0.4)", [0.3, 0.9, -0.2]),
        ])
        .unwrap();
        let x1 = Mat::from_fn(4, 3, |i, c| match c {
            2 => (i % 3) as f64,
            _ => 0.3 * i as f64 - 0.4 * c as f64 + 0.1,
        });
        let x2 = Mat::from_fn(5, 3, |i, c| match c {
            2 => ((i + 1) % 3) as f64,
            _ => -0.2 * i as f64 + 0.5 * c as f64,
        });
        let w = Mat::from_fn(4, 5, |a, b| ((a * 5 + b) as f64 * 0.37).sin());
        let g = mo.grad_inputs_cross(x1.as_ref(), x2.as_ref(), w.as_ref());
        let gd = mo.grad_inputs_diag(x1.as_ref());
        let h = 1e-6;
        for a in 0..4 {
            assert_eq!((g[(a, 2)], gd[(a, 2)]), (0.0, 0.0), "the task column");
            for c in 0..2 {
                let at = |s: f64| {
                    let mut xp = x1.clone();
                    xp[(a, c)] += s;
                    let k = mo.cross(xp.as_ref(), x2.as_ref());
                    let f: f64 = (0..5).map(|b| w[(a, b)] * k[(a, b)]).sum();
                    (f, mo.diag(xp.as_ref())[a])
                };
                let ((fp, dp), (fm, dm)) = (at(h), at(-h));
                let (fd, fd_diag) = ((fp - fm) / (2.0 * h), (dp - dm) / (2.0 * h));
                assert!(
                    (g[(a, c)] - fd).abs() < 1e-8,
                    "[{a},{c}]: {} vs {fd}",
                    g[(a, c)]
                );
                assert!((gd[(a, c)] - fd_diag).abs() < 1e-8, "diag [{a},{c}]");
            }
        }
    }
}
