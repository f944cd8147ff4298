use std::sync::Arc;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// A random symmetric positive-definite `n × n` matrix `BᵀB/m + 0.05 I` (B is m × n), whose
/// off-diagonal entries are as large as its diagonal ones: the blocks are strongly coupled.
fn random_spd(n: usize, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let m = n + 3;
    let b = Mat::from_fn(m, n, |_, _| rng.random_range(-1.0..1.0) + 0.3);
    let mut a = b.transpose() * &b;
    for j in 0..n {
        for i in 0..n {
            a[(i, j)] /= m as f64;
        }
        a[(j, j)] += 0.05;
    }
    a
}

fn max_abs(m: MatRef<'_, f64>) -> f64 {
    let mut v: f64 = 0.0;
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            v = v.max(m[(i, j)].abs());
        }
    }
    v
}

fn max_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let mut v: f64 = 0.0;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            v = v.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    v
}

/// The strict-lower-and-diagonal part of a factor (faer leaves garbage above).
fn lower(l: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(
        l.nrows(),
        l.ncols(),
        |i, j| if i >= j { l[(i, j)] } else { 0.0 },
    )
}

/// The two-step factor of `omega` split after `n_s` rows.
fn two_step(omega: &Mat<f64>, n_s: usize) -> BlockCholesky {
    let n = omega.nrows();
    let par = Parallelism::Sequential;
    let source = (n_s > 0).then(|| {
        let kss = omega.as_ref().submatrix(0, 0, n_s, n_s).to_owned();
        Arc::new(Cholesky::factor(&kss, "K_ss", par).unwrap())
    });
    let k_st = omega.as_ref().submatrix(0, n_s, n_s, n - n_s);
    let basis = SchurBasis::new(source, k_st).unwrap();
    let k_tt = omega.as_ref().submatrix(n_s, n_s, n - n_s, n - n_s);
    BlockCholesky::new(basis, k_tt, "Schur complement", par).unwrap()
}

#[test]
fn two_step_factor_is_the_cholesky_factor_of_the_whole_matrix() {
    for (n, n_s, seed) in [
        (30, 20, 1),
        (25, 1, 2),
        (25, 24, 3),
        (12, 0, 4),
        (40, 31, 5),
    ] {
        let omega = random_spd(n, seed);
        let block = two_step(&omega, n_s);
        let full = Cholesky::factor(&omega, "Ω", Parallelism::Sequential).unwrap();
        assert_eq!(
            (block.target().map_or(0.0, |c| c.jitter()), full.jitter()),
            (0.0, 0.0)
        );
        let dense = block.to_cholesky();
        let (lb, lf) = (lower(dense.l()), lower(full.l()));
        let rel = max_diff(lb.as_ref(), lf.as_ref()) / max_abs(lf.as_ref());
        assert!(rel < 1e-10, "n={n} n_s={n_s}: relative error {rel:e}");
        // L Lᵀ = Ω.
        let rel = max_diff(dense.reconstruct().as_ref(), omega.as_ref()) / max_abs(omega.as_ref());
        assert!(rel < 1e-12, "n={n} n_s={n_s}: LLᵀ off by {rel:e}");
        assert!((block.log_det() - full.log_det()).abs() < 1e-10 * full.log_det().abs().max(1.0));
    }
}

#[test]
fn block_solves_equal_the_dense_ones() {
    let (n, n_s) = (30, 18);
    let omega = random_spd(n, 11);
    let block = two_step(&omega, n_s);
    let full = Cholesky::factor(&omega, "Ω", Parallelism::Sequential).unwrap();
    let b = Mat::from_fn(n, 3, |i, j| ((i * 7 + j * 3) as f64).sin());
    let (mut half_b, mut half_f) = (b.clone(), b.clone());
    block.solve_lower_in_place(half_b.as_mut());
    full.solve_lower_in_place(half_f.as_mut());
    assert!(max_diff(half_b.as_ref(), half_f.as_ref()) < 1e-10 * max_abs(half_f.as_ref()));
    let mut x = b.clone();
    block.solve_in_place(x.as_mut());
    // Ω x = b, checked by multiplying back (independent of either factorisation).
    let back = &omega * &x;
    assert!(max_diff(back.as_ref(), b.as_ref()) < 1e-10 * max_abs(b.as_ref()) * 1e2);
}

#[test]
fn appending_rows_equals_building_from_scratch() {
    let (n, n_s) = (36, 20);
    let omega = random_spd(n, 21);
    let par = Parallelism::Sequential;
    let kss = omega.as_ref().submatrix(0, 0, n_s, n_s).to_owned();
    let source = Arc::new(Cholesky::factor(&kss, "K_ss", par).unwrap());
    // Start with 3 trailing rows, then append 1, 5 and 7 rows.
    let mut basis = SchurBasis::new(
        Some(source.clone()),
        omega.as_ref().submatrix(0, n_s, n_s, 3),
    )
    .unwrap();
    let mut at = n_s + 3;
    for m in [1, 5, 7] {
        let new_cols = basis
            .append(omega.as_ref().submatrix(0, at, n_s, m))
            .unwrap();
        assert_eq!(new_cols.ncols(), m);
        at += m;
    }
    assert_eq!(at, n);
    // The shared factor is the very same one.
    assert!(Arc::ptr_eq(basis.source().unwrap(), &source));
    let scratch =
        SchurBasis::new(Some(source), omega.as_ref().submatrix(0, n_s, n_s, n - n_s)).unwrap();
    assert!(max_diff(basis.a(), scratch.a()) < 1e-13 * max_abs(scratch.a()));
    assert!(max_diff(basis.gram(), scratch.gram()) < 1e-13 * max_abs(scratch.gram()));
    // G is exactly symmetric and equal to AᵀA.
    let g = basis.gram();
    for i in 0..g.nrows() {
        for j in 0..g.ncols() {
            assert_eq!(g[(i, j)], g[(j, i)]);
        }
    }
    let ata = scratch.a().transpose() * scratch.a();
    assert!(max_diff(g, ata.as_ref()) < 1e-13 * max_abs(ata.as_ref()));
    // And the appended basis factors Ω like the full factorisation.
    let k_tt = omega.as_ref().submatrix(n_s, n_s, n - n_s, n - n_s);
    let block = BlockCholesky::new(basis, k_tt, "S", par).unwrap();
    let full = Cholesky::factor(&omega, "Ω", par).unwrap();
    let (lb, lf) = (lower(block.to_cholesky().l()), lower(full.l()));
    assert!(max_diff(lb.as_ref(), lf.as_ref()) < 1e-10 * max_abs(lf.as_ref()));
}

#[test]
fn an_empty_trailing_block_is_the_source_factor() {
    let omega = random_spd(10, 31);
    let par = Parallelism::Sequential;
    let source = Arc::new(Cholesky::factor(&omega, "K_ss", par).unwrap());
    let basis = SchurBasis::new(Some(source.clone()), Mat::zeros(10, 0).as_ref()).unwrap();
    let block = BlockCholesky::new(basis, Mat::zeros(0, 0).as_ref(), "S", par).unwrap();
    assert!(block.target().is_none());
    assert_eq!(block.log_det(), source.log_det());
    assert_eq!(lower(block.to_cholesky().l()), lower(source.l()));
}

#[test]
fn a_singular_schur_complement_gets_jitter() {
    // Trailing rows that duplicate fixed rows exactly, with no extra noise: K̃_t = 0 in exact
    // arithmetic. The factorisation must succeed with (recorded) jitter, not fail.
    let n_s = 8;
    let kss = random_spd(n_s, 41);
    let par = Parallelism::Sequential;
    let source = Arc::new(Cholesky::factor(&kss, "K_ss", par).unwrap());
    let k_st = kss.as_ref().submatrix(0, 0, n_s, 3);
    let basis = SchurBasis::new(Some(source), k_st).unwrap();
    let k_tt = kss.as_ref().submatrix(0, 0, 3, 3);
    let block = BlockCholesky::new(basis, k_tt, "S", par).unwrap();
    assert!(block.target().unwrap().jitter() > 0.0);
}

#[test]
fn bad_shapes_and_values_are_errors_that_say_what() {
    let omega = random_spd(6, 51);
    let par = Parallelism::Sequential;
    let source = Arc::new(Cholesky::factor(&omega, "K_ss", par).unwrap());
    let err = SchurBasis::new(Some(source.clone()), Mat::zeros(5, 2).as_ref()).unwrap_err();
    assert!(err.to_string().contains("expected 6 rows"), "{err}");
    let mut k = Mat::<f64>::zeros(6, 2);
    k[(4, 1)] = f64::NAN;
    assert!(matches!(
        SchurBasis::new(Some(source.clone()), k.as_ref()),
        Err(LinalgError::NonFinite { row: 4, col: 1, .. })
    ));
    let basis = SchurBasis::new(Some(source), Mat::zeros(6, 2).as_ref()).unwrap();
    let err = basis
        .schur_complement(Mat::zeros(3, 3).as_ref())
        .unwrap_err();
    assert!(err.to_string().contains("expected 2×2"), "{err}");
    let empty = SchurBasis::new(None, Mat::zeros(0, 0).as_ref()).unwrap();
    assert!(BlockCholesky::new(empty, Mat::zeros(0, 0).as_ref(), "S", par).is_err());
}
