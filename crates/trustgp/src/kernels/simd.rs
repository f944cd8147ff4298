//! Vectorisable kernel arithmetic: an `exp` written with plain arithmetic and bit operations
//! (the C library's `exp` is a function call per element, which no loop can vectorise), and
//! [`vectorized`], which runs a loop compiled for the widest SIMD instruction set the CPU has.
//!
//! A kernel matrix needs one `exp` per pair and its gradient another: at n = 2000 that was 7%
//! of an exact-GP evaluation with the C library's `exp` (see `docs/benchmarks.md`).

/// Runs `op` compiled for the widest instruction set the CPU supports (AVX2 and FMA on most
/// x86-64 machines), so that its loops are vectorised accordingly. Only code inlined into
/// `op.with_simd` is compiled that way: mark it and everything it calls `#[inline(always)]`.
/// The arithmetic, and so the result, is the same as without it (no fused multiply-adds are
/// introduced: every operation rounds as written).
#[inline(always)]
pub(crate) fn vectorized<Op: pulp::WithSimd>(op: Op) -> Op::Output {
    pulp::Arch::new().dispatch(op)
}

/// `round(x / ln 2)` is recovered from the bits of `x·log₂e + SHIFT`: adding 1.5·2⁵² rounds to
/// an integer (to nearest, ties to even) and leaves it in the low bits of the mantissa.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// ln 2 in two parts (fdlibm's): `n·LN2_HI` is exact for |n| < 2¹¹, so `x − n ln 2` is
/// computed without cancellation error.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// Below this, `exp` is under 3.3e-308 and is returned as 0 (subnormal results are flushed).
const UNDERFLOW: f64 = -708.0;
/// Above this, `exp` is returned as +∞ (the true overflow point is 709.78).
const OVERFLOW: f64 = 709.0;
/// 1/k! for k = 13, 12, …, 0: the Taylor polynomial of exp on |r| ≤ ln2/2, whose truncation
/// error r¹⁴/14! < 5e-18 is far below rounding.
const TAYLOR: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `eˣ` to within 2 units in the last place, for any x: exactly 0 below −708 (where eˣ <
/// 3.3e-308), +∞ above 709, NaN for NaN. Branch-free, so a loop of it vectorises.
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    // NaN passes through the clamp (and so reaches the result).
    let xc = x.clamp(UNDERFLOW, OVERFLOW);
    let z = xc * std::f64::consts::LOG2_E + SHIFT;
    let n = z - SHIFT;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = TAYLOR[1..].iter().fold(TAYLOR[0], |acc, c| acc * r + c);
    let k = z.to_bits() as i64 - SHIFT.to_bits() as i64;
    let scale = f64::from_bits(((k + 1023) as u64) << 52);
    if x < UNDERFLOW {
        0.0
    } else if x > OVERFLOW {
        f64::INFINITY
    } else {
        p * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two positive finite numbers.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn exp_matches_the_c_library_to_two_ulps_over_its_whole_range() {
        let n = 200_001;
        let worst = (0..n)
            .map(|i| UNDERFLOW + (OVERFLOW - UNDERFLOW) * i as f64 / (n - 1) as f64)
            .chain((0..20_001).map(|i| -1.0 + 2.0 * i as f64 / 20_000.0))
            .chain([0.0, -0.0, 1e-300, -1e-300, 0.5 * LN2_HI, -0.5 * LN2_HI])
            .map(|x| ulps(exp(x), x.exp()))
            .max()
            .unwrap();
        assert!(worst <= 2, "worst error {worst} ulps");
    }

    #[test]
    fn ln2_splits_into_an_exact_head_and_a_tail() {
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
        // 11 integer bits times the head's 32 significant bits stay exact in 53.
        assert_eq!(LN2_HI.to_bits() & 0x1f_ffff, 0);
    }

    #[test]
    fn exp_limits_and_special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-708.5), 0.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(709.5), f64::INFINITY);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        // Just inside the range, the result is a normal number close to the C library's.
        assert!(ulps(exp(UNDERFLOW), UNDERFLOW.exp()) <= 2);
        assert!(ulps(exp(OVERFLOW), OVERFLOW.exp()) <= 2);
    }

    #[test]
    fn vectorized_loops_give_the_same_bits_as_scalar_code() {
        let xs: Vec<f64> = (0..1003).map(|i| -0.37 * i as f64 + 3.0).collect();
        let mut ys = xs.clone();
        struct Op<'a>(&'a mut [f64]);
        impl pulp::WithSimd for Op<'_> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _: S) {
                self.0.iter_mut().for_each(|y| *y = 2.0 * exp(-0.5 * *y));
            }
        }
        vectorized(Op(&mut ys));
        for (x, y) in xs.iter().zip(&ys) {
            assert_eq!(y.to_bits(), (2.0 * exp(-0.5 * x)).to_bits());
        }
    }
}
