//! The gradient of the multi-class Laplace approximate log marginal likelihood in the kernel
//! hyperparameters, in the implicit-derivative form (R&W §5.5.1 carried over to the softmax).
//!
//! With `Ψ(θ) = −½ f̂ᵀK⁻¹f̂ + log p(y | f̂) − ½ log|I + K W(f̂)|` and `f̂(θ)` the mode:
//!
//! ```text
//! dΨ/dθ = ½ aᵀ ∂K a − ½ tr(S ∂K)                    (explicit; S = W(I + KW)⁻¹)
//!       + sᵀ (I + KW)⁻¹ ∂K a                          (the mode moves: df̂ = (I + KW)⁻¹ ∂K a)
//! s_(k,i) = −½ tr(V_i ∂W_i/∂f_(k,i)) = −½ [Σ_c V_i,cc g_c − 2 gᵀ V_i π_i],   g = π_i ∘ (e_k − π_ik)
//! ```
//!
//! where `V_i` is the `C×C` block of the posterior covariance `K − K S K` at point `i` (the only
//! entries `∂W/∂f` touches: `W` is block diagonal over points). Writing
//! `u = (I + KW)⁻ᵀ s = (I − S K) s`, class `c`'s covariance gets the contraction weights
//! `½ a_c a_cᵀ − ½ S_cc + ½ (u_c a_cᵀ + a_c u_cᵀ)`. The explicit trace uses only `S`'s diagonal
//! blocks, since `∂K` is block diagonal. Cost `O(C² n³)`.

use faer::Mat;

use super::newton::{matvec, Mode};

/// The contraction weights `G_c` (one symmetric `n×n` matrix per class) such that
/// `dΨ/dθ = Σ_c Σ_ab G_c[a, b] ∂K_c[a, b]/∂θ`.
pub(super) fn contraction_weights(k: &[Mat<f64>], mode: &Mode, s: &Mat<f64>) -> Vec<Mat<f64>> {
    let classes = k.len();
    let n = k[0].nrows();
    let pi = &mode.pi;
    // V_i[c, d] = δ_cd K_c[i, i] − (K_c S_cd K_d)[i, i].
    let mut v = vec![vec![0.0; classes * classes]; n];
    for c in 0..classes {
        for d in 0..classes {
            let sd = s.submatrix(c * n, d * n, n, n) * &k[d];
            for (i, vi) in v.iter_mut().enumerate() {
                let kss: f64 = (0..n).map(|j| k[c][(i, j)] * sd[(j, i)]).sum();
                let prior = if c == d { k[c][(i, i)] } else { 0.0 };
                vi[c * classes + d] = prior - kss;
            }
        }
    }
    // s_(k,i).
    let mut svec = vec![0.0; classes * n];
    let mut g = vec![0.0; classes];
    let mut vpi = vec![0.0; classes];
    for (i, vi) in v.iter().enumerate() {
        for (c, out) in vpi.iter_mut().enumerate() {
            *out = (0..classes)
                .map(|d| vi[c * classes + d] * pi[d * n + i])
                .sum();
        }
        for kk in 0..classes {
            let pk = pi[kk * n + i];
            for (c, gc) in g.iter_mut().enumerate() {
                let pc = pi[c * n + i];
                *gc = if c == kk { pc - pc * pk } else { -pc * pk };
            }
            let diag: f64 = (0..classes).map(|c| vi[c * classes + c] * g[c]).sum();
            let cross: f64 = g.iter().zip(&vpi).map(|(a, b)| a * b).sum();
            svec[kk * n + i] = -0.5 * (diag - 2.0 * cross);
        }
    }
    // u = s − S (K s).
    let mut ks = Vec::with_capacity(classes * n);
    for (c, kc) in k.iter().enumerate() {
        ks.extend(matvec(kc, &svec[c * n..(c + 1) * n]));
    }
    let sks = matvec(s, &ks);
    let u: Vec<f64> = svec.iter().zip(&sks).map(|(a, b)| a - b).collect();
    let a = &mode.a;
    (0..classes)
        .map(|c| {
            let (ac, uc) = (&a[c * n..(c + 1) * n], &u[c * n..(c + 1) * n]);
            Mat::from_fn(n, n, |i, j| {
                0.5 * (ac[i] * ac[j] - s[(c * n + i, c * n + j)])
                    + 0.5 * (uc[i] * ac[j] + ac[i] * uc[j])
            })
        })
        .collect()
}
