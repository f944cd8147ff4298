//! The Δγ feature attribution (spec §2.12): for feature `i`, with the one-sided boxes
//! `T⁺ = [x*, x* + γ eᵢ]` and `T⁻ = [x* − γ eᵢ, x*]`,
//! `Δⁱ_γ = (max_{T⁺} − max_{T⁻}) + (min_{T⁺} − min_{T⁻})`, using the certified bounds
//! (the upper bound for the maxima, the lower bound for the minima), as the reference code does.
//! Negative: increasing feature `i` lowers the quantity.

use super::bnb::BnbOptions;
use super::form::LatentForm;
use super::quantity::{verify, Quantity, Verified};
use super::region::Region;
use super::VerifyError;

/// One feature's attribution.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribution {
    /// The feature (input column).
    pub feature: usize,
    /// `Δⁱ_γ`.
    pub delta: f64,
}

/// `Δⁱ_γ(x*)` of `quantity` of `form` for each feature in `features`.
///
/// # Errors
/// If `gamma` is negative or not finite, a feature is out of range, or as for [`verify`].
pub fn attribution(
    form: &LatentForm,
    quantity: Quantity,
    x: &[f64],
    gamma: f64,
    features: &[usize],
    options: &BnbOptions,
) -> Result<Vec<Attribution>, VerifyError> {
    attribution_with(x, gamma, features, |r| verify(form, quantity, r, options))
}

/// `Δⁱ_γ(x*)` for each feature in `features`, with `verify_box` giving the certified bounds of
/// the quantity over a box (in whatever units `x` is in).
///
/// # Errors
/// If `gamma` is negative or not finite, a feature is out of range, or `verify_box` fails.
pub fn attribution_with(
    x: &[f64],
    gamma: f64,
    features: &[usize],
    mut verify_box: impl FnMut(&Region) -> Result<Verified, VerifyError>,
) -> Result<Vec<Attribution>, VerifyError> {
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(VerifyError::Invalid(format!(
            "radius must be a finite number ≥ 0, got {gamma}"
        )));
    }
    features
        .iter()
        .map(|&i| {
            if i >= x.len() {
                return Err(VerifyError::Invalid(format!(
                    "feature index {i} is out of range (the model has {} inputs)",
                    x.len()
                )));
            }
            let mut up = Region::new(x.to_vec(), x.to_vec())?;
            up.upper[i] += gamma;
            let mut down = Region::new(x.to_vec(), x.to_vec())?;
            down.lower[i] -= gamma;
            let p = verify_box(&up)?;
            let m = verify_box(&down)?;
            Ok(Attribution {
                feature: i,
                delta: (p.upper - m.upper) + (p.lower - m.lower),
            })
        })
        .collect()
}
