//! Fitting: input checks, the fixed soft threshold, the flat parameter vector and the call to
//! the shared training loop.

use faer::{Mat, MatRef};

use super::collapsed::Wanted;
use super::likelihood::WeightSettings;
use super::{Problem, SparseConfig, SparseGp, SparseKind, KUU_JITTER};
use crate::fit::maximize;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::checks::check_training_data;
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;
use crate::robust::{soft_threshold, C_FLOOR};

/// The noise floor of RCSVGP (spec §2.0); SGPR uses the library's [`NOISE_BOUNDS`].
const RCSVGP_NOISE_FLOOR: f64 = 1e-4;

/// Where each parameter sits in the flat vector: kernel log-parameters, `log σ²`, the mean's
/// parameters, then (if learned) the inducing inputs column by column.
pub(super) struct Layout {
    pub n_kernel: usize,
    pub n_mean: usize,
    pub z_shape: (usize, usize),
    pub learn_z: bool,
}

impl Layout {
    pub(super) fn n_hyper(&self) -> usize {
        self.n_kernel + 1 + self.n_mean
    }

    pub(super) fn pack(
        &self,
        kernel: &Kernel,
        noise: f64,
        mean: &Mean,
        z: MatRef<'_, f64>,
    ) -> Vec<f64> {
        let mut v = kernel.log_params();
        v.push(noise.ln());
        v.extend(mean.params());
        if self.learn_z {
            for c in 0..z.ncols() {
                v.extend((0..z.nrows()).map(|a| z[(a, c)]));
            }
        }
        v
    }

    /// Bounds of the flat vector; a fixed noise or mean is a box of zero width at its value.
    pub(super) fn bounds(
        &self,
        kernel: &Kernel,
        kind: SparseKind,
        fixed_noise: Option<f64>,
        fixed_mean: Option<&Mean>,
    ) -> Vec<(f64, f64)> {
        let floor = match kind {
            SparseKind::Sgpr => NOISE_BOUNDS.0,
            SparseKind::Rcsvgp => RCSVGP_NOISE_FLOOR,
        };
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let mut b = kernel.log_bounds();
        b.push(match fixed_noise {
            Some(v) => (v.ln(), v.ln()),
            None => (floor.ln(), NOISE_BOUNDS.1.ln()),
        });
        match fixed_mean {
            Some(m) => b.extend(m.params().into_iter().map(|v| (v, v))),
            None => b.extend(std::iter::repeat_n(free, self.n_mean)),
        }
        if self.learn_z {
            b.extend(std::iter::repeat_n(free, self.z_shape.0 * self.z_shape.1));
        }
        b
    }

    /// Kernel, noise, mean and inducing inputs from `v` (the inducing inputs are `z0` when
    /// they are not learned).
    pub(super) fn unpack(
        &self,
        v: &[f64],
        kernel: &Kernel,
        mean: &Mean,
        z0: &Mat<f64>,
    ) -> Result<(Kernel, f64, Mean, Mat<f64>), ModelError> {
        let mut k = kernel.clone();
        k.set_log_params(&v[..self.n_kernel])?;
        let noise = v[self.n_kernel].exp();
        let mut mu = mean.clone();
        mu.set_params(&v[self.n_kernel + 1..self.n_hyper()])?;
        let z = if self.learn_z {
            let (m, d) = self.z_shape;
            let zs = &v[self.n_hyper()..];
            if let Some(i) = zs.iter().position(|x| !x.is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "inducing input entry {i} is not finite ({})",
                    zs[i]
                )));
            }
            Mat::from_fn(m, d, |a, c| zs[c * m + a])
        } else {
            z0.clone()
        };
        Ok((k, noise, mu, z))
    }
}

impl SparseGp {
    /// Fit to inputs `x` (n×d) and targets `y`, starting from `kernel` (initialised from the
    /// data if it has data-driven defaults), `mean` and noise variance `noise`, calling
    /// `observe(evaluation, bound)` after every evaluation of the bound.
    ///
    /// # Errors
    /// Non-finite or inconsistent data, bad settings (`inducing` 0, `epsilon` outside (0, 1),
    /// non-positive `beta` or noise), or an optimiser that cannot start.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        config: &SparseConfig,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<SparseGp, ModelError> {
        check_training_data(x, y)?;
        if config.inducing == 0 {
            return Err(ModelError::Invalid(
                "the number of inducing inputs must be at least 1".into(),
            ));
        }
        if !(config.epsilon > 0.0 && config.epsilon < 1.0) {
            return Err(ModelError::Invalid(format!(
                "epsilon (the expected outlier fraction) must lie in (0, 1), got {}",
                config.epsilon
            )));
        }
        check_positive("weight scale beta", config.beta)?;
        let mut kernel = kernel;
        kernel.initialize(x)?;
        check_model(x.ncols(), &kernel, &mean, noise)?;

        let prior = mean.eval(x);
        let c = threshold(y, &prior, config.epsilon);
        let z0 = config
            .init
            .select(x, config.inducing.min(x.nrows()), config.seed)?;
        let m = z0.nrows();
        let weight = WeightSettings {
            c,
            beta: config.beta,
        };
        let problem = Problem {
            kind: config.kind,
            x,
            y,
            weight,
            jitter: KUU_JITTER,
        };
        let layout = Layout {
            n_kernel: kernel.n_params(),
            n_mean: mean.n_params(),
            z_shape: (m, x.ncols()),
            learn_z: config.learn_inducing,
        };
        let wanted = if config.learn_inducing {
            Wanted::All
        } else {
            Wanted::FixedInducing
        };
        let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
            let (k, s, mu, z) = layout.unpack(v, &kernel, &mean, &z0)?;
            let e = problem.evaluate(&k, &mu, s, z.as_ref(), wanted)?;
            Ok((e.value, e.grad.unwrap_or_default()))
        };
        let v0 = layout.pack(&kernel, noise, &mean, z0.as_ref());
        let fixed_noise = (!config.learn_noise).then_some(noise);
        let fixed_mean = (!config.learn_mean).then_some(&mean);
        let bounds = layout.bounds(&kernel, config.kind, fixed_noise, fixed_mean);
        // The inducing inputs are free: only the hyperparameters can end on a bound.
        let mut names = kernel.param_names();
        names.push("noise".into());
        names.extend(mean.param_names());
        let (best, report) = maximize(objective, &v0, &bounds, &names, &config.optimizer, observe)?;
        let (k, s, mu, z) = layout.unpack(&best, &kernel, &mean, &z0)?;
        let mut gp = SparseGp::build(
            config.kind,
            x.to_owned(),
            y.to_vec(),
            k,
            mu,
            s,
            z,
            c,
            config.beta,
            KUU_JITTER,
        )?;
        gp.report = Some(report);
        Ok(gp)
    }
}

/// The soft threshold: the `(1 − ε)` order statistic of `|y − m(x)|`, as for RCGP and RCaGP
/// in this library (not the spec's interpolated quantile, which lets `c` move with an outlier
/// sitting next to the quantile), floored at [`C_FLOOR`].
fn threshold(y: &[f64], prior: &[f64], epsilon: f64) -> f64 {
    let r: Vec<f64> = y.iter().zip(prior).map(|(y, m)| y - m).collect();
    // ε ∈ (0, 1) and y non-empty are checked by the caller; C_FLOOR is the floor either way.
    soft_threshold(&r, epsilon).map_or(C_FLOOR, |(c, _)| c)
}

/// The kernel is initialised and fits `d` inputs, the mean fits them, the noise is positive.
pub(in crate::models) fn check_model(
    d: usize,
    kernel: &Kernel,
    mean: &Mean,
    noise: f64,
) -> Result<(), ModelError> {
    if !kernel.is_initialized() {
        return Err(ModelError::Invalid(format!(
            "kernel '{kernel}' has lengthscales without values: initialise it from the data first"
        )));
    }
    kernel.validate(d)?;
    mean.check_inputs(d)?;
    check_positive("noise variance", noise)
}

/// `v` is a positive finite number.
pub(super) fn check_positive(what: &str, v: f64) -> Result<(), ModelError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ModelError::Invalid(format!(
            "{what} must be a positive finite number, got {v}"
        )))
    }
}
