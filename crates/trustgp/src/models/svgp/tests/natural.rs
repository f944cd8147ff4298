//! The natural-gradient step against its dense definition: `Θ₂' = (1 − γ) S̃⁻¹ + γ (I − 2G)`,
//! `θ₁' = (1 − γ) S̃⁻¹ m̃ + γ (h − 2G m̃)`, `S̃' = Θ₂'⁻¹`, `m̃' = S̃' θ₁'` with explicit inverses,
//! and `L̃'` the lower Cholesky factor of `S̃'`.

use faer::Mat;

use super::super::elbo::{evaluate, Need, Rows};
use super::super::natural::natural_step;
use super::super::state::Whitened;
use super::*;

#[test]
fn natural_step_matches_the_dense_definition() {
    let (x, y) = data(25, 0.3, 41);
    let s = state(SvgpLikelihood::Gaussian, vec![0.2], Mean::Zero, 10, 42);
    let m = 10;
    for (rows, gamma) in [(Rows::All, 1.0), (Rows::Batch(&[1, 4, 9, 16, 20]), 0.1)] {
        let w = Whitened::new(&s).unwrap();
        let stats = evaluate(&s, &w, x.as_ref(), &y, rows, Need::Statistics).unwrap();
        let (m_new, l_new) = natural_step(&s, &stats, gamma).unwrap();
        let s_old = &s.l_tilde * s.l_tilde.transpose();
        let prec = Cholesky::factor(&s_old, "S̃", Parallelism::Sequential)
            .unwrap()
            .inverse();
        let mt = Mat::from_fn(m, 1, |i, _| s.m_tilde[i]);
        let gm = &stats.g * &mt;
        let pm = &prec * &mt;
        let theta1 = Mat::from_fn(m, 1, |i, _| {
            (1.0 - gamma) * pm[(i, 0)] + gamma * (stats.h[i] - 2.0 * gm[(i, 0)])
        });
        let theta2 = Mat::from_fn(m, m, |i, j| {
            let id = if i == j { 1.0 } else { 0.0 };
            (1.0 - gamma) * prec[(i, j)] + gamma * (id - 2.0 * stats.g[(i, j)])
        });
        let cov = Cholesky::factor(&theta2, "Θ₂", Parallelism::Sequential)
            .unwrap()
            .inverse();
        let mean = &cov * &theta1;
        let mean: Vec<f64> = (0..m).map(|i| mean[(i, 0)]).collect();
        assert!(max_rel(&m_new, &mean) < 1e-10, "{m_new:?} vs {mean:?}");
        let reference = lower_of(&Cholesky::factor(&cov, "S̃'", Parallelism::Sequential).unwrap());
        for i in 0..m {
            for j in 0..m {
                let want = reference[(i, j)];
                assert!(
                    (l_new[(i, j)] - want).abs() < 1e-10 * want.abs().max(1e-3),
                    "L̃'[{i},{j}] = {} vs {want}",
                    l_new[(i, j)]
                );
            }
        }
    }
}
