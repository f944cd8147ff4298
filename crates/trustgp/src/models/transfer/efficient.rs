//! EffTransHGP (Alg. 3): the source group (levels `k_0 … k_{P−1}` and the source noises) is
//! fitted once on the source data alone and frozen; `L_s = chol(K_ss + D_s)` and
//! `a_s = L_s⁻¹ y_s` are computed once; each target row appended costs one column of
//! `A = L_s⁻¹ K_st` (`O(N_s²)`) and an `O(N_s N)` extension of `c = Aᵀ a_s` and `G = AᵀA`
//! ([`SchurBasis`]); the target group (`k_P`, `σ²_t`) is fitted on the conditional likelihood
//!
//! ```text
//! log p(y_t | y_s) = log N(y_t | c, S_tt − G + K_P + σ²_t I),    S_tt = Σ_{i<P} k_i(X_t, X_t),
//! ∂/∂θ = ½ Σ W ∘ ∂K_P/∂θ,  ∂/∂ln σ²_t = ½ σ²_t tr W,             W = α αᵀ − M⁻¹, α = M⁻¹ (y_t − c),
//! ```
//!
//! at `O(N³)` per evaluation, independent of `N_s` (`log p(y_s)` is constant, §2.9). Predictions
//! use the factor `[[L_s, 0], [Aᵀ, L_t]]` of `Ω` through the conjugate core
//! ([`ConjugatePosterior::from_factor`]), whose forward substitution is the block formula
//! `w_s = L_s⁻¹ k_s*`, `w_t = L_t⁻¹ (k_t* − Aᵀ w_s)`.

use std::sync::Arc;
use std::time::Instant;

use faer::{Mat, MatRef};

use super::stack::{check_target, not_updated, stack_sources, tagged, StackedSources};
use super::{check_kernel, TransferFitOptions};
use crate::kernels::{HierarchicalKernel, Kernel};
use crate::linalg::{parallelism_for, BlockCholesky, Cholesky, Parallelism, SchurBasis};
use crate::means::Mean;
use crate::models::checks::check_test_inputs;
use crate::models::conjugate::ConjugatePosterior;
use crate::models::exact::evidence::lower_outer_minus;
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::{FunctionModel, SourceTask};

/// What is computed once from the frozen source group.
#[derive(Clone, Debug)]
struct SourceCache {
    /// `L_s` (`None` without sources).
    chol: Option<Arc<Cholesky>>,
    /// `a_s = L_s⁻¹ y_s`.
    a_s: Vec<f64>,
}

/// The target rows and what the frozen source group gives on them.
#[derive(Clone, Debug)]
struct TargetState {
    /// Target inputs (`N × d`).
    x: Mat<f64>,
    /// Target values.
    y: Vec<f64>,
    /// `L_s`, `A = L_s⁻¹ K_st` and `G = AᵀA`.
    basis: SchurBasis,
    /// `L_t` at the current target group (`None` while the state is being built).
    l_t: Option<Cholesky>,
    /// `c = Aᵀ a_s`, the source posterior mean of the shared part at the target inputs.
    c: Vec<f64>,
    /// `S_tt = Σ_{i<P} k_i(X_t, X_t)`, the source levels' covariance of the target rows.
    s_tt: Mat<f64>,
}

/// EffTransHGP (Alg. 3): the hierarchical GP with a frozen, cached source part. The source
/// group is fitted on the source data alone and `L_s` computed once; target rows are appended
/// to `A = L_s⁻¹ K_st` as they arrive; the target group is fitted on `log p(y_t | y_s)` at a
/// cost independent of `N_s` (formulas in the source of this module).
#[derive(Clone, Debug)]
pub struct EfficientHgp {
    options: TransferFitOptions,
    sources: StackedSources,
    /// `P + 1` levels, the target's last (initial values until fitted).
    kernel: Option<HierarchicalKernel>,
    noise: Vec<f64>,
    /// The source group was set by [`EfficientHgp::set_hyperparameters`]: do not fit it.
    source_given: bool,
    source: Option<SourceCache>,
    target: Option<TargetState>,
    /// Whether the target group came from a fit (the warm start of the next one).
    target_fitted: bool,
    posterior: Option<ConjugatePosterior<HierarchicalKernel, Mean>>,
    source_factorisations: usize,
    fit_seconds: f64,
}

impl EfficientHgp {
    /// The model of one function with these source tasks (in this order). The source group is
    /// fitted at the first [`FunctionModel::update`] (seeded by its seed), unless set by
    /// [`EfficientHgp::set_hyperparameters`] before.
    ///
    /// # Errors
    /// Bad source data or options.
    pub fn new(sources: Vec<SourceTask>, options: TransferFitOptions) -> Result<Self, ModelError> {
        options.validate()?;
        let sources = stack_sources(&sources)?;
        let kernel = match sources.d {
            Some(d) => Some(options.initial_kernel(d, sources.p + 1)?),
            None => None,
        };
        Ok(EfficientHgp {
            noise: vec![options.initial_noise(); sources.p + 1],
            options,
            sources,
            kernel,
            source_given: false,
            source: None,
            target: None,
            target_fitted: false,
            posterior: None,
            source_factorisations: 0,
            fit_seconds: 0.0,
        })
    }

    /// Sets all hyperparameters (`P + 1` levels, one noise variance per task, the target's
    /// last). The source group is then frozen at these values (not fitted); if it differs from
    /// the current one, the source factor is recomputed at the next update.
    ///
    /// # Errors
    /// Wrong number of levels or noises, a non-positive noise, or kernels that do not fit the
    /// inputs.
    pub fn set_hyperparameters(
        &mut self,
        kernel: HierarchicalKernel,
        noise: Vec<f64>,
    ) -> Result<(), ModelError> {
        let p = self.sources.p;
        let d = (self.sources.d).or(self.target.as_ref().map(|t| t.x.ncols()));
        check_kernel(&kernel, &noise, p + 1, d)?;
        let same_source = self.kernel.as_ref().is_some_and(|k| {
            k.levels()[..p] == kernel.levels()[..p] && self.noise[..p] == noise[..p]
        });
        if !same_source {
            self.source = None;
            self.target = None;
            self.posterior = None;
        }
        self.kernel = Some(kernel);
        self.noise = noise;
        self.source_given = true;
        self.target_fitted = true;
        if let Some(t) = self.target.take() {
            // Same source group: only the trailing factor and the posterior change.
            let (x, y) = (t.x.clone(), t.y.clone());
            self.target = Some(t);
            self.condition(x.as_ref(), &y)?;
        }
        Ok(())
    }

    /// The hierarchical kernel (`None` before the first update without sources).
    pub fn kernel(&self) -> Option<&HierarchicalKernel> {
        self.kernel.as_ref()
    }

    /// The noise variance of every task (sources in order, then the target).
    pub fn noise(&self) -> &[f64] {
        &self.noise
    }

    /// How many times the source factor `L_s` has been computed (once per frozen source group).
    pub fn source_factorisations(&self) -> usize {
        self.source_factorisations
    }

    /// The cached source factor `L_s` (`None` before the first update, or without sources).
    pub fn source_factor(&self) -> Option<&Arc<Cholesky>> {
        self.source.as_ref().and_then(|s| s.chol.as_ref())
    }

    /// The two-step factor of `Ω` at the current hyperparameters (`None` before an update).
    pub fn block_factor(&self) -> Option<BlockCholesky> {
        self.target.as_ref().and_then(|t| t.block().ok())
    }

    /// The conditional log likelihood `log p(y_t | y_s)` of the current target data and its
    /// gradient, at the target group `v = [log-parameters of k_P, ln σ²_t]` (the fitting
    /// objective).
    ///
    /// # Errors
    /// Called before an update, a wrong-length or non-finite `v`, or a failed factorisation.
    pub fn conditional_log_likelihood(&self, v: &[f64]) -> Result<(f64, Vec<f64>), ModelError> {
        let (state, kernel) = self
            .target
            .as_ref()
            .zip(self.kernel.as_ref())
            .ok_or_else(not_updated)?;
        let level = &kernel.levels()[self.sources.p];
        let par = parallelism_for(state.x.nrows());
        target_objective(level, state, v, par, true).map(|(value, grad, _)| (value, grad))
    }

    /// The log marginal likelihood of (sources, target) at the current hyperparameters, from
    /// the blocks: `−½ (‖a_s‖² + ‖a_t‖²) − ½ log|Ω| − ((N_s + N)/2) log 2π`.
    pub fn lml(&self) -> Option<f64> {
        let (state, source) = self.target.as_ref().zip(self.source.as_ref())?;
        let r: Vec<f64> = state.y.iter().zip(&state.c).map(|(y, c)| y - c).collect();
        let block = state.block().ok()?;
        let a_t = match block.target() {
            Some(l_t) => {
                let mut m = Mat::from_fn(r.len(), 1, |i, _| r[i]);
                l_t.solve_lower_in_place(m.as_mut());
                (0..r.len()).map(|i| m[(i, 0)] * m[(i, 0)]).sum::<f64>()
            }
            None => 0.0,
        };
        let a_s: f64 = source.a_s.iter().map(|v| v * v).sum();
        let n = (self.sources.y.len() + state.y.len()) as f64;
        let log_2pi = (2.0 * std::f64::consts::PI).ln();
        Some(-0.5 * (a_s + a_t) - 0.5 * block.log_det() - 0.5 * n * log_2pi)
    }

    /// Fit the source group on the source data alone (a GP over the `P` source tasks), unless
    /// it was given, and cache `L_s` and `a_s`.
    fn prepare_source(&mut self, d: usize, seed: u64) -> Result<(), ModelError> {
        let p = self.sources.p;
        let mut kernel = match self.kernel.take() {
            Some(k) => k,
            None => self.options.initial_kernel(d, p + 1)?,
        };
        if p > 0 && !self.source_given {
            let clock = Instant::now();
            // The source group alone: `P` source levels (no target level) at their initial
            // values, one noise per source task.
            let initial = HierarchicalKernel::matern52(
                d,
                self.options.initial_lengthscale,
                &vec![self.options.initial_source_variance; p],
            )?;
            let noise0 = vec![self.options.initial_noise(); p];
            let par = parallelism_for(self.sources.y.len());
            let fitted = self.options.fit_joint(
                &initial,
                &noise0,
                None,
                self.sources.x.as_ref(),
                &self.sources.y,
                &self.sources.group,
                seed,
                par,
            );
            self.fit_seconds += clock.elapsed().as_secs_f64();
            let (source_kernel, source_noise) = match fitted {
                Ok(f) => f,
                Err(e) => {
                    self.kernel = Some(kernel);
                    return Err(e);
                }
            };
            let mut levels: Vec<Kernel> = source_kernel.levels().to_vec();
            levels.push(kernel.levels()[p].clone());
            kernel = HierarchicalKernel::new(levels)?;
            self.noise[..p].copy_from_slice(&source_noise);
        }
        let cache = self.source_cache(&kernel);
        self.kernel = Some(kernel);
        self.source = Some(cache?);
        Ok(())
    }

    /// `L_s = chol(K_ss + D_s)` and `a_s = L_s⁻¹ y_s` of the (frozen) source group.
    fn source_cache(&mut self, kernel: &HierarchicalKernel) -> Result<SourceCache, ModelError> {
        let (p, n_s) = (self.sources.p, self.sources.y.len());
        if p == 0 {
            return Ok(SourceCache {
                chol: None,
                a_s: Vec::new(),
            });
        }
        let xs = self.sources.x.as_ref();
        let noise = &self.noise;
        let group = &self.sources.group;
        let build = || {
            let mut k = kernel.cross_levels(xs, xs, 0..p);
            for (i, &g) in group.iter().enumerate() {
                k[(i, i)] += noise[g];
            }
            k
        };
        let par = parallelism_for(n_s);
        let chol = Cholesky::factor_owned(build(), "source covariance K_ss + D_s", par, build)?;
        self.source_factorisations += 1;
        let mut a = Mat::from_fn(n_s, 1, |i, _| self.sources.y[i]);
        chol.solve_lower_in_place(a.as_mut());
        Ok(SourceCache {
            chol: Some(Arc::new(chol)),
            a_s: (0..n_s).map(|i| a[(i, 0)]).collect(),
        })
    }

    /// The target state for inputs `x`: appended to the current one when `x` extends its
    /// inputs (the first rows bitwise equal), otherwise built from scratch. `L_t` is left at
    /// a placeholder factorisation that [`EfficientHgp::condition`] replaces.
    fn target_state(&mut self, x: MatRef<'_, f64>, y: &[f64]) -> Result<TargetState, ModelError> {
        let p = self.sources.p;
        let kernel = self
            .kernel
            .as_ref()
            .expect("the kernel is set before the target");
        let source = self
            .source
            .as_ref()
            .expect("the source cache is built first");
        let xs = self.sources.x.as_ref();
        let previous = self.target.take().filter(|t| extends(t.x.as_ref(), x));
        let (n_old, mut basis, mut c, s_old) = match previous {
            Some(t) => (t.x.nrows(), t.basis, t.c, Some(t.s_tt)),
            None => {
                let empty = Mat::<f64>::zeros(xs.nrows(), 0);
                let basis = SchurBasis::new(source.chol.clone(), empty.as_ref())?;
                (0, basis, Vec::new(), None)
            }
        };
        let n = x.nrows();
        let x_new = tagged(x.subrows(n_old, n - n_old), p);
        let x_all = tagged(x, p);
        // New columns of A (O(N_s²) each) and their projections on a_s.
        let a_new = basis.append(kernel.cross_levels(xs, x_new.as_ref(), 0..p).as_ref())?;
        c.extend((0..a_new.ncols()).map(|j| {
            (0..a_new.nrows())
                .map(|i| a_new[(i, j)] * source.a_s[i])
                .sum::<f64>()
        }));
        // S_tt extended by the new rows' block column (the old block is kept as is).
        let mut s_tt = Mat::<f64>::zeros(n, n);
        if let Some(s) = &s_old {
            s_tt.as_mut().submatrix_mut(0, 0, n_old, n_old).copy_from(s);
        }
        let cross = kernel.cross_levels(x_all.as_ref(), x_new.as_ref(), 0..p);
        for j in 0..n - n_old {
            for i in 0..n {
                s_tt[(i, n_old + j)] = cross[(i, j)];
                s_tt[(n_old + j, i)] = cross[(i, j)];
            }
        }
        Ok(TargetState {
            x: x.to_owned(),
            y: y.to_vec(),
            basis,
            l_t: None,
            c,
            s_tt,
        })
    }

    /// Condition on the target data `(x, y)` at the current hyperparameters: extend (or
    /// rebuild) the target state, factor `L_t`, build the posterior.
    fn condition(&mut self, x: MatRef<'_, f64>, y: &[f64]) -> Result<(), ModelError> {
        let mut state = self.target_state(x, y)?;
        self.factor_target(&mut state)?;
        self.target = Some(state);
        Ok(())
    }

    /// `L_t` at the current target group, and the posterior through the two-step factor.
    fn factor_target(&mut self, state: &mut TargetState) -> Result<(), ModelError> {
        let p = self.sources.p;
        let kernel = self
            .kernel
            .as_ref()
            .expect("the kernel is set before the target");
        let level = &kernel.levels()[p];
        let v: Vec<f64> = (level.log_params().into_iter())
            .chain([self.noise[p].ln()])
            .collect();
        let par = parallelism_for(state.x.nrows());
        let (_, _, l_t) = target_objective(level, state, &v, par, false)?;
        state.l_t = Some(l_t);
        let block = state.block()?;
        let (x_all, y_all, _) = self.sources.with_target(state.x.as_ref(), &state.y);
        self.posterior = Some(ConjugatePosterior::from_factor(
            kernel.clone(),
            Mean::Zero,
            x_all,
            block.to_cholesky(),
            &y_all,
        )?);
        Ok(())
    }

    /// Fit the target group (`k_P`, `σ²_t`) on the conditional likelihood, from the initial
    /// values, the previous optimum and the seeded restarts.
    fn fit_target(&mut self, state: &TargetState, seed: u64) -> Result<(), ModelError> {
        let p = self.sources.p;
        let kernel = self
            .kernel
            .as_ref()
            .expect("the kernel is set before the target");
        let current = &kernel.levels()[p];
        let d = state.x.ncols();
        let initial = HierarchicalKernel::matern52(
            d,
            self.options.initial_lengthscale,
            &[self.options.initial_target_variance],
        )?;
        let pack = |k: &Kernel, noise: f64| -> Vec<f64> {
            k.log_params().into_iter().chain([noise.ln()]).collect()
        };
        let x0 = pack(&initial.levels()[0], self.options.initial_noise());
        let warm = self.target_fitted.then(|| pack(current, self.noise[p]));
        let mut bounds = current.log_bounds();
        bounds.push((NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()));
        let mut names: Vec<String> = (current.param_names().into_iter())
            .map(|n| format!("level{p}.{n}"))
            .collect();
        names.push(format!("noise[{p}]"));
        let par = parallelism_for(state.x.nrows());
        let objective = |v: &[f64]| {
            target_objective(current, state, v, par, true).map(|(value, grad, _)| (value, grad))
        };
        let best =
            self.options
                .maximize(objective, &x0, warm.as_deref(), &bounds, &names, seed, par)?;
        let nk = current.n_params();
        let mut levels = kernel.levels().to_vec();
        levels[p].set_log_params(&best[..nk])?;
        self.kernel = Some(HierarchicalKernel::new(levels)?);
        self.noise[p] = best[nk].exp();
        self.target_fitted = true;
        Ok(())
    }
}

impl TargetState {
    /// The two-step factor of `Ω` (after `L_t` was computed).
    fn block(&self) -> Result<BlockCholesky, ModelError> {
        Ok(BlockCholesky::from_parts(
            self.basis.clone(),
            self.l_t.clone(),
        )?)
    }
}

/// The conditional log likelihood `log N(y_t | c, S_tt − G + K_P + σ²_t I)` at the target group
/// `v = [log-parameters of k_P (starting from `level`), ln σ²_t]`, its gradient (if `with_grad`)
/// and the factor `L_t` of the covariance.
fn target_objective(
    level: &Kernel,
    state: &TargetState,
    v: &[f64],
    par: Parallelism,
    with_grad: bool,
) -> Result<(f64, Vec<f64>, Cholesky), ModelError> {
    let nk = level.n_params();
    if v.len() != nk + 1 {
        return Err(ModelError::Invalid(format!(
            "the target group has {} parameters (k_P's, then ln σ²_t), got {}",
            nk + 1,
            v.len()
        )));
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "target-group parameter {i} is {} (expected a finite number)",
            v[i]
        )));
    }
    let mut k = level.clone();
    k.set_log_params(&v[..nk])?;
    let noise = v[nk].exp();
    let n = state.x.nrows();
    let mut k_tt = k.matrix(state.x.as_ref());
    k_tt += &state.s_tt;
    for i in 0..n {
        k_tt[(i, i)] += noise;
    }
    let l_t = state.basis.factor_target(
        k_tt.as_ref(),
        "target covariance given the sources (S_tt − G + K_P + σ²I)",
        par,
    )?;
    let r: Vec<f64> = state.y.iter().zip(&state.c).map(|(y, c)| y - c).collect();
    let alpha = l_t.solve_vec(&r);
    let fit: f64 = r.iter().zip(&alpha).map(|(a, b)| a * b).sum();
    let log_2pi = (2.0 * std::f64::consts::PI).ln();
    let value = -0.5 * fit - 0.5 * l_t.log_det() - 0.5 * n as f64 * log_2pi;
    let mut grad = Vec::new();
    if with_grad {
        // W = α αᵀ − M⁻¹ on the lower triangle, which is all the kernel reads.
        let mut w = l_t.inverse_lower();
        lower_outer_minus(w.as_mut(), &alpha, 1.0, par);
        grad = vec![0.0; nk];
        k.grad_contract(state.x.as_ref(), w.as_ref(), &mut grad);
        grad.iter_mut().for_each(|g| *g *= 0.5);
        grad.push(0.5 * noise * (0..n).map(|i| w[(i, i)]).sum::<f64>());
    }
    Ok((value, grad, l_t))
}

impl FunctionModel for EfficientHgp {
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        let d = (self.sources.d)
            .or(self.target.as_ref().map(|t| t.x.ncols()))
            .unwrap_or(x.ncols());
        check_target(x, y, d)?;
        self.sources.settle_width(d);
        self.fit_seconds = 0.0;
        if self.source.is_none() {
            self.prepare_source(d, seed)?;
        }
        let mut state = self.target_state(x, y)?;
        if refit {
            let clock = Instant::now();
            let fitted = self.fit_target(&state, seed);
            self.fit_seconds += clock.elapsed().as_secs_f64();
            if let Err(e) = fitted {
                self.target = Some(state);
                return Err(e);
            }
        }
        let factored = self.factor_target(&mut state);
        self.target = Some(state);
        factored
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let (post, state) = self
            .posterior
            .as_ref()
            .zip(self.target.as_ref())
            .ok_or_else(not_updated)?;
        check_test_inputs(x, state.x.ncols())?;
        Ok(post.marginals(tagged(x, self.sources.p).as_ref()))
    }

    fn noise_variance(&self) -> f64 {
        self.noise[self.sources.p]
    }

    fn fit_seconds(&self) -> f64 {
        self.fit_seconds
    }

    fn log_evidence(&self) -> Option<f64> {
        self.lml()
    }
}

/// Whether `x` extends `old` by appended rows (the first rows bitwise equal).
fn extends(old: MatRef<'_, f64>, x: MatRef<'_, f64>) -> bool {
    old.ncols() == x.ncols()
        && old.nrows() <= x.nrows()
        && (0..old.ncols())
            .all(|j| (0..old.nrows()).all(|i| old[(i, j)].to_bits() == x[(i, j)].to_bits()))
}
