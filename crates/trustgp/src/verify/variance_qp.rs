//! Variance bounds over a box by a convex QP and an LP over the relaxed feasible set `P(T)`
//! (spec §2.6, Propositions 5 and 6), solved with Clarabel and certified in floating point
//! (spec §6.2), and their combination with the closed form of [`super::variance`].
//!
//! With `r = k(x, Z)ᵀ` and `S = Σ_k λ_k u_k u_kᵀ + R` (the eigendecomposition of the stored `S`
//! as computed, `R` its measured residual), a bound of `min_{P(T)} σ·rᵀSr` for `σ = ±1` (the
//! variance's upper bound for `σ = +1`, its lower bound for `σ = −1`) is:
//!
//! 1. the convex part `g(r) = Σ_{σλ_k>0} σλ_k (u_k·r)²` is kept (Prop. 5's QP); each concave
//!    term `σλ_k (u_k·r)²` (`σλ_k < 0`) is replaced by its chord over the interval range of
//!    `u_k·r` (Prop. 6, interval option): for PSD `S` and `σ = −1` this is Prop. 6's LP, for
//!    indefinite `S` the spec's `S₊` handling with chords instead of a constant correction;
//! 2. Clarabel minimises that over `P(T)` (keeping the [`RANK`] largest convex terms as a
//!    quadratic in `w = √μ u_kᵀr` and the others as their tangent plane, so that the KKT
//!    system stays sparse for large N); its answer is **not trusted**: `g` is linearised at
//!    the solver's `r₀` (`g(r) ≥ g(r₀) + ∇g(r₀)·(r − r₀)`, exact for any `r₀` by convexity),
//!    and the resulting linear function is bounded below over `P(T)` by weak duality with the
//!    solver's (clipped) multipliers ([`Polytope::certified_min`]), which is valid for any
//!    multipliers — a failed or inaccurate solve only makes the bound looser;
//! 3. `|rᵀRr| ≤ ‖R‖_F ‖r‖²` and the rounding of the eigen-sums are subtracted.
//!
//! [`VarianceMethod::Both`] intersects this with the closed form (`max` of the lower bounds,
//! `min` of the upper ones): both are sound, so their intersection is.

use std::sync::Arc;

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SupportedConeT, ZeroConeT,
};
use faer::{Mat, MatRef, Side};

use super::bnb::Sense;
use super::decomposition::PointSandwiches;
use super::form::LatentForm;
use super::region::Region;
use super::relaxation::Polytope;
use super::variance::{self, VarianceBounds};
use super::{rounding, VerifyError};

/// How the latent variance is bounded over a box.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VarianceMethod {
    /// The closed form of [`super::variance`] only: `O(N²)` per box, no solver. The default:
    /// on `experiments bench-verify` (exact-GP-like `S`, flat spectrum) the solver never
    /// fathomed a box the closed form did not (same iterations) and cost ~0.2 s per box at
    /// N = 1000 (3.2 s per point against 16 ms).
    #[default]
    ClosedForm,
    /// The certified QP/LP bounds of this module only.
    Solver,
    /// Both, intersected (the tighter of each side).
    Both,
}

/// Which sides of the variance are wanted (a probability bound needs only one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sides {
    /// The lower bound of the variance.
    pub lower: bool,
    /// The upper bound of the variance.
    pub upper: bool,
}

impl Sides {
    /// Both sides.
    pub const BOTH: Sides = Sides {
        lower: true,
        upper: true,
    };
}

/// The eigendecomposition of a form's `S`, once per model.
#[derive(Clone, Debug)]
pub struct Spectrum {
    /// Eigenvectors (columns).
    u: Mat<f64>,
    /// Eigenvalues.
    lambda: Vec<f64>,
    /// `‖S − U diag(λ) Uᵀ‖_F` plus the rounding of its computation: bounds `|rᵀRr|/‖r‖²`.
    resid: f64,
}

impl Spectrum {
    /// The spectrum of a symmetric `s`.
    ///
    /// # Errors
    /// If the eigendecomposition fails.
    pub fn of(s: MatRef<'_, f64>) -> Result<Arc<Spectrum>, VerifyError> {
        let n = s.nrows();
        let eig = s
            .self_adjoint_eigen(Side::Lower)
            .map_err(|e| VerifyError::Invalid(format!("eigendecomposition of S failed: {e:?}")))?;
        let u = eig.U().to_owned();
        let lambda: Vec<f64> = (0..n).map(|k| eig.S()[k]).collect();
        let scaled = Mat::from_fn(n, n, |i, k| u[(i, k)] * lambda[k]);
        let back = &scaled * u.transpose();
        let mut r2 = 0.0;
        for j in 0..n {
            for i in 0..n {
                r2 += (s[(i, j)] - back[(i, j)]).powi(2);
            }
        }
        // Each entry of U Λ Uᵀ is an n-term sum of magnitude ≤ max|λ| (near-orthonormal U):
        // its rounding is at most n ε max|λ| per entry, n² ε max|λ| in Frobenius norm.
        let lmax = lambda.iter().fold(0.0_f64, |a, l| a.max(l.abs()));
        let nf = n as f64;
        let resid = r2.sqrt() * (1.0 + 1e-6) + 4.0 * nf * nf * f64::EPSILON * lmax + 1e-300;
        Ok(Arc::new(Spectrum { u, lambda, resid }))
    }
}

/// How many convex eigen-terms the solver keeps as a quadratic (the rest: a tangent plane).
pub const RANK: usize = 32;

/// A certified lower bound of `min σ·rᵀSr` over `poly` and the input point of the solver's
/// minimiser.
fn quadratic_min(
    spec: &Spectrum,
    sigma: f64,
    poly: &Polytope,
    sw: &PointSandwiches,
    region: &Region,
) -> (f64, Vec<f64>) {
    let n = sw.n;
    let (u, lam) = (&spec.u, &spec.lambda);
    let rmax: Vec<f64> = (0..n).map(|i| sw.lo[i].abs().max(sw.hi[i].abs())).collect();
    // Chords of the concave terms, and the magnitude of every eigen-sum (rounding margin).
    let mut c_chord = vec![0.0; n];
    let mut alpha = 0.0;
    let mut scale = 0.0;
    let mut convex = Vec::new();
    for (k, &l) in lam.iter().enumerate() {
        let mu = sigma * l;
        let col = u.col(k);
        let (mut a, mut b, mut mag) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let (p, q) = (col[i] * sw.lo[i], col[i] * sw.hi[i]);
            a += p.min(q);
            b += p.max(q);
            mag += col[i].abs() * rmax[i];
        }
        scale += mu.abs() * mag * mag;
        if mu > 0.0 {
            convex.push(k);
        } else if mu < 0.0 {
            // The interval of u_k·r, widened for its rounding.
            let (a, b) = (rounding::down(a, mag), rounding::up(b, mag));
            // μ s² ≥ μ (a + b) s − μ a b on [a, b] (μ < 0: concave, the chord is below).
            let beta = mu * (a + b);
            alpha -= mu * a * b;
            for i in 0..n {
                c_chord[i] += beta * col[i];
            }
        }
    }
    // The solver keeps the RANK largest convex terms as a quadratic (`w = √μ_k u_kᵀr`, `‖w‖²`)
    // and the rest as their tangent plane at the centre of the r box: a sparse KKT system
    // instead of a dense N×N one. Only the solver's problem is approximated; the certificate
    // below linearises every convex term at the solver's point.
    convex.sort_by(|&a, &b| lam[b].abs().total_cmp(&lam[a].abs()));
    let keep = convex.len().min(RANK);
    let factor = Mat::from_fn(n, keep, |i, c| {
        let k = convex[c];
        (sigma * lam[k]).sqrt() * u[(i, k)]
    });
    let mut c_full = vec![0.0; poly.vars()];
    c_full[poly.r_start..poly.r_start + n].copy_from_slice(&c_chord);
    for &k in &convex[keep..] {
        let mu = sigma * lam[k];
        let col = u.col(k);
        let s: f64 = (0..n).map(|i| col[i] * 0.5 * (sw.lo[i] + sw.hi[i])).sum();
        for i in 0..n {
            c_full[poly.r_start + i] += 2.0 * mu * s * col[i];
        }
    }
    let (z, y) = solve(poly, (keep > 0).then_some(&factor), &c_full);
    // Linearise the convex part at the solver's r₀ (clipped into the r box).
    let r0: Vec<f64> = (0..n)
        .map(|i| {
            let v = z.get(poly.r_start + i).copied().unwrap_or(f64::NAN);
            if v.is_finite() {
                v.clamp(sw.lo[i], sw.hi[i])
            } else {
                0.5 * (sw.lo[i] + sw.hi[i])
            }
        })
        .collect();
    let mut c = c_chord;
    let mut g0 = 0.0;
    for &k in &convex {
        let mu = sigma * lam[k];
        let col = u.col(k);
        let s: f64 = (0..n).map(|i| col[i] * r0[i]).sum();
        g0 += mu * s * s;
        for i in 0..n {
            c[i] += 2.0 * mu * s * col[i];
        }
    }
    // g(r) ≥ g(r₀) + ∇g·(r − r₀) = −g(r₀) + ∇g·r  (∇g·r₀ = 2 g(r₀)).
    let mut c_full = vec![0.0; poly.vars()];
    c_full[poly.r_start..poly.r_start + n].copy_from_slice(&c);
    let lin = poly.certified_min(&c_full, &y);
    let r2: f64 = rmax.iter().map(|v| v * v).sum();
    let slack = (n as f64 / 500.0).max(1.0);
    let value = lin - g0 + alpha;
    let margin = spec.resid * r2;
    let bound = rounding::down(
        value - margin,
        (scale + lin.abs() + g0.abs() + alpha.abs()) * slack,
    );
    let x = poly.point(&z, region);
    (bound, x)
}

/// Clarabel on `min ‖Fᵀr‖² + cᵀz` over the polytope (`F` an `N × K` factor on the `r` block,
/// none: an LP), with `w = Fᵀr` as `K` extra free variables so that the KKT system stays
/// sparse. Returns the primal point (the polytope's variables) and the multipliers of the
/// polytope's rows, whatever the solver's status (they are only hints for the
/// certification); empty vectors if the solver could not start.
pub(crate) fn solve(poly: &Polytope, factor: Option<&Mat<f64>>, c: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let nv = poly.vars();
    let rs = poly.r_start;
    let kw = factor.map_or(0, |f| f.ncols());
    let n = factor.map_or(0, |f| f.nrows());
    let total = nv + kw;
    // P = 2I on the w block.
    let mut colptr = vec![0usize; total + 1];
    let mut rowval = Vec::with_capacity(kw);
    for j in 0..total {
        if j >= nv {
            rowval.push(j);
        }
        colptr[j + 1] = rowval.len();
    }
    let p = CscMatrix::new(total, total, colptr, rowval, vec![2.0; kw]);
    let mut q = c.to_vec();
    q.resize(total, 0.0);
    // Rows of A, the variable boxes as rows (Clarabel has no bounds), then w − Fᵀr = 0.
    let m = poly.rows();
    let mut ri = poly.row.clone();
    let mut ci = poly.col.clone();
    let mut vi = poly.val.clone();
    let mut b = poly.b.clone();
    for k in 0..nv {
        ri.push(m + 2 * k);
        ci.push(k);
        vi.push(1.0);
        b.push(poly.upper[k]);
        ri.push(m + 2 * k + 1);
        ci.push(k);
        vi.push(-1.0);
        b.push(-poly.lower[k]);
    }
    let ineq = m + 2 * nv;
    if let Some(f) = factor {
        for c in 0..kw {
            ri.push(ineq + c);
            ci.push(nv + c);
            vi.push(1.0);
            for i in 0..n {
                ri.push(ineq + c);
                ci.push(rs + i);
                vi.push(-f[(i, c)]);
            }
            b.push(0.0);
        }
    }
    let a = CscMatrix::new_from_triplets(ineq + kw, total, ri, ci, vi);
    let mut cones: Vec<SupportedConeT<f64>> = vec![NonnegativeConeT(ineq)];
    if kw > 0 {
        cones.push(ZeroConeT(kw));
    }
    let Ok(settings) = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(100)
        .build()
    else {
        return (Vec::new(), Vec::new());
    };
    let Ok(mut solver) = DefaultSolver::new(&p, &q, &a, &b, &cones, settings) else {
        return (Vec::new(), Vec::new());
    };
    solver.solve();
    let y = solver.solution.z[..m].to_vec();
    (solver.solution.x[..nv].to_vec(), y)
}

/// The solver's certified bound of one side of the variance over `region` — a lower bound for
/// [`Sense::Min`], an upper bound for [`Sense::Max`] — and the input point of its minimiser
/// (`None` if `S` has no eigendecomposition).
pub fn solver_bound(
    form: &LatentForm,
    sw: &PointSandwiches,
    region: &Region,
    poly: &Polytope,
    sense: Sense,
) -> Option<(f64, Vec<f64>)> {
    let spec = form.spectrum()?;
    let pv = form.prior_var();
    Some(match sense {
        // max var = pv − min q.
        Sense::Max => {
            let (lb, x) = quadratic_min(spec, 1.0, poly, sw, region);
            // The reported variance is clamped at 0 (`LatentForm::moments`).
            (rounding::up(pv - lb, pv.abs() + lb.abs()).max(0.0), x)
        }
        // min var = pv + min(−q).
        Sense::Min => {
            let (lb, x) = quadratic_min(spec, -1.0, poly, sw, region);
            (rounding::down(pv + lb, pv.abs() + lb.abs()).max(0.0), x)
        }
    })
}

/// The variance bounds of `form` over `region` by `method`; sides not in `sides` come from
/// the closed form whatever the method (they cost nothing extra there).
pub fn bounds(
    form: &LatentForm,
    sw: &PointSandwiches,
    region: &Region,
    method: VarianceMethod,
    sides: Sides,
) -> VarianceBounds {
    let mut out = variance::bounds(form, sw, region);
    if method == VarianceMethod::ClosedForm || !(sides.lower || sides.upper) {
        return out;
    }
    let both = method == VarianceMethod::Both;
    let poly = Polytope::build(form, sw, region);
    if sides.lower {
        if let Some((lo, x)) = solver_bound(form, sw, region, &poly, Sense::Min) {
            if !both || lo > out.lower {
                out.lower = lo;
                out.x_lower = x;
            }
        }
    }
    if sides.upper {
        if let Some((hi, x)) = solver_bound(form, sw, region, &poly, Sense::Max) {
            if !both || hi < out.upper {
                out.upper = hi;
                out.x_upper = x;
            }
        }
    }
    out
}
