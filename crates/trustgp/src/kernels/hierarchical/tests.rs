use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// Three tasks (two sources and a target) on 2-D inputs, with different lengthscales and
/// variances per level.
fn three_level() -> HierarchicalKernel {
    let level = |ls: [f64; 2], var: f64| {
        Kernel::Base(
            BaseKernel::new(BaseKind::Matern52)
                .with_var(var)
                .unwrap()
                .with_lengthscale(Lengthscale::Ard(ls.to_vec()))
                .unwrap(),
        )
    };
    HierarchicalKernel::new(vec![
        level([0.7, 1.3], 1.2),
        level([0.4, 0.9], 0.5),
        level([1.1, 0.3], 0.2),
    ])
    .unwrap()
}

/// `n` random task-indexed rows over tasks `0..t` (2 input columns), some inputs repeated
/// under other tasks.
fn task_inputs(n: usize, t: usize, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut x = Mat::from_fn(n, 3, |_, c| {
        if c < 2 {
            rng.random_range(-1.0..1.0)
        } else {
            0.0
        }
    });
    for i in 0..n {
        x[(i, 2)] = (i % t) as f64;
        if i >= 3 && i % 4 == 0 {
            x[(i, 0)] = x[(i - 3, 0)];
            x[(i, 1)] = x[(i - 3, 1)];
        }
    }
    x
}

/// `k_i(x_a, x_b)` of one level between two single rows (ordinary columns only).
fn level_value(k: &Kernel, x: MatRef<'_, f64>, a: usize, b: usize) -> f64 {
    k.cross(x.subrows(a, 1).subcols(0, 2), x.subrows(b, 1).subcols(0, 2))[(0, 0)]
}

#[test]
fn covariance_between_tasks_is_the_sum_of_the_shared_levels() {
    let k = three_level();
    let x = task_inputs(13, 3, 1);
    k.check_inputs(x.as_ref()).unwrap();
    let m = k.matrix(x.as_ref());
    let d = k.diag(x.as_ref());
    for a in 0..x.nrows() {
        for b in 0..x.nrows() {
            let (ta, tb) = (task(x.as_ref(), a), task(x.as_ref(), b));
            let expected: f64 = (0..=ta.min(tb))
                .map(|i| level_value(&k.levels()[i], x.as_ref(), a, b))
                .sum();
            assert!((m[(a, b)] - expected).abs() < 1e-14, "({a}, {b})");
            assert_eq!(m[(a, b)], m[(b, a)]);
        }
        assert!((d[a] - m[(a, a)]).abs() < 1e-14);
    }
    // The cross-covariance with other rows agrees with the matrix.
    let y = task_inputs(5, 3, 2);
    let both = faer::concat![[x.as_ref()], [y.as_ref()]];
    let c = k.cross(x.as_ref(), y.as_ref());
    let full = k.matrix(both.as_ref());
    for a in 0..x.nrows() {
        for b in 0..y.nrows() {
            assert!((c[(a, b)] - full[(a, x.nrows() + b)]).abs() < 1e-14);
        }
    }
}

#[test]
fn one_source_gives_the_source_kernel_across_tasks() {
    // [[k_s, k_s], [k_s, k_s + k_t]]: the cross block is k_s itself.
    let k = HierarchicalKernel::matern52(2, 0.5, &[0.8, 0.1]).unwrap();
    let x = task_inputs(10, 2, 3);
    let (ks, kt) = (&k.levels()[0], &k.levels()[1]);
    let m = k.matrix(x.as_ref());
    for a in 0..10 {
        for b in 0..10 {
            let s = level_value(ks, x.as_ref(), a, b);
            let t = level_value(kt, x.as_ref(), a, b);
            let both_target = task(x.as_ref(), a) == 1 && task(x.as_ref(), b) == 1;
            let expected = if both_target { s + t } else { s };
            assert!((m[(a, b)] - expected).abs() < 1e-14);
        }
    }
    // Levels restricted: the source part on target rows is k_s, the target part k_t.
    let s_only = k.cross_levels(x.as_ref(), x.as_ref(), 0..1);
    let t_only = k.cross_levels(x.as_ref(), x.as_ref(), 1..2);
    for a in 0..10 {
        for b in 0..10 {
            assert!((s_only[(a, b)] + t_only[(a, b)] - m[(a, b)]).abs() < 1e-15);
        }
    }
}

#[test]
fn the_gram_matrix_is_positive_semidefinite() {
    let k = three_level();
    for seed in 0..5 {
        let x = task_inputs(30, 3, 10 + seed);
        let m = k.matrix(x.as_ref());
        let eig = m.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let largest = eig.iter().cloned().fold(0.0, f64::max);
        assert!(eig.iter().all(|&e| e >= -1e-12 * largest), "{eig:?}");
    }
}

#[test]
fn matern_levels_have_their_variance_at_zero_distance_and_decay() {
    let k = HierarchicalKernel::matern52(1, 0.3, &[0.7, 0.2]).unwrap();
    let x = Mat::from_fn(40, 2, |i, c| if c == 0 { 0.05 * i as f64 } else { 1.0 });
    let m = k.matrix(x.as_ref());
    assert!((m[(0, 0)] - 0.9).abs() < 1e-15);
    for j in 1..40 {
        assert!(m[(0, j)] <= m[(0, j - 1)] && m[(0, j)] > 0.0);
    }
}

#[test]
fn gradient_contraction_matches_central_differences() {
    let mut k = three_level();
    let x = task_inputs(14, 3, 4);
    let n = x.nrows();
    let w = Mat::from_fn(n, n, |i, j| {
        ((i * 7 + j * 7 + 3 * i * j) % 11) as f64 / 5.0 - 1.0
    });
    let phi = |k: &HierarchicalKernel| -> f64 {
        let m = k.matrix(x.as_ref());
        (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| w[(i.max(j), i.min(j))] * m[(i, j)])
            .sum()
    };
    let mut grad = vec![0.0; Covariance::n_params(&k)];
    k.grad_contract(x.as_ref(), w.as_ref(), &mut grad);
    let p0 = k.params();
    assert_eq!(p0.len(), 9);
    let h = 1e-6;
    for j in 0..p0.len() {
        let mut p = p0.clone();
        p[j] += h;
        k.set_params(&p).unwrap();
        let up = phi(&k);
        p[j] -= 2.0 * h;
        k.set_params(&p).unwrap();
        let down = phi(&k);
        let fd = (up - down) / (2.0 * h);
        assert!(
            (fd - grad[j]).abs() < 1e-7 * (1.0 + fd.abs()),
            "{}: analytic {} vs fd {fd}",
            k.param_names()[j],
            grad[j]
        );
    }
}

#[test]
fn input_gradients_match_central_differences() {
    let k = three_level();
    let x1 = task_inputs(7, 3, 5);
    let x2 = task_inputs(6, 3, 6);
    let w = Mat::from_fn(7, 6, |i, j| ((i * 5 + j * 3) % 7) as f64 / 3.0 - 1.0);
    let g = k.grad_inputs_cross(x1.as_ref(), x2.as_ref(), w.as_ref());
    let phi = |x: &Mat<f64>| -> f64 {
        let c = k.cross(x.as_ref(), x2.as_ref());
        (0..7)
            .flat_map(|a| (0..6).map(move |b| (a, b)))
            .map(|(a, b)| w[(a, b)] * c[(a, b)])
            .sum()
    };
    let h = 1e-6;
    for a in 0..7 {
        for c in 0..2 {
            let (mut up, mut down) = (x1.clone(), x1.clone());
            up[(a, c)] += h;
            down[(a, c)] -= h;
            let fd = (phi(&up) - phi(&down)) / (2.0 * h);
            assert!(
                (fd - g[(a, c)]).abs() < 1e-7 * (1.0 + fd.abs()),
                "({a}, {c})"
            );
        }
        assert_eq!(g[(a, 2)], 0.0);
    }
}

#[test]
fn scaling_multiplies_every_level() {
    let k = three_level();
    let x = task_inputs(9, 3, 7);
    let (m, ms) = (
        k.matrix(x.as_ref()),
        k.scaled(2.5).unwrap().matrix(x.as_ref()),
    );
    for i in 0..9 {
        for j in 0..9 {
            assert!((ms[(i, j)] - 2.5 * m[(i, j)]).abs() < 1e-13);
        }
    }
}

#[test]
fn bad_inputs_and_parameters_are_errors_and_change_nothing() {
    let mut k = three_level();
    let mut x = task_inputs(6, 3, 8);
    x[(4, 2)] = 3.0;
    let err = k.check_inputs(x.as_ref()).unwrap_err().to_string();
    assert!(err.contains("row 4") && err.contains("0..3"), "{err}");
    x[(4, 2)] = 1.5;
    assert!(k.check_inputs(x.as_ref()).is_err());
    assert!(k.check_inputs(x.as_ref().subcols(2, 1)).is_err());
    assert!(k
        .check_inputs(task_inputs(6, 3, 8).as_ref().subcols(1, 2))
        .is_err());
    let before = k.clone();
    let mut p = k.params();
    p[7] = f64::NAN;
    assert!(k.set_params(&p).is_err());
    assert!(k.set_params(&p[..4]).is_err());
    assert_eq!(k, before);
    assert!(HierarchicalKernel::new(vec![]).is_err());
    assert!(HierarchicalKernel::matern52(0, 0.2, &[1.0]).is_err());
    assert!(HierarchicalKernel::matern52(2, -0.2, &[1.0]).is_err());
    assert_eq!(
        k.param_names()[3..6],
        [
            "level1.k0.matern52.var",
            "level1.k0.matern52.ls[0]",
            "level1.k0.matern52.ls[1]"
        ]
    );
}
