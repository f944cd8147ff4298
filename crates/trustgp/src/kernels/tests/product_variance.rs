//! The product variance policy: which factors of a product carry a learnable variance.

use super::gradients::{check_kernel_grad_contract, EXPRS};
use super::{kernel_with, Lcg};
use crate::kernels::{Kernel, ProductVariance};

fn parse(expr: &str, policy: ProductVariance) -> Kernel {
    Kernel::parse_with(expr, policy).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn names(expr: &str, policy: ProductVariance) -> Vec<String> {
    parse(expr, policy).param_names()
}

#[test]
fn first_factor_is_the_default_of_parse_and_product() {
    for expr in EXPRS {
        assert_eq!(
            Kernel::parse(expr).unwrap(),
            parse(expr, ProductVariance::FirstFactor),
            "{expr}"
        );
    }
    let factors = || {
        vec![
            parse("se", ProductVariance::FirstFactor),
            parse("per", ProductVariance::FirstFactor),
        ]
    };
    assert_eq!(
        Kernel::product(factors()),
        Kernel::product_with(factors(), ProductVariance::FirstFactor)
    );
    assert_eq!(ProductVariance::default(), ProductVariance::FirstFactor);
}

#[test]
fn every_factor_gives_each_base_factor_a_variance() {
    let expr = "se(ls=1) * per(ls=1, period=2) * matern12(ls=1)";
    let first = names(expr, ProductVariance::FirstFactor);
    let every = names(expr, ProductVariance::EveryFactor);
    assert_eq!(
        first,
        [
            "k0.se.var",
            "k0.se.ls",
            "k1.per.ls",
            "k1.per.period",
            "k2.matern12.ls"
        ]
    );
    assert_eq!(
        every,
        [
            "k0.se.var",
            "k0.se.ls",
            "k1.per.var",
            "k1.per.ls",
            "k1.per.period",
            "k2.matern12.var",
            "k2.matern12.ls"
        ]
    );
}

#[test]
fn every_factor_counts_const_factors_and_products_inside_sums() {
    let count = |e, p| parse(e, p).n_params();
    // `const` carries the scale under FirstFactor; se and per keep theirs fixed.
    let e = "const(2) * se(ls=1) * per(ls=1, period=2)";
    assert_eq!(count(e, ProductVariance::FirstFactor), 1 + 1 + 2);
    assert_eq!(count(e, ProductVariance::EveryFactor), 3 + 1 + 2);
    // A sum inside a product keeps its terms' variances under both policies; the policy
    // reaches the products inside the sum's terms too. Counts: se (var, ls) · lin (var, fixed
    // unless EveryFactor) + per (var, ls, period), times const (var).
    let e = "(se(ls=1) * lin + per(ls=1, period=2)) * const(3)";
    assert_eq!(count(e, ProductVariance::FirstFactor), 2 + 3 + 1);
    assert_eq!(count(e, ProductVariance::EveryFactor), 2 + 1 + 3 + 1);
}

#[test]
fn every_factor_gradients_match_finite_differences() {
    let mut rng = Lcg::new(41);
    for expr in EXPRS {
        for n in [23, 300] {
            let x = rng.matrix(n, 3);
            let k = kernel_with(expr, ProductVariance::EveryFactor, x.as_ref(), &mut rng);
            check_kernel_grad_contract(&k, x.as_ref(), &mut rng, &format!("EveryFactor {expr}"));
        }
    }
}

#[test]
fn policy_changes_which_variances_are_learnable_not_the_values() {
    let mut rng = Lcg::new(42);
    let x = rng.matrix(15, 3);
    for expr in EXPRS {
        let mut first = parse(expr, ProductVariance::FirstFactor);
        let mut every = parse(expr, ProductVariance::EveryFactor);
        first.initialize(x.as_ref()).unwrap();
        every.initialize(x.as_ref()).unwrap();
        assert_eq!(first.matrix(x.as_ref()), every.matrix(x.as_ref()), "{expr}");
    }
}

#[test]
fn every_factor_kernels_print_and_parse_back_to_themselves() {
    let mut rng = Lcg::new(43);
    let x = rng.matrix(10, 3);
    for expr in EXPRS {
        let k = kernel_with(expr, ProductVariance::EveryFactor, x.as_ref(), &mut rng);
        let back = parse(&k.to_expr(), ProductVariance::EveryFactor);
        assert_eq!(back, k, "{expr}");
    }
}

#[test]
fn flattening_applies_the_outer_policy_and_sums_keep_their_terms_policies() {
    let every = parse(
        "se(ls=1) * per(ls=1, period=2)",
        ProductVariance::EveryFactor,
    );
    let lin = parse("lin", ProductVariance::FirstFactor);
    let outer = Kernel::product_with(
        vec![every.clone(), lin.clone()],
        ProductVariance::FirstFactor,
    );
    assert_eq!(
        outer,
        parse(
            "se(ls=1) * per(ls=1, period=2) * lin",
            ProductVariance::FirstFactor
        )
    );
    let sum = Kernel::sum(vec![every.clone(), lin]);
    assert_eq!(sum.n_params(), every.n_params() + 1);
}

#[test]
fn fix_scale_under_every_factor_fixes_only_the_carrier() {
    for (expr, carrier_first) in [
        ("se(ls=1) * per(ls=1, period=2)", true),
        ("se(ls=1) * const(2)", false),
    ] {
        let mut k = parse(expr, ProductVariance::EveryFactor);
        let before = k.param_names();
        k.fix_scale();
        let after = k.param_names();
        assert_eq!(after.len(), before.len() - 1, "{expr}");
        let carrier = if carrier_first { 0 } else { before.len() - 1 };
        let mut expected = before.clone();
        expected.remove(carrier);
        assert_eq!(after, expected, "{expr}");
    }
}
