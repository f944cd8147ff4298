//! The [`Term`] algebra of `S` against explicit inverses, and the checks of the form's inputs.

use std::borrow::Cow;

use faer::Mat;

use super::uniform;
use crate::kernels::{Coregion, Kernel, LmcTerm, MultiOutputKernel};
use crate::means::{Mean, TaskMean};
use crate::models::ModelError;
use crate::posterior::{with_task, LinearGaussian, Posterior, Term};

/// A well-conditioned lower-triangular matrix.
fn lower(n: usize, seed: u64) -> Mat<f64> {
    let r = uniform(n, n, -0.5, 0.5, seed);
    Mat::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => r[(i, j)],
        std::cmp::Ordering::Equal => 1.0 + r[(i, j)].abs(),
        std::cmp::Ordering::Less => 0.0,
    })
}

/// The explicit inverse of a lower-triangular matrix, by forward substitution column by column.
fn inverse(l: &Mat<f64>) -> Mat<f64> {
    let n = l.nrows();
    let mut inv = Mat::<f64>::zeros(n, n);
    for c in 0..n {
        for i in 0..n {
            let rhs = if i == c { 1.0 } else { 0.0 };
            let s: f64 = (0..i).map(|k| l[(i, k)] * inv[(k, c)]).sum();
            inv[(i, c)] = (rhs - s) / l[(i, i)];
        }
    }
    inv
}

#[test]
fn s_is_the_signed_sum_of_its_terms() {
    let (n, i) = (5, 3);
    let support = uniform(n, 2, -1.0, 1.0, 20);
    let t = vec![0.0; n];
    let p = uniform(n, i, -1.0, 1.0, 21);
    let (l1, l2, l3) = (lower(i, 22), lower(i, 23), lower(n, 24));
    let a0 = uniform(n, n, -1.0, 1.0, 25);
    let a = Mat::from_fn(n, n, |r, c| a0[(r, c)] + a0[(c, r)]);
    let kernel = Kernel::parse("se(ls=0.5)").unwrap();
    let form = LinearGaussian::new(
        &kernel,
        Cow::<Mean>::Owned(Mean::Zero),
        support.as_ref(),
        &t,
        vec![
            Term::Chain {
                sign: 1.0,
                project: Some(p.as_ref()),
                lower: vec![l1.as_ref(), l2.as_ref()],
            },
            Term::Chain {
                sign: -1.0,
                project: None,
                lower: vec![l3.as_ref()],
            },
            Term::Dense {
                sign: -1.0,
                a: a.as_ref(),
            },
        ],
    )
    .unwrap();
    // G = P L1⁻ᵀ L2⁻ᵀ: kᵀ G Gᵀ k = ‖L2⁻¹ L1⁻¹ Pᵀ k‖².
    let g = &p * inverse(&l1).transpose() * inverse(&l2).transpose();
    let l3i = inverse(&l3);
    let want = &g * g.transpose() - l3i.transpose() * &l3i - &a;
    let got = form.s_matrix();
    for r in 0..n {
        for c in 0..n {
            assert!((got[(r, c)] - want[(r, c)]).abs() < 1e-12, "({r},{c})");
        }
    }
    // The marginal variance reads S through the quadratic path, the joint through the Gram
    // path: both agree with the explicit S.
    let xs = uniform(4, 2, -1.0, 1.0, 26);
    let kz = kernel.cross(support.as_ref(), xs.as_ref());
    let quad = kz.transpose() * &want * &kz;
    let joint = form.joint(xs.as_ref()).unwrap();
    let kss = kernel.matrix(xs.as_ref());
    for r in 0..4 {
        for c in 0..4 {
            let v = kss[(r, c)] - quad[(r, c)];
            assert!((joint.cov[(r, c)] - v).abs() < 1e-12, "({r},{c})");
        }
    }
    let m = form.marginals(xs.as_ref()).unwrap();
    for r in 0..4 {
        assert!((m.var[r] - (kss[(r, r)] - quad[(r, r)]).max(0.0)).abs() < 1e-12);
    }
}

#[test]
fn parts_that_do_not_fit_are_refused() {
    let kernel = Kernel::parse("se(ls=0.5)").unwrap();
    let support = uniform(4, 2, -1.0, 1.0, 30);
    let l = lower(3, 31);
    let short = vec![0.0; 3];
    let err = |t: &[f64], terms: Vec<Term<'_>>| match LinearGaussian::new(
        &kernel,
        Cow::<Mean>::Owned(Mean::Zero),
        support.as_ref(),
        t,
        terms,
    ) {
        Err(ModelError::Invalid(m)) => m,
        other => panic!("expected an error, got {other:?}"),
    };
    assert!(err(&short, vec![]).contains("t has 3 entries but there are 4 support points"));
    let t = vec![0.0; 4];
    let chain = Term::Chain {
        sign: 1.0,
        project: None,
        lower: vec![l.as_ref()],
    };
    assert!(err(&t, vec![chain]).contains("term 0 of S does not act on the 4 support points"));
}

/// The message of an expected error.
fn msg<T: std::fmt::Debug>(r: Result<T, ModelError>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn bad_test_inputs_are_errors_not_panics() {
    let kernel = Kernel::parse("se(ls=0.5)").unwrap();
    let support = uniform(4, 2, -1.0, 1.0, 40);
    let t = vec![0.5; 4];
    let form = LinearGaussian::new(
        &kernel,
        Cow::<Mean>::Owned(Mean::Zero),
        support.as_ref(),
        &t,
        vec![],
    )
    .unwrap();
    let wide = uniform(2, 3, -1.0, 1.0, 41);
    assert!(msg(form.marginals(wide.as_ref())).contains("test inputs have 3 columns"));
    let mut nan = uniform(2, 2, -1.0, 1.0, 42);
    nan[(1, 0)] = f64::NAN;
    assert!(msg(form.marginal_gradients(nan.as_ref())).contains("test input [1, 0] = NaN"));
    assert!(Posterior::sample_seeded(&form, nan.as_ref(), 3, 0).is_err());

    // A task index outside the kernel's outputs.
    let mo = MultiOutputKernel::new(vec![LmcTerm {
        kernel: kernel.clone(),
        coregion: Coregion::new(
            Mat::from_fn(2, 1, |i, _| 1.0 + i as f64),
            Some(vec![0.1; 2]),
        )
        .unwrap(),
    }])
    .unwrap();
    let zt = with_task(support.as_ref(), 0);
    let mean = TaskMean(vec![0.0, 0.0]);
    let form =
        LinearGaussian::new(&mo, Cow::<TaskMean>::Owned(mean), zt.as_ref(), &t, vec![]).unwrap();
    let xs = with_task(uniform(2, 2, -1.0, 1.0, 43).as_ref(), 2);
    assert!(msg(form.joint(xs.as_ref())).contains("task index 2"));
    assert!(form
        .marginals(with_task(xs.subcols(0, 2), 1).as_ref())
        .is_ok());
}
