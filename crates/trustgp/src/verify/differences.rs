//! Certified enclosures of the latent **differences** `g_k = f_k − f_i` (`k ≠ i`) of a
//! multi-class posterior, over a box or at a point: what the softmax bounds of class `i` need
//! ([`super::softmax`]), since `softmax_i(f) = 1/(1 + Σ_{k≠i} e^{g_k})`.
//!
//! The multi-class Laplace posterior (spec §2.2) has `C` latents with
//! `μ_c(x) = k_c(x, Z) t_c` and `Σ_cd(x) = δ_cd k_c(x, x) − k_c(x, Z) S_cd k_d(Z, x)`.
//!
//! **One kernel shared by all classes** (the paper's and the reference code's setting): with
//! `r = k(x, Z)ᵀ` and `σ² = k(x, x)` (the supported kernels are stationary),
//!
//! ```text
//! E g_k        = rᵀ (t_k − t_i),
//! Var g_k      = 2σ² − rᵀ (S_kk + S_ii − S_ki − S_ik) r,
//! Cov(g_k, g_l) = σ² − rᵀ (S_kl + S_ii − S_ki − S_il) r        (k ≠ l),
//! ```
//!
//! so each difference is ONE latent in linear-Gaussian form — kernel `2k`, `t = (t_k − t_i)/2`,
//! `S = (S_kk + S_ii − S_ki − S_ik)/4` (PSD as `DᵀSD` of the PSD `S`) — and its mean and
//! variance are bounded over a box by the single-latent bounds ([`super::linear`],
//! [`super::variance`]); each covariance is a bilinear form in the same `r`
//! ([`super::cross`]). Bounding `f_k` and `f_i` separately and subtracting the intervals (the
//! scheme below) loses their correlation: over a box both means move together, and the
//! difference's interval is the sum of the two widths instead of the width of the difference.
//! For two classes the one difference's form is exactly the binary logit classifier's latent
//! (spec §4 invariant 13), and its bounds are the binary path's.
//!
//! **One kernel per class**: a difference mixes two kernels and is not one form; its mean and
//! covariances are enclosed from the latents' by interval arithmetic (`μ_k − μ_i`,
//! `Σ_kl − Σ_ki − Σ_il + Σ_ii`; exact at a point, looser over a box), the latents' means and
//! variances bounded as single latents and their cross-covariances by [`super::cross`].
//!
//! Both: variances clamped at 0, covariances intersected with Cauchy–Schwarz.

use faer::Mat;

use super::bnb::Sense;
use super::cross::{bilinear_at, bilinear_bounds};
use super::decomposition::PointSandwiches;
use super::form::LatentForm;
use super::interval::Interval;
use super::region::Region;
use super::{linear, rounding, variance, VerifyError};
use crate::kernels::{BaseKernel, BaseKind, Kernel};
use crate::models::classification::multiclass::MulticlassForm;

/// Enclosures of the means and covariances of the differences `g_k = f_k − f_i`, `k ≠ i` in
/// class order (so entry `a` is class `a` below `i` and class `a + 1` from `i` on).
#[derive(Clone, Debug, PartialEq)]
pub struct DifferenceBox {
    /// `[E g^L, E g^U]` per difference.
    pub mean: Vec<Interval>,
    /// `[Cov^L, Cov^U]`, symmetric, `(C−1)×(C−1)`.
    pub cov: Vec<Vec<Interval>>,
}

/// A symmetric matrix `A` (`n×n`) and `|A|`, for the bilinear bounds of `rᵀ A r'`.
#[derive(Clone, Debug)]
struct Block {
    a: Mat<f64>,
    abs_a: Mat<f64>,
}

impl Block {
    fn new(a: Mat<f64>) -> Block {
        let abs_a = Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)].abs());
        Block { a, abs_a }
    }
}

/// The differences of one class `i` with a shared kernel.
#[derive(Clone, Debug)]
struct ClassDifferences {
    /// `g_k` as a single latent, `k ≠ i` in class order.
    forms: Vec<LatentForm>,
    /// `(a, b, S_kl + S_ii − S_ki − S_il)` for the pairs `a < b` of differences.
    cross: Vec<(usize, usize, Block)>,
}

/// How the differences are enclosed.
#[derive(Clone, Debug)]
enum Scheme {
    /// One kernel: each difference is one latent form (per class `i`).
    Joint(Vec<ClassDifferences>),
    /// One kernel per class: the latents' enclosures and then interval arithmetic; the
    /// latents' cross-covariance blocks `(c, d, (S_cd + S_dcᵀ)/2)` for `c < d`.
    Latents(Vec<(usize, usize, Block)>),
}

/// The difference enclosures of a multi-class posterior.
#[derive(Clone, Debug)]
pub struct Differences {
    /// One [`LatentForm`] per class (its `t_c`, `S_cc`, kernel).
    classes: Vec<LatentForm>,
    scheme: Scheme,
}

/// `S_ab` as an `n×n` block of the `Cn×Cn` matrix.
fn block(s: &Mat<f64>, n: usize, a: usize, b: usize) -> faer::MatRef<'_, f64> {
    s.as_ref().submatrix(a * n, b * n, n, n)
}

/// The symmetric part of `S_kl + S_ii − S_ki − S_il` (the bilinear form of `Cov(g_k, g_l)`
/// in `r`; `k = l` gives that of `Var g_k`).
fn difference_matrix(s: &Mat<f64>, n: usize, i: usize, k: usize, l: usize) -> Mat<f64> {
    let m = Mat::from_fn(n, n, |p, q| {
        block(s, n, k, l)[(p, q)] + block(s, n, i, i)[(p, q)]
            - block(s, n, k, i)[(p, q)]
            - block(s, n, i, l)[(p, q)]
    });
    Mat::from_fn(n, n, |p, q| 0.5 * (m[(p, q)] + m[(q, p)]))
}

impl Differences {
    /// The enclosures of a multi-class posterior whose per-class forms are `classes`.
    ///
    /// # Errors
    /// As for [`LatentForm::new`] on a difference's form.
    pub(crate) fn new(
        form: &MulticlassForm,
        classes: Vec<LatentForm>,
    ) -> Result<Differences, VerifyError> {
        let m = classes.len();
        let n = form.support.nrows();
        let shared = form.kernels.iter().all(|k| *k == form.kernels[0]);
        let scheme = if shared {
            // The kernel 2k of a difference: `2` times the shared kernel.
            let two = BaseKernel::new(BaseKind::Const)
                .with_var(2.0)
                .map_err(|e| VerifyError::Invalid(format!("difference kernel: {e}")))?;
            let kernel = Kernel::product(vec![Kernel::Base(two), form.kernels[0].clone()]);
            let per_class = (0..m)
                .map(|i| {
                    let others: Vec<usize> = (0..m).filter(|k| *k != i).collect();
                    let forms = others
                        .iter()
                        .map(|&k| {
                            let t = (0..n)
                                .map(|p| 0.5 * (form.t[k][p] - form.t[i][p]))
                                .collect();
                            let s = difference_matrix(&form.s, n, i, k, k);
                            let s = Mat::from_fn(n, n, |p, q| 0.25 * s[(p, q)]);
                            LatentForm::new(kernel.clone(), form.support.clone(), t, s, 0.0, vec![])
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let mut cross = Vec::new();
                    for a in 0..others.len() {
                        for b in a + 1..others.len() {
                            let d = difference_matrix(&form.s, n, i, others[a], others[b]);
                            cross.push((a, b, Block::new(d)));
                        }
                    }
                    Ok(ClassDifferences { forms, cross })
                })
                .collect::<Result<Vec<_>, VerifyError>>()?;
            Scheme::Joint(per_class)
        } else {
            let mut cross = Vec::new();
            for c in 0..m {
                for d in c + 1..m {
                    // kᵀ S_cd k' = k'ᵀ S_dc k: average the two blocks.
                    let a = Mat::from_fn(n, n, |p, q| {
                        0.5 * (block(&form.s, n, c, d)[(p, q)] + block(&form.s, n, d, c)[(q, p)])
                    });
                    cross.push((c, d, Block::new(a)));
                }
            }
            Scheme::Latents(cross)
        };
        Ok(Differences { classes, scheme })
    }

    /// The per-class forms.
    pub(crate) fn classes(&self) -> &[LatentForm] {
        &self.classes
    }

    /// Enclosures of the differences of class `class` at `x`.
    pub fn at(&self, class: usize, x: &[f64]) -> DifferenceBox {
        let xs = faer::MatRef::from_row_major_slice(x, 1, x.len());
        let kvec = |f: &LatentForm| -> Vec<f64> {
            let k = f.kernel().cross(f.support(), xs);
            (0..f.n()).map(|p| k[(p, 0)]).collect()
        };
        match &self.scheme {
            Scheme::Joint(per_class) => {
                let cd = &per_class[class];
                let mut b = empty(cd.forms.len());
                for (a, f) in cd.forms.iter().enumerate() {
                    let m = f.moments_at(x);
                    b.mean[a] = Interval::new(m.mean - m.mean_margin, m.mean + m.mean_margin);
                    b.cov[a][a] =
                        Interval::new((m.var - m.var_margin).max(0.0), m.var + m.var_margin);
                }
                if !cd.cross.is_empty() {
                    let fi = &self.classes[class];
                    let r = kvec(fi);
                    for (a, bb, blk) in &cd.cross {
                        let (q, e) = bilinear_at(blk.a.as_ref(), blk.abs_a.as_ref(), &r, &r);
                        let iv = prior_minus(fi.prior_var(), Interval::new(q - e, q + e));
                        b.cov[*a][*bb] = iv;
                        b.cov[*bb][*a] = iv;
                    }
                }
                schwarz(b)
            }
            Scheme::Latents(cross) => {
                let m = self.classes.len();
                let mut lat = empty(m);
                let mut kv = Vec::with_capacity(m);
                for (c, f) in self.classes.iter().enumerate() {
                    let p = f.moments_at(x);
                    lat.mean[c] = Interval::new(p.mean - p.mean_margin, p.mean + p.mean_margin);
                    lat.cov[c][c] =
                        Interval::new((p.var - p.var_margin).max(0.0), p.var + p.var_margin);
                    kv.push(kvec(f));
                }
                for (c, d, blk) in cross {
                    let (q, e) = bilinear_at(blk.a.as_ref(), blk.abs_a.as_ref(), &kv[*c], &kv[*d]);
                    let iv = Interval::new(-q - e, -q + e);
                    lat.cov[*c][*d] = iv;
                    lat.cov[*d][*c] = iv;
                }
                of_latents(&lat, class)
            }
        }
    }

    /// Enclosures of the differences of class `class` over `region`, and candidate points for
    /// the extremum of `π_class` in direction `sense` (where every difference's mean is largest
    /// for a minimum, smallest for a maximum).
    pub fn over(
        &self,
        region: &Region,
        class: usize,
        sense: Sense,
    ) -> (DifferenceBox, Vec<Vec<f64>>) {
        match &self.scheme {
            Scheme::Joint(per_class) => {
                let cd = &per_class[class];
                let mut b = empty(cd.forms.len());
                let mut cands = Vec::new();
                for (a, f) in cd.forms.iter().enumerate() {
                    let sw = f.sandwiches(region);
                    let (mean, x) = mean_and_candidate(f, &sw, region, sense == Sense::Min);
                    b.mean[a] = mean;
                    cands.push(x);
                    let v = variance::bounds(f, &sw, region);
                    b.cov[a][a] = Interval::new(v.lower, v.upper.max(v.lower));
                }
                if !cd.cross.is_empty() {
                    let fi = &self.classes[class];
                    let sw = fi.sandwiches(region);
                    for (a, bb, blk) in &cd.cross {
                        let (qlo, qhi) = bilinear_bounds(
                            blk.a.as_ref(),
                            blk.abs_a.as_ref(),
                            (fi, &sw),
                            (fi, &sw),
                            true,
                            region,
                        );
                        let iv = prior_minus(fi.prior_var(), Interval::new(qlo, qhi));
                        b.cov[*a][*bb] = iv;
                        b.cov[*bb][*a] = iv;
                    }
                }
                (schwarz(b), cands)
            }
            Scheme::Latents(cross) => {
                let m = self.classes.len();
                let mut lat = empty(m);
                let sws: Vec<_> = self.classes.iter().map(|f| f.sandwiches(region)).collect();
                let mut cands = Vec::new();
                for (c, f) in self.classes.iter().enumerate() {
                    let wants_low = (c == class) == (sense == Sense::Min);
                    let (mean, x) = mean_and_candidate(f, &sws[c], region, !wants_low);
                    lat.mean[c] = mean;
                    cands.push(x);
                    let v = variance::bounds(f, &sws[c], region);
                    lat.cov[c][c] = Interval::new(v.lower, v.upper.max(v.lower));
                }
                for (c, d, blk) in cross {
                    let (c, d) = (*c, *d);
                    let (qlo, qhi) = bilinear_bounds(
                        blk.a.as_ref(),
                        blk.abs_a.as_ref(),
                        (&self.classes[c], &sws[c]),
                        (&self.classes[d], &sws[d]),
                        false,
                        region,
                    );
                    let cs = (lat.cov[c][c].hi * lat.cov[d][d].hi).sqrt();
                    let cs = rounding::up(cs, cs);
                    let iv = Interval::new(-qhi, -qlo).meet(Interval::new(-cs, cs));
                    lat.cov[c][d] = iv;
                    lat.cov[d][c] = iv;
                }
                (of_latents(&lat, class), cands)
            }
        }
    }
}

/// A box of `n` zero intervals.
fn empty(n: usize) -> DifferenceBox {
    DifferenceBox {
        mean: vec![Interval::new(0.0, 0.0); n],
        cov: vec![vec![Interval::new(0.0, 0.0); n]; n],
    }
}

/// `σ² − q` for an enclosure of `q`, rounded outward.
fn prior_minus(prior_var: f64, q: Interval) -> Interval {
    Interval::new(prior_var, prior_var).minus(q)
}

/// The mean's enclosure over the box and the point where it is largest (`high`) or smallest.
fn mean_and_candidate(
    f: &LatentForm,
    sw: &PointSandwiches,
    region: &Region,
    high: bool,
) -> (Interval, Vec<f64>) {
    let (lo, xl) = linear::lower(f.decomposition(), f.support(), sw, f.t(), f.mean(), region);
    let (hi, xh) = linear::upper(f.decomposition(), f.support(), sw, f.t(), f.mean(), region);
    (Interval::new(lo, hi.max(lo)), if high { xh } else { xl })
}

/// Variances clamped at 0, covariances intersected with Cauchy–Schwarz.
fn schwarz(mut b: DifferenceBox) -> DifferenceBox {
    let n = b.mean.len();
    for (k, row) in b.cov.iter_mut().enumerate() {
        row[k].lo = row[k].lo.max(0.0);
        row[k].hi = row[k].hi.max(0.0);
    }
    for k in 0..n {
        for l in 0..n {
            if k != l {
                let cs = (b.cov[k][k].hi * b.cov[l][l].hi).sqrt();
                let cs = rounding::up(cs, cs);
                b.cov[k][l] = b.cov[k][l].meet(Interval::new(-cs, cs));
            }
        }
    }
    b
}

/// The differences' enclosures from the latents' (a [`DifferenceBox`] over all `C` latents):
/// `μ_k − μ_i` and `Σ_kl − Σ_ki − Σ_il + Σ_ii`.
fn of_latents(latent: &DifferenceBox, i: usize) -> DifferenceBox {
    let others: Vec<usize> = (0..latent.mean.len()).filter(|k| *k != i).collect();
    let mean = others
        .iter()
        .map(|&k| latent.mean[k].minus(latent.mean[i]))
        .collect();
    let c = &latent.cov;
    let cov = others
        .iter()
        .map(|&k| {
            others
                .iter()
                .map(|&l| c[k][l].minus(c[k][i]).minus(c[i][l]).plus(c[i][i]))
                .collect()
        })
        .collect();
    schwarz(DifferenceBox { mean, cov })
}
