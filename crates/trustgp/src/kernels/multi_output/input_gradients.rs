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
        assert!(
            w.nrows() == x1.nrows() && w.ncols() == x2.nrows() && x1.ncols() == x2.ncols(),
            "grad_inputs_cross: W must be n1×n2 and the inputs need the same columns"
        );
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
