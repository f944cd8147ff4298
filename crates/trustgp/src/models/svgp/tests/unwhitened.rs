//! The non-whitened ELBO against a dense computation of the SVGP bound (T14's KL formula and
//! the expected log-likelihood of spec C.1), and its gradient against central differences
//! in every group: `m`, `C`, the kernel's log-hyperparameters and `log σ²`.

use super::super::unwhitened::{prior_factor, unwhitened_elbo};
use super::*;

/// Generic `(m, C)`: `C` lower with a positive diagonal.
fn variational(m: usize, seed: u64) -> (Vec<f64>, Mat<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mean = (0..m).map(|_| 0.5 * normal(&mut rng)).collect();
    let c = Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 0.2 * normal(&mut rng),
        std::cmp::Ordering::Equal => rng.random_range(0.3..1.0),
        std::cmp::Ordering::Less => 0.0,
    });
    (mean, c)
}

/// `Σ_rows E[log N(y | f, σ²)] − KL(N(m, CCᵀ) ‖ N(0, K_uu + εI))`, densely.
fn dense(
    k: &Kernel,
    noise: f64,
    z: MatRef<'_, f64>,
    (mean, c): (&[f64], &Mat<f64>),
    x: MatRef<'_, f64>,
    y: &[f64],
) -> f64 {
    let m = z.nrows();
    let (kuu, chol) = kuu(k, z);
    let s = c * c.transpose();
    let kzx = k.cross(z, x);
    let mut a = kzx.clone();
    chol.solve_in_place(a.as_mut());
    let kxx = k.diag(x);
    let mut ell = 0.0;
    for j in 0..x.nrows() {
        let mu: f64 = (0..m).map(|i| a[(i, j)] * mean[i]).sum();
        let nys: f64 = (0..m).map(|i| kzx[(i, j)] * a[(i, j)]).sum();
        let asa: f64 = (0..m)
            .map(|i| {
                (0..m)
                    .map(|l| a[(i, j)] * s[(i, l)] * a[(l, j)])
                    .sum::<f64>()
            })
            .sum();
        let v = kxx[j] - nys + asa;
        ell += -0.5 * (2.0 * std::f64::consts::PI * noise).ln()
            - ((y[j] - mu).powi(2) + v) / (2.0 * noise);
    }
    let mut ks = s.clone();
    chol.solve_in_place(ks.as_mut());
    let trace: f64 = (0..m).map(|i| ks[(i, i)]).sum();
    let quad: f64 = chol
        .solve_vec(mean)
        .iter()
        .zip(mean)
        .map(|(a, b)| a * b)
        .sum();
    let log_s: f64 = (0..m).map(|i| 2.0 * c[(i, i)].ln()).sum();
    assert_eq!(kuu.nrows(), m);
    ell - 0.5 * (trace + quad - m as f64 + chol.log_det() - log_s)
}

/// Data `(x, y)`, a kernel, inducing inputs and a generic `q(u) = N(m, CCᵀ)`.
type Problem = (Mat<f64>, Vec<f64>, Kernel, Mat<f64>, Vec<f64>, Mat<f64>);

fn setup() -> Problem {
    let (x, y) = data(30, 0.3, 5);
    let st = state(SvgpLikelihood::Gaussian, vec![0.2], Mean::Zero, 6, 9);
    let (m, c) = variational(6, 10);
    (x, y, st.kernel, st.z, m, c)
}

#[test]
fn unwhitened_elbo_matches_dense_formula() {
    let (x, y, k, z, m, c) = setup();
    let (value, _) = unwhitened_elbo(
        &k,
        0.2,
        z.as_ref(),
        &m,
        c.as_ref(),
        (x.as_ref(), &y),
        None,
        false,
    )
    .unwrap();
    let reference = dense(&k, 0.2, z.as_ref(), (&m, &c), x.as_ref(), &y);
    assert!(
        (value - reference).abs() < 1e-8 * reference.abs(),
        "{value} vs dense {reference}"
    );
    // The minibatch form scales the rows' sum by n/|rows|.
    let rows = [3, 7, 11, 20];
    let (batch, _) = unwhitened_elbo(
        &k,
        0.2,
        z.as_ref(),
        &m,
        c.as_ref(),
        (x.as_ref(), &y),
        Some(&rows),
        false,
    )
    .unwrap();
    let xb = Mat::from_fn(4, 2, |i, j| x[(rows[i], j)]);
    let yb: Vec<f64> = rows.iter().map(|&r| y[r]).collect();
    let kl = -dense(
        &k,
        0.2,
        z.as_ref(),
        (&m, &c),
        xb.as_ref().subrows(0, 0),
        &[],
    );
    let ell4 = dense(&k, 0.2, z.as_ref(), (&m, &c), xb.as_ref(), &yb) + kl;
    let expected = 30.0 / 4.0 * ell4 - kl;
    assert!((batch - expected).abs() < 1e-8 * expected.abs());
}

#[test]
fn prior_factor_gives_zero_kl() {
    let (_, _, k, z, _, _) = setup();
    let l = prior_factor(&k, z.as_ref()).unwrap();
    let zero = vec![0.0; z.nrows()];
    let none = Mat::<f64>::zeros(0, 2);
    let (value, _) = unwhitened_elbo(
        &k,
        0.2,
        z.as_ref(),
        &zero,
        l.as_ref(),
        (none.as_ref(), &[]),
        None,
        false,
    )
    .unwrap();
    assert!(value.abs() < 1e-10, "KL(prior ‖ prior) = {}", -value);
}

#[test]
fn unwhitened_gradient_matches_central_differences() {
    let (x, y, k, z, m, c) = setup();
    let noise: f64 = 0.2;
    let rows = [0, 4, 5, 9, 17, 23, 29];
    let eval = |k: &Kernel, noise: f64, m: &[f64], c: &Mat<f64>| {
        unwhitened_elbo(
            k,
            noise,
            z.as_ref(),
            m,
            c.as_ref(),
            (x.as_ref(), &y),
            Some(&rows),
            false,
        )
        .unwrap()
        .0
    };
    let (_, g) = unwhitened_elbo(
        &k,
        noise,
        z.as_ref(),
        &m,
        c.as_ref(),
        (x.as_ref(), &y),
        Some(&rows),
        true,
    )
    .unwrap();
    let g = g.unwrap();
    let h = 1e-5;
    let close = |fd: f64, an: f64, what: &str| {
        assert!(
            (fd - an).abs() < 1e-6 * an.abs().max(1.0),
            "{what}: analytic {an} vs difference {fd}"
        );
    };
    for i in 0..m.len() {
        let (mut up, mut down) = (m.clone(), m.clone());
        up[i] += h;
        down[i] -= h;
        let fd = (eval(&k, noise, &up, &c) - eval(&k, noise, &down, &c)) / (2.0 * h);
        close(fd, g.m[i], &format!("m[{i}]"));
    }
    for j in 0..m.len() {
        for i in j..m.len() {
            let (mut up, mut down) = (c.clone(), c.clone());
            up[(i, j)] += h;
            down[(i, j)] -= h;
            let fd = (eval(&k, noise, &m, &up) - eval(&k, noise, &m, &down)) / (2.0 * h);
            close(fd, g.c[(i, j)], &format!("C[{i},{j}]"));
        }
    }
    let p0 = k.log_params();
    for (p, name) in k.param_names().iter().enumerate() {
        let (mut up, mut down) = (k.clone(), k.clone());
        let mut q = p0.clone();
        q[p] += h;
        up.set_log_params(&q).unwrap();
        q[p] -= 2.0 * h;
        down.set_log_params(&q).unwrap();
        let fd = (eval(&up, noise, &m, &c) - eval(&down, noise, &m, &c)) / (2.0 * h);
        close(fd, g.kernel[p], name);
    }
    let fd = (eval(&k, noise * h.exp(), &m, &c) - eval(&k, noise * (-h).exp(), &m, &c)) / (2.0 * h);
    close(fd, g.log_noise, "log σ²");
}
