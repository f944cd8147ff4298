//! Certified bounds of the class probabilities of a multi-class (softmax) GP classifier over a
//! box (spec §2.8: Propositions 10 and 11, Lemma 12).
//!
//! The multi-class Laplace posterior (spec §2.2) has `C` latents with
//! `μ_c(x) = k_c(x, Z) t_c` and `Σ_cd(x) = δ_cd k_c(x, x) − k_c(x, Z) S_cd k_d(Z, x)`; the class
//! probability is `π_i(x) = ∫ softmax_i(f) N(f | μ(x), Σ(x)) df`. On a box:
//!
//! 1. every mean `μ_c` and variance `Σ_cc` is bounded as a single latent ([`LatentForm`]), and
//!    every cross-covariance `Σ_cd` by the bilinear relaxation of [`super::cross`], intersected
//!    with Cauchy–Schwarz `|Σ_cd| ≤ √(Σ_cc Σ_dd)`;
//! 2. `softmax_i(f) = 1/(1 + Σ_{k≠i} e^{g_k})` depends only on the differences
//!    `g_k = f_k − f_i`, whose means and covariances are enclosed from those of step 1 by
//!    interval arithmetic (exactly at a point; at least as tight as the latents' over a box);
//!    difference space `R^{C−1}` is partitioned into a grid of boxes `S_l`; `softmax_i` decreases
//!    in every `g_k`, so on `S_l` it lies between its values at two corners (Prop. 10, in
//!    difference coordinates), and `π_i ≥ Σ_l softmax_i(upper corner) · min P(g ∈ S_l)`,
//!    `π_i ≤ Σ_l softmax_i(lower corner) · max P(g ∈ S_l)`. Working with `C − 1` differences
//!    instead of the `C` latents (the spec's form) removes one grid axis: for the same number of
//!    cells the grid is much finer (two classes: a 1-D grid, the binary logit integral);
//! 3. `P(g ∈ S_l)` is bounded by the chain rule over the axes, last to first (Prop. 11): the
//!    factor of axis `j` is a Gaussian interval probability whose conditional mean and variance
//!    given `g_{j+1..} ∈ S_l` are enclosed by interval Gaussian elimination (the spec's general
//!    \[choice\]; with two axes it is the spec's explicit `m = 2` formula evaluated in intervals),
//!    and Lemma 12 bounds it over those intervals ([`super::gauss_interval`]). When a
//!    conditioning is impossible (a variance interval reaching 0, an unbounded cell with a
//!    non-zero coefficient), the rest of the chain is bounded trivially: 0 from below, and from
//!    above by the largest corner weight of the remaining cells (their probabilities sum to at
//!    most one).
//!
//! **Grid** \[choice, deviating from the spec's fixed root grid]: each bound gets its own grid,
//! per axis `K` breakpoints at normal quantiles evenly spaced in probability between `Φ(−7)` and
//! `Φ(7)`, scaled by the difference's spread (half the range of its mean plus its largest
//! standard deviation), plus two unbounded end cells of negligible mass. Any partition makes
//! Prop. 10 hold; cells of equal mass put the resolution where the mass is, and a grid that
//! follows the region tightens as the boxes shrink instead of stalling at a root grid's
//! resolution. A floor remains: the corner weights of a cell differ by about the cell's width,
//! so bounds and brackets are exact only up to about `(C − 1)/K`; `K` follows the number of
//! classes (`(K+1)^(C−1)` cells, about [`CELL_BUDGET`]: `K = 140` for three classes) and can be
//! set ([`SoftmaxForm::with_cells`]).
//!
//! **Values at points.** The classifier's `predict` integrates the softmax by Monte Carlo
//! (R&W Alg. 3.4), which is not certified. Verification instead uses, at a point, the same
//! bound with the degenerate `(μ, Σ)` of that point (spec §6.9): a certified bracket
//! `[π_lower, π_upper] ∋ π_i(x)` ([`SoftmaxForm::probability_bracket`]). `min_found`/`max_found`
//! report its midpoint, and the searches use its certified side, so a Monte Carlo prediction
//! lies in the bracket up to its own sampling error.

use faer::Mat;

use super::bnb::{branch_and_bound, BnbOptions, Bounded, PointValue, Sense};
use super::cross::{bilinear_at, bilinear_bounds};
use super::form::LatentForm;
use super::gauss_interval::{extremum, Side};
use super::interval::Interval;
use super::quantity::Verified;
use super::region::Region;
use super::{linear, rounding, variance, VerifyError};
use crate::models::classification::multiclass::MulticlassForm;
use crate::sequential::acquisition::normal;

/// About how many latent-space cells each probability bound visits.
pub const CELL_BUDGET: usize = 20_000;

/// Certified enclosures of the latent means and covariances of all classes (over a region, or
/// at a point).
#[derive(Clone, Debug, PartialEq)]
pub struct LatentBox {
    /// `[μ_c^L, μ_c^U]` per class.
    pub mean: Vec<Interval>,
    /// `[Σ_cd^L, Σ_cd^U]`, symmetric, `C×C`.
    pub cov: Vec<Vec<Interval>>,
}

/// One off-diagonal block `S_cd` (`c < d`) and its absolute values.
#[derive(Clone, Debug)]
struct CrossBlock {
    c: usize,
    d: usize,
    s: Mat<f64>,
    abs_s: Mat<f64>,
}

/// The multi-class posterior read for box bounds: one [`LatentForm`] per class (its `t_c`,
/// `S_cc`, kernel) and the off-diagonal blocks `S_cd`.
#[derive(Clone, Debug)]
pub struct SoftmaxForm {
    classes: Vec<LatentForm>,
    cross: Vec<CrossBlock>,
    shared: bool,
    cells: usize,
    /// Standard normal quantiles at `k/(K+1)`, `k = 1..K`.
    quantiles: Vec<f64>,
}

/// `K` breakpoints per axis so that the `(K+1)^(C−1)` cells of difference space are about
/// [`CELL_BUDGET`].
fn default_cells(classes: usize) -> usize {
    let axes = classes.saturating_sub(1).max(1);
    let per_axis = (CELL_BUDGET as f64).powf(1.0 / axes as f64).floor() as usize;
    per_axis.saturating_sub(1).max(1)
}

/// How far (in spreads) the outermost breakpoints are from the centre: the two unbounded end
/// cells then hold a mass of about `Φ(−7) ≈ 10⁻¹²` each, where they can only be bounded
/// trivially.
const SPAN: f64 = 7.0;

/// `K` standard normal quantiles at probabilities evenly spaced from `Φ(−SPAN)` to `Φ(SPAN)`:
/// cells of about equal mass `1/(K−1)` (fine where the mass is), and end cells of none.
fn quantiles(k: usize) -> Vec<f64> {
    if k == 1 {
        return vec![0.0];
    }
    let p0 = normal::cdf(-SPAN);
    (0..k)
        .map(|j| normal::quantile(p0 + (1.0 - 2.0 * p0) * j as f64 / (k - 1) as f64))
        .collect()
}

/// `softmax_i = 1/(1 + Σ_{k≠i} e^{g_k})` at differences `g_k = f_k − f_i`; infinite `g_k`
/// are the limits (`e^{+∞} = ∞` gives 0, `e^{−∞} = 0` drops the term), as IEEE arithmetic
/// computes them.
fn softmax_of_differences(g: &[f64]) -> f64 {
    1.0 / (1.0 + g.iter().map(|v| v.exp()).sum::<f64>())
}

impl SoftmaxForm {
    /// The form of a multi-class Laplace posterior.
    ///
    /// # Errors
    /// Fewer than two classes, inconsistent sizes, non-finite entries, or an unsupported kernel.
    pub fn new(form: &MulticlassForm) -> Result<SoftmaxForm, VerifyError> {
        let m = form.t.len();
        let n = form.support.nrows();
        if m < 2 || form.kernels.len() != m {
            return Err(VerifyError::Invalid(format!(
                "softmax form: {m} classes with {} kernels (expected at least 2, one per class)",
                form.kernels.len()
            )));
        }
        if form.s.nrows() != m * n || form.s.ncols() != m * n {
            return Err(VerifyError::Invalid(format!(
                "softmax form: S is {}×{} for {m} classes and {n} support points (expected {}×{})",
                form.s.nrows(),
                form.s.ncols(),
                m * n,
                m * n
            )));
        }
        let classes = (0..m)
            .map(|c| {
                LatentForm::new(
                    form.kernels[c].clone(),
                    form.support.clone(),
                    form.t[c].clone(),
                    form.s.as_ref().submatrix(c * n, c * n, n, n).to_owned(),
                    0.0,
                    Vec::new(),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut cross = Vec::new();
        for c in 0..m {
            for d in c + 1..m {
                // The symmetric part: kᵀ S_cd k' = k'ᵀ S_dc k, so average the two blocks.
                let s = Mat::from_fn(n, n, |i, j| {
                    0.5 * (form.s[(c * n + i, d * n + j)] + form.s[(d * n + j, c * n + i)])
                });
                let abs_s = Mat::from_fn(n, n, |i, j| s[(i, j)].abs());
                cross.push(CrossBlock { c, d, s, abs_s });
            }
        }
        let shared = form.kernels.iter().all(|k| *k == form.kernels[0]);
        let cells = default_cells(m);
        Ok(SoftmaxForm {
            classes,
            cross,
            shared,
            cells,
            quantiles: quantiles(cells),
        })
    }

    /// The same form with `k` grid breakpoints per latent axis (`(k+1)^C` cells per bound).
    ///
    /// # Errors
    /// `k == 0`.
    pub fn with_cells(mut self, k: usize) -> Result<SoftmaxForm, VerifyError> {
        if k == 0 {
            return Err(VerifyError::Invalid(
                "softmax grid: the number of breakpoints per axis must be at least 1".into(),
            ));
        }
        self.cells = k;
        self.quantiles = quantiles(k);
        Ok(self)
    }

    /// The number of classes `C`.
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// Breakpoints per latent axis.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.classes[0].dim()
    }

    /// Class `c`'s latent as a single form (its marginal mean and variance).
    ///
    /// # Panics
    /// If `c` is not a class index.
    pub fn class_form(&self, c: usize) -> &LatentForm {
        &self.classes[c]
    }

    fn empty_box(&self) -> LatentBox {
        let m = self.n_classes();
        LatentBox {
            mean: vec![Interval::new(0.0, 0.0); m],
            cov: vec![vec![Interval::new(0.0, 0.0); m]; m],
        }
    }

    /// Certified enclosures of the latent means and covariances at `x`.
    pub fn latent_at(&self, x: &[f64]) -> LatentBox {
        let mut b = self.empty_box();
        let xs = faer::MatRef::from_row_major_slice(x, 1, x.len());
        let mut kvec = Vec::with_capacity(self.n_classes());
        for (c, f) in self.classes.iter().enumerate() {
            let m = f.moments_at(x);
            b.mean[c] = Interval::new(m.mean - m.mean_margin, m.mean + m.mean_margin);
            b.cov[c][c] = Interval::new((m.var - m.var_margin).max(0.0), m.var + m.var_margin);
            let k = f.kernel().cross(f.support(), xs);
            kvec.push((0..f.n()).map(|i| k[(i, 0)]).collect::<Vec<f64>>());
        }
        for blk in &self.cross {
            let (q, e) = bilinear_at(
                blk.s.as_ref(),
                blk.abs_s.as_ref(),
                &kvec[blk.c],
                &kvec[blk.d],
            );
            let iv = Interval::new(-q - e, -q + e);
            b.cov[blk.c][blk.d] = iv;
            b.cov[blk.d][blk.c] = iv;
        }
        b
    }

    /// Certified enclosures of the latent means and covariances over `region`, and candidate
    /// points for the extremum of `π_class` in direction `sense` (where `μ_class` is extreme that
    /// way and every other class's mean the other way).
    pub fn latent_over(
        &self,
        region: &Region,
        class: usize,
        sense: Sense,
    ) -> (LatentBox, Vec<Vec<f64>>) {
        let mut b = self.empty_box();
        let sws: Vec<_> = self.classes.iter().map(|f| f.sandwiches(region)).collect();
        let mut cands = Vec::new();
        for (c, f) in self.classes.iter().enumerate() {
            let (lo, xl) = linear::lower(
                f.decomposition(),
                f.support(),
                &sws[c],
                f.t(),
                f.mean(),
                region,
            );
            let (hi, xh) = linear::upper(
                f.decomposition(),
                f.support(),
                &sws[c],
                f.t(),
                f.mean(),
                region,
            );
            b.mean[c] = Interval::new(lo, hi.max(lo));
            let v = variance::bounds(f, &sws[c], region);
            b.cov[c][c] = Interval::new(v.lower, v.upper.max(v.lower));
            let wants_low = (c == class) == (sense == Sense::Min);
            cands.push(if wants_low { xl } else { xh });
        }
        for blk in &self.cross {
            let (c, d) = (blk.c, blk.d);
            let (qlo, qhi) = bilinear_bounds(
                blk.s.as_ref(),
                blk.abs_s.as_ref(),
                (&self.classes[c], &sws[c]),
                (&self.classes[d], &sws[d]),
                self.shared,
                region,
            );
            let cs = (b.cov[c][c].hi * b.cov[d][d].hi).sqrt();
            let cs = rounding::up(cs, cs);
            let iv = Interval::new(-qhi, -qlo).meet(Interval::new(-cs, cs));
            b.cov[c][d] = iv;
            b.cov[d][c] = iv;
        }
        (b, cands)
    }

    /// A sound bound of `π_class` over every `(μ, Σ)` the enclosure allows: a lower bound of the
    /// minimum ([`Side::Lower`]) or an upper bound of the maximum ([`Side::Upper`]).
    ///
    /// # Panics
    /// If `class` is not a class index or `latent` has the wrong size.
    pub fn probability_bound(&self, class: usize, latent: &LatentBox, side: Side) -> f64 {
        let m = self.n_classes();
        assert!(
            class < m && latent.mean.len() == m,
            "class or latent box out of range"
        );
        let (mean, cov) = differences(latent, class);
        let grid: Vec<Vec<f64>> = (0..m - 1)
            .map(|c| {
                let mu = mean[c];
                let mid = 0.5 * (mu.lo + mu.hi);
                let spread = 0.5 * (mu.hi - mu.lo) + cov[c][c].hi.max(0.0).sqrt();
                self.quantiles.iter().map(|z| mid + spread * z).collect()
            })
            .collect();
        let chain = Chain { side, grid: &grid };
        let mut corner = vec![0.0; m - 1];
        let total = chain.level(m - 2, &mean, &cov, 1.0, &mut corner);
        // Each cell's product carries its factors' margins; the sum of up to (K+1)^(C−1)
        // non-negative terms rounds by at most (cells · ε) of the total.
        let cells = (self.cells as f64 + 1.0).powi(m as i32 - 1);
        let scale = total * (cells / 2000.0).max(1.0);
        match side {
            Side::Lower => rounding::down(total, scale).clamp(0.0, 1.0),
            Side::Upper => rounding::up(total, scale).clamp(0.0, 1.0),
        }
    }

    /// A certified bracket `[lo, hi] ∋ π_c(x)` for every class `c`.
    pub fn probability_bracket(&self, x: &[f64]) -> Vec<(f64, f64)> {
        let lat = self.latent_at(x);
        (0..self.n_classes())
            .map(|c| {
                (
                    self.probability_bound(c, &lat, Side::Lower),
                    self.probability_bound(c, &lat, Side::Upper),
                )
            })
            .collect()
    }
}

/// Enclosures of the differences `g_k = f_k − f_i` (`k ≠ i`, in class order) from those of
/// the latents: `μ_k − μ_i` and `Σ_kl − Σ_ki − Σ_il + Σ_ii`, the variances clamped at 0 and the
/// covariances intersected with Cauchy–Schwarz.
#[allow(clippy::type_complexity)]
fn differences(latent: &LatentBox, i: usize) -> (Vec<Interval>, Vec<Vec<Interval>>) {
    let others: Vec<usize> = (0..latent.mean.len()).filter(|k| *k != i).collect();
    let mean = others
        .iter()
        .map(|&k| latent.mean[k].minus(latent.mean[i]))
        .collect();
    let c = &latent.cov;
    let mut cov: Vec<Vec<Interval>> = others
        .iter()
        .map(|&k| {
            others
                .iter()
                .map(|&l| c[k][l].minus(c[k][i]).minus(c[i][l]).plus(c[i][i]))
                .collect()
        })
        .collect();
    let n = others.len();
    for (k, row) in cov.iter_mut().enumerate() {
        row[k].lo = row[k].lo.max(0.0);
        row[k].hi = row[k].hi.max(0.0);
    }
    for k in 0..n {
        for l in 0..n {
            if k != l {
                let cs = (cov[k][k].hi * cov[l][l].hi).sqrt();
                let cs = rounding::up(cs, cs);
                cov[k][l] = cov[k][l].meet(Interval::new(-cs, cs));
            }
        }
    }
    (mean, cov)
}

/// The chain-rule sum over a grid of difference space for one side (Prop. 10 with the weight
/// `softmax_i` at the cell corner where it is smallest or largest, Prop. 11 for the cell's mass).
struct Chain<'g> {
    side: Side,
    grid: &'g [Vec<f64>],
}

impl Chain<'_> {
    /// The ends of cell `l` of axis `j`.
    fn cell(&self, j: usize, l: usize) -> (f64, f64) {
        let g = &self.grid[j];
        let a = if l == 0 { f64::NEG_INFINITY } else { g[l - 1] };
        let b = if l == g.len() { f64::INFINITY } else { g[l] };
        (a, b)
    }

    /// The corner coordinate of the cell `[a, b]` whose weight bounds the cell from this side:
    /// `softmax_i` decreases in every difference `g_k`.
    fn corner(&self, a: f64, b: f64) -> f64 {
        match self.side {
            Side::Lower => b,
            Side::Upper => a,
        }
    }

    /// The sum over the cells of axes `0..=j` (axes above `j` fixed in `corner`, with their
    /// factors' product `p`), given the enclosures of the differences `0..=j` conditioned on them.
    fn level(
        &self,
        j: usize,
        mu: &[Interval],
        cov: &[Vec<Interval>],
        p: f64,
        corner: &mut [f64],
    ) -> f64 {
        let mut total = 0.0;
        for l in 0..=self.grid[j].len() {
            let (a, b) = self.cell(j, l);
            let var = cov[j][j];
            let factor = extremum(
                a,
                b,
                (mu[j].lo, mu[j].hi),
                (var.lo.max(0.0), var.hi.max(0.0)),
                self.side,
            );
            let q = p * factor;
            if q == 0.0 {
                continue;
            }
            corner[j] = self.corner(a, b);
            if j == 0 {
                total += q * softmax_of_differences(corner);
                continue;
            }
            match condition(j, a, b, mu, cov) {
                Some((mu2, cov2)) => total += self.level(j - 1, &mu2, &cov2, q, corner),
                None => {
                    if self.side == Side::Upper {
                        // The remaining cells' probabilities sum to at most 1: weight them all
                        // by the largest corner weight among them (their differences at −∞).
                        for v in corner.iter_mut().take(j) {
                            *v = f64::NEG_INFINITY;
                        }
                        total += q * softmax_of_differences(corner);
                    }
                }
            }
        }
        total
    }
}

/// The enclosures of latents `0..j` conditioned on `f_j ∈ [a, b]` (one step of interval
/// Gaussian elimination): `μ_k + Σ_kj/Σ_jj (f_j − μ_j)` and `Σ_kl − Σ_kj Σ_lj / Σ_jj`, or
/// `None` when `Σ_jj` may be 0 or an unbounded `f_j` meets a non-zero coefficient.
#[allow(clippy::type_complexity)]
fn condition(
    j: usize,
    a: f64,
    b: f64,
    mu: &[Interval],
    cov: &[Vec<Interval>],
) -> Option<(Vec<Interval>, Vec<Vec<Interval>>)> {
    let independent = (0..j).all(|k| cov[k][j].is_zero());
    if independent {
        return Some((
            mu[..j].to_vec(),
            cov[..j].iter().map(|r| r[..j].to_vec()).collect(),
        ));
    }
    let sjj = cov[j][j];
    if sjj.lo.is_nan() || sjj.lo <= 0.0 || !a.is_finite() || !b.is_finite() {
        return None;
    }
    let dev = Interval::new(a, b).minus(mu[j]);
    let mut mu2 = Vec::with_capacity(j);
    for k in 0..j {
        let beta = cov[k][j].div_positive(sjj)?;
        mu2.push(mu[k].plus(beta.times(dev)));
    }
    let mut cov2 = vec![vec![Interval::new(0.0, 0.0); j]; j];
    for k in 0..j {
        for l in 0..=k {
            let corr = if k == l {
                cov[k][j].square().div_positive(sjj)?
            } else {
                cov[k][j].times(cov[l][j]).div_positive(sjj)?
            };
            let mut v = cov[k][l].minus(corr);
            if k == l {
                v.lo = v.lo.max(0.0);
                v.hi = v.hi.max(0.0);
            }
            cov2[k][l] = v;
            cov2[l][k] = v;
        }
    }
    if mu2.iter().all(|v| v.is_finite()) {
        Some((mu2, cov2))
    } else {
        None
    }
}

/// The class probability `π_class` as a branch-and-bound problem.
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxProblem<'a> {
    /// The form.
    pub form: &'a SoftmaxForm,
    /// The class whose probability is bounded.
    pub class: usize,
}

impl Bounded for SoftmaxProblem<'_> {
    fn bound(&self, region: &Region, sense: Sense) -> (f64, Vec<Vec<f64>>) {
        let (lat, cands) = self.form.latent_over(region, self.class, sense);
        let side = match sense {
            Sense::Min => Side::Lower,
            Sense::Max => Side::Upper,
        };
        (self.form.probability_bound(self.class, &lat, side), cands)
    }

    fn at(&self, x: &[f64]) -> PointValue {
        let lat = self.form.latent_at(x);
        let lower = self.form.probability_bound(self.class, &lat, Side::Lower);
        let upper = self.form.probability_bound(self.class, &lat, Side::Upper);
        PointValue {
            value: 0.5 * (lower + upper),
            lower,
            upper,
        }
    }
}

fn check(
    form: &SoftmaxForm,
    class: usize,
    region: &Region,
    options: &BnbOptions,
) -> Result<(), VerifyError> {
    if class >= form.n_classes() {
        return Err(VerifyError::Invalid(format!(
            "class index {class} is out of range (the model has {} classes)",
            form.n_classes()
        )));
    }
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
    Ok(())
}

/// Certified bounds of `π_class` over `region` by branch and bound, both directions.
///
/// # Errors
/// A class out of range, a box of the wrong width, or a bad tolerance.
pub fn verify_softmax(
    form: &SoftmaxForm,
    class: usize,
    region: &Region,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    check(form, class, region, options)?;
    let p = SoftmaxProblem { form, class };
    let min = branch_and_bound(&p, region, Sense::Min, options);
    let max = branch_and_bound(&p, region, Sense::Max, options);
    Ok(Verified::of(&min, &max))
}

/// The multi-class decision rule (spec §2.1, Eq. 7) over a box around `x*`.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftmaxDecision {
    /// `ŷ`: the class with the largest probability at `x*` (bracket midpoints).
    pub predicted: usize,
    /// A sound lower bound of `min_T π_ŷ`.
    pub lower: f64,
    /// A sound upper bound of `max_T π_j` for every other class `j`, in class order (`NaN` at `ŷ`).
    pub others_upper: Vec<f64>,
    /// `lower > max_j others_upper[j]`: the decision cannot flip anywhere in the box.
    pub certified: bool,
}

/// The decision rule of spec §2.1 (Eq. 7): certified when the predicted class's probability
/// bound from below exceeds every other class's bound from above, over `region`. Each other
/// class's search stops as soon as it is decided against the first bound.
///
/// # Errors
/// As for [`verify_softmax`], or `x_star` outside `region`.
pub fn softmax_decision(
    form: &SoftmaxForm,
    x_star: &[f64],
    region: &Region,
    options: &BnbOptions,
) -> Result<SoftmaxDecision, VerifyError> {
    check(form, 0, region, options)?;
    if x_star.len() != region.dim() || !region.contains(x_star) {
        return Err(VerifyError::Invalid(
            "the decision point x* must lie in the box".into(),
        ));
    }
    let bracket = form.probability_bracket(x_star);
    let mids: Vec<f64> = bracket.iter().map(|(l, h)| 0.5 * (l + h)).collect();
    let predicted = (0..mids.len())
        .max_by(|&a, &b| mids[a].total_cmp(&mids[b]))
        .expect("at least two classes");
    let p = SoftmaxProblem {
        form,
        class: predicted,
    };
    // The others' certified values at x* are a floor under their maxima: once π_ŷ is found
    // below it somewhere, or bounded above it everywhere, the first half of the rule is decided.
    let floor = bracket
        .iter()
        .enumerate()
        .filter(|(c, _)| *c != predicted)
        .map(|(_, v)| v.0)
        .fold(0.0, f64::max);
    let min = branch_and_bound(
        &p,
        region,
        Sense::Min,
        &BnbOptions {
            decide_at: Some(floor),
            ..options.clone()
        },
    );
    let lower = min.bound;
    let mut others_upper = vec![f64::NAN; form.n_classes()];
    let mut certified = lower > floor;
    for c in (0..form.n_classes()).filter(|c| *c != predicted) {
        if !certified {
            break;
        }
        let q = SoftmaxProblem { form, class: c };
        let max = branch_and_bound(
            &q,
            region,
            Sense::Max,
            &BnbOptions {
                decide_at: Some(lower),
                ..options.clone()
            },
        );
        others_upper[c] = max.bound;
        certified = max.bound < lower;
    }
    Ok(SoftmaxDecision {
        predicted,
        lower,
        others_upper,
        certified,
    })
}
