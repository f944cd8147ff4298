//! Printing kernels as expressions that parse back to the identical kernel.

use std::fmt;

use super::base::{BaseKernel, Lengthscale};
use super::Kernel;

/// Shortest decimal text that parses back to exactly `v`. Rust's `{}` and `{:e}`
/// both round-trip; scientific notation keeps extreme magnitudes short.
fn number(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = items.iter().map(show).collect();
    format!("[{}]", parts.join(", "))
}

impl fmt::Display for BaseKernel {
    /// Prints the learnable variance always and a fixed one only when it is not 1
    /// (the identifiability rule re-derives learnability from position), lengthscales
    /// unless still unset, alpha/period, and dims when restricted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut args = Vec::new();
        if self.var_learnable() || self.var() != 1.0 {
            args.push(format!("var={}", number(self.var())));
        }
        match self.lengthscale() {
            Some(Lengthscale::Iso(l)) => args.push(format!("ls={}", number(*l))),
            Some(Lengthscale::Ard(v)) => args.push(format!("ls={}", list(v, |l| number(*l)))),
            _ => {}
        }
        if let (Some(key), Some(v)) = (self.kind().extra_key(), self.alpha().or(self.period())) {
            args.push(format!("{key}={}", number(v)));
        }
        if let Some(dims) = self.dims() {
            args.push(format!("dims={}", list(dims, usize::to_string)));
        }
        f.write_str(self.kind().name())?;
        if !args.is_empty() {
            write!(f, "({})", args.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Display for Kernel {
    /// Sums inside products are parenthesised; nothing else needs to be, because
    /// canonical kernels have no sum directly inside a sum nor product inside a product.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (children, sep) = match self {
            Kernel::Base(b) => return b.fmt(f),
            Kernel::Sum(terms) => (terms, " + "),
            Kernel::Product(factors, _) => (factors, " * "),
        };
        for (i, child) in children.iter().enumerate() {
            if i > 0 {
                f.write_str(sep)?;
            }
            match (self, child) {
                (Kernel::Product(..), Kernel::Sum(_)) => write!(f, "({child})")?,
                _ => write!(f, "{child}")?,
            }
        }
        Ok(())
    }
}

impl Kernel {
    /// The kernel as an expression; `Kernel::parse_with(&k.to_expr(), policy) == Ok(k)` for
    /// every canonical kernel whose products have the variance policy `policy` (the default
    /// one for [`Kernel::parse`]), bit for bit in every parameter value.
    pub fn to_expr(&self) -> String {
        self.to_string()
    }
}
