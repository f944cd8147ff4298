//! The RCaGP/CaGP ELBO (Algorithm E, spec §3.1) and its analytic gradient (adjoints of §2.6).
//!
//! The kernel matrix is streamed over [`Chunk`]s of training rows: `B = KS` is accumulated from
//! `k(X, X_R) S_{R,C}`, and on the way back `K̄ = B̄Sᵀ + S M̄ Sᵀ − ½ diag P` is contracted with
//! `∂K/∂log θ` one chunk of columns at a time, where it is the low-rank `(B̄ + S M̄)_{:,C}
//! S_{R,C}ᵀ`. `S̄` is needed only where `S` can be non-zero (the block pattern, or everywhere
//! for inducing-point actions, whose `S̄` then flows into the kernel through `S = k(X, Z)`).
//! Memory is `O(n·i + n·chunk)`, never `O(n²)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef};

use super::action_set::{ActionSet, Chunk, ProjectedNoise};
use super::actions::dot;
use super::joint::Seed;
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
    /// The actions.
    pub actions: ActionSet,
    /// Observation weighting (fixed during training).
    pub weighting: Weighting,
    /// Given centres of the IMQ weights, one per training point (fixed); `None` = `mean`.
    pub centre: Option<Vec<f64>>,
}

/// The forward pass: the ELBO and what prediction and the gradient reuse.
#[derive(Clone, Debug)]
pub(crate) struct Forward {
    /// The pseudo-likelihood quantities.
    pub lik: PseudoLikelihood,
    /// The action matrix `S` (n×i).
    pub s: Mat<f64>,
    /// `B = KS` (n×i).
    b: Mat<f64>,
    /// `M = SᵀKS` (i×i).
    m: Mat<f64>,
    /// `T = SᵀDS`.
    t: ProjectedNoise,
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
    /// With respect to the trainable action entries, flattened like [`ActionSet::flat`].
    pub actions: Vec<f64>,
}

/// `dst += lhs · rhs`.
pub(crate) fn add_product(dst: faer::MatMut<'_, f64>, lhs: MatRef<'_, f64>, rhs: MatRef<'_, f64>) {
    matmul(dst, Accum::Add, lhs, rhs, 1.0, faer::Par::Seq);
}

/// `S_{R,C}`, the part of `S` on a chunk.
pub(crate) fn on_chunk<'a>(s: &'a Mat<f64>, ch: &Chunk) -> MatRef<'a, f64> {
    s.as_ref()
        .submatrix(ch.rows.start, ch.cols.start, ch.rows.len(), ch.cols.len())
}

/// `k(X, X_R)`: the kernel columns of a chunk's rows.
fn chunk_columns(kernel: &Kernel, x: MatRef<'_, f64>, ch: &Chunk) -> Mat<f64> {
    kernel.cross(x, x.subrows(ch.rows.start, ch.rows.len()))
}

/// Algorithm E: the ELBO at `state` for inputs `x` and targets `y`.
pub(crate) fn forward(x: MatRef<'_, f64>, y: &[f64], state: &State) -> Result<Forward, ModelError> {
    let n = x.nrows();
    let acts = &state.actions;
    let i = acts.count();
    let lik = PseudoLikelihood::new(
        y,
        state.mean,
        state.noise,
        state.weighting,
        state.centre.as_deref(),
    );
    let s = acts.matrix(&state.kernel, x);
    let mut b = Mat::<f64>::zeros(n, i);
    for ch in acts.chunks(n) {
        let kr = chunk_columns(&state.kernel, x, &ch);
        add_product(
            b.as_mut().subcols_mut(ch.cols.start, ch.cols.len()),
            kr.as_ref(),
            on_chunk(&s, &ch),
        );
    }
    // M = SᵀB, symmetrised so that round-off cannot make G look indefinite to the factoriser.
    let m = s.transpose() * &b;
    let m = Mat::<f64>::from_fn(i, i, |r, c| 0.5 * (m[(r, c)] + m[(c, r)]));
    let t = acts.projected_noise(s.as_ref(), &lik.d, &lik.log_d)?;
    let g = t.add_to(m.clone());
    let chol = Cholesky::factor(&g, "CaGP projected matrix SᵀK̃S", Parallelism::Sequential)?;
    let a = chol.solve_vec(&mat_vec(s.transpose(), &lik.r));
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
    let kl = 0.5 * (dot(&a, &ma) + chol.log_det() - t.log_det() - tr_ginv_m);
    let elbo = lik.expected(&mu, &kappa) - kl;
    Ok(Forward {
        lik,
        s,
        b,
        m,
        t,
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
pub(crate) fn mat_vec(a: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..a.nrows())
        .map(|r| (0..a.ncols()).map(|c| a[(r, c)] * v[c]).sum())
        .collect()
}

/// The gradient of [`forward`]'s ELBO by the adjoints of spec §2.6.
pub(crate) fn gradient(x: MatRef<'_, f64>, state: &State, fw: &Forward) -> Gradient {
    gradient_seeded(x, state, fw, None)
}

/// [`gradient`] of the ELBO plus a function of the predictive at query points, whose adjoints
/// of `a`, `G`, `S`, the kernel's log-hyperparameters and `m0` are `seed` (see
/// [`super::joint`]); they enter the same backward pass as the ELBO's own.
pub(crate) fn gradient_seeded(
    x: MatRef<'_, f64>,
    state: &State,
    fw: &Forward,
    seed: Option<&Seed>,
) -> Gradient {
    let n = x.nrows();
    let acts = &state.actions;
    let i = acts.count();
    let (lik, s, b, m, a) = (&fw.lik, &fw.s, &fw.b, &fw.m, &fw.a);
    let ginv = fw.chol.inverse();
    // μ̄ = ν − Pμ̂,  ā = Bᵀμ̄ − Ma,  z̄ = G⁻¹ā.
    let mu_bar: Vec<f64> = (0..n).map(|j| lik.nu[j] - lik.p[j] * fw.mu[j]).collect();
    let ma = mat_vec(m.as_ref(), a);
    let mut a_bar: Vec<f64> = (0..i).map(|c| dot(&col(b, c), &mu_bar) - ma[c]).collect();
    if let Some(sd) = seed {
        for (ab, extra) in a_bar.iter_mut().zip(&sd.a_bar) {
            *ab += extra;
        }
    }
    let z_bar = mat_vec(ginv.as_ref(), &a_bar);
    // B̄ = μ̄aᵀ + PBG⁻¹.
    let pb = Mat::<f64>::from_fn(n, i, |j, c| lik.p[j] * b[(j, c)]);
    let pbg = &pb * &ginv;
    let b_bar = Mat::<f64>::from_fn(n, i, |j, c| mu_bar[j] * a[c] + pbg[(j, c)]);
    // Ḡ = −G⁻¹āaᵀ − ½G⁻¹BᵀPBG⁻¹ − ½G⁻¹ − ½G⁻¹MG⁻¹ (as a general matrix).
    let gbpbg = b.transpose() * &pbg;
    let gbpbg = &ginv * &gbpbg;
    let gmg = &ginv * m * &ginv;
    let mut g_bar = Mat::<f64>::from_fn(i, i, |r, c| {
        -z_bar[r] * a[c] - 0.5 * (gbpbg[(r, c)] + ginv[(r, c)] + gmg[(r, c)])
    });
    if let Some(sd) = seed {
        g_bar += &sd.g_bar;
    }
    // M̄_tot = −½aaᵀ + ½G⁻¹ + Ḡ,  T̄_tot = ½T⁻¹ + Ḡ (on the entries T has).
    let m_bar = Mat::<f64>::from_fn(i, i, |r, c| {
        -0.5 * a[r] * a[c] + 0.5 * ginv[(r, c)] + g_bar[(r, c)]
    });
    let t_bar = fw.t.adjoint(g_bar.as_ref());
    let m_sym = &m_bar + m_bar.transpose();
    let t_sym = &t_bar + t_bar.transpose();
    // K̄'s low-rank factor V = B̄ + S M̄_tot, so that K̄ = V Sᵀ − ½ diag P.
    let v = &b_bar + s * &m_bar;
    // S̄ = K B̄ + KS(M̄ + M̄ᵀ) + DS(T̄ + T̄ᵀ) + r z̄ᵀ; K B̄ is added chunk by chunk below.
    let ds = Mat::<f64>::from_fn(n, i, |j, c| lik.d[j] * s[(j, c)]);
    let mut s_bar = b * &m_sym + &ds * &t_sym;
    if let Some(sd) = seed {
        s_bar += &sd.s_bar;
    }
    for c in 0..i {
        for j in 0..n {
            s_bar[(j, c)] += lik.r[j] * z_bar[c];
        }
    }
    let mut grad_k = match seed {
        Some(sd) => sd.kernel.clone(),
        None => vec![0.0; state.kernel.n_params()],
    };
    for ch in acts.chunks(n) {
        let w = v.as_ref().subcols(ch.cols.start, ch.cols.len()) * on_chunk(s, &ch).transpose();
        // k(X, X_R) comes out of the contraction's own pass over the pairs.
        let kr = state.kernel.cross_and_grad_contract(
            x,
            x.subrows(ch.rows.start, ch.rows.len()),
            w.as_ref(),
            &mut grad_k,
        );
        add_product(
            s_bar.as_mut().submatrix_mut(
                ch.rows.start,
                ch.cols.start,
                ch.rows.len(),
                ch.cols.len(),
            ),
            kr.transpose(),
            b_bar.as_ref().subcols(ch.cols.start, ch.cols.len()),
        );
    }
    // D̄ = diag(S T̄_tot Sᵀ),  r̄ = S z̄.
    let st = s * &t_bar;
    let d_bar: Vec<f64> = (0..n)
        .map(|j| (0..i).map(|c| st[(j, c)] * s[(j, c)]).sum())
        .collect();
    let r_bar = mat_vec(s.as_ref(), &z_bar);
    let half_p: Vec<f64> = lik.p.iter().map(|p| -0.5 * p).collect();
    state.kernel.grad_contract_diag(x, &half_p, &mut grad_k);
    let actions = acts.backward(s_bar.as_ref(), &state.kernel, x, &mut grad_k);
    let (log_noise, d_m0) = lik.backward(&fw.mu, &fw.kappa, &d_bar, &r_bar);
    Gradient {
        kernel: grad_k,
        log_noise,
        mean: d_m0 + mu_bar.iter().sum::<f64>() + seed.map_or(0.0, |sd| sd.mean),
        actions,
    }
}
