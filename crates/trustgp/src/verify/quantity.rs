//! The quantities that can be verified over a box — the latent mean, the latent variance, and a
//! binary class probability — as [`Bounded`] problems, and [`verify`], which runs branch and
//! bound for both the minimum and the maximum.

use super::bnb::{branch_and_bound, BnbOptions, BnbResult, Bounded, ExitReason, PointValue, Sense};
use super::form::LatentForm;
use super::link::BinaryLink;
use super::region::Region;
use super::variance_qp::{self, Sides, VarianceMethod};
use super::{linear, VerifyError};

/// What to bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// The latent mean `m(x) + k(x, Z) t`.
    Mean,
    /// The latent variance `k(x, x) − k(x, Z) S k(Z, x)`.
    Variance,
    /// The probability `Π(mean(x), var(x))` of the class whose latent is the form's.
    Probability(BinaryLink),
}

/// A [`LatentForm`] and a [`Quantity`] of it.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    /// The form.
    pub form: &'a LatentForm,
    /// The quantity.
    pub quantity: Quantity,
    /// How the variance is bounded.
    pub variance: VarianceMethod,
}

impl Bounded for Problem<'_> {
    fn bound(&self, region: &Region, sense: Sense) -> (f64, Vec<Vec<f64>>) {
        let f = self.form;
        let sw = f.sandwiches(region);
        let mean_bounds = || {
            let (lo, xl) =
                linear::lower(f.decomposition(), f.support(), &sw, f.t(), f.mean(), region);
            let (hi, xh) =
                linear::upper(f.decomposition(), f.support(), &sw, f.t(), f.mean(), region);
            (lo, xl, hi.max(lo), xh)
        };
        match self.quantity {
            Quantity::Mean => {
                if sense == Sense::Min {
                    let (lo, x) =
                        linear::lower(f.decomposition(), f.support(), &sw, f.t(), f.mean(), region);
                    (lo, vec![x])
                } else {
                    let (hi, x) =
                        linear::upper(f.decomposition(), f.support(), &sw, f.t(), f.mean(), region);
                    (hi, vec![x])
                }
            }
            Quantity::Variance => {
                let sides = Sides {
                    lower: sense == Sense::Min,
                    upper: sense == Sense::Max,
                };
                let v = variance_qp::bounds(f, &sw, region, self.variance, sides);
                if sense == Sense::Min {
                    (v.lower, vec![v.x_lower, v.x_upper])
                } else {
                    (v.upper, vec![v.x_upper, v.x_lower])
                }
            }
            Quantity::Probability(link) => {
                let (mlo, xml, mhi, xmh) = mean_bounds();
                // Π's extremum sits at one variance end, chosen by the sign of the mean end
                // (`BinaryLink::min_over`/`max_over`): only that side is needed.
                let high = if sense == Sense::Min {
                    mlo >= 0.0
                } else {
                    mhi < 0.0
                };
                let sides = Sides {
                    lower: !high,
                    upper: high,
                };
                let v = variance_qp::bounds(f, &sw, region, self.variance, sides);
                let b = if sense == Sense::Min {
                    link.min_over((mlo, mhi), (v.lower, v.upper))
                } else {
                    link.max_over((mlo, mhi), (v.lower, v.upper))
                };
                (b, vec![xml, xmh, v.x_lower, v.x_upper])
            }
        }
    }

    fn at(&self, x: &[f64]) -> PointValue {
        let m = self.form.moments_at(x);
        match self.quantity {
            Quantity::Mean => PointValue {
                value: m.mean,
                lower: m.mean - m.mean_margin,
                upper: m.mean + m.mean_margin,
            },
            Quantity::Variance => PointValue {
                value: m.var,
                lower: (m.var - m.var_margin).max(0.0),
                upper: m.var + m.var_margin,
            },
            Quantity::Probability(link) => {
                let mu = (m.mean - m.mean_margin, m.mean + m.mean_margin);
                let var = ((m.var - m.var_margin).max(0.0), m.var + m.var_margin);
                PointValue {
                    value: link.value(m.mean, m.var),
                    lower: link.min_over(mu, var),
                    upper: link.max_over(mu, var),
                }
            }
        }
    }
}

/// Certified bounds of a quantity over a box, and the worst cases found.
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    /// `≤` the quantity everywhere in the box.
    pub lower: f64,
    /// `≥` the quantity everywhere in the box.
    pub upper: f64,
    /// The quantity at `argmin` (a concrete point of the box).
    pub min_found: f64,
    /// The quantity at `argmax`.
    pub max_found: f64,
    /// Where `min_found` is attained.
    pub argmin: Vec<f64>,
    /// Where `max_found` is attained.
    pub argmax: Vec<f64>,
    /// The larger of the two searches' certified gaps (`min_found − lower`,
    /// `upper − max_found`, each on the certified side of the found value).
    pub gap: f64,
    /// Regions split, both searches together.
    pub iterations: usize,
    /// Wall-clock seconds, both searches together.
    pub seconds: f64,
    /// Why the minimum search stopped.
    pub exit_min: ExitReason,
    /// Why the maximum search stopped.
    pub exit_max: ExitReason,
}

impl Verified {
    /// Combines a minimum and a maximum search.
    pub fn of(min: &BnbResult, max: &BnbResult) -> Verified {
        Verified {
            lower: min.bound,
            upper: max.bound,
            min_found: min.found,
            max_found: max.found,
            argmin: min.point.clone(),
            argmax: max.point.clone(),
            gap: min.gap.max(max.gap),
            iterations: min.iterations + max.iterations,
            seconds: min.seconds + max.seconds,
            exit_min: min.exit,
            exit_max: max.exit,
        }
    }
}

/// Bounds of `quantity` of `form` over `region` by branch and bound, both directions.
///
/// # Errors
/// If the box does not match the form's input width, or the tolerance is negative or not finite.
pub fn verify(
    form: &LatentForm,
    quantity: Quantity,
    region: &Region,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    if region.dim() != form.dim() {
        return Err(VerifyError::Invalid(format!(
            "the box has {} coordinates but the model takes {} inputs",
            region.dim(),
            form.dim()
        )));
    }
    if !(options.tolerance.is_finite() && options.tolerance >= 0.0) {
        return Err(VerifyError::Invalid(format!(
            "tolerance must be a finite number ≥ 0, got {}",
            options.tolerance
        )));
    }
    let p = Problem {
        form,
        quantity,
        variance: options.variance,
    };
    let min = branch_and_bound(&p, region, Sense::Min, options);
    let max = branch_and_bound(&p, region, Sense::Max, options);
    Ok(Verified::of(&min, &max))
}
