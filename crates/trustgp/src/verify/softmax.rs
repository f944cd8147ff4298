//! Certified bounds of the class probabilities of a multi-class (softmax) GP classifier over a
//! box (spec §2.8: Propositions 10 and 11, Lemma 12; with the innermost axis integrated in
//! closed form by Proposition 9).
//!
//! The class probability is `π_i(x) = ∫ softmax_i(f) N(f | μ(x), Σ(x)) df`, and
//! `softmax_i(f) = 1/(1 + Σ_{k≠i} e^{g_k})` depends only on the `C − 1` differences
//! `g_k = f_k − f_i`. On a box:
//!
//! 1. the differences' means and covariances are enclosed ([`super::differences`]): with one
//!    shared kernel each difference is ONE latent linear-Gaussian form (its mean `t_k − t_i`,
//!    its covariance from the class blocks of `S` including the cross-covariances), bounded as
//!    a single latent, so the correlation of `f_k` and `f_i` is kept;
//! 2. the difference axes `1..C−1` are partitioned into a grid of cells `S_l` (none for two
//!    classes); on a cell `softmax_i` decreases in every `g_k`, so with the outer differences
//!    fixed at the cell corner where `softmax_i` is smallest (largest) it is bounded below
//!    (above) by a function of the innermost difference `g_0` alone (Prop. 10's corner
//!    argument, applied to the outer axes only):
//!
//!    ```text
//!    h(g_0) = 1/(1 + A + e^{g_0}) = σ(L − g_0)/(1 + A),   A = Σ_{k≥1} e^{corner_k},  L = ln(1 + A);
//!    ```
//!
//! 3. the cell's contribution `E[h(g_0) 1{g_{≥1} ∈ S_l}]` is bounded by the chain rule over the
//!    outer axes, last to first (Prop. 11: each factor a Gaussian interval probability, its
//!    conditional mean and variance enclosed by interval Gaussian elimination — the spec's
//!    general \[choice\] — and bounded by Lemma 12, [`super::gauss_interval`]), times the
//!    innermost expectation `E[h(g_0) | g_{≥1} = y]` over every `y` in the cell (Lemma 17:
//!    `E[h | Y ∈ B] ≥ inf_{y∈B} E[h | Y = y]`). That expectation is a logistic-normal integral
//!    `Π(L − μ_0, Σ_0)/(1 + A)` over the conditional enclosures of `(μ_0, Σ_0)`, bounded in
//!    closed form by Prop. 9's monotonicity ([`super::link`]). When a conditioning is
//!    impossible (a variance interval reaching 0, an unbounded cell with a non-zero
//!    coefficient), the rest of the chain is bounded trivially: 0 from below, and from above by
//!    the largest weight of the remaining cells (their probabilities sum to at most one).
//!
//! Integrating the innermost axis exactly removes one axis of discretisation: two classes need
//! no grid (the bound is the binary logit path's, spec §2.9's ε/2 term vanishes), three need a
//! 1-D grid. (The spec's form grids all `C` latents; the previous scheme here gridded all
//! `C − 1` differences, enclosed from the latents', and its point brackets floored at about
//! 5·10⁻⁵, 0.03 and 0.33 for 2, 3, 4 classes, against 10⁻¹¹, 10⁻³ and 0.13 now: `experiments
//! bench-softmax`.)
//!
//! **Grid** \[choice, deviating from the spec's fixed root grid]: each bound gets its own grid,
//! per axis `K` breakpoints at normal quantiles evenly spaced in probability between `Φ(−7)` and
//! `Φ(7)`, scaled by the difference's spread (half the range of its mean plus its largest
//! standard deviation), plus two unbounded end cells of negligible mass. Any partition makes
//! Prop. 10 hold; cells of equal mass put the resolution where the mass is, and a grid that
//! follows the region tightens as the boxes shrink instead of stalling at a root grid's
//! resolution. A floor remains for three or more classes: the corner weights of a cell differ by
//! about the cell's width, so bounds and brackets are exact only up to about `(C − 2)/K`; `K`
//! follows the number of classes (`(K+1)^(C−2)` cells, about [`CELL_BUDGET`]) and can be set
//! ([`SoftmaxForm::with_cells`]).
//!
//! **Values at points.** The classifier's `predict` integrates the softmax by Monte Carlo
//! (R&W Alg. 3.4), which is not certified. Verification instead uses, at a point, the same
//! bound with the degenerate `(μ, Σ)` of that point (spec §6.9): a certified bracket
//! `[π_lower, π_upper] ∋ π_i(x)` ([`SoftmaxForm::probability_bracket`]). `min_found`/`max_found`
//! report its midpoint, and the searches use its certified side, so a Monte Carlo prediction
//! lies in the bracket up to its own sampling error.

use super::bnb::{branch_and_bound, BnbOptions, Bounded, PointValue, Sense};
use super::differences::{DifferenceBox, Differences};
use super::form::LatentForm;
use super::gauss_interval::{extremum, Side};
use super::interval::Interval;
use super::link::BinaryLink;
use super::quantity::Verified;
use super::region::Region;
use super::{rounding, VerifyError};
use crate::models::classification::multiclass::MulticlassForm;
use crate::sequential::acquisition::normal;

/// About how many cells (each one logistic-normal integral) each probability bound visits.
pub const CELL_BUDGET: usize = 1_000;

/// The multi-class posterior read for box bounds: the enclosures of its latent differences,
/// and the latent-space grid.
#[derive(Clone, Debug)]
pub struct SoftmaxForm {
    differences: Differences,
    cells: usize,
    /// Standard normal quantiles at `k/(K+1)`, `k = 1..K`.
    quantiles: Vec<f64>,
}

/// `K` breakpoints per outer axis so that the `(K+1)^(C−2)` cells are about [`CELL_BUDGET`]
/// (one breakpoint, unused, for two classes).
fn default_cells(classes: usize) -> usize {
    let axes = classes.saturating_sub(2).max(1);
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
        let cells = default_cells(m);
        Ok(SoftmaxForm {
            differences: Differences::new(form, classes)?,
            cells,
            quantiles: quantiles(cells),
        })
    }

    /// The same form with `k` grid breakpoints per outer difference axis (`(k+1)^(C−2)` cells
    /// per bound).
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
        self.differences.classes().len()
    }

    /// Breakpoints per outer difference axis.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.differences.classes()[0].dim()
    }

    /// Class `c`'s latent as a single form (its marginal mean and variance).
    ///
    /// # Panics
    /// If `c` is not a class index.
    pub fn class_form(&self, c: usize) -> &LatentForm {
        &self.differences.classes()[c]
    }

    /// The enclosures of class `class`'s latent differences (see [`Differences`]).
    pub fn differences(&self) -> &Differences {
        &self.differences
    }

    /// A sound bound of `π_i` over every `(μ, Σ)` of the differences `g_k = f_k − f_i` that
    /// the enclosure allows: a lower bound of the minimum ([`Side::Lower`]) or an upper bound
    /// of the maximum ([`Side::Upper`]).
    ///
    /// # Panics
    /// If `diff` has no difference.
    pub fn probability_bound(&self, diff: &DifferenceBox, side: Side) -> f64 {
        let axes = diff.mean.len();
        assert!(axes >= 1, "at least one latent difference");
        // Axis 0 is integrated in closed form; the outer axes get a grid.
        let grid: Vec<Vec<f64>> = (0..axes)
            .map(|c| {
                if c == 0 {
                    return Vec::new();
                }
                let mu = diff.mean[c];
                let mid = 0.5 * (mu.lo + mu.hi);
                let spread = 0.5 * (mu.hi - mu.lo) + diff.cov[c][c].hi.max(0.0).sqrt();
                self.quantiles.iter().map(|z| mid + spread * z).collect()
            })
            .collect();
        let chain = Chain { side, grid: &grid };
        let mut corner = vec![0.0; axes];
        let total = chain.level(axes - 1, &diff.mean, &diff.cov, 1.0, &mut corner);
        // Each cell's product carries its factors' margins; the sum of up to (K+1)^(C−2)
        // non-negative terms rounds by at most (cells · ε) of the total.
        let cells = (self.cells as f64 + 1.0).powi(axes as i32 - 1);
        let scale = total * (cells / 2000.0).max(1.0);
        match side {
            Side::Lower => rounding::down(total, scale).clamp(0.0, 1.0),
            Side::Upper => rounding::up(total, scale).clamp(0.0, 1.0),
        }
    }

    /// A certified bracket `[lo, hi] ∋ π_c(x)` for every class `c`.
    pub fn probability_bracket(&self, x: &[f64]) -> Vec<(f64, f64)> {
        (0..self.n_classes())
            .map(|c| {
                let diff = self.differences.at(c, x);
                (
                    self.probability_bound(&diff, Side::Lower),
                    self.probability_bound(&diff, Side::Upper),
                )
            })
            .collect()
    }
}

/// The chain-rule sum over a grid of the outer difference axes for one side (Prop. 10's corner
/// weights on the outer axes, Prop. 11 for the cells' masses, the innermost axis in closed form).
struct Chain<'g> {
    side: Side,
    grid: &'g [Vec<f64>],
}

/// Relative rounding allowed for `exp`, `ln_1p`, a division and a sum of a few terms.
const ULPS: f64 = 16.0 * f64::EPSILON;

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

    /// `E h(g_0)` with `h(g_0) = 1/(1 + A + e^{g_0})`, `A = Σ e^{outer}`, bounded from this side
    /// over `g_0 ~ N(μ, Σ)` with `μ ∈ mu`, `Σ ∈ var`: `h = σ(L − g_0)/(1 + A)` with
    /// `L = ln(1 + A)`, so the expectation is `Π(L − μ, Σ)/(1 + A)` (the logistic-normal
    /// integral, increasing in its mean), bounded by Prop. 9.
    fn innermost(&self, mu: Interval, var: Interval, outer: &[f64]) -> f64 {
        let a: f64 = outer.iter().map(|v| v.exp()).sum();
        // Round A towards the side's safe end: a larger A lowers h.
        let a = match self.side {
            Side::Lower => a * (1.0 + ULPS),
            Side::Upper => a * (1.0 - ULPS),
        };
        if a.is_nan() || a == f64::INFINITY {
            // An outer corner at +∞: softmax_i vanishes on the cell (A = ∞ is never reached
            // from the upper side, whose corners are lower cell ends).
            return 0.0;
        }
        let l = a.ln_1p();
        let l = Interval::new(l - ULPS * l, l + ULPS * l);
        let nu = l.minus(mu);
        let var = (var.lo.max(0.0), var.hi.max(0.0));
        let w = 1.0 / (1.0 + a);
        match self.side {
            Side::Lower => w * (1.0 - ULPS) * BinaryLink::Logistic.min_over((nu.lo, nu.hi), var),
            Side::Upper => {
                (w * (1.0 + ULPS) * BinaryLink::Logistic.max_over((nu.lo, nu.hi), var)).min(1.0)
            }
        }
    }

    /// The sum over the cells of the outer axes `1..=j` (axes above `j` fixed in `corner`,
    /// with their factors' product `p`) of the innermost expectation, given the enclosures of
    /// the differences `0..=j` conditioned on the axes above.
    fn level(
        &self,
        j: usize,
        mu: &[Interval],
        cov: &[Vec<Interval>],
        p: f64,
        corner: &mut [f64],
    ) -> f64 {
        if j == 0 {
            return p * self.innermost(mu[0], cov[0][0], &corner[1..]);
        }
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
            match condition(j, a, b, mu, cov) {
                Some((mu2, cov2)) => total += self.level(j - 1, &mu2, &cov2, q, corner),
                None => {
                    if self.side == Side::Upper {
                        // The remaining cells' probabilities sum to at most 1 and h ≤ its
                        // supremum: weight them all by the largest weight among them (their
                        // differences at −∞).
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
        let (diff, cands) = self.form.differences.over(region, self.class, sense);
        let side = match sense {
            Sense::Min => Side::Lower,
            Sense::Max => Side::Upper,
        };
        (self.form.probability_bound(&diff, side), cands)
    }

    fn at(&self, x: &[f64]) -> PointValue {
        let diff = self.form.differences.at(self.class, x);
        let lower = self.form.probability_bound(&diff, Side::Lower);
        let upper = self.form.probability_bound(&diff, Side::Upper);
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
    /// A sound upper bound of `max_T π_j` for every other class `j`, in class order: `NaN` at
    /// `ŷ`, and at the classes not searched once the rule had failed on an earlier one.
    pub others_upper: Vec<f64>,
    /// `lower > max_j others_upper[j]`: the decision cannot flip anywhere in the box.
    pub certified: bool,
}

/// The decision rule of spec §2.1 (Eq. 7): certified when the predicted class's probability
/// bound from below exceeds every other class's bound from above, over `region`. The predicted
/// class's minimum is searched to the tolerance (a bound stopped just above the others' values
/// at `x*` would be below their maxima over the box, and the rule would fail where a tighter
/// bound decides it); when that bound exceeds ½ the probabilities' sum of 1 bounds every other
/// class by `1 − lower` without a search. Otherwise each other class's search stops as soon as
/// it is decided against the first bound.
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
    // The others' certified values at x* are a floor under their maxima: a lower bound of π_ŷ
    // at or below it cannot satisfy the rule.
    let floor = bracket
        .iter()
        .enumerate()
        .filter(|(c, _)| *c != predicted)
        .map(|(_, v)| v.0)
        .fold(0.0, f64::max);
    let min = branch_and_bound(&p, region, Sense::Min, options);
    let lower = min.bound;
    let mut others_upper = vec![f64::NAN; form.n_classes()];
    if lower > 0.5 {
        // π_j ≤ 1 − π_ŷ ≤ 1 − lower < lower for every other class j.
        for c in (0..form.n_classes()).filter(|c| *c != predicted) {
            others_upper[c] = 1.0 - lower;
        }
        return Ok(SoftmaxDecision {
            predicted,
            lower,
            others_upper,
            certified: true,
        });
    }
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
