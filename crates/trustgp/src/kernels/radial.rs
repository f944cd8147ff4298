//! Stationary kernels that depend on the inputs only through the scaled
//! squared distance r² = Σ_d (Δ_d/ℓ_d)²: se, the Matérn family and rq.

use super::engine::Prepared;
use super::pair::PairKernel;
use super::simd::{exp, vectorized};
use crate::linalg::sum_pairs;
use pulp::{Simd, WithSimd};

/// The unit-variance profile f(r²) of a radial kernel.
pub(crate) trait Radial: Sync {
    /// Whether the profile has a shape hyperparameter (rq's alpha).
    const HAS_SHAPE: bool = false;
    /// Returns `(f(r²), h)` with h = −2 f'(r²), the factor shared by every
    /// lengthscale derivative (∂f/∂log ℓ_d = h·(Δ_d/ℓ_d)²) and by ∂f/∂z_c = −h·Δz_c.
    fn eval(&self, r2: f64) -> (f64, f64);
    /// ∂f/∂log(shape) given r² and f(r²); only called when `HAS_SHAPE`.
    fn shape_grad(&self, _r2: f64, _f: f64) -> f64 {
        0.0
    }
}

/// Squared exponential: f = exp(−r²/2), h = f.
pub(crate) struct SquaredExp;

impl Radial for SquaredExp {
    #[inline(always)]
    fn eval(&self, r2: f64) -> (f64, f64) {
        let f = exp(-0.5 * r2);
        (f, f)
    }
}

/// Matérn 1/2: f = exp(−r), h = exp(−r)/r.
pub(crate) struct Matern12;

impl Radial for Matern12 {
    #[inline(always)]
    fn eval(&self, r2: f64) -> (f64, f64) {
        let r = r2.sqrt();
        let f = exp(-r);
        // h is unbounded at r = 0, but it is only ever multiplied by quantities that
        // vanish there (Δ² ≤ r², Δ): use the one-sided limit 0 of those products.
        let h = if r > 0.0 { f / r } else { 0.0 };
        (f, h)
    }
}

/// Matérn 3/2: f = (1+√3 r)e^{−√3 r}, h = 3e^{−√3 r}.
pub(crate) struct Matern32;

impl Radial for Matern32 {
    #[inline(always)]
    fn eval(&self, r2: f64) -> (f64, f64) {
        let s = (3.0 * r2).sqrt();
        let e = exp(-s);
        ((1.0 + s) * e, 3.0 * e)
    }
}

/// Matérn 5/2: f = (1+√5 r+5r²/3)e^{−√5 r}, h = (5/3)(1+√5 r)e^{−√5 r}.
pub(crate) struct Matern52;

impl Radial for Matern52 {
    #[inline(always)]
    fn eval(&self, r2: f64) -> (f64, f64) {
        let s = (5.0 * r2).sqrt();
        let e = exp(-s);
        ((1.0 + s + 5.0 * r2 / 3.0) * e, 5.0 / 3.0 * (1.0 + s) * e)
    }
}

/// Rational quadratic: f = (1 + r²/(2α))^(−α), h = (1 + r²/(2α))^(−α−1).
pub(crate) struct RationalQuadratic {
    /// Shape α.
    pub alpha: f64,
}

impl Radial for RationalQuadratic {
    const HAS_SHAPE: bool = true;

    fn eval(&self, r2: f64) -> (f64, f64) {
        let base = 1.0 + r2 / (2.0 * self.alpha);
        let f = base.powf(-self.alpha);
        (f, f / base)
    }

    fn shape_grad(&self, r2: f64, f: f64) -> f64 {
        // ∂ ln f/∂ ln α = −α ln(base) + r²/(2·base).
        let base = 1.0 + r2 / (2.0 * self.alpha);
        f * (-self.alpha * base.ln() + r2 / (2.0 * base))
    }
}

/// A radial kernel `var·f(r²)` on inputs already divided by their lengthscales.
pub(crate) struct Stationary<R> {
    /// Variance (times any scalar factor folded in by a product).
    pub var: f64,
    /// Whether one lengthscale is shared by all active inputs.
    pub iso: bool,
    /// Number of active inputs.
    pub m: usize,
    /// The profile.
    pub radial: R,
}

/// Writes ‖x_a − z‖² for a = first, first+1, … (one per entry of `out`), input by input so
/// that each inner loop runs down a contiguous column.
#[inline(always)]
fn squared_distances(p: &Prepared, first: usize, z: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (c, zc) in z.iter().enumerate() {
        for (r2, x) in out.iter_mut().zip(&p.column(c)[first..]) {
            *r2 += (x - zc) * (x - zc);
        }
    }
}

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

impl<R: Radial> PairKernel for Stationary<R> {
    fn n_shape(&self) -> usize {
        (if self.iso { 1 } else { self.m }) + usize::from(R::HAS_SHAPE)
    }

    fn value(&self, a: &[f64], b: &[f64]) -> f64 {
        self.var * self.radial.eval(sq_dist(a, b)).0
    }

    fn column(&self, p: &Prepared, first: usize, zb: &[f64], out: &mut [f64]) {
        vectorized(ColumnOp {
            k: self,
            p,
            first,
            zb,
            out,
        })
    }

    fn contract_against(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        scratch: &mut Vec<f64>,
        g: &mut [f64],
    ) -> f64 {
        vectorized(ContractOp {
            k: self,
            p,
            first,
            zb,
            w,
            scratch,
            g,
        })
    }

    fn contract_against_adding_values(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        scratch: &mut Vec<f64>,
        g: &mut [f64],
        values: &mut [f64],
    ) -> f64 {
        let wk = self.contract_against(p, first, zb, w, scratch, g);
        // The contraction left the profile f(r²) in the second third of `scratch`; var·f is
        // bit for bit what `column` computes.
        let f = &scratch[w.len()..2 * w.len()];
        values
            .iter_mut()
            .zip(f)
            .for_each(|(v, f)| *v += self.var * f);
        wk
    }

    fn grad_first_contract_row(
        &self,
        za: &[f64],
        p: &Prepared,
        w: &[f64],
        scratch: &mut Vec<f64>,
        out: &mut [f64],
    ) {
        vectorized(GradRowOp {
            k: self,
            za,
            p,
            w,
            scratch,
            out,
        })
    }

    fn grad_first(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        let vh = self.var * self.radial.eval(sq_dist(a, b)).1;
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            *o = -vh * (x - y);
        }
    }
}

impl<R: Radial> Stationary<R> {
    /// [`PairKernel::column`]'s loops, inlined into [`ColumnOp`] so that they are compiled
    /// for the SIMD instruction set chosen at run time.
    #[inline(always)]
    fn column_loops(&self, p: &Prepared, first: usize, zb: &[f64], out: &mut [f64]) {
        squared_distances(p, first, zb, out);
        for v in out.iter_mut() {
            *v = self.var * self.radial.eval(*v).0;
        }
    }

    /// [`PairKernel::contract_against`]'s loops, inlined into [`ContractOp`].
    #[inline(always)]
    fn contract_loops(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        scratch: &mut Vec<f64>,
        g: &mut [f64],
    ) -> f64 {
        let len = w.len();
        scratch.clear();
        scratch.resize(3 * len, 0.0);
        let (r2, rest) = scratch.split_at_mut(len);
        let (f, wh) = rest.split_at_mut(len);
        squared_distances(p, first, zb, r2);
        for (((r, f), h), wa) in r2.iter().zip(f.iter_mut()).zip(wh.iter_mut()).zip(w) {
            let (fv, hv) = self.radial.eval(*r);
            (*f, *h) = (fv, wa * hv);
        }
        let wk = sum_pairs(w, f, |wa, f| wa * f);
        if R::HAS_SHAPE {
            let shape = (r2.iter().zip(f.iter()).zip(w))
                .map(|((r, f), wa)| wa * self.radial.shape_grad(*r, *f))
                .sum::<f64>();
            g[self.n_shape() - 1] += self.var * shape;
        }
        // ∂k/∂log ℓ_c = var·h·Δz_c² (isotropic: var·h·r²).
        if self.iso {
            g[0] += self.var * sum_pairs(r2, wh, |r, h| r * h);
        } else {
            for (c, z) in zb.iter().enumerate() {
                let col = &p.column(c)[first..first + len];
                g[c] += self.var * sum_pairs(col, wh, |x, h| h * (x - z) * (x - z));
            }
        }
        self.var * wk
    }
}

impl<R: Radial> Stationary<R> {
    /// [`PairKernel::grad_first_contract_row`]'s loops, inlined into [`GradRowOp`]:
    /// ∂k(za, x_b)/∂za_c = −var·h_b·(za_c − x_bc), so the row's sum is
    /// −var·Σ_b u_b (za_c − x_bc) with u_b = w_b h_b, every loop running down a contiguous
    /// input column.
    #[inline(always)]
    fn grad_row_loops(
        &self,
        za: &[f64],
        p: &Prepared,
        w: &[f64],
        scratch: &mut Vec<f64>,
        out: &mut [f64],
    ) {
        scratch.resize(w.len(), 0.0);
        squared_distances(p, 0, za, scratch);
        // r² becomes u = w·h in place.
        for (u, wb) in scratch.iter_mut().zip(w) {
            *u = wb * self.radial.eval(*u).1;
        }
        for ((o, z), c) in out.iter_mut().zip(za).zip(0..) {
            *o = -self.var * sum_pairs(scratch, p.column(c), |u, x| u * (z - x));
        }
    }
}

/// [`Stationary::grad_row_loops`] as a SIMD operation.
struct GradRowOp<'a, R> {
    k: &'a Stationary<R>,
    za: &'a [f64],
    p: &'a Prepared,
    w: &'a [f64],
    scratch: &'a mut Vec<f64>,
    out: &'a mut [f64],
}

impl<R: Radial> WithSimd for GradRowOp<'_, R> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        self.k
            .grad_row_loops(self.za, self.p, self.w, self.scratch, self.out)
    }
}

/// [`Stationary::column_loops`] as a SIMD operation (a closure would be compiled apart from
/// the instruction set it is dispatched to, unless the compiler chose to inline it).
struct ColumnOp<'a, R> {
    k: &'a Stationary<R>,
    p: &'a Prepared,
    first: usize,
    zb: &'a [f64],
    out: &'a mut [f64],
}

impl<R: Radial> WithSimd for ColumnOp<'_, R> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        self.k.column_loops(self.p, self.first, self.zb, self.out)
    }
}

/// [`Stationary::contract_loops`] as a SIMD operation.
struct ContractOp<'a, R> {
    k: &'a Stationary<R>,
    p: &'a Prepared,
    first: usize,
    zb: &'a [f64],
    w: &'a [f64],
    scratch: &'a mut Vec<f64>,
    g: &'a mut [f64],
}

impl<R: Radial> WithSimd for ContractOp<'_, R> {
    type Output = f64;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> f64 {
        self.k
            .contract_loops(self.p, self.first, self.zb, self.w, self.scratch, self.g)
    }
}
