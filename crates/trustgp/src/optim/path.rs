//! The projected search path `x(α) = P(x + α d)`.

/// The piecewise-linear path traced by projecting `x + α d` onto the box. Each variable moves
/// linearly until its breakpoint (the step at which it reaches a bound) and stays there after.
pub(crate) struct ProjectedPath<'a> {
    x: &'a [f64],
    d: &'a [f64],
    bounds: &'a [(f64, f64)],
    breakpoints: Vec<f64>,
    end: f64,
}

impl<'a> ProjectedPath<'a> {
    /// The path from the feasible point `x` along `d`.
    pub(crate) fn new(x: &'a [f64], d: &'a [f64], bounds: &'a [(f64, f64)]) -> Self {
        let breakpoints: Vec<f64> = x
            .iter()
            .zip(d)
            .zip(bounds)
            .map(|((&xi, &di), &(lo, hi))| {
                if di > 0.0 {
                    (hi - xi) / di
                } else if di < 0.0 {
                    (lo - xi) / di
                } else {
                    // A variable that does not move never constrains the path.
                    f64::INFINITY
                }
            })
            .collect();
        let end = breakpoints
            .iter()
            .zip(d)
            .filter(|(_, &di)| di != 0.0)
            .map(|(&t, _)| t)
            .fold(0.0, f64::max);
        ProjectedPath {
            x,
            d,
            bounds,
            breakpoints,
            end,
        }
    }

    /// The last breakpoint: beyond it the path no longer moves (`∞` if some moving variable is
    /// unbounded in its direction of travel).
    pub(crate) fn end(&self) -> f64 {
        self.end
    }

    /// The point `x(α)`.
    pub(crate) fn point(&self, alpha: f64) -> Vec<f64> {
        self.x
            .iter()
            .zip(self.d)
            .zip(self.bounds)
            .map(|((&xi, &di), &(lo, hi))| (xi + alpha * di).clamp(lo, hi))
            .collect()
    }

    /// The right derivative of `f(x(α))` at `α`, given the gradient `g` at `x(α)`: only variables
    /// that have not yet reached their breakpoint move.
    pub(crate) fn slope(&self, alpha: f64, g: &[f64]) -> f64 {
        g.iter()
            .zip(self.d)
            .zip(&self.breakpoints)
            .filter(|(_, &t)| alpha < t)
            .map(|((gi, di), _)| gi * di)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_stop_at_their_breakpoints() {
        let x = [0.0, 0.0, 0.5];
        let d = [1.0, -2.0, 0.0];
        let bounds = [(-1.0, 1.0), (-1.0, f64::INFINITY), (0.0, 1.0)];
        let path = ProjectedPath::new(&x, &d, &bounds);
        assert_eq!(path.end(), 1.0);
        assert_eq!(path.point(0.25), vec![0.25, -0.5, 0.5]);
        assert_eq!(path.point(3.0), vec![1.0, -1.0, 0.5]);
        let g = [1.0, 1.0, 1.0];
        assert_eq!(path.slope(0.0, &g), -1.0);
        // Variable 1 reached its bound at α = 0.5, so only variable 0 still moves.
        assert_eq!(path.slope(0.75, &g), 1.0);
        assert_eq!(path.slope(1.0, &g), 0.0);
    }

    #[test]
    fn unbounded_direction_has_infinite_end() {
        let bounds = [(0.0, f64::INFINITY)];
        assert_eq!(
            ProjectedPath::new(&[1.0], &[1.0], &bounds).end(),
            f64::INFINITY
        );
        // Pointing out of the box from a bound: the path never moves.
        assert_eq!(ProjectedPath::new(&[0.0], &[-1.0], &bounds).end(), 0.0);
    }
}
