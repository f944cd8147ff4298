//! Binary GP classification by expectation propagation (Rasmussen & Williams Alg. 3.5/3.6;
//! evidence gradient eq. 5.27), probit link.
//!
//! Every likelihood term `p(y_i | f_i)` is replaced by an unnormalised Gaussian site with
//! natural parameters `τ̃_i, ν̃_i`, so `q(f) = N(μ, Σ)` with `Σ = (K⁻¹ + S̃)⁻¹`, `S̃ = diag(τ̃)`,
//! `μ = Σν̃`. A **sweep** visits the sites in order: the cavity `N(μ₋ᵢ, σ²₋ᵢ)` (natural
//! parameters `1/Σ_ii − τ̃_i`, `μ_i/Σ_ii − ν̃_i`) times the true term is the tilted
//! distribution, whose moments (closed form for the probit, [`EpSite::tilted`]) the site is
//! set to match, optionally damped (`τ̃ ← (1−δ)τ̃ + δτ̃_new`, likewise `ν̃`); `Σ` follows by a
//! rank-one update and `μ` by the matching `O(n)` update. After each sweep `Σ`, `μ` are
//! recomputed from scratch with `B = I + S̃^½KS̃^½ = L_B L_Bᵀ` (`Σ = K − VᵀV`,
//! `V = L_B⁻¹S̃^½K`), so rounding does not accumulate across sweeps. The sweeps stop when no
//! site parameter moved by more than `tol (1 + |value|)`. A site whose cavity precision is not
//! positive is left as it is for that sweep (it cannot happen for a log-concave likelihood
//! such as the probit, but guards against rounding).
//!
//! **Evidence** (R&W eq. 3.65, in the stable form of GPML's `infEP`, `m = 0`): with
//! `v = diag Σ` and the cavity parameters `τ₋ = 1/v − τ̃`, `ν₋ = μ/v − ν̃`,
//!
//! ```text
//! log Z_EP = Σ log Z_i − Σ log L_B,ii + ½ν̃ᵀΣν̃ − ½ Σ v_i ν̃_i²
//!          + ½ Σ ν₋ᵢ (τ̃_i ν₋ᵢ/τ₋ᵢ − 2ν̃_i) v_i + ½ Σ log(1 + τ̃_i/τ₋ᵢ),
//! ```
//!
//! `Z_i` the tilted normaliser at the cavity. At convergence the sites are stationary points of
//! `log Z_EP`, so its gradient in the kernel parameters needs no implicit term (eq. 5.27):
//! `∂/∂θ_j = ½ tr((bbᵀ − R) ∂K/∂θ_j)` with `b = ν̃ − S̃^½B⁻¹S̃^½Kν̃` and `R = S̃^½B⁻¹S̃^½`.
//!
//! The fitted posterior is linear-Gaussian (`adversarial-bounds.md` §2.2): support `X`,
//! `t = b`, `S = R = (K + S̃⁻¹)⁻¹`, held as the chain `P L_B⁻ᵀ` with `P = S̃^½`.

use std::borrow::Cow;

use faer::{Mat, MatRef};

use super::checks::check_binary;
use super::warm::{evaluations_in_sequence, Warm};
use crate::fit::restarts::{maximize, plain};
use crate::fit::{FitOptions, FitReport};
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::{inverse_mills, Bernoulli, Gaussian, Link};
use crate::linalg::{parallelism_for, Cholesky, Parallelism};
use crate::means::Mean;
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals, Term};
use crate::sequential::acquisition::normal::log_cdf;

/// The moments of a tilted distribution `p(y | f) N(f; μ, v) / Z`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tilted {
    /// `log Z`.
    pub log_z: f64,
    /// Its mean.
    pub mean: f64,
    /// Its variance.
    pub var: f64,
}

/// A likelihood term EP can match: the moments of its tilted distribution in closed form.
pub trait EpSite: Send + Sync {
    /// The tilted distribution's `log Z`, mean and variance for label `y` and cavity `N(mu, var)`.
    fn tilted(&self, y: f64, mu: f64, var: f64) -> Tilted;
}

/// The probit term `Φ(y f)`: `Z = Φ(z)`, `z = yμ/√(1+v)`, mean `μ + y v r/√(1+v)`, variance
/// `v − v² r (z + r)/(1 + v)` with `r = φ(z)/Φ(z)` (R&W eq. 3.58).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Probit;

impl EpSite for Probit {
    fn tilted(&self, y: f64, mu: f64, var: f64) -> Tilted {
        let s = (1.0 + var).sqrt();
        let z = y * mu / s;
        let r = inverse_mills(z);
        Tilted {
            log_z: log_cdf(z),
            mean: mu + y * var * r / s,
            var: var - var * var * r * (z + r) / (1.0 + var),
        }
    }
}

/// The Gaussian term `N(y; f, σ²)`, for which EP is exact (one sweep gives the exact GP).
impl EpSite for Gaussian {
    fn tilted(&self, y: f64, mu: f64, var: f64) -> Tilted {
        let total = var + self.noise();
        Tilted {
            log_z: -0.5 * (2.0 * std::f64::consts::PI * total).ln()
                - (y - mu).powi(2) / (2.0 * total),
            mean: mu + var * (y - mu) / total,
            var: var - var * var / total,
        }
    }
}

/// Settings of the EP iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpSettings {
    /// The damping factor `δ ∈ (0, 1]` of every site update (1: undamped).
    pub damping: f64,
    /// The sweeps stop once no site parameter moved by more than `tol (1 + |value|)`.
    pub tol: f64,
    /// Sweeps allowed before EP is reported as not converged.
    pub max_sweeps: usize,
}

impl Default for EpSettings {
    fn default() -> Self {
        EpSettings {
            damping: 1.0,
            tol: 1e-9,
            max_sweeps: 500,
        }
    }
}

impl EpSettings {
    fn check(&self) -> Result<(), ModelError> {
        if !(self.damping > 0.0 && self.damping <= 1.0) {
            return Err(ModelError::Invalid(format!(
                "EP damping = {} must lie in (0, 1]",
                self.damping
            )));
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return Err(ModelError::Invalid(format!(
                "EP tolerance = {} must be a positive number",
                self.tol
            )));
        }
        if self.max_sweeps == 0 {
            return Err(ModelError::Invalid("EP needs at least one sweep".into()));
        }
        Ok(())
    }
}

/// EP at one set of hyperparameters.
#[derive(Clone, Debug)]
pub struct EpResult {
    /// The approximate log marginal likelihood `log Z_EP`.
    pub value: f64,
    /// Its gradient in the kernel parameters at the converged sites (empty unless asked for).
    pub grad: Vec<f64>,
    /// Site precisions `τ̃`.
    pub tau: Vec<f64>,
    /// Site precision-times-means `ν̃`.
    pub nu: Vec<f64>,
    /// The posterior mean `μ` at the training inputs.
    pub mean: Vec<f64>,
    /// The posterior variances `diag Σ` at the training inputs.
    pub var: Vec<f64>,
    /// Sweeps taken.
    pub sweeps: usize,
}

/// What the posterior form needs from a converged EP run.
struct EpState {
    result: EpResult,
    lb: Cholesky,
    b: Vec<f64>,
}

/// `Σ`, `μ` and `L_B` from the sites.
fn posterior_from_sites(
    k: &Mat<f64>,
    tau: &[f64],
    nu: &[f64],
    par: Parallelism,
) -> Result<(Mat<f64>, Vec<f64>, Cholesky), ModelError> {
    let n = tau.len();
    let s: Vec<f64> = tau.iter().map(|t| t.max(0.0).sqrt()).collect();
    let build = || {
        Mat::from_fn(n, n, |i, j| {
            f64::from(u8::from(i == j)) + s[i] * k[(i, j)] * s[j]
        })
    };
    let lb = Cholesky::factor_owned(build(), "EP matrix B = I + S̃^½KS̃^½", par, build)?;
    let mut v = Mat::from_fn(n, n, |i, j| s[i] * k[(i, j)]);
    lb.solve_lower_in_place(v.as_mut());
    let mut sigma = v.transpose() * &v;
    for j in 0..n {
        for i in 0..n {
            sigma[(i, j)] = k[(i, j)] - sigma[(i, j)];
        }
    }
    let mu = (0..n)
        .map(|i| (0..n).map(|j| sigma[(i, j)] * nu[j]).sum())
        .collect();
    Ok((sigma, mu, lb))
}

/// Runs EP from the sites `warm` (or from `τ̃ = ν̃ = 0`) to convergence and evaluates
/// `log Z_EP` (with its gradient if `with_grad`).
fn run<C: Covariance, S: EpSite>(
    cov: &C,
    x: MatRef<'_, f64>,
    y: &[f64],
    site: &S,
    settings: &EpSettings,
    warm: Option<&[f64]>,
    with_grad: bool,
) -> Result<EpState, ModelError> {
    settings.check()?;
    let n = y.len();
    let par = parallelism_for(n);
    let k = cov.matrix(x);
    let (mut tau, mut nu) = match warm {
        Some(w) if w.len() == 2 * n => (w[..n].to_vec(), w[n..].to_vec()),
        Some(w) => {
            return Err(ModelError::Invalid(format!(
                "EP warm start has {} entries, expected {}",
                w.len(),
                2 * n
            )))
        }
        None => (vec![0.0; n], vec![0.0; n]),
    };
    let (mut sigma, mut mu, _) = posterior_from_sites(&k, &tau, &nu, par)?;
    let delta = settings.damping;
    let mut sweeps = 0;
    let lb = loop {
        if sweeps >= settings.max_sweeps {
            return Err(ModelError::Invalid(format!(
                "EP did not converge in {} sweeps (try damping < 1)",
                settings.max_sweeps
            )));
        }
        sweeps += 1;
        let mut moved = 0.0f64;
        let mut s = vec![0.0; n];
        for i in 0..n {
            let sii = sigma[(i, i)];
            let tau_cav = 1.0 / sii - tau[i];
            if !(tau_cav > 0.0 && tau_cav.is_finite()) {
                continue;
            }
            let nu_cav = mu[i] / sii - nu[i];
            let (m_cav, v_cav) = (nu_cav / tau_cav, 1.0 / tau_cav);
            let t = site.tilted(y[i], m_cav, v_cav);
            if !(t.var > 0.0 && t.mean.is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "EP: the tilted distribution of row {i} has variance {} (its cavity is \
                     N({m_cav}, {v_cav}))",
                    t.var
                )));
            }
            let tau_new = ((1.0 - delta) * tau[i] + delta * (1.0 / t.var - tau_cav)).max(0.0);
            let nu_new = (1.0 - delta) * nu[i] + delta * (t.mean / t.var - nu_cav);
            let (d_tau, d_nu) = (tau_new - tau[i], nu_new - nu[i]);
            moved = moved
                .max(d_tau.abs() / (1.0 + tau_new.abs()))
                .max(d_nu.abs() / (1.0 + nu_new.abs()));
            tau[i] = tau_new;
            nu[i] = nu_new;
            // Σ ← Σ − c s sᵀ, s = Σ e_i, c = Δτ/(1 + Δτ Σ_ii); μ = Σν follows in O(n):
            // μ ← μ + s (Δν − c (μ_i + Δν Σ_ii)).
            s.copy_from_slice(sigma.col_as_slice(i));
            let c = d_tau / (1.0 + d_tau * sii);
            let shift = d_nu - c * (mu[i] + d_nu * sii);
            for (m, sj) in mu.iter_mut().zip(&s) {
                *m += shift * sj;
            }
            if c != 0.0 {
                for j in 0..n {
                    let a = c * s[j];
                    for (v, si) in sigma.col_as_slice_mut(j).iter_mut().zip(&s) {
                        *v -= a * si;
                    }
                }
            }
        }
        if !moved.is_finite() {
            return Err(ModelError::Invalid(
                "EP site parameters became non-finite".into(),
            ));
        }
        let (s_new, mu_new, lb) = posterior_from_sites(&k, &tau, &nu, par)?;
        (sigma, mu) = (s_new, mu_new);
        if moved <= settings.tol {
            break lb;
        }
    };
    let var: Vec<f64> = (0..n).map(|i| sigma[(i, i)]).collect();
    let mut value = -(0..n).map(|i| lb.l()[(i, i)].ln()).sum::<f64>();
    let nu_sigma_nu: f64 = nu.iter().zip(&mu).map(|(a, b)| a * b).sum();
    value += 0.5 * nu_sigma_nu;
    for i in 0..n {
        let tau_cav = 1.0 / var[i] - tau[i];
        let nu_cav = mu[i] / var[i] - nu[i];
        let log_z = site.tilted(y[i], nu_cav / tau_cav, 1.0 / tau_cav).log_z;
        value += log_z - 0.5 * var[i] * nu[i] * nu[i]
            + 0.5 * nu_cav * (tau[i] * nu_cav / tau_cav - 2.0 * nu[i]) * var[i]
            + 0.5 * (tau[i] / tau_cav).ln_1p();
    }
    if !value.is_finite() {
        return Err(ModelError::Invalid(
            "the EP log marginal likelihood is not finite".into(),
        ));
    }
    // b = ν̃ − S̃^½ B⁻¹ S̃^½ K ν̃.
    let sq: Vec<f64> = tau.iter().map(|t| t.sqrt()).collect();
    let mut w = Mat::from_fn(n, 1, |i, _| {
        sq[i] * (0..n).map(|j| k[(i, j)] * nu[j]).sum::<f64>()
    });
    lb.solve_in_place(w.as_mut());
    let b: Vec<f64> = (0..n).map(|i| nu[i] - sq[i] * w[(i, 0)]).collect();
    let grad = if with_grad {
        // R = CᵀC with C = L_B⁻¹ S̃^½; the contraction reads the lower triangle of ½(bbᵀ − R).
        let mut c = Mat::from_fn(n, n, |i, j| if i == j { sq[i] } else { 0.0 });
        lb.solve_lower_in_place(c.as_mut());
        let r = c.transpose() * &c;
        let m = Mat::from_fn(n, n, |i, j| 0.5 * (b[i] * b[j] - r[(i, j)]));
        let mut g = vec![0.0; cov.n_params()];
        cov.grad_contract(x, m.as_ref(), &mut g);
        g
    } else {
        Vec::new()
    };
    Ok(EpState {
        result: EpResult {
            value,
            grad,
            tau,
            nu,
            mean: mu,
            var,
            sweeps,
        },
        lb,
        b,
    })
}

/// EP for a GP with covariance `cov` on inputs `x`, labels (or targets) `y` and likelihood
/// terms `site`: the converged sites, `log Z_EP` and, if `with_grad`, its gradient in the
/// covariance parameters. `warm_start` is `τ̃` followed by `ν̃` of an earlier run.
///
/// # Errors
/// [`ModelError::Invalid`] for bad settings, a warm start of the wrong length or EP that does
/// not converge; [`ModelError::Linalg`] if `B` cannot be factorised.
pub fn ep_evidence<C: Covariance, S: EpSite>(
    cov: &C,
    x: MatRef<'_, f64>,
    y: &[f64],
    site: &S,
    settings: &EpSettings,
    warm_start: Option<&[f64]>,
    with_grad: bool,
) -> Result<EpResult, ModelError> {
    if y.len() != x.nrows() {
        return Err(ModelError::Invalid(format!(
            "y has {} entries but x has {} rows",
            y.len(),
            x.nrows()
        )));
    }
    Ok(run(cov, x, y, site, settings, warm_start, with_grad)?.result)
}

/// A fitted binary EP GP classifier (probit link, labels `±1`, zero prior mean).
#[derive(Clone, Debug)]
pub struct BinaryEp {
    kernel: Kernel,
    settings: EpSettings,
    x: Mat<f64>,
    sqrt_tau: Mat<f64>,
    lb: Cholesky,
    b: Vec<f64>,
    result: EpResult,
    starts: Vec<FitReport>,
}

impl BinaryEp {
    /// Fit to inputs `x` (n×d) and labels `y ∈ {−1, +1}` from `kernel` (initialised from the
    /// data where it has data-driven defaults). With `opts.optimize`, maximises `log Z_EP`
    /// over the kernel's parameters by L-BFGS-B from the start and `opts.restarts` seeded
    /// restarts (`opts.extra_diag` and `opts.profile_scale` do not apply and are ignored).
    ///
    /// # Errors
    /// As [`ep_evidence`], for labels other than `±1` or non-finite inputs, or if every
    /// optimiser start fails.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        settings: &EpSettings,
        opts: &FitOptions,
    ) -> Result<Self, ModelError> {
        check_binary(x, y)?;
        settings.check()?;
        let mut kernel = kernel;
        kernel.initialize(x)?;
        if !opts.optimize {
            return Self::at(x, y, kernel, settings);
        }
        let par = parallelism_for(x.nrows());
        let warm = Warm::new(evaluations_in_sequence(par, opts.restarts));
        let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
            let mut k = kernel.clone();
            k.set_params(v).map_err(|e| e.to_string())?;
            let start = warm.get();
            let r = ep_evidence(&k, x, y, &Probit, settings, start.as_deref(), true)
                .map_err(|e| e.to_string())?;
            warm.set([r.tau.as_slice(), r.nu.as_slice()].concat());
            Ok((r.value, r.grad))
        };
        let (v, starts) = maximize(
            plain(objective),
            &kernel.params(),
            &kernel.bounds(),
            &kernel.param_names(),
            opts.restarts,
            opts.seed,
            &opts.lbfgs,
            par,
        )?;
        kernel.set_params(&v)?;
        let mut model = Self::at(x, y, kernel, settings)?;
        model.starts = starts;
        Ok(model)
    }

    /// The classifier at fixed hyperparameters (`kernel` used as given).
    ///
    /// # Errors
    /// As [`ep_evidence`], or for labels other than `±1` or non-finite inputs.
    pub fn at(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        settings: &EpSettings,
    ) -> Result<Self, ModelError> {
        check_binary(x, y)?;
        let st = run(&kernel, x, y, &Probit, settings, None, false)?;
        let n = y.len();
        let tau = &st.result.tau;
        Ok(BinaryEp {
            kernel,
            settings: *settings,
            x: x.to_owned(),
            sqrt_tau: Mat::from_fn(n, n, |i, j| if i == j { tau[i].sqrt() } else { 0.0 }),
            lb: st.lb,
            b: st.b,
            result: st.result,
            starts: Vec::new(),
        })
    }

    /// The approximate log marginal likelihood `log Z_EP` at the fitted hyperparameters.
    pub fn lml(&self) -> f64 {
        self.result.value
    }

    /// The (fitted) kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The EP settings.
    pub fn settings(&self) -> &EpSettings {
        &self.settings
    }

    /// The converged sites and the posterior at the training inputs.
    pub fn sites(&self) -> &EpResult {
        &self.result
    }

    /// The likelihood (probit).
    pub fn likelihood(&self) -> Bernoulli {
        Bernoulli::new(Link::Probit)
    }

    /// Training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// Reports of the optimiser starts (empty without optimisation).
    pub fn starts(&self) -> &[FitReport] {
        &self.starts
    }

    /// Latent marginals at the rows of `xs`.
    ///
    /// # Errors
    /// If `xs` has the wrong width or non-finite entries.
    pub fn predict_latent(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.linear_gaussian().marginals(xs)
    }

    /// `P(y = +1) = Φ(μ/√(1 + v))` at the rows of `xs`.
    ///
    /// # Errors
    /// As [`BinaryEp::predict_latent`].
    pub fn predict_proba(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        let m = self.predict_latent(xs)?;
        let lik = self.likelihood();
        Ok(m.mean
            .iter()
            .zip(&m.var)
            .map(|(&mu, &v)| lik.class_probability(mu, v))
            .collect())
    }
}

impl LinearGaussianForm for BinaryEp {
    type Covariance = Kernel;
    type Mean = Mean;

    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        LinearGaussian::of_model(
            &self.kernel,
            Cow::Owned(Mean::Zero),
            self.x.as_ref(),
            &self.b,
            vec![Term::Chain {
                sign: 1.0,
                project: Some(self.sqrt_tau.as_ref()),
                lower: vec![self.lb.l()],
            }],
        )
    }
}
