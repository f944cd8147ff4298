//! Sums and products of kernels: canonical construction (flattening and the
//! variance identifiability rule) and the product/sum evaluation rules.

use faer::{Mat, MatRef};

use super::base::BaseKind;
use super::{Kernel, Target};

/// Which factors of a product carry a learnable variance: the product's variance policy.
///
/// `var·k₁ · var·k₂` has one overall scale, not two, so by default only one factor's variance
/// is a hyperparameter; kernel selection, which compares products factor by factor, asks for
/// one variance per factor instead and accepts the flat direction that comes with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProductVariance {
    /// One learnable variance: the first `const` factor's if there is one (so `const * se`
    /// has exactly the parameters of scikit-learn's `C * RBF`), else the first factor's.
    /// Every other base factor keeps its variance fixed at its current value.
    #[default]
    FirstFactor,
    /// Every base factor's variance is learnable.
    EveryFactor,
}

impl Kernel {
    /// The sum of `terms`; nested sums are flattened and a single term is returned as is.
    ///
    /// # Panics
    /// If `terms` is empty.
    pub fn sum(terms: Vec<Kernel>) -> Kernel {
        Self::composite(terms, None)
    }

    /// The product of `factors` under the default [`ProductVariance::FirstFactor`] policy;
    /// see [`Kernel::product_with`].
    ///
    /// # Panics
    /// If `factors` is empty.
    pub fn product(factors: Vec<Kernel>) -> Kernel {
        Self::product_with(factors, ProductVariance::FirstFactor)
    }

    /// The product of `factors`; nested products are flattened (the new product's `policy`
    /// applies to all of their factors) and a single factor is returned as is.
    ///
    /// **Variance identifiability rule.** `policy` says which factors carry a learnable
    /// variance (see [`ProductVariance`]). A factor that is itself a sum keeps its terms'
    /// variances, since their ratios are not expressible otherwise.
    ///
    /// # Panics
    /// If `factors` is empty.
    pub fn product_with(factors: Vec<Kernel>, policy: ProductVariance) -> Kernel {
        Self::composite(factors, Some(policy))
    }

    /// A sum (`product` = `None`) or a product with the given variance policy.
    fn composite(children: Vec<Kernel>, product: Option<ProductVariance>) -> Kernel {
        assert!(
            !children.is_empty(),
            "a sum or product needs at least one kernel"
        );
        let mut flat = Vec::with_capacity(children.len());
        for child in children {
            match (child, product) {
                (Kernel::Sum(inner), None) | (Kernel::Product(inner, _), Some(_)) => {
                    flat.extend(inner)
                }
                (other, _) => flat.push(other),
            }
        }
        let mut k = match (flat.len(), product) {
            (1, _) => flat.pop().expect("one child"),
            (_, None) => Kernel::Sum(flat),
            (_, Some(policy)) => Kernel::Product(flat, policy),
        };
        k.assign_variance_roles(true);
        k
    }

    /// Makes the kernel's overall scale a fixed value instead of a parameter, for use where
    /// something else carries it (the coregionalisation matrix of a multi-output kernel): a
    /// base kernel or product keeps its variance fixed (under
    /// [`ProductVariance::EveryFactor`], the variance of the factor that would carry it alone);
    /// a sum fixes its first term's scale and keeps the others' as relative scales.
    pub fn fix_scale(&mut self) {
        match self {
            Kernel::Sum(terms) => {
                if let Some(first) = terms.first_mut() {
                    first.fix_scale();
                }
            }
            other => other.assign_variance_roles(false),
        }
    }

    /// Applies the identifiability rule; `carrier` says whether this kernel may carry
    /// a learnable variance.
    pub(crate) fn assign_variance_roles(&mut self, carrier: bool) {
        match self {
            Kernel::Base(b) => b.set_var_learnable(carrier),
            Kernel::Sum(terms) => terms.iter_mut().for_each(|t| t.assign_variance_roles(true)),
            Kernel::Product(factors, policy) => {
                let first_const = factors.iter().position(is_const).unwrap_or(0);
                let every = *policy == ProductVariance::EveryFactor;
                for (i, f) in factors.iter_mut().enumerate() {
                    let is_carrier = i == first_const;
                    f.assign_variance_roles(if is_carrier { carrier } else { every });
                }
            }
        }
    }
}

/// Whether a factor is a `const` base kernel (a scalar, never a matrix).
fn is_const(k: &Kernel) -> bool {
    matches!(k, Kernel::Base(b) if b.kind() == BaseKind::Const)
}

/// The product of the `const` factors' variances times `s`, and the other factors
/// with their positions.
fn split_constants(factors: &[Kernel], s: f64) -> (f64, Vec<(usize, &Kernel)>) {
    let mut c = s;
    let mut rest = Vec::new();
    for (i, f) in factors.iter().enumerate() {
        match f {
            Kernel::Base(b) if b.kind() == BaseKind::Const => c *= b.var(),
            _ => rest.push((i, f)),
        }
    }
    (c, rest)
}

/// a ← a∘b.
fn hadamard(a: &mut Mat<f64>, b: &Mat<f64>) {
    for j in 0..a.ncols() {
        let (aj, bj) = (a.col_as_slice_mut(j), b.col_as_slice(j));
        aj.iter_mut().zip(bj).for_each(|(x, y)| *x *= y);
    }
}

/// a ← a + b.
fn add(a: &mut Mat<f64>, b: &Mat<f64>) {
    for j in 0..a.ncols() {
        let (aj, bj) = (a.col_as_slice_mut(j), b.col_as_slice(j));
        aj.iter_mut().zip(bj).for_each(|(x, y)| *x += y);
    }
}

/// Splits `out` into consecutive slices, one per child, sized by their parameter counts.
fn param_slices<'a>(children: &[Kernel], mut out: &'a mut [f64]) -> Vec<&'a mut [f64]> {
    children
        .iter()
        .map(|c| {
            let (head, tail) = std::mem::take(&mut out).split_at_mut(c.n_params());
            out = tail;
            head
        })
        .collect()
}

/// Σ_ab W_ab: over the full symmetric W reading its lower triangle only for a symmetric
/// target, over every entry otherwise.
fn weight_sum(target: Target<'_>, w: MatRef<'_, f64>) -> f64 {
    match target {
        Target::Symmetric(_) => (0..w.ncols())
            .map(|b| w[(b, b)] + 2.0 * (b + 1..w.nrows()).map(|a| w[(a, b)]).sum::<f64>())
            .sum(),
        Target::Cross(..) | Target::Diag(_) => (0..w.ncols())
            .map(|b| (0..w.nrows()).map(|a| w[(a, b)]).sum::<f64>())
            .sum(),
    }
}

pub(crate) fn sum_evaluate(terms: &[Kernel], target: Target<'_>, s: f64) -> Mat<f64> {
    let mut acc = terms[0].evaluate(target, s);
    for t in &terms[1..] {
        add(&mut acc, &t.evaluate(target, s));
    }
    acc
}

/// Constant factors are folded into the scale of the first matrix-valued factor.
pub(crate) fn product_evaluate(factors: &[Kernel], target: Target<'_>, s: f64) -> Mat<f64> {
    let (c, rest) = split_constants(factors, s);
    let Some(((_, first), others)) = rest.split_first() else {
        let (r, cols) = target.shape();
        return Mat::from_fn(r, cols, |_, _| c);
    };
    let mut acc = first.evaluate(target, c);
    for (_, f) in others {
        hadamard(&mut acc, &f.evaluate(target, 1.0));
    }
    acc
}

pub(crate) fn sum_contract(
    terms: &[Kernel],
    target: Target<'_>,
    w: MatRef<'_, f64>,
    s: f64,
    out: &mut [f64],
    mut values: Option<&mut Mat<f64>>,
) -> f64 {
    let slices = param_slices(terms, out);
    terms
        .iter()
        .zip(slices)
        .map(|(t, o)| t.contract_scaled(target, w, s, o, values.as_deref_mut()))
        .sum()
}

/// ∂(∏K_g)/∂θ for θ in factor f is ∂K_f/∂θ ∘ ∏_{g≠f} K_g, so factor f is contracted
/// with W∘∏_{g≠f} K_g. Constant factors are scalars: they only rescale, and their
/// log-variance derivative is Σ W∘K, which every child contraction returns.
pub(crate) fn product_contract(
    factors: &[Kernel],
    target: Target<'_>,
    w: MatRef<'_, f64>,
    s: f64,
    out: &mut [f64],
    values: Option<&mut Mat<f64>>,
) -> f64 {
    let (c, rest) = split_constants(factors, s);
    let mut slices = param_slices(factors, out);
    let wk = match rest.as_slice() {
        [] => {
            if let Some(v) = values {
                (0..v.ncols()).for_each(|j| v.col_as_slice_mut(j).iter_mut().for_each(|e| *e += c));
            }
            c * weight_sum(target, w)
        }
        [(i, f)] => f.contract_scaled(target, w, c, slices[*i], values),
        many => {
            let mats: Vec<Mat<f64>> = (many.iter())
                .map(|(_, f)| f.evaluate(target, 1.0))
                .collect();
            if let Some(v) = values {
                let mut product = mats[0].clone() * faer::Scale(c);
                mats[1..].iter().for_each(|m| hadamard(&mut product, m));
                add(v, &product);
            }
            let mut wk = 0.0;
            for (j, (i, f)) in many.iter().enumerate() {
                // The strict upper triangle of W may be garbage; it stays unread.
                let mut wf = w.to_owned();
                (mats.iter().enumerate())
                    .filter(|(g, _)| *g != j)
                    .for_each(|(_, m)| hadamard(&mut wf, m));
                // Every factor returns the same Σ W∘K.
                wk = f.contract_scaled(target, wf.as_ref(), c, slices[*i], None);
            }
            wk
        }
    };
    for (f, o) in factors.iter().zip(slices.iter_mut()) {
        if is_const(f) && !o.is_empty() {
            o[0] += wk;
        }
    }
    wk
}

pub(crate) fn sum_inputs_contract(
    terms: &[Kernel],
    x1: MatRef<'_, f64>,
    x2: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    s: f64,
) -> Mat<f64> {
    let mut acc = terms[0].inputs_contract(x1, x2, w, s);
    for t in &terms[1..] {
        add(&mut acc, &t.inputs_contract(x1, x2, w, s));
    }
    acc
}

/// Product rule, as in [`product_contract`]: factor f is contracted with W∘∏_{g≠f} K_g, and
/// constant factors only rescale (their inputs gradient is zero).
pub(crate) fn product_inputs_contract(
    factors: &[Kernel],
    x1: MatRef<'_, f64>,
    x2: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    s: f64,
) -> Mat<f64> {
    let (c, rest) = split_constants(factors, s);
    let target = Target::Cross(x1, x2);
    match rest.as_slice() {
        [] => Mat::zeros(x1.nrows(), x1.ncols()),
        [(_, f)] => f.inputs_contract(x1, x2, w, c),
        many => {
            let mats: Vec<Mat<f64>> = (many.iter())
                .map(|(_, f)| f.evaluate(target, 1.0))
                .collect();
            let mut acc = Mat::zeros(x1.nrows(), x1.ncols());
            for (j, (_, f)) in many.iter().enumerate() {
                let mut wf = w.to_owned();
                (mats.iter().enumerate())
                    .filter(|(g, _)| *g != j)
                    .for_each(|(_, m)| hadamard(&mut wf, m));
                add(&mut acc, &f.inputs_contract(x1, x2, wf.as_ref(), c));
            }
            acc
        }
    }
}

pub(crate) fn sum_grad_x(terms: &[Kernel], xstar: &[f64], x: MatRef<'_, f64>) -> Mat<f64> {
    let mut acc = terms[0].grad_x(xstar, x);
    for t in &terms[1..] {
        add(&mut acc, &t.grad_x(xstar, x));
    }
    acc
}

/// Product rule: ∇∏k_f = Σ_f ∇k_f ∏_{g≠f} k_g, row by row.
pub(crate) fn product_grad_x(factors: &[Kernel], xstar: &[f64], x: MatRef<'_, f64>) -> Mat<f64> {
    let xs = MatRef::from_row_major_slice(xstar, 1, xstar.len());
    let values: Vec<Mat<f64>> = factors
        .iter()
        .map(|f| f.evaluate(Target::Cross(xs, x), 1.0))
        .collect();
    let mut acc = Mat::zeros(x.nrows(), x.ncols());
    for (f, factor) in factors.iter().enumerate() {
        let g = factor.grad_x(xstar, x);
        for b in 0..x.nrows() {
            let others: f64 = (values.iter().enumerate())
                .filter(|(h, _)| *h != f)
                .map(|(_, v)| v[(0, b)])
                .product();
            for c in 0..x.ncols() {
                acc[(b, c)] += others * g[(b, c)];
            }
        }
    }
    acc
}
