//! The RCaGP/CaGP ELBO (Algorithm E, spec §3.1) and its analytic gradient (adjoints of §2.6).
//!
//! The kernel matrix is streamed: `B = KS` is built block column by block column from
//! `k(X, X_b)` (n×k_b), and on the way back `K̄ = B̄Sᵀ + S M̄ Sᵀ − ½ diag P` is contracted
//! with `∂K/∂log θ` one block column at a time. Because `S` has a single non-zero vector per
//! column, `K̄` restricted to the columns of block `b` is the rank-one `(B̄ + S M̄)_{:,b} θ_bᵀ`.
//! Memory is `O(n·i + n·k)`, never `O(n²)`.

use faer::{Mat, MatRef};

use super::actions::{dot, BlockActions};
use super::likelihood::{PseudoLikelihood, Weighting};
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Everything the ELBO depends on.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// The kernel (its hyperparameters are the trainable `log θ`).
    pub kernel: Kernel,
    /// Noise variance `σ²`.
    pub noise: f64,
    /// Constant prior mean `m0`.
    pub mean: f64,
    /// The block actions `Θ`.
    pub actions: BlockActions,
    /// Observation weighting (fixed during training).
    pub weighting: Weighting,
}

/// The forward pass: the ELBO and what prediction and the gradient reuse.
#[derive(Clone, Debug)]
pub(crate) struct Forward {
    /// The pseudo-likelihood quantities.
    pub lik: PseudoLikelihood,
    /// `B = KS` (n×i).
    b: Mat<f64>,
    /// `M = SᵀKS` (i×i).
    m: Mat<f64>,
    /// `(log T_bb, floored)`.
    log_t: Vec<(f64, bool)>,
    /// Cholesky factor of `G = M + T`.
    pub chol: Cholesky,
    /// `a = G⁻¹ Sᵀ r`.
    pub a: Vec<f64>,
    /// Marginal means `μ̂` of `q` at the training inputs.
    pub mu: Vec<f64>,
    /// Marginal variances `κ̂` of `q` at the training inputs.
    pub kappa: Vec<f64>,
    /// The ELBO.
    pub elbo: f64,
}

/// The gradient of the ELBO.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gradient {
    /// With respect to the kernel's log-hyperparameters.
    pub kernel: Vec<f64>,
    /// With respect to `log σ²`.
    pub log_noise: f64,
    /// With respect to `m0`.
    pub mean: f64,
    /// With respect to Θ, flattened like [`BlockActions::flat`].
    pub actions: Vec<f64>,
}

/// `k(X, X_b)`: the kernel columns of block `b`.
fn block_columns(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    actions: &BlockActions,
    b: usize,
) -> Mat<f64> {
    let rows = actions.range(b);
    kernel.cross(x, x.subrows(rows.start, rows.len()))
}

/// `K_b v` for an n×k_b block of columns.
fn times(kb: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    (0..kb.nrows())
        .map(|j| (0..kb.ncols()).map(|l| kb[(j, l)] * v[l]).sum())
        .collect()
}

/// Algorithm E: the ELBO at `state` for inputs `x` and targets `y`.
pub(crate) fn forward(x: MatRef<'_, f64>, y: &[f64], state: &State) -> Result<Forward, ModelError> {
    let n = x.nrows();
    let acts = &state.actions;
    let i = acts.count();
    let lik = PseudoLikelihood::new(y, state.mean, state.noise, state.weighting);
    let mut b = Mat::<f64>::zeros(n, i);
    for c in 0..i {
        let col = times(&block_columns(&state.kernel, x, acts, c), acts.theta(c));
        for (j, v) in col.into_iter().enumerate() {
            b[(j, c)] = v;
        }
    }
    // M = SᵀB, symmetrised so that round-off cannot make G look indefinite to the factoriser.
    let mut m = Mat::<f64>::from_fn(i, i, |r, c| {
        let rows = acts.range(r);
        let theta = acts.theta(r);
        rows.enumerate().map(|(l, j)| theta[l] * b[(j, c)]).sum()
    });
    m = Mat::from_fn(i, i, |r, c| 0.5 * (m[(r, c)] + m[(c, r)]));
    let log_t = acts.log_t(&lik.log_d);
    let g = Mat::<f64>::from_fn(i, i, |r, c| {
        m[(r, c)] + if r == c { log_t[r].0.exp() } else { 0.0 }
    });
    let chol = Cholesky::factor(&g, "CaGP projected matrix SᵀK̃S", Parallelism::Sequential)?;
    let a = chol.solve_vec(&acts.project(&lik.r));
    let mut mu = vec![state.mean; n];
    for (c, &ac) in a.iter().enumerate() {
        for (j, mj) in mu.iter_mut().enumerate() {
            *mj += b[(j, c)] * ac;
        }
    }
    let mut u = b.transpose().to_owned();
    chol.solve_lower_in_place(u.as_mut());
    let kdiag = state.kernel.diag(x);
    let kappa: Vec<f64> = (0..n)
        .map(|j| kdiag[j] - (0..i).map(|c| u[(c, j)] * u[(c, j)]).sum::<f64>())
        .collect();
    let ma = mat_vec(m.as_ref(), &a);
    let ginv = chol.inverse();
    let tr_ginv_m: f64 = (0..i)
        .flat_map(|r| (0..i).map(move |c| (r, c)))
        .map(|(r, c)| ginv[(r, c)] * m[(c, r)])
        .sum();
    let sum_log_t: f64 = log_t.iter().map(|(lt, _)| lt).sum();
    let kl = 0.5 * (dot(&a, &ma) + chol.log_det() - sum_log_t - tr_ginv_m);
    let elbo = lik.expected(&mu, &kappa) - kl;
    Ok(Forward {
        lik,
        b,
        m,
        log_t,
        chol,
        a,
        mu,
        kappa,
        elbo,
    })
}

/// Column `c` of `m` as a vector.
fn col(m: &Mat<f64>, c: usize) -> Vec<f64> {
    (0..m.nrows()).map(|r| m[(r, c)]).collect()
}

/// `A v`.
fn mat_vec(a: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..a.nrows())
        .map(|r| (0..a.ncols()).map(|c| a[(r, c)] * v[c]).sum())
        .collect()
}

/// The gradient of [`forward`]'s ELBO by the adjoints of spec §2.6.
pub(crate) fn gradient(x: MatRef<'_, f64>, state: &State, fw: &Forward) -> Gradient {
    let n = x.nrows();
    let acts = &state.actions;
    let i = acts.count();
    let (lik, b, m, a) = (&fw.lik, &fw.b, &fw.m, &fw.a);
    let ginv = fw.chol.inverse();
    // μ̄ = ν − Pμ̂,  ā = Bᵀμ̄ − Ma,  z̄ = G⁻¹ā.
    let mu_bar: Vec<f64> = (0..n).map(|j| lik.nu[j] - lik.p[j] * fw.mu[j]).collect();
    let ma = mat_vec(m.as_ref(), a);
    let a_bar: Vec<f64> = (0..i).map(|c| dot(&col(b, c), &mu_bar) - ma[c]).collect();
    let z_bar = mat_vec(ginv.as_ref(), &a_bar);
    // B̄ = μ̄aᵀ + PBG⁻¹.
    let pb = Mat::<f64>::from_fn(n, i, |j, c| lik.p[j] * b[(j, c)]);
    let pbg = &pb * &ginv;
    let b_bar = Mat::<f64>::from_fn(n, i, |j, c| mu_bar[j] * a[c] + pbg[(j, c)]);
    // Ḡ = −G⁻¹āaᵀ − ½G⁻¹BᵀPBG⁻¹ − ½G⁻¹ − ½G⁻¹MG⁻¹ (as a general matrix).
    let gbpbg = b.transpose() * &pbg;
    let gbpbg = &ginv * &gbpbg;
    let gmg = &ginv * m * &ginv;
    let g_bar = Mat::<f64>::from_fn(i, i, |r, c| {
        -z_bar[r] * a[c] - 0.5 * (gbpbg[(r, c)] + ginv[(r, c)] + gmg[(r, c)])
    });
    // M̄_tot = −½aaᵀ + ½G⁻¹ + Ḡ,  T̄_tot = ½T⁻¹ + diag Ḡ (nothing through a floored T).
    let m_bar = Mat::<f64>::from_fn(i, i, |r, c| {
        -0.5 * a[r] * a[c] + 0.5 * ginv[(r, c)] + g_bar[(r, c)]
    });
    let t_bar: Vec<f64> = (0..i)
        .map(|c| match fw.log_t[c] {
            (_, true) => 0.0,
            (lt, false) => 0.5 * (-lt).exp() + g_bar[(c, c)],
        })
        .collect();
    let m_sym = Mat::<f64>::from_fn(i, i, |r, c| m_bar[(r, c)] + m_bar[(c, r)]);
    let b_msym = b * &m_sym;
    let s_mbar = s_times(acts, m_bar.as_ref());

    let mut grad_k = vec![0.0; state.kernel.n_params()];
    let mut d_theta = Vec::with_capacity(n);
    let mut d_bar = vec![0.0; n];
    let mut r_bar = vec![0.0; n];
    for c in 0..i {
        let rows = acts.range(c);
        let theta = acts.theta(c);
        let xb = x.subrows(rows.start, rows.len());
        let kb = block_columns(&state.kernel, x, acts, c);
        // K̄ on the columns of block c: (B̄ + S M̄_tot)_{:,c} θ_cᵀ.
        let v: Vec<f64> = (0..n).map(|j| b_bar[(j, c)] + s_mbar[(j, c)]).collect();
        let w = Mat::<f64>::from_fn(n, rows.len(), |j, l| v[j] * theta[l]);
        state
            .kernel
            .grad_contract_cross(x, xb, w.as_ref(), &mut grad_k);
        // θ̄ = [K B̄ + KS(M̄ + M̄ᵀ) + DS(T̄ + T̄ᵀ) + r z̄ᵀ] on block c.
        for (l, j) in rows.clone().enumerate() {
            let kbb: f64 = (0..n).map(|q| kb[(q, l)] * b_bar[(q, c)]).sum();
            d_theta.push(
                kbb + b_msym[(j, c)] + 2.0 * lik.d[j] * theta[l] * t_bar[c] + lik.r[j] * z_bar[c],
            );
            d_bar[j] = theta[l] * theta[l] * t_bar[c];
            r_bar[j] = theta[l] * z_bar[c];
        }
    }
    let half_p: Vec<f64> = lik.p.iter().map(|p| -0.5 * p).collect();
    state.kernel.grad_contract_diag(x, &half_p, &mut grad_k);
    let (log_noise, d_m0) = lik.backward(&fw.mu, &fw.kappa, &d_bar, &r_bar);
    Gradient {
        kernel: grad_k,
        log_noise,
        mean: d_m0 + mu_bar.iter().sum::<f64>(),
        actions: d_theta,
    }
}

/// `S A` (n×i) for an i×i matrix `A`: row j of `S` holds the single entry θ of its block.
fn s_times(acts: &BlockActions, a: MatRef<'_, f64>) -> Mat<f64> {
    let n = acts.range(acts.count() - 1).end;
    let mut out = Mat::<f64>::zeros(n, a.ncols());
    for q in 0..acts.count() {
        for (l, j) in acts.range(q).enumerate() {
            for c in 0..a.ncols() {
                out[(j, c)] = acts.theta(q)[l] * a[(q, c)];
            }
        }
    }
    out
}
