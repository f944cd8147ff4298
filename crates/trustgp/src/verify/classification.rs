//! Verification of the GP classifiers a [`Classifier`] holds, in the units of the data
//! (spec §2.7, §2.10).
//!
//! A binary model's latent `f` is the latent of the second class (`y = +1`) in the
//! linear-Gaussian form over standardised inputs; `P(class 1 | x) = Π(μ(x), Σ(x))` with the
//! model's link. The first class has latent `−f` and probability `1 − Π` (both links are
//! symmetric, `σ(−ξ) = 1 − σ(ξ)`), so its bounds are the second class's mirrored. The data-units
//! box maps to the standardised box as for regression ([`super::regression`]); latent means and
//! variances stay in latent units (labels are never standardised).
//!
//! `certified` (spec's binary rule): the decision at `x*` cannot flip — the class probability
//! stays on the side of ½ it is on at `x*` over the whole box.
//!
//! A multi-class (softmax) model has one latent per class ([`multiclass_form`]); its class
//! probabilities are bounded by [`super::softmax`], its latents' means and variances as single
//! latents, and its decision by the spec's Eq. 7 ([`classifier_decision`]).

use super::bnb::BnbOptions;
use super::form::LatentForm;
use super::link::BinaryLink;
use super::quantity::{verify, Quantity, Verified};
use super::region::Region;
use super::regression::{standardised_box, to_data};
use super::softmax::{softmax_decision, verify_softmax, SoftmaxDecision, SoftmaxForm};
use super::{rounding, VerifyError};
use crate::estimators::classifier::{BinaryModel, Classifier, ClassifierModel};
use crate::likelihoods::Link;

/// The verify module's link bounds for a classifier's link.
pub fn binary_link(link: Link) -> BinaryLink {
    match link {
        Link::Probit => BinaryLink::Probit,
        Link::Logit => BinaryLink::Logistic,
    }
}

/// The latent form (of the second class, standardised inputs) and link of a binary classifier.
///
/// # Errors
/// If the kernel is not supported by the bounds.
pub fn classifier_form(clf: &Classifier) -> Result<(LatentForm, BinaryLink), VerifyError> {
    match &clf.model {
        ClassifierModel::Binary(m) => {
            let form = LatentForm::of(&m.linear_gaussian())?;
            let link = match m {
                BinaryModel::Laplace(_) => binary_link(clf.config.link),
                // EP (dense or sparse) is probit-only.
                BinaryModel::Ep(_) | BinaryModel::SparseEp(_) => BinaryLink::Probit,
            };
            Ok((form, link))
        }
        ClassifierModel::Multiclass(_) => Err(VerifyError::UnsupportedModel(
            "a multi-class (softmax) classifier has one latent per class, not one binary \
             latent: use multiclass_form"
                .into(),
        )),
    }
}

/// The softmax form (standardised inputs) of a multi-class classifier.
///
/// # Errors
/// A binary classifier (see [`classifier_form`]), or a kernel the bounds do not support.
pub fn multiclass_form(clf: &Classifier) -> Result<SoftmaxForm, VerifyError> {
    match &clf.model {
        ClassifierModel::Multiclass(m) => SoftmaxForm::new(&m.latent_form()),
        ClassifierModel::Binary(_) => Err(VerifyError::UnsupportedModel(
            "a binary classifier has one latent: use classifier_form".into(),
        )),
    }
}

/// Certified bounds of `quantity` of a binary model over a box of its (standardised) inputs,
/// for the class whose latent is the form's (`positive`) or its negation (the other class).
/// `Quantity::Probability` uses `link`, whatever link it names.
///
/// # Errors
/// As for [`verify`].
pub fn verify_binary(
    form: &LatentForm,
    link: BinaryLink,
    positive: bool,
    quantity: Quantity,
    region: &Region,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    let quantity = match quantity {
        Quantity::Probability(_) => Quantity::Probability(link),
        q => q,
    };
    // The other class's quantity is a decreasing map of this one (−μ, 1 − Π): its decision
    // threshold maps the same way.
    let mirror = |v: f64| match quantity {
        Quantity::Probability(_) => 1.0 - v,
        _ => -v,
    };
    let flips = !positive && quantity != Quantity::Variance;
    let opts = if flips {
        BnbOptions {
            decide_at: options.decide_at.map(mirror),
            ..options.clone()
        }
    } else {
        options.clone()
    };
    let v = verify(form, quantity, region, &opts)?;
    if !flips {
        return Ok(v);
    }
    // `1 − x` and `−x` round at most half an ulp of 1 / nothing: widen by the margin.
    let (lower, upper) = match quantity {
        Quantity::Probability(_) => (
            rounding::down(1.0 - v.upper, 1.0).max(0.0),
            rounding::up(1.0 - v.lower, 1.0).min(1.0),
        ),
        _ => (-v.upper, -v.lower),
    };
    Ok(Verified {
        lower,
        upper,
        min_found: mirror(v.max_found),
        max_found: mirror(v.min_found),
        argmin: v.argmax,
        argmax: v.argmin,
        exit_min: v.exit_max,
        exit_max: v.exit_min,
        ..v
    })
}

/// Certified bounds of `quantity` (the probability of class `class`, or that class's latent
/// mean or variance) of a classifier over a box of data-units inputs; the worst-case points in
/// data units.
///
/// # Errors
/// A class out of range, a box of the wrong width, or as for [`classifier_form`] and [`verify`].
pub fn verify_classifier_box(
    clf: &Classifier,
    class: usize,
    quantity: Quantity,
    data_box: &Region,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    if class >= clf.classes.len() {
        return Err(VerifyError::Invalid(format!(
            "class index {class} is out of range (the model has {} classes)",
            clf.classes.len()
        )));
    }
    let std_box = standardised_box(&clf.standardizer, data_box)?;
    let mut v = if let ClassifierModel::Multiclass(_) = clf.model {
        let form = multiclass_form(clf)?;
        match quantity {
            Quantity::Probability(_) => verify_softmax(&form, class, &std_box, options)?,
            q => verify(form.class_form(class), q, &std_box, options)?,
        }
    } else {
        let (form, link) = classifier_form(clf)?;
        verify_binary(&form, link, class == 1, quantity, &std_box, options)?
    };
    v.argmin = to_data(&clf.standardizer, data_box, &v.argmin);
    v.argmax = to_data(&clf.standardizer, data_box, &v.argmax);
    Ok(v)
}

/// [`verify_classifier_box`] over the ℓ∞ ball of `radius` around `x` (data units; free only in
/// `features` when given).
///
/// # Errors
/// A non-finite point, a bad radius or feature, or as for [`verify_classifier_box`].
pub fn verify_classifier(
    clf: &Classifier,
    class: usize,
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
    verify_classifier_box(clf, class, quantity, &data_box, options)
}

/// The spec's binary rule: the decision at `x*` (class probability `p_star` there) cannot flip
/// over the box — the certified bounds stay strictly on `p_star`'s side of ½.
pub fn binary_certified(p_star: f64, v: &Verified) -> bool {
    if p_star > 0.5 {
        v.lower > 0.5
    } else if p_star < 0.5 {
        v.upper < 0.5
    } else {
        false
    }
}

/// The multi-class decision rule (spec §2.1, Eq. 7) of a softmax classifier at `x*` (data
/// units) over a box of data-units inputs containing it.
///
/// # Errors
/// A binary classifier, `x*` outside the box, a box of the wrong width, or a bad tolerance.
pub fn classifier_decision(
    clf: &Classifier,
    x_star: &[f64],
    data_box: &Region,
    options: &BnbOptions,
) -> Result<SoftmaxDecision, VerifyError> {
    if x_star.len() != data_box.dim() || !data_box.contains(x_star) {
        return Err(VerifyError::Invalid(
            "the decision point x* must lie in the box".into(),
        ));
    }
    let form = multiclass_form(clf)?;
    let std_box = standardised_box(&clf.standardizer, data_box)?;
    // The standardised x* is clamped into the (outward-rounded) standardised box.
    let st = &clf.standardizer;
    let xs: Vec<f64> = x_star
        .iter()
        .enumerate()
        .map(|(j, v)| ((v - st.x_mean[j]) / st.x_std[j]).clamp(std_box.lower[j], std_box.upper[j]))
        .collect();
    softmax_decision(&form, &xs, &std_box, options)
}

/// Certified brackets `[lo, hi] ∋ π_c(x)` of every class probability of a softmax classifier
/// at `x` (data units): the deterministic counterpart of its Monte Carlo `predict_proba`
/// (see [`super::softmax`]).
///
/// # Errors
/// A binary classifier, a point of the wrong width or with non-finite entries.
pub fn classifier_bracket(clf: &Classifier, x: &[f64]) -> Result<Vec<(f64, f64)>, VerifyError> {
    let st = &clf.standardizer;
    if x.len() != st.x_mean.len() || x.iter().any(|v| !v.is_finite()) {
        return Err(VerifyError::Invalid(format!(
            "the point must have {} finite inputs",
            st.x_mean.len()
        )));
    }
    let form = multiclass_form(clf)?;
    let xs: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(j, v)| (v - st.x_mean[j]) / st.x_std[j])
        .collect();
    Ok(form.probability_bracket(&xs))
}
