//! Parser, printer, parameters, initialisation and the identifiability rule.

use faer::mat;

use crate::kernels::{BaseKind, Kernel, KernelError, Lengthscale};

fn parse(s: &str) -> Kernel {
    Kernel::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn error(s: &str) -> String {
    match Kernel::parse(s) {
        Ok(k) => panic!("{s} parsed as {k}"),
        Err(e) => e.to_string(),
    }
}

fn base(k: &Kernel) -> &crate::kernels::BaseKernel {
    match k {
        Kernel::Base(b) => b,
        other => panic!("not a base kernel: {other}"),
    }
}

#[test]
fn every_name_alias_and_key_parses() {
    for kind in BaseKind::ALL {
        assert_eq!(base(&parse(kind.name())).kind(), kind);
    }
    assert_eq!(parse("rbf"), parse("se"));
    assert_eq!(parse("rbf").to_expr(), "se(var=1)");
    let rq = parse(" rq ( var = 2 , ls = [ 1 , 2.5 ] , alpha = 0.5 , dims = [ 3 , 1 ] ) ");
    let b = base(&rq);
    assert_eq!(b.var(), 2.0);
    assert_eq!(b.lengthscale(), Some(&Lengthscale::Ard(vec![1.0, 2.5])));
    assert_eq!(b.alpha(), Some(0.5));
    assert_eq!(b.dims(), Some(&[3, 1][..]));
    let per = parse("per(ls=0.3, period=7)");
    assert_eq!(base(&per).lengthscale(), Some(&Lengthscale::Iso(0.3)));
    assert_eq!(base(&per).period(), Some(7.0));
    assert_eq!(parse("const(2.5)"), parse("const(var=2.5)"));
    assert_eq!(base(&parse("white(var=1e-3, dims=[0])")).var(), 1e-3);
}

#[test]
fn printing_round_trips_exactly() {
    let exprs = [
        "se",
        "se(ls=[1, 2, 3])",
        "se(ls=0.5, dims=[2, 0])",
        "matern12(var=1e-300, ls=1e300)",
        "matern32(ls=[0.30000000000000004, 123456789.123])",
        "matern52(var=5e-324, ls=1.7976931348623157e308)",
        "rq(alpha=0.1, ls=[1e-5])",
        "per(period=3.14159, ls=2e-7, dims=[1])",
        "lin(var=2) + const(0.5) + white(var=1e-6)",
        "const * se",
        "se * per * lin(var=3)",
        "(se + per) * const(var=2)",
        "((se + lin) * (per + rq)) + matern12 * (white + const)",
        "const(0.7) * (se(dims=[0]) * per(dims=[1], ls=0.25))",
        "se(var=0.1) * se(var=0.2)",
    ];
    for s in exprs {
        let k = parse(s);
        let printed = k.to_expr();
        let again = parse(&printed);
        assert_eq!(again, k, "{s} -> {printed}");
        assert_eq!(again.to_expr(), printed);
        assert_eq!(format!("{k}"), printed);
        assert_eq!(printed.parse::<Kernel>().unwrap(), k);
    }
    let odd = 0.1 + 0.2;
    let text = format!("se(ls=[{odd}, 1e-300, 123456789.123])");
    assert_eq!(
        parse(&text).to_expr(),
        format!("se(var=1, ls=[{odd}, 1e-300, 123456789.123])")
    );
    assert_eq!(
        parse("(se + per) * const(var=2)").to_expr(),
        "(se(var=1) + per(var=1, period=1)) * const(var=2)"
    );
}

#[test]
fn parameter_values_survive_round_trips_bit_for_bit() {
    let mut k = parse("const * se(ls=[1, 1, 1]) + rq(ls=1, alpha=1) + per(ls=1, period=1)");
    let p: Vec<f64> = (0..k.n_params())
        .map(|i| (i as f64 * 1.37).sin() * 5.0)
        .collect();
    k.set_log_params(&p).unwrap();
    let back = parse(&k.to_expr());
    assert_eq!(back, k);
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(bits(back.log_params()), bits(k.log_params()));
}

#[test]
fn malformed_input_gives_located_errors() {
    let cases: [(&str, &[&str]); 22] = [
        ("", &["empty"]),
        ("   ", &["empty"]),
        ("sq", &["position 0", "unknown kernel `sq`", "matern52"]),
        ("se + foo(ls=1)", &["position 5", "`foo`"]),
        (
            "se(lengthscale=1)",
            &["position 3", "`lengthscale`", "var, ls, dims"],
        ),
        ("lin(ls=1)", &["position 4", "`lin` has no parameter `ls`"]),
        ("se(alpha=2)", &["position 3", "`alpha`"]),
        ("per(alpha=2)", &["`alpha`", "var, ls, period, dims"]),
        ("se(var=0)", &["position 3", "se.var", "positive"]),
        ("se(ls=-1)", &["position 3", "se.ls", "-1"]),
        ("rq(alpha=nan)", &["position 3", "rq.alpha", "NaN"]),
        ("se(var=inf)", &["se.var", "inf"]),
        ("se(ls=[1, 0])", &["se.ls", "got 0"]),
        ("se(var=1x)", &["position 7", "a number", "`1x`"]),
        (
            "se(2)",
            &["position 3", "bare value is only allowed for const"],
        ),
        ("(se + per", &["position 9", "`)`", "end of input"]),
        ("se + per)", &["position 8", "end of input", "found `)`"]),
        ("se(ls=1", &["position 7", "`)`"]),
        ("se per", &["position 3", "`per`"]),
        ("se(dims=[0, 1.5])", &["position 12", "dims", "integer"]),
        (
            "se(dims=[1, 1])",
            &["position 3", "column 1 more than once"],
        ),
        (
            "se(var=1, var=2)",
            &["position 10", "`var` given more than once"],
        ),
    ];
    for (input, needles) in cases {
        let msg = error(input);
        for needle in needles {
            assert!(
                msg.contains(needle),
                "{input:?}: {msg:?} should mention {needle:?}"
            );
        }
    }
    assert!(error("se + * per").contains("position 5"));
    assert!(error("se(var=[1, 2])").contains("`var` expects a single positive number"));
    assert!(error("se(dims=2)").contains("list of column indices"));
    assert!(error("se $ per").contains("position 3"));
    assert_eq!(Kernel::parse(""), Err(KernelError::Empty));
}

#[test]
fn initialize_fills_ard_lengthscales_from_the_data() {
    // Column 0: values 1, 3 → population std 1; column 1 is constant → std replaced by 1;
    // column 2: values 0, 4 → std 2.
    let x = mat![[1.0, 5.0, 0.0], [3.0, 5.0, 4.0]];
    let mut k = parse("const * se + per(dims=[2, 0]) + se(ls=2)");
    assert!(!k.is_initialized());
    assert_eq!(k.n_params(), 1 + 1 + 1 + 2);
    k.initialize(x.as_ref()).unwrap();
    assert!(k.is_initialized());
    let r3 = 3f64.sqrt();
    let r2 = 2f64.sqrt();
    let expected = format!(
        "const(var=1) * se(ls=[{}, {}, {}]) + per(var=1, ls=[{}, {}], period=1, dims=[2, 0]) + se(var=1, ls=2)",
        r3,
        r3,
        2.0 * r3,
        2.0 * r2,
        r2
    );
    assert_eq!(k.to_expr(), expected);
    assert_eq!(k.n_params(), 1 + 3 + 1 + 2 + 1 + 1 + 1);
}

#[test]
fn initialize_rejects_data_that_does_not_fit() {
    let x = mat![[1.0, 2.0], [3.0, 4.0]];
    let msg = |s: &str| parse(s).initialize(x.as_ref()).unwrap_err().to_string();
    assert!(msg("se(dims=[0, 2])").contains("column 2, but the data has only 2 columns"));
    assert!(msg("se(ls=[1, 2, 3])").contains("3 lengthscales, expected 2"));
    assert!(msg("se(ls=[1, 2], dims=[1])").contains("2 lengthscales, expected 1"));
    assert!(parse("se(ls=[1, 2])").initialize(x.as_ref()).is_ok());
    assert!(parse("se(dims=[1])").validate(1).is_err());
    assert!(parse("se(dims=[1])").validate(2).is_ok());
}

#[test]
fn identifiability_rule_fixes_all_but_one_variance_per_product() {
    let x = mat![[1.0, 2.0], [3.0, 5.0]];
    let mut k = parse("const * se");
    k.initialize(x.as_ref()).unwrap();
    assert_eq!(
        k.param_names(),
        ["k0.const.var", "k1.se.ls[0]", "k1.se.ls[1]"]
    );
    let mut k = parse("se(ls=1) * per(ls=2)");
    k.initialize(x.as_ref()).unwrap();
    assert_eq!(
        k.param_names(),
        ["k0.se.var", "k0.se.ls", "k1.per.ls", "k1.per.period"]
    );
    // The first const carries the variance wherever it stands; fixed variances print
    // only when they differ from 1.
    let k = parse("se(var=3, ls=1) * const(2) * const(5)");
    assert_eq!(k.param_names(), ["k0.se.ls", "k1.const.var"]);
    assert_eq!(k.to_expr(), "se(var=3, ls=1) * const(var=2) * const(var=5)");
    // A sum factor keeps its terms' variances.
    let k = parse("(se(ls=1) + lin) * const");
    assert_eq!(
        k.param_names(),
        ["k0.se.var", "k0.se.ls", "k1.lin.var", "k2.const.var"]
    );
    // Constructors apply the same rule as the parser.
    let built = Kernel::product(vec![parse("se(ls=1)"), parse("const(4)")]);
    assert_eq!(built, parse("se(ls=1) * const(4)"));
    assert_eq!(
        Kernel::sum(vec![
            parse("se"),
            Kernel::sum(vec![parse("lin"), parse("per")])
        ]),
        parse("se + lin + per")
    );
}

#[test]
fn log_parameters_names_and_bounds() {
    let mut k = parse("const(2) * rq(ls=[0.5, 4], alpha=3) + per(ls=1.5, period=6)");
    assert_eq!(
        k.param_names(),
        [
            "k0.const.var",
            "k1.rq.ls[0]",
            "k1.rq.ls[1]",
            "k1.rq.alpha",
            "k2.per.var",
            "k2.per.ls",
            "k2.per.period"
        ]
    );
    let p = k.log_params();
    let expected = [2f64, 0.5, 4.0, 3.0, 1.0, 1.5, 6.0].map(f64::ln);
    assert_eq!(p, expected);
    let ln = f64::ln;
    let (ls, var, alpha) = (
        (ln(1e-3), ln(1e5)),
        (ln(1e-5), ln(1e5)),
        (ln(1e-3), ln(1e3)),
    );
    assert_eq!(k.log_bounds(), [var, ls, ls, alpha, var, ls, ls]);
    let q: Vec<f64> = p.iter().map(|v| v + 0.25).collect();
    k.set_log_params(&q).unwrap();
    assert_eq!(k.log_params().len(), 7);
    for (a, b) in k.log_params().iter().zip(&q) {
        assert!((a - b).abs() < 1e-15);
    }
    let before = k.clone();
    assert_eq!(
        k.set_log_params(&q[..3]),
        Err(KernelError::ParamCount {
            expected: 7,
            got: 3
        })
    );
    let mut bad = q.clone();
    bad[5] = f64::NAN;
    assert!(k
        .set_log_params(&bad)
        .unwrap_err()
        .to_string()
        .contains("k2.per.ls"));
    bad[5] = 800.0;
    assert!(k
        .set_log_params(&bad)
        .unwrap_err()
        .to_string()
        .contains("k2.per.ls"));
    assert_eq!(k, before, "a failed set leaves the kernel unchanged");
}

#[test]
fn nesting_and_size_are_bounded_with_clear_errors() {
    use crate::kernels::{MAX_EXPR_BASES, MAX_EXPR_DEPTH};
    let nested = |depth: usize| format!("{}se{}", "(".repeat(depth), ")".repeat(depth));
    // The deepest accepted nesting parses to the bare kernel.
    assert_eq!(parse(&nested(MAX_EXPR_DEPTH)), parse("se"));
    // One level more is an error at the offending `(`; 10,000 levels no longer overflow the stack.
    for depth in [MAX_EXPR_DEPTH + 1, 10_000] {
        let e = Kernel::parse(&nested(depth)).unwrap_err();
        assert_eq!(
            e,
            KernelError::TooDeep {
                pos: MAX_EXPR_DEPTH,
                max: MAX_EXPR_DEPTH
            }
        );
        assert!(e.to_string().contains("nested more than 32 deep"), "{e}");
    }
    // The largest accepted product parses; one factor more (or 2,000) is refused at once,
    // at the first base kernel beyond the limit.
    let product = |n: usize| vec!["se"; n].join(" * ");
    assert_eq!(
        parse(&product(MAX_EXPR_BASES)).bases().len(),
        MAX_EXPR_BASES
    );
    for n in [MAX_EXPR_BASES + 1, 2_000] {
        let e = Kernel::parse(&product(n)).unwrap_err();
        assert_eq!(
            e,
            KernelError::TooLarge {
                pos: 5 * MAX_EXPR_BASES,
                max: MAX_EXPR_BASES
            }
        );
        assert!(e.to_string().contains("more than 64 base kernels"), "{e}");
    }
}

#[test]
fn every_located_error_names_its_position_once() {
    for input in [
        "se(var=1x)",
        "se(dims=[0, 1.5])",
        "se(ls=[1, x])",
        "se(var=0)",
        "se(var=1, var=2)",
        "(se + per",
        "sq",
    ] {
        let msg = error(input);
        assert_eq!(msg.matches("at position").count(), 1, "{input:?}: {msg}");
    }
}
