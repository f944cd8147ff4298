//! Axis-aligned boxes of inputs.

use super::VerifyError;

/// The largest magnitude of a box coordinate: squared distances between coordinates (divided by
/// a lengthscale's square) must stay finite for the kernel bounds to mean anything; beyond
/// about `1e154` they overflow to `inf` and the bounds' arithmetic turns `inf − inf` into NaN.
pub const MAX_COORDINATE: f64 = 1e100;

/// An axis-aligned box `[lower, upper]` of inputs (a coordinate with `lower == upper` is fixed).
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// Lower corner.
    pub lower: Vec<f64>,
    /// Upper corner.
    pub upper: Vec<f64>,
}

impl Region {
    /// The box `[lower, upper]`.
    ///
    /// # Errors
    /// If the corners differ in length, an entry is not finite or exceeds [`MAX_COORDINATE`] in
    /// magnitude, or `lower > upper` somewhere.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Region, VerifyError> {
        if lower.len() != upper.len() {
            return Err(VerifyError::Invalid(format!(
                "box corners have {} and {} entries",
                lower.len(),
                upper.len()
            )));
        }
        for (j, (l, u)) in lower.iter().zip(&upper).enumerate() {
            if !(l.is_finite() && u.is_finite()) {
                return Err(VerifyError::Invalid(format!(
                    "box coordinate {j}: [{l}, {u}] is not finite"
                )));
            }
            if l.abs().max(u.abs()) > MAX_COORDINATE {
                return Err(VerifyError::Invalid(format!(
                    "box coordinate {j}: [{l:e}, {u:e}] exceeds {MAX_COORDINATE:e} in magnitude \
                     (in the model's standardised units; squared distances would overflow): use \
                     a smaller radius"
                )));
            }
            if l > u {
                return Err(VerifyError::Invalid(format!(
                    "box coordinate {j}: lower {l} > upper {u}"
                )));
            }
        }
        Ok(Region { lower, upper })
    }

    /// The ℓ∞ ball of radius `radius` around `centre`, free only in the coordinates `free`
    /// (all of them when `None`).
    ///
    /// # Errors
    /// If `radius` is negative or not finite, the centre is not finite, or a free coordinate is
    /// out of range.
    pub fn ball(
        centre: &[f64],
        radius: f64,
        free: Option<&[usize]>,
    ) -> Result<Region, VerifyError> {
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(VerifyError::Invalid(format!(
                "radius must be a finite number ≥ 0, got {radius}"
            )));
        }
        let d = centre.len();
        let mut lower = centre.to_vec();
        let mut upper = centre.to_vec();
        let all: Vec<usize> = (0..d).collect();
        for &j in free.unwrap_or(&all) {
            if j >= d {
                return Err(VerifyError::Invalid(format!(
                    "feature index {j} is out of range (the model has {d} inputs)"
                )));
            }
            lower[j] -= radius;
            upper[j] += radius;
        }
        Region::new(lower, upper)
    }

    /// Number of coordinates.
    pub fn dim(&self) -> usize {
        self.lower.len()
    }

    /// The centre.
    pub fn centre(&self) -> Vec<f64> {
        self.lower
            .iter()
            .zip(&self.upper)
            .map(|(l, u)| 0.5 * (l + u))
            .collect()
    }

    /// The widest coordinate and its width.
    pub fn widest(&self) -> (usize, f64) {
        self.lower
            .iter()
            .zip(&self.upper)
            .map(|(l, u)| u - l)
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |b, (j, w)| if w > b.1 { (j, w) } else { b },
            )
    }

    /// The two halves of the box cut at the midpoint of coordinate `j`.
    pub fn bisect(&self, j: usize) -> (Region, Region) {
        let mid = 0.5 * (self.lower[j] + self.upper[j]);
        let mut left = self.clone();
        let mut right = self.clone();
        left.upper[j] = mid;
        right.lower[j] = mid;
        (left, right)
    }

    /// Whether `x` lies in the box.
    pub fn contains(&self, x: &[f64]) -> bool {
        x.len() == self.dim()
            && x.iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(v, (l, u))| l <= v && v <= u)
    }

    /// `x` clipped into the box.
    pub fn clip(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(self.lower.iter().zip(&self.upper))
            .map(|(v, (l, u))| v.clamp(*l, *u))
            .collect()
    }
}
