//! Primitives: ψ sandwiches (invariant 1), φ ranges and kernel sandwiches (2, 3), the separable
//! minimisation against a grid (2: exact for radial kernels in 1-D).

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{kernels, random_box, samples};
use crate::verify::decomposition::{sin2_range, KernelDecomposition};
use crate::verify::psi::Profile;
use crate::verify::region::Region;
use crate::verify::separable;

const PROFILES: [Profile; 6] = [
    Profile::Se,
    Profile::Matern12,
    Profile::Matern32,
    Profile::Matern52,
    Profile::Rq(0.7),
    Profile::Periodic,
];

#[test]
fn psi_sandwiches_hold_on_dense_grids() {
    let mut rng = StdRng::seed_from_u64(1);
    for p in PROFILES {
        for case in 0..200 {
            let lo: f64 = rng.random_range(0.0..4.0) * f64::from(case % 3 != 0);
            let width = match case % 4 {
                0 => 0.0,
                1 => 1e-12,
                2 => rng.random_range(0.0..0.1),
                _ => rng.random_range(0.0..6.0),
            };
            let hi = lo + width;
            let s = p.sandwich(1.3, lo, hi);
            for k in 0..=400 {
                let phi = lo + width * k as f64 / 400.0;
                let v = 1.3 * p.eval(phi).0;
                assert!(s.lower.at(phi) <= v, "{p:?} lower at {phi} in [{lo}, {hi}]");
                assert!(v <= s.upper.at(phi), "{p:?} upper at {phi} in [{lo}, {hi}]");
                assert!(s.min <= v && v <= s.max, "{p:?} range at {phi}");
            }
        }
    }
}

#[test]
fn profile_derivatives_match_central_differences() {
    for p in PROFILES {
        for phi in [0.05, 0.3, 1.0, 2.5] {
            let h = 1e-6;
            let fd = (p.eval(phi + h).0 - p.eval(phi - h).0) / (2.0 * h);
            let d = p.eval(phi).1;
            assert!(
                (fd - d).abs() < 1e-7 * (1.0 + d.abs()),
                "{p:?} at {phi}: {fd} vs {d}"
            );
        }
    }
}

#[test]
fn sin2_range_brackets_a_grid_and_is_tight() {
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..500 {
        let u0: f64 = rng.random_range(-7.0..7.0);
        let u1 = u0 + rng.random_range(0.0..2.5);
        let (lo, hi) = sin2_range(u0, u1);
        let vals: Vec<f64> = (0..=2000)
            .map(|k| (u0 + (u1 - u0) * k as f64 / 2000.0).sin().powi(2))
            .collect();
        let gmin = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let gmax = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!(lo <= gmin && gmax <= hi);
        assert!(
            gmin - lo < 1e-5 && hi - gmax < 1e-5,
            "[{u0}, {u1}]: {lo} {gmin} {gmax} {hi}"
        );
    }
}

#[test]
fn kernel_sandwiches_hold_at_sampled_points() {
    let mut rng = StdRng::seed_from_u64(3);
    for d in 1..=3 {
        for (ki, kernel) in kernels(d).into_iter().enumerate() {
            let dec = KernelDecomposition::new(&kernel, d).unwrap();
            let z = Mat::from_fn(12, d, |_, _| rng.random_range(-1.5..1.5));
            for b in 0..4 {
                let region = random_box(d, 0.6, &mut rng);
                let sw = dec.sandwiches(z.as_ref(), &region);
                let xs = samples(&region, 2000, 10 * ki as u64 + b);
                let k = kernel.cross(z.as_ref(), xs.as_ref());
                for a in 0..xs.nrows() {
                    let x: Vec<f64> = (0..d).map(|j| xs[(a, j)]).collect();
                    for i in 0..12 {
                        let v = k[(i, a)];
                        let (mut lo, mut hi) = (sw.low_a[i], sw.up_a[i]);
                        for (bi, base) in dec.bases.iter().enumerate() {
                            let phi = base.phi(&x, |j| z[(i, j)]);
                            let (rlo, rhi) = base.phi_range(|j| z[(i, j)], &region);
                            assert!(rlo <= phi && phi <= rhi, "φ range, kernel {ki}");
                            lo += sw.low_b[bi * 12 + i] * phi;
                            hi += sw.up_b[bi * 12 + i] * phi;
                        }
                        assert!(sw.lo[i] <= v && v <= sw.hi[i], "range, kernel {ki} d {d}");
                        assert!(lo <= v && v <= hi, "kernel {ki} d {d}: {lo} ≤ {v} ≤ {hi}");
                    }
                }
            }
        }
    }
}

#[test]
fn separable_minimum_is_exact_for_radial_kernels_in_one_dimension() {
    let mut rng = StdRng::seed_from_u64(4);
    for expr in [
        "se(var=1.0, ls=0.7)",
        "matern32(var=1.0, ls=0.5) + rq(var=1.0, ls=0.9, alpha=2.0)",
    ] {
        let kernel = crate::kernels::Kernel::parse(expr).unwrap();
        let dec = KernelDecomposition::new(&kernel, 1).unwrap();
        let n = 15;
        let z = Mat::from_fn(n, 1, |_, _| rng.random_range(-2.0..2.0));
        for _ in 0..100 {
            let coef: Vec<f64> = (0..n * dec.bases.len())
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let w = vec![rng.random_range(-0.3..0.3)];
            let region = random_box(1, 1.0, &mut rng);
            let f = |x: f64| {
                let mut v = w[0] * x;
                for (b, base) in dec.bases.iter().enumerate() {
                    for i in 0..n {
                        v += coef[b * n + i] * base.phi(&[x], |j| z[(i, j)]);
                    }
                }
                v
            };
            let (lb, xmin) = separable::minimise(&dec, z.as_ref(), &coef, &w, &region);
            let grid = (0..=20000)
                .map(|k| {
                    f(region.lower[0] + (region.upper[0] - region.lower[0]) * k as f64 / 20000.0)
                })
                .fold(f64::INFINITY, f64::min);
            assert!(lb <= grid, "{lb} > grid min {grid}");
            assert!(
                grid - lb < 1e-8 * (1.0 + grid.abs()),
                "not exact: {lb} vs {grid}"
            );
            assert!(region.contains(&xmin));
            assert!(
                (f(xmin[0]) - lb).abs() < 1e-8 * (1.0 + lb.abs()),
                "argmin does not attain"
            );
            let (ub, xmax) = separable::maximise(&dec, z.as_ref(), &coef, &w, &region);
            assert!(ub >= f(xmax[0]) && ub - f(xmax[0]) < 1e-8 * (1.0 + ub.abs()));
        }
    }
}

#[test]
fn unsupported_kernels_are_named() {
    for (expr, name) in [
        ("lin(var=1.0)", "lin"),
        ("se(var=1.0, ls=1.0) * white(var=0.1)", "white"),
    ] {
        let k = crate::kernels::Kernel::parse(expr).unwrap();
        let err = KernelDecomposition::new(&k, 1).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
    }
    let r = Region::new(vec![0.0], vec![-1.0]);
    assert!(r.is_err());
}
