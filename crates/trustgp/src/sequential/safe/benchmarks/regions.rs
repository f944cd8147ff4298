//! Connected safe regions on a regular grid, and the rejection rules of the GP and Branin
//! benchmarks (`safe-transfer.md` §5.2 step 8).
//!
//! Two safe nodes are connected when they differ by one step along one input: contiguous runs
//! in 1-D, 4-neighbour connectivity in 2-D (§5.3). The labelling is a flood fill; any correct
//! connected-component labelling gives the same regions up to their numbering, which here is
//! the order of each region's first node in flat order.

/// The connected safe regions of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    /// Per node: 0 if unsafe, else the region's label `1..=count`.
    pub labels: Vec<usize>,
    /// Number of regions.
    pub count: usize,
}

/// Labels the connected regions of the safe nodes of a grid of `shape` (row-major, the last
/// input fastest); `safe` has one entry per node.
///
/// # Panics
/// If `safe.len()` is not the product of `shape` (a programming error).
pub fn label_regions(shape: &[usize], safe: &[bool]) -> Regions {
    let n: usize = shape.iter().product();
    assert_eq!(safe.len(), n, "one safety flag per grid node");
    // Flat-index stride of each input.
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let mut labels = vec![0; n];
    let mut count = 0;
    let mut stack = Vec::new();
    for start in 0..n {
        if !safe[start] || labels[start] != 0 {
            continue;
        }
        count += 1;
        labels[start] = count;
        stack.push(start);
        while let Some(k) = stack.pop() {
            for (d, &s) in strides.iter().enumerate() {
                let i = (k / s) % shape[d];
                let below = (i > 0).then(|| k - s);
                let above = (i + 1 < shape[d]).then(|| k + s);
                for m in [below, above].into_iter().flatten() {
                    if safe[m] && labels[m] == 0 {
                        labels[m] = count;
                        stack.push(m);
                    }
                }
            }
        }
    }
    Regions { labels, count }
}

/// Per target region (index `label − 1`): the fraction of all grid nodes that lie in it and
/// are safe for the source too.
pub fn shared_fractions(regions: &Regions, source_safe: &[bool]) -> Vec<f64> {
    let n = regions.labels.len() as f64;
    let mut shared = vec![0usize; regions.count];
    for (&l, &s) in regions.labels.iter().zip(source_safe) {
        if l > 0 && s {
            shared[l - 1] += 1;
        }
    }
    shared.into_iter().map(|c| c as f64 / n).collect()
}

/// The rejection rules (i)–(iii) of §5.2 step 8 as the authors' generators apply them: the
/// target has at least two disjoint safe regions, and at least two of them each share at least
/// `min_shared` of the space with the source's safe set (so the regions a transfer method
/// should reach share safe area with the source). Returns the label of the region with the
/// largest shared area (where the initial data go), or `None` if the draw is rejected.
///
/// \[code\]: the GP generator uses `min_shared = 0.1`, the Branin generator 0.05.
pub fn accept_draw(
    shape: &[usize],
    target_safe: &[bool],
    source_safe: &[bool],
    min_shared: f64,
) -> Option<usize> {
    let regions = label_regions(shape, target_safe);
    if regions.count < 2 {
        return None;
    }
    let shared = shared_fractions(&regions, source_safe);
    if shared.iter().filter(|&&a| a >= min_shared).count() < 2 {
        return None;
    }
    // The first largest region, as numpy's argmax picks it.
    let (best, _) = shared
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &v)| {
            if v > bv {
                (i, v)
            } else {
                (bi, bv)
            }
        });
    Some(best + 1)
}
