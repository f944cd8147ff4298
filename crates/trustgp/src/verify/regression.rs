//! Verification of the regression models an [`estimators::Regressor`](crate::estimators::Regressor)
//! holds, in the units of the data.
//!
//! The models work on standardised data `x' = (x − x̄)/s_x`, `y' = (y − ȳ)/s_y`: a data-units
//! box maps coordinate by coordinate to a standardised box (widened outward by a rounding
//! margin, so that it contains the exact image), the bounds map back by `y = ȳ + s_y y'`
//! (mean) and `s_y² v'` (variance), and the worst-case points back to data units.

use super::bnb::BnbOptions;
use super::form::LatentForm;
use super::quantity::{verify, Quantity, Verified};
use super::region::Region;
use super::{rounding, VerifyError};
use crate::data::Standardizer;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::estimators::Regressor;
use crate::kernels::Kernel;
use crate::models::approximate::ApproxModel;
use crate::models::robust::multi_output::MultiOutputModel;
use crate::posterior::LinearGaussianForm;
use faer::Mat;

/// The latent form of output `output` of a fitted regressor, in standardised units.
///
/// # Errors
/// For a vbks mixture, a multi-output kernel with several LMC terms, an output out of range, or
/// an unsupported kernel.
pub fn regressor_form(reg: &Regressor, output: usize) -> Result<LatentForm, VerifyError> {
    match &reg.fitted {
        Fitted::PerTarget(outs) => {
            let o = outs.get(output).ok_or_else(|| {
                VerifyError::Invalid(format!(
                    "output {output} is out of range (the model has {} outputs)",
                    outs.len()
                ))
            })?;
            match &o.gp {
                SingleOutput::Gp(g) => LatentForm::of(g),
                SingleOutput::Rcgp(g, _) => LatentForm::of(g),
                SingleOutput::Approx(ApproxModel::Sparse(g), _) => LatentForm::of(g),
                SingleOutput::Approx(ApproxModel::Svgp(g, _), _) => LatentForm::of(g),
                SingleOutput::Approx(ApproxModel::Ca(g), _) => LatentForm::of(g),
                SingleOutput::Approx(ApproxModel::Rrp(g), _) => LatentForm::of(g),
                SingleOutput::Vbks(_) => Err(VerifyError::UnsupportedModel(
                    "vbks is a mixture of sparse GPs; verify supports one Gaussian posterior \
                     (gp, rcgp, sgpr, svgp, rcsvgp, cagp, rcagp, rrp)"
                        .into(),
                )),
            }
        }
        Fitted::Joint(model, _) => output_form(model, output),
    }
}

/// The latent form of output `T` of a multi-output model (mogp, mo-rcgp) whose kernel has one
/// LMC term `B ⊗ κ`.
///
/// On task-indexed support points `(x_n, τ_n)` the model's output `T` is
/// `f_T(x) = m_T + Σ_n B[T, τ_n] κ(x, x_n) t_n` with variance
/// `B_TT κ(x, x) − rᵀ S r`, `r_n = B[T, τ_n] κ(x, x_n)`. With the kernel `k = B_TT · κ` and
/// `D = diag(B[T, τ_n] / B_TT)`, that is the single-output form with `k(x, Z)` for `r`'s
/// kernel part, `t' = D t` and `S' = D S D`.
fn output_form(model: &MultiOutputModel, output: usize) -> Result<LatentForm, VerifyError> {
    let lg = model.linear_gaussian();
    let mo = lg.covariance();
    if output >= mo.n_tasks() {
        return Err(VerifyError::Invalid(format!(
            "output {output} is out of range (the model has {} outputs)",
            mo.n_tasks()
        )));
    }
    let [term] = mo.terms() else {
        return Err(VerifyError::UnsupportedModel(format!(
            "a multi-output kernel with {} latent processes (LMC terms); verify supports one \
             coregionalised kernel B ⊗ κ",
            mo.terms().len()
        )));
    };
    let b = term.coregion.b();
    let b_tt = b[(output, output)];
    if !(b_tt > 0.0 && b_tt.is_finite()) {
        return Err(VerifyError::UnsupportedModel(format!(
            "output {output} has prior variance B_TT = {b_tt}: its latent is not a GP to bound"
        )));
    }
    let support = lg.support();
    let d = support.ncols() - 1;
    let scale = Kernel::parse(&format!("const(var={b_tt:e})"))
        .map_err(|e| VerifyError::Invalid(format!("output {output}'s kernel scale: {e}")))?;
    let kernel = Kernel::product(vec![scale, term.kernel.clone()]);
    let weights: Vec<f64> = (0..support.nrows())
        .map(|n| b[(output, support[(n, d)] as usize)] / b_tt)
        .collect();
    let t: Vec<f64> = lg.t().iter().zip(&weights).map(|(t, w)| w * t).collect();
    let s = lg.s_matrix();
    let s = Mat::from_fn(s.nrows(), s.ncols(), |i, j| {
        weights[i] * s[(i, j)] * weights[j]
    });
    let mean = lg.prior_mean().0.get(output).copied().unwrap_or(0.0);
    LatentForm::new(
        kernel,
        support.subcols(0, d).to_owned(),
        t,
        s,
        mean,
        Vec::new(),
    )
}

/// Certified bounds of the latent mean or variance of output `output` over the ℓ∞ ball of
/// `radius` around `x` (data units; free only in `features` when given), in data units.
///
/// # Errors
/// For a probability quantity, a bad radius, feature or point, or as for [`regressor_form`].
pub fn verify_regressor(
    reg: &Regressor,
    output: usize,
    quantity: Quantity,
    x: &[f64],
    radius: f64,
    features: Option<&[usize]>,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    if let Some(j) = x.iter().position(|v| !v.is_finite()) {
        return Err(VerifyError::Invalid(format!(
            "input {j} of the point is {} (not finite)",
            x[j]
        )));
    }
    let data_box = Region::ball(x, radius, features)?;
    verify_regressor_box(reg, output, quantity, &data_box, options)
}

/// [`verify_regressor`] over any box of data-units inputs.
///
/// # Errors
/// As for [`verify_regressor`].
pub fn verify_regressor_box(
    reg: &Regressor,
    output: usize,
    quantity: Quantity,
    data_box: &Region,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    if let Quantity::Probability(_) = quantity {
        return Err(VerifyError::Invalid(
            "quantity `probability` needs a classifier; a regression model has `mean` and `variance`".into(),
        ));
    }
    let st = &reg.standardizer;
    let to_std = |v: f64, j: usize| (v - st.x_mean[j]) / st.x_std[j];
    let std_box = standardised_box(st, data_box)?;
    let form = regressor_form(reg, output)?;
    let (ym, ys) = (st.y_mean[output], st.y_std[output]);
    // The tolerance is in data units: scale it into the model's.
    let unit = if quantity == Quantity::Variance {
        ys * ys
    } else {
        ys
    };
    let std_options = BnbOptions {
        tolerance: options.tolerance / unit,
        decide_at: options.decide_at.map(|t| match quantity {
            Quantity::Variance => t / unit,
            _ => (t - ym) / ys,
        }),
        ..options.clone()
    };
    let v = verify(&form, quantity, &std_box, &std_options)?;
    // Back to data units: the worst-case points clipped into the data box and re-evaluated there.
    let from_std = |xs: &[f64]| to_data(st, data_box, xs);
    let value_at = |xd: &[f64]| -> f64 {
        let xs: Vec<f64> = xd.iter().enumerate().map(|(j, v)| to_std(*v, j)).collect();
        let m = form.moments_at(&xs);
        match quantity {
            Quantity::Variance => ys * ys * m.var,
            _ => ym + ys * m.mean,
        }
    };
    let argmin = from_std(&v.argmin);
    let argmax = from_std(&v.argmax);
    let (lower, upper, gap) = match quantity {
        Quantity::Variance => (
            rounding::down(ys * ys * v.lower, ys * ys * v.lower).max(0.0),
            rounding::up(ys * ys * v.upper, ys * ys * v.upper),
            ys * ys * v.gap,
        ),
        _ => (
            rounding::down(ym + ys * v.lower, ym.abs() + (ys * v.lower).abs()),
            rounding::up(ym + ys * v.upper, ym.abs() + (ys * v.upper).abs()),
            ys * v.gap,
        ),
    };
    Ok(Verified {
        lower,
        upper,
        min_found: value_at(&argmin),
        max_found: value_at(&argmax),
        argmin,
        argmax,
        gap,
        ..v
    })
}

/// The standardised image `(x − x̄)/s_x` of a data-units box, widened outward by a rounding
/// margin so that it contains the exact image (fixed coordinates stay fixed).
///
/// # Errors
/// If the box does not match the standardiser's input width.
pub(super) fn standardised_box(
    st: &Standardizer,
    data_box: &Region,
) -> Result<Region, VerifyError> {
    if data_box.dim() != st.x_mean.len() {
        return Err(VerifyError::Invalid(format!(
            "the point has {} inputs, the model takes {}",
            data_box.dim(),
            st.x_mean.len()
        )));
    }
    let to_std = |v: f64, j: usize| (v - st.x_mean[j]) / st.x_std[j];
    let (lower, upper): (Vec<f64>, Vec<f64>) = (0..data_box.dim())
        .map(|j| {
            let (l, u) = (to_std(data_box.lower[j], j), to_std(data_box.upper[j], j));
            if data_box.lower[j] == data_box.upper[j] {
                (l, l)
            } else {
                (
                    rounding::down(l, l.abs() + 1.0),
                    rounding::up(u, u.abs() + 1.0),
                )
            }
        })
        .unzip();
    Region::new(lower, upper)
}

/// A standardised point back in data units, clipped into the data box (the outward margin of
/// [`standardised_box`] may put it a rounding error outside).
pub(super) fn to_data(st: &Standardizer, data_box: &Region, xs: &[f64]) -> Vec<f64> {
    let back: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(j, v)| st.x_mean[j] + st.x_std[j] * v)
        .collect();
    data_box.clip(&back)
}
