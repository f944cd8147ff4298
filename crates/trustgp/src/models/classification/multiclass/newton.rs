//! The mode of the multi-class Laplace approximation by Newton's method (R&W Alg. 3.3), the
//! approximate log marginal likelihood and the matrix `S = (K + W⁻¹)⁻¹`.
//!
//! Latent vectors are stacked class by class: entry `c·n + i` is class `c` at training point
//! `i`. With `D = diag(π)`, `Π` the stacked `diag(π_c)` and `W = D − ΠΠᵀ`, every Newton step
//! `f ← (K⁻¹ + W)⁻¹ (W f + y − π)` costs `C` Cholesky factorisations of `n×n` matrices
//! `I + D_c^½ K_c D_c^½` and one of `M = Σ_c E_c`, `E_c = (K_c + D_c⁻¹)⁻¹`, instead of one
//! factorisation of a `Cn×Cn` matrix.
//!
//! The log determinant is computed in full. R&W's Alg. 3.3 returns only `Σ_c z_c`
//! (`z_c = ½ log|I + D_c^½ K_c D_c^½|`); with `|I + KW| = |I + KD| · |I − Πᵀ(K⁻¹ + D)⁻¹Π|` and
//! `D_c (K_c⁻¹ + D_c)⁻¹ D_c = D_c − E_c`, `Σ_c π_c = 1`, the second factor is `|Σ_c E_c|`, so
//!
//! ```text
//! log q(y | X) = −½ aᵀf̂ + Σ_i log p(y_i | f̂_i) − Σ_c z_c − ½ log|M|,      f̂ = K a.
//! ```
//!
//! (checked against a direct `Cn×Cn` determinant in the tests).

use faer::Mat;

use crate::likelihoods::Softmax;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Newton iterations before giving up.
const MAX_ITER: usize = 200;
/// Converged when no latent value moves by more than this (relative to `1 + max |f|`).
const STEP_TOL: f64 = 1e-11;
/// Converged when the Newton objective changes by less than this (relative to `1 + |Ψ|`).
const OBJECTIVE_TOL: f64 = 1e-13;
/// Step halvings tried when a full Newton step lowers the objective.
const MAX_HALVINGS: usize = 40;

/// The curvature quantities at one latent vector.
pub(super) struct Curvature {
    /// `E_c = D_c^½ (I + D_c^½ K_c D_c^½)⁻¹ D_c^½ = (K_c + D_c⁻¹)⁻¹`, one per class.
    pub e: Vec<Mat<f64>>,
    /// The Cholesky factor of `M = Σ_c E_c`.
    pub m: Cholesky,
    /// `½ log|I + K W|`.
    pub half_log_det: f64,
}

/// Everything at the mode.
pub(super) struct Mode {
    /// `f̂` (Cn).
    pub f: Vec<f64>,
    /// `a` with `f̂ = K a` (at the mode `a = y − π̂`).
    pub a: Vec<f64>,
    /// `π̂` (Cn).
    pub pi: Vec<f64>,
    /// The curvature at `f̂`.
    pub curvature: Curvature,
    /// The approximate log marginal likelihood.
    pub lml: f64,
    /// Newton iterations taken.
    pub iterations: usize,
}

/// The class probabilities at every point, stacked like `f`.
pub(super) fn probabilities(softmax: &Softmax, f: &[f64], n: usize) -> Vec<f64> {
    let c = softmax.classes();
    let mut pi = vec![0.0; c * n];
    let mut fi = vec![0.0; c];
    for i in 0..n {
        for (k, v) in fi.iter_mut().enumerate() {
            *v = f[k * n + i];
        }
        for (k, p) in softmax.probabilities(&fi).into_iter().enumerate() {
            pi[k * n + i] = p;
        }
    }
    pi
}

/// `Σ_i log p(y_i | f_i)`.
fn log_lik(softmax: &Softmax, f: &[f64], y: &[usize]) -> f64 {
    let (c, n) = (softmax.classes(), y.len());
    let mut fi = vec![0.0; c];
    y.iter()
        .enumerate()
        .map(|(i, &yi)| {
            for (k, v) in fi.iter_mut().enumerate() {
                *v = f[k * n + i];
            }
            softmax.log_prob(&fi, yi)
        })
        .sum()
}

/// `E_c`, the factor of `M` and `½ log|I + KW|` at the probabilities `pi`.
pub(super) fn curvature(
    k: &[Mat<f64>],
    pi: &[f64],
    par: Parallelism,
) -> Result<Curvature, ModelError> {
    let n = k[0].nrows();
    let mut e = Vec::with_capacity(k.len());
    let mut half_log_det = 0.0;
    let mut m = Mat::<f64>::zeros(n, n);
    for (c, kc) in k.iter().enumerate() {
        let sd: Vec<f64> = pi[c * n..(c + 1) * n].iter().map(|p| p.sqrt()).collect();
        let b = Mat::from_fn(n, n, |i, j| {
            sd[i] * kc[(i, j)] * sd[j] + if i == j { 1.0 } else { 0.0 }
        });
        let l = Cholesky::factor(&b, &format!("I + D^½ K D^½ of class {c}"), par)?;
        half_log_det += 0.5 * l.log_det();
        // E_c = (L⁻¹ D^½)ᵀ (L⁻¹ D^½).
        let mut x = Mat::from_fn(n, n, |i, j| if i == j { sd[i] } else { 0.0 });
        l.solve_lower_in_place(x.as_mut());
        let ec = x.transpose() * &x;
        m += &ec;
        e.push(ec);
    }
    let m = Cholesky::factor(&m, "M = Σ_c E_c", par)?;
    half_log_det += 0.5 * m.log_det();
    Ok(Curvature { e, m, half_log_det })
}

/// `K a`, class by class.
fn apply_k(k: &[Mat<f64>], a: &[f64]) -> Vec<f64> {
    let n = k[0].nrows();
    let mut out = Vec::with_capacity(a.len());
    for (c, kc) in k.iter().enumerate() {
        out.extend(matvec(kc, &a[c * n..(c + 1) * n]));
    }
    out
}

/// `A v` for a square `A`.
pub(super) fn matvec(a: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.nrows()];
    for (j, vj) in v.iter().enumerate() {
        for (i, o) in out.iter_mut().enumerate() {
            *o += a[(i, j)] * vj;
        }
    }
    out
}

/// The Newton update of Alg. 3.3 from `f`: the new `(a, f)`.
fn newton_step(
    k: &[Mat<f64>],
    y: &[usize],
    f: &[f64],
    pi: &[f64],
    cur: &Curvature,
) -> (Vec<f64>, Vec<f64>) {
    let n = y.len();
    let classes = k.len();
    // b = W f + y − π, with W f = D f − Π (Πᵀ f).
    let mut b = vec![0.0; classes * n];
    for i in 0..n {
        let pf: f64 = (0..classes).map(|c| pi[c * n + i] * f[c * n + i]).sum();
        for c in 0..classes {
            let j = c * n + i;
            let yc = if y[i] == c { 1.0 } else { 0.0 };
            b[j] = pi[j] * f[j] - pi[j] * pf + yc - pi[j];
        }
    }
    // c = E K b; a = b − c + E R M⁻¹ Rᵀ c.
    let mut cv = Vec::with_capacity(classes * n);
    for (c, kc) in k.iter().enumerate() {
        cv.extend(matvec(&cur.e[c], &matvec(kc, &b[c * n..(c + 1) * n])));
    }
    let rc: Vec<f64> = (0..n)
        .map(|i| (0..classes).map(|c| cv[c * n + i]).sum())
        .collect();
    let w = cur.m.solve_vec(&rc);
    let mut a = Vec::with_capacity(classes * n);
    for c in 0..classes {
        let ew = matvec(&cur.e[c], &w);
        a.extend((0..n).map(|i| b[c * n + i] - cv[c * n + i] + ew[i]));
    }
    let f_new = apply_k(k, &a);
    (a, f_new)
}

/// `Ψ(f) = −½ aᵀ f + log p(y | f)` (with `f = K a`): what Newton's method maximises.
fn objective(softmax: &Softmax, a: &[f64], f: &[f64], y: &[usize]) -> f64 {
    -0.5 * a.iter().zip(f).map(|(u, v)| u * v).sum::<f64>() + log_lik(softmax, f, y)
}

/// The mode of `log p(y | f) + log N(f; 0, K)` and the Laplace quantities there; `k` holds
/// one `n×n` covariance matrix per class.
pub(super) fn find_mode(k: &[Mat<f64>], y: &[usize], par: Parallelism) -> Result<Mode, ModelError> {
    let softmax = Softmax::new(k.len()).map_err(|e| ModelError::Invalid(e.0))?;
    let n = y.len();
    let cn = k.len() * n;
    let mut a = vec![0.0; cn];
    let mut f = vec![0.0; cn];
    let mut psi = objective(&softmax, &a, &f, y);
    for iteration in 1..=MAX_ITER {
        let pi = probabilities(&softmax, &f, n);
        let cur = curvature(k, &pi, par)?;
        let (mut a_new, mut f_new) = newton_step(k, y, &f, &pi, &cur);
        let mut psi_new = objective(&softmax, &a_new, &f_new, y);
        // The objective is concave, so a full step that lowers it overshot: halve it (a and f
        // are linked linearly, f = K a, so both are interpolated).
        let mut halvings = 0;
        while (psi_new.is_nan() || psi_new < psi - 1e-12 * psi.abs()) && halvings < MAX_HALVINGS {
            for j in 0..cn {
                a_new[j] = 0.5 * (a[j] + a_new[j]);
                f_new[j] = 0.5 * (f[j] + f_new[j]);
            }
            psi_new = objective(&softmax, &a_new, &f_new, y);
            halvings += 1;
        }
        if !psi_new.is_finite() {
            return Err(ModelError::Invalid(
                "multi-class Laplace: the Newton objective became non-finite".into(),
            ));
        }
        let scale = 1.0 + f_new.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let step = f_new
            .iter()
            .zip(&f)
            .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
        // Also stop when the objective no longer moves: with an ill-conditioned K (many close
        // inputs) the iterates carry round-off far above STEP_TOL while Ψ has converged
        // (near the mode Ψ's change is quadratic in the step).
        let flat = (psi_new - psi).abs() <= OBJECTIVE_TOL * (1.0 + psi.abs());
        a = a_new;
        f = f_new;
        psi = psi_new;
        if step <= STEP_TOL * scale || (iteration > 1 && flat) {
            let pi = probabilities(&softmax, &f, n);
            let curvature = curvature(k, &pi, par)?;
            let lml = psi - curvature.half_log_det;
            return Ok(Mode {
                f,
                a,
                pi,
                curvature,
                lml,
                iterations: iteration,
            });
        }
    }
    Err(ModelError::Invalid(format!(
        "multi-class Laplace: Newton's method did not converge in {MAX_ITER} iterations"
    )))
}

/// `S = (K + W⁻¹)⁻¹ = E − E R M⁻¹ Rᵀ E` (Cn×Cn, symmetrised): blocks
/// `S_cc' = δ_cc' E_c − E_c M⁻¹ E_c'`. This equals the spec's `(I + W K)⁻¹ W` (tests), and is
/// positive semi-definite by construction without ever inverting the singular `W`.
pub(super) fn s_matrix(cur: &Curvature) -> Mat<f64> {
    let classes = cur.e.len();
    let n = cur.e[0].nrows();
    // G_c = M⁻¹ E_c.
    let g: Vec<Mat<f64>> = cur
        .e
        .iter()
        .map(|ec| {
            let mut gc = ec.clone();
            cur.m.solve_in_place(gc.as_mut());
            gc
        })
        .collect();
    let mut s = Mat::<f64>::zeros(classes * n, classes * n);
    for c in 0..classes {
        for d in 0..classes {
            let block = &cur.e[c] * &g[d];
            for j in 0..n {
                for i in 0..n {
                    let diag = if c == d { cur.e[c][(i, j)] } else { 0.0 };
                    s[(c * n + i, d * n + j)] = diag - block[(i, j)];
                }
            }
        }
    }
    let cn = classes * n;
    for j in 0..cn {
        for i in 0..j {
            let v = 0.5 * (s[(i, j)] + s[(j, i)]);
            s[(i, j)] = v;
            s[(j, i)] = v;
        }
    }
    s
}
