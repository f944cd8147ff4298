//! The relaxed feasible set `P(T)` of spec §2.6 — a polytope in the variables
//! `(x, φ-slacks, r)` that contains every point `(x, φ(x, zᵢ), k(x, zᵢ))` with `x ∈ T` — and a
//! certified lower bound of a linear function over it by weak duality (spec §6.2).
//!
//! Variables, in order:
//! * `x_j` for the free coordinates of the box (`lower < upper`); fixed ones are constants;
//! * per radial base kernel `b`, support point `i` and free coordinate `j` it reads:
//!   `p = θ_j (x_j − z_ij)²`, boxed by its range over `[l_j, u_j]`, above three tangents of
//!   the parabola (at `l_j`, the centre and `u_j`) and below its chord (the convex hull of the
//!   parabola's graph up to the missing tangents); the fixed coordinates add a constant `κ`;
//! * per periodic base kernel `b` and support point `i`: `Φ = φ_b(x, zᵢ)` itself, boxed by its
//!   range (its `sin²` terms are not tied to `x`: valid, looser);
//! * `rᵢ = k(x, zᵢ)`, boxed by `[loᵢ, hiᵢ]` and between the sandwich lines of
//!   [`PointSandwiches`] in `φ_b = κ_bi + Σ_j p_bij` (or `Φ_bi`).
//!
//! Every row `A z ≤ b` is relaxed outward by a rounding margin, so that the real-number truth
//! is feasible for the stored rows. The bound of [`Polytope::certified_min`] holds for any
//! multipliers `y ≥ 0`: a solver's duals only make it tight, they are never trusted.

use faer::MatRef;

use super::decomposition::PointSandwiches;
use super::form::LatentForm;
use super::psi::Profile;
use super::region::Region;
use super::rounding;

/// The polytope `{z : A z ≤ b, lower ≤ z ≤ upper}` of spec §2.6 over one box.
#[derive(Clone, Debug)]
pub struct Polytope {
    /// Lower bounds of the variables.
    pub lower: Vec<f64>,
    /// Upper bounds of the variables.
    pub upper: Vec<f64>,
    /// Row indices of the nonzeros of `A`.
    pub row: Vec<usize>,
    /// Column (variable) indices of the nonzeros of `A`.
    pub col: Vec<usize>,
    /// Values of the nonzeros of `A`.
    pub val: Vec<f64>,
    /// Right-hand sides.
    pub b: Vec<f64>,
    /// The input coordinate of each `x` variable (variables `0..free.len()`).
    pub free: Vec<usize>,
    /// Index of the variable `r_0` (`r_i` is `r_start + i`).
    pub r_start: usize,
}

/// Rows under construction: one row at a time, relaxed by its rounding margin when closed.
struct Builder {
    p: Polytope,
    /// Nonzeros of the open row: (variable, coefficient).
    open: Vec<(usize, f64)>,
}

impl Builder {
    fn var(&mut self, lo: f64, hi: f64) -> usize {
        self.p.lower.push(lo);
        self.p.upper.push(hi);
        self.p.lower.len() - 1
    }

    fn term(&mut self, var: usize, coef: f64) {
        if coef != 0.0 {
            self.open.push((var, coef));
        }
    }

    /// Closes the open row `Σ coef·z ≤ rhs`, relaxed by the margin of its terms' magnitudes
    /// over the variable boxes (covers the rounding of the coefficients and of `rhs`).
    fn close(&mut self, rhs: f64, rhs_scale: f64) {
        let r = self.p.b.len();
        let mut scale = rhs.abs() + rhs_scale;
        for &(v, c) in &self.open {
            scale += c.abs() * self.p.lower[v].abs().max(self.p.upper[v].abs());
            self.p.row.push(r);
            self.p.col.push(v);
            self.p.val.push(c);
        }
        self.p.b.push(rounding::up(rhs, scale));
        self.open.clear();
    }
}

impl Polytope {
    /// `P(T)` of `form` over `region`, from the sandwiches `sw` of its kernel there.
    pub fn build(form: &LatentForm, sw: &PointSandwiches, region: &Region) -> Polytope {
        let z = form.support();
        let n = form.n();
        let free: Vec<usize> = (0..region.dim())
            .filter(|&j| region.upper[j] > region.lower[j])
            .collect();
        let mut bld = Builder {
            p: Polytope {
                lower: Vec::new(),
                upper: Vec::new(),
                row: Vec::new(),
                col: Vec::new(),
                val: Vec::new(),
                b: Vec::new(),
                free: free.clone(),
                r_start: 0,
            },
            open: Vec::new(),
        };
        for &j in &free {
            bld.var(region.lower[j], region.upper[j]);
        }
        let x_var = |j: usize| free.iter().position(|&f| f == j);
        // φ_b(x, zᵢ) = kappa[b·n + i] + Σ of the variables in terms[b·n + i].
        let bases = &form.decomposition().bases;
        let mut kappa = vec![0.0; bases.len() * n];
        let mut kappa_scale = vec![0.0; bases.len() * n];
        let mut terms: Vec<Vec<usize>> = vec![Vec::new(); bases.len() * n];
        for (b, base) in bases.iter().enumerate() {
            for i in 0..n {
                let slot = b * n + i;
                if base.profile == Profile::Periodic {
                    let (lo, hi) = base.phi_range(|j| z[(i, j)], region);
                    terms[slot].push(bld.var(lo, hi));
                    continue;
                }
                for (p, &j) in base.dims.iter().enumerate() {
                    let th = base.theta[p];
                    let (l, u, zj) = (region.lower[j], region.upper[j], z[(i, j)]);
                    let Some(xv) = x_var(j) else {
                        let v = th * (l - zj) * (l - zj);
                        kappa[slot] += v;
                        kappa_scale[slot] += v;
                        continue;
                    };
                    let dist = if zj < l {
                        l - zj
                    } else if zj > u {
                        zj - u
                    } else {
                        0.0
                    };
                    let lo = th * dist * dist;
                    let hi = th * (l - zj).powi(2).max((u - zj).powi(2));
                    let pv = bld.var(rounding::down(lo, lo).max(0.0), rounding::up(hi, hi));
                    terms[slot].push(pv);
                    // Tangents: p ≥ θ(t − z)² + 2θ(t − z)(x − t), i.e.
                    // 2θ(t − z)·x − p ≤ 2θ(t − z)·t − θ(t − z)².
                    for t in [l, 0.5 * (l + u), u] {
                        let s = 2.0 * th * (t - zj);
                        bld.term(xv, s);
                        bld.term(pv, -1.0);
                        let f = th * (t - zj) * (t - zj);
                        bld.close(s * t - f, (s * t).abs() + f);
                    }
                    // Chord: p ≤ θ(l − z)² + θ(u + l − 2z)(x − l).
                    let s = th * (u + l - 2.0 * zj);
                    bld.term(pv, 1.0);
                    bld.term(xv, -s);
                    let f = th * (l - zj) * (l - zj);
                    bld.close(f - s * l, f + (s * l).abs());
                }
            }
        }
        bld.p.r_start = bld.p.lower.len();
        for i in 0..n {
            bld.var(sw.lo[i], sw.hi[i]);
        }
        for i in 0..n {
            let r = bld.p.r_start + i;
            // Lower line: low_a + Σ_b low_b (κ + Σ p) − r ≤ 0.
            let mut rhs = -sw.low_a[i];
            let mut rhs_scale = sw.low_a[i].abs();
            for b in 0..bases.len() {
                let slope = sw.low_b[b * n + i];
                if slope == 0.0 {
                    continue;
                }
                rhs -= slope * kappa[b * n + i];
                rhs_scale += (slope * kappa_scale[b * n + i]).abs();
                for &v in &terms[b * n + i] {
                    bld.term(v, slope);
                }
            }
            bld.term(r, -1.0);
            bld.close(rhs, rhs_scale);
            // Upper line: r − up_a − Σ_b up_b (κ + Σ p) ≤ 0.
            let mut rhs = sw.up_a[i];
            let mut rhs_scale = sw.up_a[i].abs();
            for b in 0..bases.len() {
                let slope = sw.up_b[b * n + i];
                if slope == 0.0 {
                    continue;
                }
                rhs += slope * kappa[b * n + i];
                rhs_scale += (slope * kappa_scale[b * n + i]).abs();
                for &v in &terms[b * n + i] {
                    bld.term(v, -slope);
                }
            }
            bld.term(r, 1.0);
            bld.close(rhs, rhs_scale);
        }
        bld.p
    }

    /// Number of variables.
    pub fn vars(&self) -> usize {
        self.lower.len()
    }

    /// Number of rows of `A`.
    pub fn rows(&self) -> usize {
        self.b.len()
    }

    /// The full input point of a variable vector: free coordinates from `z` (clipped into the
    /// box), fixed ones from `region`.
    pub fn point(&self, z: &[f64], region: &Region) -> Vec<f64> {
        let mut x = region.lower.clone();
        for (k, &j) in self.free.iter().enumerate() {
            let v = z.get(k).copied().unwrap_or(f64::NAN);
            x[j] = if v.is_finite() {
                v.clamp(region.lower[j], region.upper[j])
            } else {
                0.5 * (region.lower[j] + region.upper[j])
            };
        }
        x
    }

    /// Whether `z` satisfies every row and box within `tol` (for tests: the truth lies in
    /// `P(T)`).
    pub fn contains(&self, z: &[f64], tol: f64) -> bool {
        let mut lhs = vec![0.0; self.rows()];
        for ((&r, &c), &v) in self.row.iter().zip(&self.col).zip(&self.val) {
            lhs[r] += v * z[c];
        }
        let rows_ok = lhs.iter().zip(&self.b).all(|(l, b)| *l <= b + tol);
        let box_ok = z
            .iter()
            .zip(self.lower.iter().zip(&self.upper))
            .all(|(v, (l, u))| *l - tol <= *v && *v <= u + tol);
        rows_ok && box_ok
    }

    /// A certified lower bound of `min cᵀz` over the polytope from any multipliers `y` of the
    /// rows (negative or non-finite entries are taken as 0): by weak duality,
    /// `cᵀz ≥ cᵀz + yᵀ(Az − b) = c̃ᵀz − bᵀy ≥ Σ_k min(c̃_k l_k, c̃_k u_k) − bᵀy` with
    /// `c̃ = c + Aᵀy`, widened by the rounding margin of every sum involved.
    pub fn certified_min(&self, c: &[f64], y: &[f64]) -> f64 {
        let y: Vec<f64> = (0..self.rows())
            .map(|k| {
                let v = y.get(k).copied().unwrap_or(0.0);
                if v.is_finite() && v > 0.0 {
                    v
                } else {
                    0.0
                }
            })
            .collect();
        let mut ct = c.to_vec();
        // |c| + |A|ᵀy: the magnitude each entry of c̃ was summed from.
        let mut cmag: Vec<f64> = c.iter().map(|v| v.abs()).collect();
        for ((&r, &k), &v) in self.row.iter().zip(&self.col).zip(&self.val) {
            ct[k] += v * y[r];
            cmag[k] += (v * y[r]).abs();
        }
        let mut total = 0.0;
        let mut scale = 0.0;
        for (bk, yk) in self.b.iter().zip(&y) {
            total -= bk * yk;
            scale += (bk * yk).abs();
        }
        for k in 0..self.vars() {
            let (l, u) = (self.lower[k], self.upper[k]);
            total += (ct[k] * l).min(ct[k] * u);
            scale += cmag[k] * l.abs().max(u.abs());
        }
        let terms = (self.rows() + self.vars() + self.val.len()) as f64;
        rounding::down(total, scale * (terms / 2000.0).max(1.0))
    }

    /// The true point `(x, p, r)` of `x` (for tests: it must lie in the polytope).
    pub fn truth(&self, form: &LatentForm, x: &[f64]) -> Vec<f64> {
        let z: MatRef<'_, f64> = form.support();
        let n = form.n();
        let mut out = Vec::with_capacity(self.vars());
        for &j in &self.free {
            out.push(x[j]);
        }
        for base in &form.decomposition().bases {
            for i in 0..n {
                if base.profile == Profile::Periodic {
                    out.push(base.phi(x, |j| z[(i, j)]));
                    continue;
                }
                for (p, &j) in base.dims.iter().enumerate() {
                    if self.free.contains(&j) {
                        out.push(base.theta[p] * (x[j] - z[(i, j)]).powi(2));
                    }
                }
            }
        }
        let xs = MatRef::from_row_major_slice(x, 1, x.len());
        let k = form.kernel().cross(z, xs);
        for i in 0..n {
            out.push(k[(i, 0)]);
        }
        out
    }
}
