//! Reductions written so that the compiler can vectorise them.

/// Σ_i f(a_i, b_i) with four independent partial sums: a single running sum would
/// serialise on floating-point add latency and could not be vectorised.
#[inline(always)]
pub(crate) fn sum_pairs(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> f64 {
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| f(*x, *y))
        .sum();
    let mut lanes = [0.0; 4];
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            lanes[l] += f(x[l], y[l]);
        }
    }
    lanes.iter().sum::<f64>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_pairs_matches_a_plain_sum_for_every_tail_length() {
        for n in 0..11 {
            let a: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
            let b: Vec<f64> = (0..n).map(|i| 2.0 - 0.25 * i as f64).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y + 1.0).sum();
            let got = sum_pairs(&a, &b, |x, y| x * y + 1.0);
            assert!(
                (got - plain).abs() <= 1e-12 * plain.abs().max(1.0),
                "n = {n}"
            );
        }
    }
}
