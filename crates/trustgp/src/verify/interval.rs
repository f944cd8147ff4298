//! Closed intervals of reals with outward-rounded arithmetic (spec §2.8's "plain interval
//! arithmetic", §6.1): every operation widens its result by two ulps of its magnitude, so the
//! enclosure holds for the real-number operation.

/// `[lo, hi]`, `lo ≤ hi`; infinite ends allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

fn down(v: f64) -> f64 {
    v - (v.abs() * 2.0 * f64::EPSILON + 1e-300)
}

fn up(v: f64) -> f64 {
    v + (v.abs() * 2.0 * f64::EPSILON + 1e-300)
}

impl Interval {
    /// `[lo, hi]` as given.
    pub fn new(lo: f64, hi: f64) -> Interval {
        Interval { lo, hi }
    }

    /// Whether both ends are exactly zero.
    pub fn is_zero(self) -> bool {
        self.lo == 0.0 && self.hi == 0.0
    }

    /// Whether both ends are finite.
    pub fn is_finite(self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }

    /// `self + o`.
    pub fn plus(self, o: Interval) -> Interval {
        Interval::new(down(self.lo + o.lo), up(self.hi + o.hi))
    }

    /// `self − o`.
    pub fn minus(self, o: Interval) -> Interval {
        Interval::new(down(self.lo - o.hi), up(self.hi - o.lo))
    }

    /// `self · o`.
    pub fn times(self, o: Interval) -> Interval {
        if self.is_zero() || o.is_zero() {
            return Interval::new(0.0, 0.0);
        }
        let p = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Interval::new(down(lo), up(hi))
    }

    /// `self / o` for `o` strictly positive (`None` otherwise).
    pub fn div_positive(self, o: Interval) -> Option<Interval> {
        if o.lo.is_nan() || o.lo <= 0.0 {
            return None;
        }
        let inv = Interval::new(down(1.0 / o.hi), up(1.0 / o.lo));
        Some(self.times(inv))
    }

    /// `self²` (tighter than `self · self` when the interval straddles zero).
    pub fn square(self) -> Interval {
        let (a, b) = (self.lo.abs(), self.hi.abs());
        let hi = up(a.max(b) * a.max(b));
        if self.lo <= 0.0 && self.hi >= 0.0 {
            Interval::new(0.0, hi)
        } else {
            Interval::new(down(a.min(b) * a.min(b)).max(0.0), hi)
        }
    }

    /// The intersection with `o` (assumed to overlap: both enclose the same number).
    pub fn meet(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.min(o.hi))
    }
}
