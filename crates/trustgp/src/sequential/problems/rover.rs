//! The 60-D rover trajectory problem (Wang et al. 2018, "Batched large-scale Bayesian
//! optimization in high-dimensional spaces"), in the form the RCaGP paper's reference code
//! uses for its task "Rover60D" (`rcagp.md` §5.5):
//!
//! * The input is 30 **steps** `(Δx, Δy)` (coordinates `2k`, `2k + 1` form step `k`), each
//!   coordinate in `[−2/60, 4/60]`. The waypoints are the start `(0.05, 0.05)` and its running
//!   sums with the steps, `p₀ = start`, `pₖ = pₖ₋₁ + stepₖ` (31 points), so the rover can reach
//!   the goal `(0.95, 0.95)` with steps of `0.03` on average.
//! * Consecutive equal waypoints (zero steps) are dropped. Through the `m` that remain runs the
//!   interpolating cubic spline in the chord-length parameter (normalised to `u ∈ [0, 1]`)
//!   with not-a-knot ends — the curve `scipy.interpolate.splprep(points, k=3, s=0)` fits,
//!   whose interior knots sit at `u₂ … u_{m−3}`. (With fewer than 4 distinct waypoints, where
//!   that spline does not exist and the reference code fails, the interpolating polynomial of
//!   degree `m − 1` is used: a point, a segment or a parabola.)
//! * The curve is sampled at 1000 equally spaced `u`; the cost is the trapezoidal integral of
//!   the state cost along the sampled polyline, `Σᵢ ‖qᵢ₊₁ − qᵢ‖ (cᵢ + cᵢ₊₁)/2`, where `c(q)` is
//!   0.05, plus 20 inside an obstacle or outside `[0, 1)²`; the obstacles are the 34
//!   half-open squares `[a − 0.04, a + 0.04)²` centred on the grid `{0, 0.2, …, 1}²` without
//!   its corners `(0, 0)` and `(1, 1)`. Missing the goal costs `100 ‖q_last − goal‖₁`.
//! * The reward, maximised, is `5 − cost` (the offset `f_max = 5` of the reference code).
//!
//! The maximum is not known in closed form: any path from start to goal is at least `0.9√2`
//! long, so the reward is below `5 − 0.05 · 0.9√2 ≈ 4.936`. The reference code also
//! perturbed the steps by `N(0, 10⁻⁴)` noise in some versions; this one is deterministic.

/// Number of waypoint steps (the input has twice as many coordinates).
const STEPS: usize = 30;
/// Where the rover starts (every path starts here exactly).
const START: [f64; 2] = [0.05, 0.05];
/// Where the rover should end.
const GOAL: [f64; 2] = [0.95, 0.95];
/// Grid coordinates of the obstacle centres (both axes).
const GRID: [f64; 6] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
/// Half the side of an obstacle square (the reference code's side 0.08).
const HALF_SIDE: f64 = 0.08 / 2.0;
/// Cost per unit length everywhere.
const BASE_COST: f64 = 0.05;
/// Extra cost per unit length inside an obstacle or outside the unit square.
const OBSTACLE_COST: f64 = 20.0;
/// Cost per unit of L1 distance between the path's end and the goal.
const GOAL_MISS_COST: f64 = 100.0;
/// Reward offset: reward = `F_MAX − cost`.
const F_MAX: f64 = 5.0;
/// Points at which the curve is sampled.
const SAMPLES: usize = 1000;

/// The number of inputs.
pub(super) const DIM: usize = 2 * STEPS;

/// The box every step coordinate lives in, `[−2/d, 4/d]` with `d = 60`.
pub(super) fn bounds() -> (f64, f64) {
    (-0.5 * 4.0 / DIM as f64, 4.0 / DIM as f64)
}

/// The reward of the steps `x` (length [`DIM`], finite: checked by the caller). Finite for
/// coordinates below about `10³⁰⁰` in magnitude.
pub(super) fn reward(x: &[f64]) -> f64 {
    let curve = Curve::through(&waypoints(x));
    // As numpy.linspace(0, 1, 1000) computes its points: i·step, the last exactly 1.
    let step = 1.0 / (SAMPLES - 1) as f64;
    let mut cost = 0.0;
    let mut prev = curve.at(0.0);
    let mut prev_cost = state_cost(prev);
    for i in 1..SAMPLES {
        let t = if i == SAMPLES - 1 {
            1.0
        } else {
            i as f64 * step
        };
        let q = curve.at(t);
        let c = state_cost(q);
        cost += (q[0] - prev[0]).hypot(q[1] - prev[1]) * 0.5 * (prev_cost + c);
        prev = q;
        prev_cost = c;
    }
    cost += GOAL_MISS_COST * ((prev[0] - GOAL[0]).abs() + (prev[1] - GOAL[1]).abs());
    F_MAX - cost
}

/// The start followed by its running sums with the steps (31 points).
fn waypoints(x: &[f64]) -> Vec<[f64; 2]> {
    let mut p = START;
    std::iter::once(START)
        .chain(x.chunks_exact(2).map(|step| {
            p = [p[0] + step[0], p[1] + step[1]];
            p
        }))
        .collect()
}

/// Cost per unit length at a state: the base cost plus the obstacle cost inside an obstacle
/// square or outside `[0, 1)²` (boxes are half open, lower side included).
fn state_cost(q: [f64; 2]) -> f64 {
    let inside = |v: f64, lo: f64, hi: f64| lo <= v && v < hi;
    let outside = !(inside(q[0], 0.0, 1.0) && inside(q[1], 0.0, 1.0));
    let in_tree = || {
        GRID.iter().enumerate().any(|(i, &a)| {
            GRID.iter().enumerate().any(|(j, &b)| {
                let corner = (i == 0 && j == 0) || (i == GRID.len() - 1 && j == GRID.len() - 1);
                !corner
                    && inside(q[0], a - HALF_SIDE, a + HALF_SIDE)
                    && inside(q[1], b - HALF_SIDE, b + HALF_SIDE)
            })
        })
    };
    if outside || in_tree() {
        BASE_COST + OBSTACLE_COST
    } else {
        BASE_COST
    }
}

/// A planar curve through waypoints, parametrised by chord length.
struct Curve {
    /// Cumulative chord length at each waypoint, strictly increasing from `u₀ = 0`.
    u: Vec<f64>,
    /// The waypoints.
    p: Vec<[f64; 2]>,
    /// Second derivatives at the waypoints; zero for fewer than 4 waypoints, where the curve
    /// is piecewise linear (through 2 points the segment, through 1 the point) or, for 3
    /// points, the interpolating parabola.
    m2: Vec<[f64; 2]>,
}

impl Curve {
    /// The not-a-knot cubic spline through `points` in the chord-length parameter, or the
    /// interpolating polynomial of degree `m − 1` for `m < 4` distinct waypoints. A waypoint
    /// that does not lengthen the chain (a zero step, or one too small to change the
    /// cumulative length in floating point) is dropped: the reference code drops exact
    /// repeats, and a parameter that does not increase has no spline.
    fn through(points: &[[f64; 2]]) -> Self {
        let mut u = vec![0.0];
        let mut p = vec![points[0]];
        for q in &points[1..] {
            let last = p[p.len() - 1];
            let next = u[u.len() - 1] + (q[0] - last[0]).hypot(q[1] - last[1]);
            if next > u[u.len() - 1] {
                u.push(next);
                p.push(*q);
            }
        }
        let m2 = if p.len() >= 4 {
            not_a_knot_second_derivatives(&u, &p)
        } else {
            vec![[0.0; 2]; p.len()]
        };
        Curve { u, p, m2 }
    }

    /// The point at the normalised parameter `t ∈ [0, 1]` (chord length `t` times the total).
    fn at(&self, t: f64) -> [f64; 2] {
        let (u, p) = (&self.u, &self.p);
        let m = p.len();
        if m == 1 {
            return p[0];
        }
        let s = t * u[m - 1];
        if m == 3 {
            // Lagrange form of the parabola through the three waypoints.
            let l = |a: usize, b: usize, c: usize| {
                (s - u[b]) * (s - u[c]) / ((u[a] - u[b]) * (u[a] - u[c]))
            };
            let (l0, l1, l2) = (l(0, 1, 2), l(1, 0, 2), l(2, 0, 1));
            return [0, 1].map(|k| l0 * p[0][k] + l1 * p[1][k] + l2 * p[2][k]);
        }
        // The interval [u_i, u_{i+1}] holding s (the last one for t = 1).
        let i = u[1..m - 1].partition_point(|&v| v <= s);
        let h = u[i + 1] - u[i];
        let (a, b) = (u[i + 1] - s, s - u[i]);
        let m2 = &self.m2;
        [0, 1].map(|k| {
            (m2[i][k] * a * a * a + m2[i + 1][k] * b * b * b) / (6.0 * h)
                + (p[i][k] / h - m2[i][k] * h / 6.0) * a
                + (p[i + 1][k] / h - m2[i + 1][k] * h / 6.0) * b
        })
    }
}

/// Second derivatives `M₀ … M_{m−1}` (per coordinate) of the cubic spline through `(uᵢ, pᵢ)`
/// with not-a-knot ends (`m ≥ 4`): the third derivative is continuous at `u₁` and `u_{m−2}`.
///
/// The interior equations `h_{i−1} M_{i−1} + 2(h_{i−1} + hᵢ) Mᵢ + hᵢ M_{i+1} = 6(Δᵢ − Δ_{i−1})`
/// (`Δᵢ` the slope of chord `i`) with `M₀` and `M_{m−1}` eliminated by the not-a-knot
/// conditions leave a strictly diagonally dominant tridiagonal system in `M₁ … M_{m−2}`, which
/// the Thomas algorithm solves stably without pivoting.
fn not_a_knot_second_derivatives(u: &[f64], p: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let m = u.len();
    let h: Vec<f64> = u.windows(2).map(|w| w[1] - w[0]).collect();
    let slope = |i: usize, k: usize| (p[i + 1][k] - p[i][k]) / h[i];
    // Rows i = 1 … m−2 of the reduced system: sub, diag, sup and two right-hand sides.
    let n = m - 2;
    let (mut sub, mut diag, mut sup) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut rhs = vec![[0.0; 2]; n];
    for r in 0..n {
        let i = r + 1;
        sub[r] = h[i - 1];
        diag[r] = 2.0 * (h[i - 1] + h[i]);
        sup[r] = h[i];
        rhs[r] = [0, 1].map(|k| 6.0 * (slope(i, k) - slope(i - 1, k)));
    }
    // M₀ = (1 + h₀/h₁) M₁ − (h₀/h₁) M₂ folded into row 1.
    let r0 = h[0] / h[1];
    diag[0] += h[0] * (1.0 + r0);
    sup[0] -= h[0] * r0;
    // M_{m−1} = (1 + h_{m−2}/h_{m−3}) M_{m−2} − (h_{m−2}/h_{m−3}) M_{m−3} folded into row m−2.
    let re = h[m - 2] / h[m - 3];
    diag[n - 1] += h[m - 2] * (1.0 + re);
    sub[n - 1] -= h[m - 2] * re;
    // Thomas algorithm (forward sweep, back substitution).
    for r in 1..n {
        let w = sub[r] / diag[r - 1];
        diag[r] -= w * sup[r - 1];
        let prev = rhs[r - 1];
        rhs[r] = [0, 1].map(|k| rhs[r][k] - w * prev[k]);
    }
    let mut inner = vec![[0.0; 2]; n];
    inner[n - 1] = rhs[n - 1].map(|v| v / diag[n - 1]);
    for r in (0..n - 1).rev() {
        let next = inner[r + 1];
        inner[r] = [0, 1].map(|k| (rhs[r][k] - sup[r] * next[k]) / diag[r]);
    }
    let first = [0, 1].map(|k| (1.0 + r0) * inner[0][k] - r0 * inner[1][k]);
    let last = [0, 1].map(|k| (1.0 + re) * inner[n - 1][k] - re * inner[n - 2][k]);
    let mut out = Vec::with_capacity(m);
    out.push(first);
    out.extend(inner);
    out.push(last);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` copies of the step `(dx, dy)`, followed by zero steps up to 30.
    fn steps(n: usize, dx: f64, dy: f64) -> Vec<f64> {
        let mut x = vec![0.0; DIM];
        for k in 0..n {
            x[2 * k] = dx;
            x[2 * k + 1] = dy;
        }
        x
    }

    /// The fixed points of `crates/experiments/peers/rover.py --fixtures`.
    fn fixture_point(k: usize) -> Vec<f64> {
        let (lo, hi) = bounds();
        let (r2, r3) = (2f64.sqrt(), 3f64.sqrt());
        (0..DIM)
            .map(|j| lo + (hi - lo) * (((j + 1) as f64 * r2 + (k + 1) as f64 * r3) % 1.0))
            .collect()
    }

    #[test]
    fn the_box_is_minus_two_to_four_over_the_dimension() {
        let (lo, hi) = bounds();
        assert_eq!(DIM, 60);
        assert!((lo + 1.0 / 30.0).abs() < 1e-17 && (hi - 1.0 / 15.0).abs() < 1e-17);
        // Steps of 0.03 (inside the box) take the start to the goal in 30 steps.
        assert!(lo < 0.03 && 0.03 < hi);
        assert!((START[0] + 30.0 * 0.03 - GOAL[0]).abs() < 1e-15);
    }

    #[test]
    fn straight_obstacle_free_paths_have_the_analytic_cost() {
        // Along y = 0.05 (or x = 0.05) to 0.95 no obstacle is touched (the squares near that
        // line span [−0.04, 0.04) and [0.16, 0.24) across it): length 0.9 at cost 0.05, and
        // the end misses the goal by 0.9 in L1, at cost 100 per unit.
        let expected = 5.0 - 0.05 * 0.9 - 100.0 * 0.9;
        for x in [steps(30, 0.03, 0.0), steps(30, 0.0, 0.03)] {
            let r = reward(&x);
            assert!((r - expected).abs() < 1e-12, "{r} vs {expected}");
        }
    }

    #[test]
    fn zero_steps_are_dropped_and_short_chains_are_points_or_segments() {
        let line = 5.0 - 0.05 * 0.9 - 100.0 * 0.9;
        // Fifteen double steps then fifteen zero steps: the same line.
        let r = reward(&steps(15, 0.06, 0.0));
        assert!((r - line).abs() < 1e-12, "{r}");
        // Zero steps interleaved: the repeats are dropped.
        let mut x = steps(30, 0.03, 0.0);
        for k in (0..30).step_by(3) {
            x[2 * k] = 0.0;
        }
        for k in (1..30).step_by(3) {
            x[2 * k] = 0.06;
        }
        let r = reward(&x);
        assert!((r - line).abs() < 1e-12, "{r}");
        // No motion: a point at the start, 1.8 from the goal in L1.
        assert!((reward(&vec![0.0; DIM]) - (5.0 - 100.0 * 1.8)).abs() < 1e-12);
        // One step (2 waypoints, a segment) and two collinear steps (3 waypoints, the
        // parabola through them is the segment).
        let r = reward(&steps(1, 0.03, 0.0));
        assert!(
            (r - (5.0 - 0.05 * 0.03 - 100.0 * (0.87 + 0.9))).abs() < 1e-12,
            "{r}"
        );
        let r = reward(&steps(2, 0.03, 0.0));
        assert!(
            (r - (5.0 - 0.05 * 0.06 - 100.0 * (0.84 + 0.9))).abs() < 1e-12,
            "{r}"
        );
    }

    #[test]
    fn the_diagonal_crosses_four_obstacles() {
        let r = reward(&steps(30, 0.03, 0.03));
        // Brute force of the same trapezoid sum on the straight diagonal: sample i is at
        // 0.05 + 0.9 i/999 on both axes and inside exactly the squares centred on the
        // diagonal at 0.2, 0.4, 0.6, 0.8 (the others are at least 0.2/√2 away).
        let inside = |t: f64| {
            [0.2, 0.4, 0.6, 0.8]
                .iter()
                .any(|&c| c - 0.04 <= t && t < c + 0.04)
        };
        let cost_at = |i: usize| {
            0.05 + if inside(0.05 + 0.9 * i as f64 / 999.0) {
                20.0
            } else {
                0.0
            }
        };
        let seg = 0.9 * 2f64.sqrt() / 999.0;
        let brute: f64 = (0..999)
            .map(|i| seg * 0.5 * (cost_at(i) + cost_at(i + 1)))
            .sum();
        assert!((r - (5.0 - brute)).abs() < 1e-11, "{r} vs {}", 5.0 - brute);
        // The continuous integral: 4 crossings of 0.08√2 at cost 20.05, the rest at 0.05; the
        // trapezoid errs by at most half a segment times 20 at each of the 8 boundaries.
        let exact = 5.0 - 0.05 * 0.9 * 2f64.sqrt() - 20.0 * 4.0 * 0.08 * 2f64.sqrt();
        assert!(
            (r - exact).abs() <= 8.0 * 0.5 * 20.0 * seg,
            "{r} vs {exact}"
        );
    }

    #[test]
    fn mirroring_every_step_mirrors_the_path_and_keeps_the_reward() {
        // Obstacles, start and goal are symmetric under swapping the axes.
        for k in 0..4 {
            let x = fixture_point(k);
            let mirrored: Vec<f64> = x.chunks_exact(2).flat_map(|s| [s[1], s[0]]).collect();
            let (a, b) = (reward(&x), reward(&mirrored));
            assert!((a - b).abs() < 1e-12 * a.abs(), "{a} vs {b}");
        }
    }

    #[test]
    fn rewards_match_scipys_fitpack_spline() {
        // `python crates/experiments/peers/rover.py --fixtures` (numpy 2.4.6, scipy's splprep):
        // an independent implementation whose spline is FITPACK's, not this not-a-knot solve.
        let reference = [
            -77.1946663335542,
            -80.9438657015697,
            -81.40530725162085,
            -70.74760388998021,
        ];
        for (k, want) in reference.iter().enumerate() {
            let r = reward(&fixture_point(k));
            assert!((r - want).abs() < 1e-9, "point {k}: {r} vs {want}");
        }
    }

    #[test]
    fn the_spline_interpolates_with_not_a_knot_ends() {
        // Six waypoints off any line.
        let p = [
            [0.0, 0.0],
            [0.3, 0.1],
            [0.5, 0.6],
            [0.9, 0.4],
            [1.2, 1.0],
            [1.0, 1.5],
        ];
        let c = Curve::through(&p);
        let total = c.u[5];
        for (i, q) in p.iter().enumerate() {
            let at = c.at(c.u[i] / total);
            assert!((at[0] - q[0]).abs() < 1e-13 && (at[1] - q[1]).abs() < 1e-13);
        }
        // Third derivative (M_{i+1} − M_i)/h_i equal on both sides of u₁ and u₄; first
        // derivatives continuous at every interior knot (one-sided central differences).
        let third = |i: usize, k: usize| (c.m2[i + 1][k] - c.m2[i][k]) / (c.u[i + 1] - c.u[i]);
        for k in 0..2 {
            assert!((third(0, k) - third(1, k)).abs() < 1e-9 * third(0, k).abs().max(1.0));
            assert!((third(3, k) - third(4, k)).abs() < 1e-9 * third(3, k).abs().max(1.0));
        }
        let h = 1e-6;
        for i in 1..5 {
            let t = c.u[i] / total;
            let left = c.at(t - h);
            let right = c.at(t + h);
            let mid = c.at(t);
            for k in 0..2 {
                let dl = (mid[k] - left[k]) / h;
                let dr = (right[k] - mid[k]) / h;
                assert!((dl - dr).abs() < 1e-4, "knot {i}: {dl} vs {dr}");
            }
        }
        // Four waypoints: the spline is the one cubic through them (Lagrange form in u).
        let c4 = Curve::through(&p[..4]);
        let u = &c4.u;
        for s in [0.1, 0.37, 0.5, 0.93] {
            let v = s * u[3];
            let lagrange = |k: usize| {
                (0..4)
                    .map(|a| {
                        let w: f64 = (0..4)
                            .filter(|&b| b != a)
                            .map(|b| (v - u[b]) / (u[a] - u[b]))
                            .product();
                        w * p[a][k]
                    })
                    .sum::<f64>()
            };
            let at = c4.at(s);
            assert!((at[0] - lagrange(0)).abs() < 1e-12 && (at[1] - lagrange(1)).abs() < 1e-12);
        }
    }
}
