//! The GEngine pre-processing of Li et al. (AISTATS 2022, companion code SALMOGP, as the safe
//! transfer code reuses it): a first-order low-pass (PT1) filter per input and the nonlinear
//! exogenous (NX) history structure that turns the 4 inputs into 13 lagged features.

use faer::Mat;

/// The PT1 time constants (in samples) of Speed, Load, Lambda and Ignition angle \[code\].
pub const PT1: [f64; 4] = [298.0, 38.0, 18.0, 32.0];

/// The NX structure: `(lag, input)` pairs, lag in samples of 0.1 s, input 0 Speed, 1 Load,
/// 2 Lambda, 3 Ignition angle (\[code\]: `r0c0, r1c0, r1c1, r1c2, r1c3, r2c1, r3c1, r3c3, r4c0,
/// r4c2, r4c3, r7c1, r8c2`). The feature order is by input, then by lag (as the code builds
/// it): Speed t, t−1, t−4; Load t−1, t−2, t−3, t−7; Lambda t−1, t−4, t−8; Ignition t−1, t−3,
/// t−4.
pub const NX_POSITIONS: [(usize, usize); 13] = [
    (0, 0),
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (2, 1),
    (3, 1),
    (3, 3),
    (4, 0),
    (4, 2),
    (4, 3),
    (7, 1),
    (8, 2),
];

/// The longest lag of [`NX_POSITIONS`]: the first this many rows of a trajectory have no
/// complete history and are dropped.
pub const MAX_LAG: usize = 8;

/// The PT1 filter `y[n] = x[n]/p + (1 − 1/p) y[n−1]` from rest (`y[−1] = 0`), i.e.
/// `scipy.signal.lfilter([1/p], [1, 1/p − 1], x)`; `p = 1` is the identity.
pub fn pt1(x: &[f64], p: f64) -> Vec<f64> {
    let a = 1.0 - 1.0 / p;
    let mut prev = 0.0;
    x.iter()
        .map(|&v| {
            prev = v / p + a * prev;
            prev
        })
        .collect()
}

/// The (feature column, lag, input) of every NX feature in the code's order.
pub fn feature_order() -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = NX_POSITIONS.to_vec();
    order.sort_by_key(|&(lag, input)| (input, lag));
    order
}

/// The NX features of one trajectory: `columns[j]` is input `j` over time (all of equal
/// length `n > MAX_LAG`); row `r` of the result is time `r + MAX_LAG`, one column per
/// [`feature_order`] entry (the value of its input `lag` samples earlier).
pub fn nx_features(columns: &[Vec<f64>]) -> Mat<f64> {
    let n = columns.first().map_or(0, Vec::len);
    let rows = n.saturating_sub(MAX_LAG);
    let order = feature_order();
    Mat::from_fn(rows, order.len(), |r, k| {
        let (lag, input) = order[k];
        columns[input][r + MAX_LAG - lag]
    })
}

/// The `q`-quantile of `v` with linear interpolation between order statistics (numpy's and
/// pandas' default); NaN for an empty slice.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let h = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}
