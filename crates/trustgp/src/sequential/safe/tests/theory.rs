use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::model::FixedGp;
use crate::kernels::Kernel;
use crate::sequential::acquisition::normal::cdf;
use crate::sequential::safe::theory::{
    explorable_radius, kernel_profile, kernel_root, largest_delta, TheoremSetting,
};
use crate::sequential::safe::FunctionModel;

fn example_4_4() -> TheoremSetting {
    TheoremSetting {
        n: 10,
        noise_var: 0.01,
        threshold: 0.0,
        k_scale: 1.0,
    }
}

#[test]
fn example_4_4_bound() {
    let s = example_4_4();
    // The theorem needs δ < √(k σ²/N) = 0.0316.
    assert!((s.delta_limit() - 0.031_622_776_601_683_79).abs() < 1e-15);
    let a = s.bound_argument(0.002).unwrap();
    // 2/√0.996 = 2.004012040140505854… (mpmath); the paper rounds to 2.004.
    assert!((a - 2.004_012_040_140_506).abs() < 1e-14, "{a}");
    let b = s.bound(0.002).unwrap();
    // Φ(2.00401204…) = 0.977465614655126094… (mpmath); the paper says ≈ 0.97747.
    assert!((b - 0.977_465_614_655_126).abs() < 1e-14, "{b}");
    // r = 4.485 · 0.1256 = 0.563316 for the learned Matérn-5/2 lengthscale.
    let m52 = Kernel::parse("matern52(ls=1)").unwrap();
    let profile = kernel_profile(&m52);
    assert!(profile(4.485) <= 0.002 && profile(0.563_316 / 0.1256) <= 0.002);
}

#[test]
fn appendix_b_radii() {
    // (kernel, table radii for δ = 0.3, 0.1, 0.002, exact roots where the paper rounds up).
    let table: [(&str, [f64; 3]); 4] = [
        ("se(ls=1)", [1.552, 2.146, 3.526]),
        ("matern12(ls=1)", [1.204, 2.303, 6.217]),
        ("matern32(ls=1)", [1.409, 2.246, 4.886]),
        ("matern52(ls=1)", [1.457, 2.214, 4.485]),
    ];
    let deltas = [0.3, 0.1, 0.002];
    for (expr, radii) in table {
        let k = Kernel::parse(expr).unwrap();
        let profile = kernel_profile(&k);
        for (&delta, &r) in deltas.iter().zip(&radii) {
            assert!(
                profile(r) <= delta,
                "{expr}: k̃({r}) = {} > {delta}",
                profile(r)
            );
            let root = kernel_root(&profile, delta).unwrap();
            assert!(
                root <= r + 1e-12,
                "{expr} δ {delta}: root {root} above the table's {r}"
            );
            // The table is rounded to 3 decimals (up, or to nearest where it is exact).
            assert!(
                r - root < 0.01,
                "{expr} δ {delta}: root {root} far below {r}"
            );
            assert!((profile(root) - delta).abs() < 1e-12);
        }
    }
    // Closed forms: SE u = √(2 ln(1/δ)), Matérn-1/2 u = ln(1/δ).
    let se = Kernel::parse("se(ls=1)").unwrap();
    let m12 = Kernel::parse("matern12(ls=1)").unwrap();
    for delta in [0.5, 0.3, 0.1, 0.002, 1e-8] {
        let a = kernel_root(&kernel_profile(&se), delta).unwrap();
        assert!((a - (2.0 * (1.0 / delta).ln()).sqrt()).abs() < 1e-10);
        let b = kernel_root(&kernel_profile(&m12), delta).unwrap();
        assert!((b - (1.0 / delta).ln()).abs() < 1e-10);
    }
    // The exact roots the spec quotes.
    let m52 = Kernel::parse("matern52(ls=1)").unwrap();
    assert!((kernel_root(&kernel_profile(&m52), 0.002).unwrap() - 4.4756).abs() < 1e-4);
    assert!((kernel_root(&kernel_profile(&m12), 0.002).unwrap() - 6.2146).abs() < 1e-4);
}

#[test]
fn largest_delta_puts_the_bound_at_phi_sqrt_beta() {
    for (t, k) in [(0.0, 1.0), (0.5, 1.0), (-0.5, 0.8), (1.0, 0.3)] {
        let s = TheoremSetting {
            threshold: t,
            k_scale: k,
            ..example_4_4()
        };
        let d = largest_delta(&s, 2.0).unwrap();
        assert!(s.bound_argument(d).unwrap() <= 2.0);
        assert!(s.bound_argument(d * (1.0 + 1e-9)).unwrap() > 2.0);
        assert!(s.bound(d).unwrap() <= cdf(2.0));
    }
    // Cor 4.3's excluded case: the prior alone is safe (−T/√k ≥ √β).
    let s = TheoremSetting {
        threshold: -3.0,
        ..example_4_4()
    };
    assert!(largest_delta(&s, 2.0)
        .unwrap_err()
        .to_string()
        .contains("Cor. 4.3"));
    assert!(example_4_4()
        .bound_argument(0.04)
        .unwrap_err()
        .to_string()
        .contains("delta"));
    let bad = TheoremSetting {
        k_scale: 1.5,
        ..example_4_4()
    };
    assert!(bad
        .bound(0.001)
        .unwrap_err()
        .to_string()
        .contains("k_scale"));
    assert!(kernel_root(&|u: f64| (-u).exp(), 1.0).is_err());
}

#[test]
fn theorem_4_2_holds_on_random_single_task_gps() {
    // Matérn-5/2, unit variance, lengthscale ℓ, noise σ², data with ‖z‖ ≤ √N.
    let mut rng = StdRng::seed_from_u64(51);
    let (ls, noise) = (0.05, 0.01);
    let m52 = Kernel::parse("matern52(ls=1)").unwrap();
    let profile = kernel_profile(&m52);
    let mut checked = 0;
    for _ in 0..20 {
        let n = rng.random_range(2..12);
        let x = Mat::from_fn(n, 1, |_, _| rng.random_range(0.0..0.3));
        let mut z: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
        let norm = z.iter().map(|v| v * v).sum::<f64>().sqrt();
        let cap = (n as f64).sqrt();
        if norm > cap {
            z.iter_mut().for_each(|v| *v *= cap / norm);
        }
        let gp = FixedGp::fitted(ls, 1.0, noise, x.as_ref(), &z);
        let t = rng.random_range(-0.5..1.0);
        let setting = TheoremSetting {
            n,
            noise_var: noise,
            threshold: t,
            k_scale: 1.0,
        };
        for frac in [0.1, 0.5, 0.9] {
            let delta = frac * setting.delta_limit();
            let r = kernel_root(&profile, delta).unwrap() * ls;
            let bound = setting.bound(delta).unwrap();
            let pool = Mat::from_fn(400, 1, |i, _| i as f64 / 399.0);
            let m = gp.predict(pool.as_ref()).unwrap();
            for i in 0..400 {
                let dist = (0..n)
                    .map(|k| (pool[(i, 0)] - x[(k, 0)]).abs())
                    .fold(f64::MAX, f64::min);
                if dist >= r {
                    let p = cdf((m.mean[i] - t) / m.var[i].sqrt());
                    assert!(
                        p <= bound + 1e-12,
                        "p {p} > bound {bound} at distance {dist} ≥ {r}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000);
    // The utility: radius = root(δ*) ℓ.
    let s = example_4_4();
    let r = explorable_radius(&s, 2.0, &profile, 0.1256).unwrap();
    let want = kernel_root(&profile, largest_delta(&s, 2.0).unwrap()).unwrap() * 0.1256;
    assert_eq!(r, want);
    assert!(r > 0.3 && r < 0.6, "{r}");
}
