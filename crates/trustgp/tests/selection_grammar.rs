//! The kernel grammar and spaces of kernel selection (VBKS spec §3, test T15).

use std::collections::BTreeSet;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use trustgp::kernels::{BaseKind, Kernel};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::selection::{KernelSpace, SelectionError, Structure, BASES};
use trustgp::Mat;

fn keys(space: &KernelSpace) -> BTreeSet<String> {
    space.kernels().iter().map(Structure::key).collect()
}

/// Duvenaud et al.'s expansion, written independently of `KernelSpace::k144`: level l + 1 is
/// `S + B` and `S × B` for every level-l structure `S` and base `B`, deduplicated.
fn closure_levels() -> Vec<BTreeSet<String>> {
    let mut levels: Vec<Vec<Structure>> = vec![BASES.iter().map(|b| Structure::Base(*b)).collect()];
    for _ in 0..2 {
        let mut next = Vec::new();
        for s in levels.last().unwrap() {
            for b in BASES {
                next.push(Structure::sum(vec![s.clone(), Structure::Base(b)]));
                next.push(Structure::product(vec![s.clone(), Structure::Base(b)]));
            }
        }
        levels.push(next);
    }
    levels
        .iter()
        .map(|l| l.iter().map(Structure::key).collect())
        .collect()
}

#[test]
fn k144_has_144_unique_kernels_with_level_sizes_4_20_120() {
    let space = KernelSpace::k144();
    assert_eq!(space.len(), 144);
    assert_eq!(keys(&space).len(), 144, "canonical keys are unique");
    let count = |n| {
        space
            .kernels()
            .iter()
            .filter(|s| s.base_count() == n)
            .count()
    };
    assert_eq!((count(1), count(2), count(3)), (4, 20, 120));
}

#[test]
fn k144_equals_the_grammar_closure_to_level_3() {
    let levels = closure_levels();
    let union: BTreeSet<String> = levels.iter().flatten().cloned().collect();
    assert_eq!(union, keys(&KernelSpace::k144()));
    assert_eq!(levels[1].len(), 20);
    assert_eq!(levels[2].len(), 120);
}

#[test]
fn k144_follows_the_spec_enumeration_order() {
    let k = KernelSpace::k144();
    let at = |i: usize| k.kernels()[i - 1].to_string();
    assert_eq!(at(1), "se");
    assert_eq!(at(4), "lin");
    assert_eq!(at(5), "se + se");
    assert_eq!(at(14), "lin + lin");
    assert_eq!(at(15), "se * se");
    assert_eq!(at(25), "se + se + se");
    assert_eq!(at(44), "lin + lin + lin");
    assert_eq!(at(45), "se * se * se");
    assert_eq!(at(65), "se * se + se");
    assert_eq!(at(104), "lin * lin + lin");
    assert_eq!(at(105), "(se + se) * se");
    assert_eq!(at(144), "(lin + lin) * lin");
    let lin_only = k
        .kernels()
        .iter()
        .filter(|s| {
            !s.to_string().contains("se")
                && !s.to_string().contains("rq")
                && !s.to_string().contains("per")
        })
        .count();
    assert_eq!(lin_only, 7, "seven LIN-only kernels (spec §3.3)");
}

#[test]
fn k12_is_a_subset_of_k144_with_the_true_kernels_last() {
    let k12 = KernelSpace::k12();
    let k144 = KernelSpace::k144();
    assert_eq!(k12.len(), 12);
    for s in k12.kernels() {
        assert!(k144.position(s).is_some(), "{s} is in K144");
    }
    let per_lin_rq = Structure::parse("per * lin * rq").unwrap();
    let per_rq_lin = Structure::parse("lin * (rq + per)").unwrap();
    assert_eq!(k12.position(&per_lin_rq), Some(10));
    assert_eq!(k12.position(&per_rq_lin), Some(11));
    assert!(k144
        .position(&Structure::parse("per * se + per").unwrap())
        .is_some());
}

#[test]
fn canonical_form_flattens_and_sorts_but_neither_distributes_nor_merges() {
    let p = |s: &str| Structure::parse(s).unwrap();
    assert_eq!(p("lin * (rq + per)"), p("(per + rq) * lin"));
    assert_eq!(p("lin * (rq + per)").to_string(), "(rq + per) * lin");
    assert_eq!(p("se + (rq + per)"), p("per + rq + se"));
    assert_eq!(p("(se * lin) * per"), p("lin * per * se"));
    assert_eq!(p("per + se * per").to_string(), "se * per + per");
    assert_ne!(p("per + per"), p("per"));
    assert_ne!(p("se * se"), p("se"));
    assert_ne!(p("(se + rq) * lin"), p("se * lin + rq * lin"));
    // Hyperparameter values written in an expression do not change the structure.
    assert_eq!(p("se(ls=2) + rq(alpha=3)"), p("rq + se"));
    let hand_made = Structure::Sum(vec![
        Structure::Sum(vec![
            Structure::Base(BaseKind::Lin),
            Structure::Base(BaseKind::Se),
        ]),
        Structure::Base(BaseKind::Rq),
    ]);
    assert_eq!(hand_made.canonical(), p("se + rq + lin"));
    assert_eq!(hand_made.canonical().canonical(), hand_made.canonical());
}

#[test]
fn every_k144_expression_parses_back_through_the_kernel_grammar() {
    for s in KernelSpace::k144().kernels() {
        let text = s.to_string();
        let kernel = Kernel::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&Structure::of_kernel(&kernel), s, "{text}");
        assert_eq!(&Structure::parse(&text).unwrap(), s);
    }
}

#[test]
fn instantiated_kernels_have_one_parameter_set_per_base_occurrence() {
    for d in [1, 3] {
        for s in KernelSpace::k144().kernels() {
            let k = s.instantiate(d).unwrap();
            let per_base = |b: &Structure| -> usize {
                match b {
                    Structure::Base(BaseKind::Se) => 1 + d,
                    Structure::Base(BaseKind::Rq) => 2 + d,
                    Structure::Base(BaseKind::Per) => 2 + d,
                    Structure::Base(BaseKind::Lin) => 1,
                    _ => unreachable!(),
                }
            };
            fn leaves(s: &Structure, out: &mut Vec<Structure>) {
                match s {
                    Structure::Base(_) => out.push(s.clone()),
                    Structure::Sum(c) | Structure::Product(c) => {
                        c.iter().for_each(|c| leaves(c, out))
                    }
                }
            }
            let mut l = Vec::new();
            leaves(s, &mut l);
            let expected: usize = l.iter().map(per_base).sum();
            assert_eq!(k.n_params(), expected, "{s}, d = {d}");
            // Every parameter starts at 1 (log 0), as spec §3.6 asks.
            assert!(k.log_params().iter().all(|p| *p == 0.0), "{s}");
        }
    }
}

#[test]
fn every_k144_gram_matrix_is_positive_semidefinite_and_per_is_periodic() {
    let mut rng = StdRng::seed_from_u64(3);
    let x = Mat::from_fn(50, 1, |_, _| rng.random_range(-2.0..2.0));
    for s in KernelSpace::k144().kernels() {
        let k = s.instantiate(1).unwrap().matrix(x.as_ref());
        let trace: f64 = (0..50).map(|i| k[(i, i)]).sum();
        let shifted = Mat::from_fn(50, 50, |i, j| {
            k[(i, j)] + if i == j { 1e-8 * trace } else { 0.0 }
        });
        assert!(
            Cholesky::exact(shifted, Parallelism::Sequential).is_some(),
            "{s}: minimum eigenvalue below −1e-8·trace"
        );
    }
    let per = Structure::parse("per").unwrap().instantiate(1).unwrap();
    let pair = Mat::from_fn(2, 1, |i, _| 0.3 + i as f64 * 1.0); // period 1
    let k = per.matrix(pair.as_ref());
    assert!((k[(0, 1)] - k[(0, 0)]).abs() < 1e-12);
}

#[test]
fn user_lists_parse_dedupe_and_report_the_bad_entry() {
    let s = KernelSpace::parse("se; per * lin; (per + rq) * lin").unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s.kernels()[1].to_string(), "per * lin");
    assert_eq!(KernelSpace::parse(" k144 ").unwrap().len(), 144);
    assert_eq!(KernelSpace::parse("k12").unwrap().len(), 12);
    let dup = KernelSpace::parse("se + rq; rq + se")
        .unwrap_err()
        .to_string();
    assert!(
        dup.contains("kernel 2") && dup.contains("kernel 1"),
        "{dup}"
    );
    let bad = KernelSpace::parse("se; sq").unwrap_err();
    assert!(matches!(bad, SelectionError::Kernel { .. }));
    assert!(bad.to_string().contains("entry 2"), "{bad}");
    let empty = KernelSpace::parse("se;; per").unwrap_err().to_string();
    assert!(empty.contains("entry 2 is empty"), "{empty}");
    assert!(KernelSpace::parse("").is_err());
    assert!(Structure::parse("se").unwrap().instantiate(0).is_err());
}
