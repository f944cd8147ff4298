//! The kernel grammar of kernel selection (VBKS spec §3): structures built from base kernels
//! with `+` and `×`, their canonical form, and their instantiation as [`Kernel`]s.
//!
//! A structure says *which* base kernels are combined and how, not their hyperparameters:
//! every occurrence of a base kernel gets its own hyperparameters when the structure is
//! instantiated (spec §3.1), and every product factor keeps its own variance
//! ([`ProductVariance::EveryFactor`]), so that products are compared factor by factor.
//!
//! Canonical form (spec §3.2): nested nodes of the same operator are flattened
//! (associativity) and the children of every node are sorted (commutativity): compound
//! children before base kernels, compound children by their canonical key, base kernels in the
//! order SE < RQ < PER < LIN (then the other kinds). Distributivity is **not** applied and
//! repeated kernels are **not** merged: `per + per` and `se * se` stay distinct structures.

use std::cmp::Ordering;
use std::fmt;

use crate::kernels::{BaseKernel, BaseKind, Kernel, KernelError, Lengthscale, ProductVariance};

use super::SelectionError;

/// A kernel structure: a base kernel, a sum or a product (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Structure {
    /// One base kernel.
    Base(BaseKind),
    /// A sum of at least two terms, none of them a sum.
    Sum(Vec<Structure>),
    /// A product of at least two factors, none of them a product.
    Product(Vec<Structure>),
}

/// The rank of a base kind in the canonical order (SE < RQ < PER < LIN, then the others).
fn base_rank(kind: BaseKind) -> usize {
    match kind {
        BaseKind::Se => 0,
        BaseKind::Rq => 1,
        BaseKind::Per => 2,
        BaseKind::Lin => 3,
        BaseKind::Matern12 => 4,
        BaseKind::Matern32 => 5,
        BaseKind::Matern52 => 6,
        BaseKind::Const => 7,
        BaseKind::White => 8,
    }
}

impl Structure {
    /// The canonical sum of `terms` (flattened, sorted; a single term is returned as is).
    ///
    /// # Panics
    /// If `terms` is empty.
    pub fn sum(terms: Vec<Structure>) -> Structure {
        Self::node(terms, true)
    }

    /// The canonical product of `factors` (flattened, sorted; a single factor is returned as
    /// is).
    ///
    /// # Panics
    /// If `factors` is empty.
    pub fn product(factors: Vec<Structure>) -> Structure {
        Self::node(factors, false)
    }

    fn node(children: Vec<Structure>, is_sum: bool) -> Structure {
        assert!(!children.is_empty(), "a sum or product needs a child");
        let mut flat = Vec::with_capacity(children.len());
        for child in children {
            // Canonical children have no child of their own operator, so one level of
            // flattening after canonicalising suffices.
            match (child.canonical(), is_sum) {
                (Structure::Sum(inner), true) | (Structure::Product(inner), false) => {
                    flat.extend(inner)
                }
                (other, _) => flat.push(other),
            }
        }
        if flat.len() == 1 {
            return flat.pop().expect("one child");
        }
        flat.sort_by(Structure::canonical_cmp);
        if is_sum {
            Structure::Sum(flat)
        } else {
            Structure::Product(flat)
        }
    }

    /// The canonical form of this structure (idempotent).
    pub fn canonical(&self) -> Structure {
        match self {
            Structure::Base(k) => Structure::Base(*k),
            Structure::Sum(t) if t.is_empty() => self.clone(),
            Structure::Product(f) if f.is_empty() => self.clone(),
            Structure::Sum(t) => Structure::sum(t.clone()),
            Structure::Product(f) => Structure::product(f.clone()),
        }
    }

    /// The order of children inside a canonical node: compound children first (by key), then
    /// base kernels in the order SE < RQ < PER < LIN.
    fn canonical_cmp(a: &Structure, b: &Structure) -> Ordering {
        match (a, b) {
            (Structure::Base(x), Structure::Base(y)) => base_rank(*x).cmp(&base_rank(*y)),
            (Structure::Base(_), _) => Ordering::Greater,
            (_, Structure::Base(_)) => Ordering::Less,
            _ => a.key().cmp(&b.key()),
        }
    }

    /// A string that identifies the canonical structure: two structures are the same kernel
    /// structure exactly when their canonical forms have the same key.
    pub fn key(&self) -> String {
        match self {
            Structure::Base(k) => format!("{}", base_rank(*k)),
            Structure::Sum(t) => format!("+({})", keys(t)),
            Structure::Product(f) => format!("*({})", keys(f)),
        }
    }

    /// Number of base-kernel occurrences.
    pub fn base_count(&self) -> usize {
        match self {
            Structure::Base(_) => 1,
            Structure::Sum(c) | Structure::Product(c) => c.iter().map(Self::base_count).sum(),
        }
    }

    /// The structure of a parsed kernel (its hyperparameter values and active inputs are
    /// ignored), in canonical form.
    pub fn of_kernel(kernel: &Kernel) -> Structure {
        match kernel {
            Kernel::Base(b) => Structure::Base(b.kind()),
            Kernel::Sum(t) => Structure::sum(t.iter().map(Self::of_kernel).collect()),
            Kernel::Product(f, _) => Structure::product(f.iter().map(Self::of_kernel).collect()),
        }
    }

    /// Parses a structure from a kernel expression such as `per * lin + se` (the grammar of
    /// [`Kernel::parse`]; hyperparameter values written in it are ignored).
    ///
    /// # Errors
    /// [`SelectionError::Kernel`] with the parser's message if `expr` is not a kernel
    /// expression.
    pub fn parse(expr: &str) -> Result<Structure, SelectionError> {
        let kernel = Kernel::parse(expr).map_err(|source| SelectionError::Kernel {
            expr: expr.trim().to_string(),
            source,
        })?;
        Ok(Self::of_kernel(&kernel))
    }

    /// The kernel with this structure on `d` inputs at the initial hyperparameters of spec
    /// §3.6 (standardised units): every variance 1, every lengthscale 1 (one per input, ARD),
    /// rq's α 1, per's period 1; one variance per product factor
    /// ([`ProductVariance::EveryFactor`]).
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if `d` is 0.
    pub fn instantiate(&self, d: usize) -> Result<Kernel, SelectionError> {
        self.instantiate_with_periods(d, &[])
    }

    /// [`Structure::instantiate`], but the `j`-th PER occurrence (in the order of the
    /// canonical expression) starts at period `periods[j]`, and at the spec's 1 where the
    /// list is shorter (VBKS's data-driven periods, [`dominant_periods`]).
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if `d` is 0; [`SelectionError::Kernel`] for a period that
    /// is not a positive finite number.
    ///
    /// [`dominant_periods`]: super::dominant_periods
    pub fn instantiate_with_periods(
        &self,
        d: usize,
        periods: &[f64],
    ) -> Result<Kernel, SelectionError> {
        if d == 0 {
            return Err(SelectionError::Invalid(
                "kernels need at least one input column".into(),
            ));
        }
        self.build(d, &mut periods.iter().copied())
    }

    fn build(
        &self,
        d: usize,
        periods: &mut dyn Iterator<Item = f64>,
    ) -> Result<Kernel, SelectionError> {
        let kernel = match self {
            Structure::Base(kind) => {
                let mut base = base_at_init(*kind, d);
                if *kind == BaseKind::Per {
                    if let Some(p) = periods.next() {
                        base = base.and_then(|b| b.with_period(p));
                    }
                }
                Kernel::Base(base.map_err(|source| SelectionError::Kernel {
                    expr: self.to_string(),
                    source,
                })?)
            }
            Structure::Sum(t) => Kernel::sum(
                t.iter()
                    .map(|c| c.build(d, periods))
                    .collect::<Result<_, _>>()?,
            ),
            Structure::Product(f) => Kernel::product_with(
                f.iter()
                    .map(|c| c.build(d, periods))
                    .collect::<Result<_, _>>()?,
                ProductVariance::EveryFactor,
            ),
        };
        Ok(kernel)
    }

    /// Number of PER occurrences.
    pub fn period_count(&self) -> usize {
        match self {
            Structure::Base(k) => usize::from(*k == BaseKind::Per),
            Structure::Sum(c) | Structure::Product(c) => c.iter().map(Self::period_count).sum(),
        }
    }
}

/// A base kernel at the initial values of spec §3.6.
fn base_at_init(kind: BaseKind, d: usize) -> Result<BaseKernel, KernelError> {
    let mut base = BaseKernel::new(kind).with_var(1.0)?;
    if kind.has_lengthscale() {
        let ls = if d == 1 {
            Lengthscale::Iso(1.0)
        } else {
            Lengthscale::Ard(vec![1.0; d])
        };
        base = base.with_lengthscale(ls)?;
    }
    Ok(base)
}

fn keys(children: &[Structure]) -> String {
    children
        .iter()
        .map(Structure::key)
        .collect::<Vec<_>>()
        .join(",")
}

impl fmt::Display for Structure {
    /// The canonical expression, e.g. `(se + per) * lin` or `per * se + per`: it parses back
    /// (through [`Kernel::parse`]) to the same structure.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (children, sep) = match self {
            Structure::Base(k) => return f.write_str(k.name()),
            Structure::Sum(t) => (t, " + "),
            Structure::Product(c) => (c, " * "),
        };
        for (i, child) in children.iter().enumerate() {
            if i > 0 {
                f.write_str(sep)?;
            }
            match (self, child) {
                (Structure::Product(_), Structure::Sum(_)) => write!(f, "({child})")?,
                _ => write!(f, "{child}")?,
            }
        }
        Ok(())
    }
}
