//! Bounded kernel decompositions (spec §2.3) and the per-support-point sandwiches of a kernel
//! over a box (Lemma 1 for base kernels, sums term by term, McCormick for products, B.5–B.6).
//!
//! Every supported base kernel is `k(x, z) = σ² ψ(φ(x, z))` with a separable `φ`:
//! `φ = Σ_j θ_j (x_j − z_j)²` for the radial kernels (`θ_j = 1/ℓ_j²`, `ψ` the kernel's profile
//! in `r²`) and `φ = Σ_j θ_j sin²(ω (x_j − z_j))` for the periodic one (`θ_j = 1/ℓ_j²`,
//! `ω = π/p`, `ψ = exp(−2φ)`). A sandwich of the whole kernel at support point `i` is a pair of
//! affine functions of the base kernels' `φ_b(x, zᵢ)`: `a + Σ_b c_b φ_b(x, zᵢ)`.

use faer::MatRef;

use super::psi::Profile;
use super::region::Region;
use super::rounding;
use super::VerifyError;
use crate::kernels::{BaseKind, Kernel, Lengthscale};

/// One base kernel's decomposition.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseDecomposition {
    /// The profile `ψ` at unit variance.
    pub profile: Profile,
    /// The variance `σ²`.
    pub var: f64,
    /// The active input columns.
    pub dims: Vec<usize>,
    /// `θ_j = 1/ℓ_j²` for each active column (in the order of `dims`).
    pub theta: Vec<f64>,
    /// `ω = π/p` of the periodic kernel (unused by the radial ones).
    pub omega: f64,
}

/// `sin²` over the interval `[u0, u1]`: `(min, max)`.
pub fn sin2_range(u0: f64, u1: f64) -> (f64, f64) {
    use std::f64::consts::{FRAC_PI_2, PI};
    if u1 - u0 >= PI {
        return (0.0, 1.0);
    }
    let (s0, s1) = (u0.sin().powi(2), u1.sin().powi(2));
    let mut lo = s0.min(s1);
    let mut hi = s0.max(s1);
    if (u0 / PI).ceil() * PI <= u1 {
        lo = 0.0;
    }
    if ((u0 - FRAC_PI_2) / PI).ceil() * PI + FRAC_PI_2 <= u1 {
        hi = 1.0;
    }
    // sin is accurate to an ulp of its argument's rounding: widen by the argument's size.
    let m = rounding::REL * (1.0 + u0.abs() + u1.abs());
    ((lo - m).max(0.0), (hi + m).min(1.0))
}

impl BaseDecomposition {
    /// The range `[φ_min, φ_max]` of `φ(·, z)` over `region`.
    pub fn phi_range(&self, z: impl Fn(usize) -> f64, region: &Region) -> (f64, f64) {
        let (mut lo, mut hi) = (0.0, 0.0);
        for (p, &j) in self.dims.iter().enumerate() {
            let (l, u, zj) = (region.lower[j], region.upper[j], z(j));
            let th = self.theta[p];
            match self.profile {
                Profile::Periodic => {
                    let (a, b) = sin2_range(self.omega * (l - zj), self.omega * (u - zj));
                    lo += th * a;
                    hi += th * b;
                }
                _ => {
                    let dist = if zj < l {
                        l - zj
                    } else if zj > u {
                        zj - u
                    } else {
                        0.0
                    };
                    lo += th * dist * dist;
                    hi += th * (zj - l).powi(2).max((zj - u).powi(2));
                }
            }
        }
        (rounding::down(lo, lo).max(0.0), rounding::up(hi, hi))
    }

    /// `φ(x, z)`.
    pub fn phi(&self, x: &[f64], z: impl Fn(usize) -> f64) -> f64 {
        self.dims
            .iter()
            .zip(&self.theta)
            .map(|(&j, th)| match self.profile {
                Profile::Periodic => th * (self.omega * (x[j] - z(j))).sin().powi(2),
                _ => th * (x[j] - z(j)).powi(2),
            })
            .sum()
    }
}

/// The kernel's expression tree over its base decompositions.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// `bases[index]`.
    Base(usize),
    /// A constant kernel.
    Const(f64),
    /// Sum of the children.
    Sum(Vec<Node>),
    /// Product of the children.
    Product(Vec<Node>),
}

/// A kernel's bounded decomposition: its tree and its base kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelDecomposition {
    tree: Node,
    /// The base kernels with a `φ` (constants are folded into the tree).
    pub bases: Vec<BaseDecomposition>,
}

/// Per support point `i` over a box: `lo_i ≤ k(x, zᵢ) ≤ hi_i` and
/// `low_a_i + Σ_b low_b[b][i] φ_b(x, zᵢ) ≤ k(x, zᵢ) ≤ up_a_i + Σ_b up_b[b][i] φ_b(x, zᵢ)`.
#[derive(Clone, Debug)]
pub struct PointSandwiches {
    /// Number of support points.
    pub n: usize,
    /// Lower bounds of `k(x, zᵢ)` over the box.
    pub lo: Vec<f64>,
    /// Upper bounds of `k(x, zᵢ)` over the box.
    pub hi: Vec<f64>,
    /// Intercepts of the lower bounding functions.
    pub low_a: Vec<f64>,
    /// Slopes of the lower bounding functions (`b·n + i`).
    pub low_b: Vec<f64>,
    /// Intercepts of the upper bounding functions.
    pub up_a: Vec<f64>,
    /// Slopes of the upper bounding functions (`b·n + i`).
    pub up_b: Vec<f64>,
    /// Upper bounds of `|φ_b(x, zᵢ)|` over the box (`b·n + i`), for rounding margins.
    pub phi_hi: Vec<f64>,
}

impl PointSandwiches {
    fn constant(n: usize, nb: usize, c: f64, phi_hi: &[f64]) -> Self {
        PointSandwiches {
            n,
            lo: vec![c; n],
            hi: vec![c; n],
            low_a: vec![c; n],
            low_b: vec![0.0; nb * n],
            up_a: vec![c; n],
            up_b: vec![0.0; nb * n],
            phi_hi: phi_hi.to_vec(),
        }
    }
}

impl KernelDecomposition {
    /// The decomposition of `kernel` for inputs with `d` columns.
    ///
    /// # Errors
    /// [`VerifyError::UnsupportedKernel`] for `lin`, `white` or unset lengthscales.
    pub fn new(kernel: &Kernel, d: usize) -> Result<Self, VerifyError> {
        let mut bases = Vec::new();
        let tree = Self::node(kernel, d, &mut bases)?;
        Ok(KernelDecomposition { tree, bases })
    }

    fn node(k: &Kernel, d: usize, bases: &mut Vec<BaseDecomposition>) -> Result<Node, VerifyError> {
        match k {
            Kernel::Sum(ks) => Ok(Node::Sum(
                ks.iter()
                    .map(|k| Self::node(k, d, bases))
                    .collect::<Result<_, _>>()?,
            )),
            Kernel::Product(ks, _) => Ok(Node::Product(
                ks.iter()
                    .map(|k| Self::node(k, d, bases))
                    .collect::<Result<_, _>>()?,
            )),
            Kernel::Base(b) => {
                let profile = match b.kind() {
                    BaseKind::Const => return Ok(Node::Const(b.var())),
                    BaseKind::Se => Profile::Se,
                    BaseKind::Matern12 => Profile::Matern12,
                    BaseKind::Matern32 => Profile::Matern32,
                    BaseKind::Matern52 => Profile::Matern52,
                    BaseKind::Rq => Profile::Rq(b.alpha().unwrap_or(1.0)),
                    BaseKind::Per => Profile::Periodic,
                    BaseKind::Lin | BaseKind::White => {
                        return Err(VerifyError::UnsupportedKernel(b.kind().name().into()))
                    }
                };
                let dims = b.active_dims(d);
                if let Some(&j) = dims.iter().find(|&&j| j >= d) {
                    return Err(VerifyError::Invalid(format!(
                        "kernel {} uses input column {j} but there are {d}",
                        b.kind().name()
                    )));
                }
                let theta = match b.lengthscale() {
                    Some(Lengthscale::Iso(l)) => vec![1.0 / (l * l); dims.len()],
                    Some(Lengthscale::Ard(ls)) if ls.len() == dims.len() => {
                        ls.iter().map(|l| 1.0 / (l * l)).collect()
                    }
                    _ => {
                        return Err(VerifyError::UnsupportedKernel(format!(
                            "{} with unset lengthscales",
                            b.kind().name()
                        )))
                    }
                };
                let omega = std::f64::consts::PI / b.period().unwrap_or(1.0);
                bases.push(BaseDecomposition {
                    profile,
                    var: b.var(),
                    dims,
                    theta,
                    omega,
                });
                Ok(Node::Base(bases.len() - 1))
            }
        }
    }

    /// The sandwiches of `k(·, zᵢ)` over `region` for every support point (rows of `z`).
    pub fn sandwiches(&self, z: MatRef<'_, f64>, region: &Region) -> PointSandwiches {
        let (n, nb) = (z.nrows(), self.bases.len());
        let mut phi_lo = vec![0.0; nb * n];
        let mut phi_hi = vec![0.0; nb * n];
        for (b, base) in self.bases.iter().enumerate() {
            for i in 0..n {
                let (lo, hi) = base.phi_range(|j| z[(i, j)], region);
                phi_lo[b * n + i] = lo;
                phi_hi[b * n + i] = hi;
            }
        }
        self.eval_node(&self.tree, n, &phi_lo, &phi_hi)
    }

    fn eval_node(&self, node: &Node, n: usize, phi_lo: &[f64], phi_hi: &[f64]) -> PointSandwiches {
        let nb = self.bases.len();
        match node {
            Node::Const(c) => PointSandwiches::constant(n, nb, *c, phi_hi),
            Node::Base(b) => {
                let base = &self.bases[*b];
                let mut out = PointSandwiches::constant(n, nb, 0.0, phi_hi);
                for i in 0..n {
                    let s = base
                        .profile
                        .sandwich(base.var, phi_lo[b * n + i], phi_hi[b * n + i]);
                    out.lo[i] = s.min;
                    out.hi[i] = s.max;
                    out.low_a[i] = s.lower.a;
                    out.low_b[b * n + i] = s.lower.b;
                    out.up_a[i] = s.upper.a;
                    out.up_b[b * n + i] = s.upper.b;
                }
                out
            }
            Node::Sum(children) => {
                let mut parts = children
                    .iter()
                    .map(|c| self.eval_node(c, n, phi_lo, phi_hi));
                let mut acc = parts.next().expect("a sum has terms");
                for p in parts {
                    for i in 0..n {
                        let s = acc.lo[i].abs() + p.lo[i].abs();
                        acc.lo[i] = rounding::down(acc.lo[i] + p.lo[i], s);
                        let s = acc.hi[i].abs() + p.hi[i].abs();
                        acc.hi[i] = rounding::up(acc.hi[i] + p.hi[i], s);
                        let s = acc.low_a[i].abs() + p.low_a[i].abs();
                        acc.low_a[i] = rounding::down(acc.low_a[i] + p.low_a[i], s);
                        let s = acc.up_a[i].abs() + p.up_a[i].abs();
                        acc.up_a[i] = rounding::up(acc.up_a[i] + p.up_a[i], s);
                    }
                    for (a, b) in acc.low_b.iter_mut().zip(&p.low_b) {
                        *a += b;
                    }
                    for (a, b) in acc.up_b.iter_mut().zip(&p.up_b) {
                        *a += b;
                    }
                }
                acc
            }
            Node::Product(children) => {
                let mut parts = children
                    .iter()
                    .map(|c| self.eval_node(c, n, phi_lo, phi_hi));
                let mut acc = parts.next().expect("a product has factors");
                for p in parts {
                    acc = mccormick(&acc, &p, nb);
                }
                acc
            }
        }
    }
}

/// Sandwiches of `k_A k_B` from those of `k_A` and `k_B` (B.6):
/// `k_A k_B ≥ lo_A k_B + lo_B k_A − lo_A lo_B` and `k_A k_B ≤ hi_A k_B + lo_B k_A − hi_A lo_B`,
/// each `k` then replaced by its lower or upper bounding function by the sign of its
/// coefficient (Lemma 15).
fn mccormick(a: &PointSandwiches, b: &PointSandwiches, nb: usize) -> PointSandwiches {
    let n = a.n;
    let mut out = PointSandwiches::constant(n, nb, 0.0, &a.phi_hi);
    for i in 0..n {
        // Lower: lo_A·k_B + lo_B·k_A − lo_A lo_B.
        let (la, lb) = (a.lo[i], b.lo[i]);
        let (bb_a, b_from) = if la >= 0.0 {
            (b.low_a[i], &b.low_b)
        } else {
            (b.up_a[i], &b.up_b)
        };
        let (ab_a, a_from) = if lb >= 0.0 {
            (a.low_a[i], &a.low_b)
        } else {
            (a.up_a[i], &a.up_b)
        };
        let terms = [la * bb_a, lb * ab_a, -la * lb];
        out.low_a[i] = rounding::down(terms.iter().sum(), terms.iter().map(|t| t.abs()).sum());
        for k in 0..nb {
            out.low_b[k * n + i] = la * b_from[k * n + i] + lb * a_from[k * n + i];
        }
        // Upper: hi_A·k_B + lo_B·k_A − hi_A lo_B.
        let ha = a.hi[i];
        let (bb_a, b_from) = if ha >= 0.0 {
            (b.up_a[i], &b.up_b)
        } else {
            (b.low_a[i], &b.low_b)
        };
        let (ab_a, a_from) = if lb >= 0.0 {
            (a.up_a[i], &a.up_b)
        } else {
            (a.low_a[i], &a.low_b)
        };
        let terms = [ha * bb_a, lb * ab_a, -ha * lb];
        out.up_a[i] = rounding::up(terms.iter().sum(), terms.iter().map(|t| t.abs()).sum());
        for k in 0..nb {
            out.up_b[k * n + i] = ha * b_from[k * n + i] + lb * a_from[k * n + i];
        }
        // Range: the interval product.
        let c = [la * lb, la * b.hi[i], ha * lb, ha * b.hi[i]];
        let scale = c.iter().map(|v| v.abs()).fold(0.0, f64::max);
        out.lo[i] = rounding::down(c.iter().copied().fold(f64::INFINITY, f64::min), scale);
        out.hi[i] = rounding::up(c.iter().copied().fold(f64::NEG_INFINITY, f64::max), scale);
    }
    out
}
