//! The metrics of safe learning (`safe-transfer.md` §5.3): the number of disjoint safe regions
//! the data reached (connected components of the true safety on a grid), the true- and
//! false-positive safe areas over the pool, and the safe-query ratio. The RMSE is
//! [`crate::data::metrics::rmse`].
//!
//! Components use face connectivity (runs in 1-D, 4-neighbours in 2-D), labelled by the
//! classic two-pass union-find (He et al. 2017): the first pass in row-major order joins each
//! safe cell to its safe neighbours before it along every axis, the second pass gives each
//! root a compact label in the order roots are first met. The same labelling decides the
//! benchmarks' rejection rules ([`super::benchmarks::regions`]), and [`nearest_node`] is the
//! benchmarks' grid lookup too ([`super::benchmarks::grid::Grid::nearest`]).

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::error::{invalid, SafeError};
use super::scaling::check_bounds;
use super::SafetyGrid;

/// The connected safe regions of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Components {
    /// Each cell's region (`0..count`), `None` for an unsafe cell.
    pub labels: Vec<Option<usize>>,
    /// The number of regions.
    pub count: usize,
}

/// The face-connected components of the safe cells of a grid of `shape` (row-major, the last
/// axis fastest).
///
/// # Errors
/// [`SafeError::Invalid`] for an empty shape, a zero extent, or `safe` not holding one entry
/// per cell.
pub fn connected_components(shape: &[usize], safe: &[bool]) -> Result<Components, SafeError> {
    if shape.is_empty() || shape.contains(&0) {
        return invalid(format!(
            "a grid needs at least one axis and no empty axis, got shape {shape:?}"
        ));
    }
    let cells = shape
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s))
        .ok_or_else(|| SafeError::Invalid(format!("grid shape {shape:?} is too large")))?;
    if safe.len() != cells {
        return invalid(format!(
            "the grid of shape {shape:?} has {cells} cells, but {} safety flags were given",
            safe.len()
        ));
    }
    // strides[a]: the index step of one cell along axis a.
    let mut strides = vec![1usize; shape.len()];
    for a in (0..shape.len() - 1).rev() {
        strides[a] = strides[a + 1] * shape[a + 1];
    }
    let mut parent: Vec<usize> = (0..cells).collect();
    for i in 0..cells {
        if !safe[i] {
            continue;
        }
        for (a, &stride) in strides.iter().enumerate() {
            // The neighbour before i along axis a exists when i's coordinate there is > 0.
            let coordinate = (i / stride) % shape[a];
            if coordinate > 0 && safe[i - stride] {
                union(&mut parent, i, i - stride);
            }
        }
    }
    let mut root_label = vec![usize::MAX; cells];
    let mut labels = vec![None; cells];
    let mut count = 0;
    for i in 0..cells {
        if safe[i] {
            let r = find(&mut parent, i);
            if root_label[r] == usize::MAX {
                root_label[r] = count;
                count += 1;
            }
            labels[i] = Some(root_label[r]);
        }
    }
    Ok(Components { labels, count })
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        // Path halving keeps the trees flat.
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The smaller root wins, so that labels do not depend on the order of unions.
    if ra < rb {
        parent[rb] = ra;
    } else {
        parent[ra] = rb;
    }
}

/// The position of `v` in grid units on an axis of `m` nodes spanning `bounds = (lo, hi)`
/// (both ends included), clamped to `[0, m − 1]`.
pub fn axis_position((lo, hi): (f64, f64), m: usize, v: f64) -> f64 {
    let top = m.saturating_sub(1) as f64;
    ((v - lo) / (hi - lo) * top).clamp(0.0, top)
}

/// The flat index (row-major, the last axis fastest) of the node nearest to `x` of the regular
/// grid of `shape` nodes over the box `bounds`, both ends included. On such a grid the nearest
/// node in any per-axis scaled distance is the nearest node along each axis, found by
/// rounding; a point outside the box goes to the nearest boundary node, a point exactly
/// halfway between two nodes to the upper one.
pub fn nearest_node(bounds: &[(f64, f64)], shape: &[usize], x: &[f64]) -> usize {
    bounds
        .iter()
        .zip(shape)
        .zip(x)
        .fold(0, |k, ((&b, &m), &v)| {
            k * m + axis_position(b, m, v).round() as usize
        })
}

/// Checks that `grid` is the regular grid of its shape over `bounds` (each point within
/// `1e-9` of the box width of its node), so that [`nearest_node`] finds its nearest point.
fn check_regular(grid: &SafetyGrid, bounds: &[(f64, f64)]) -> Result<(), SafeError> {
    check_bounds(bounds)?;
    let d = grid.shape.len();
    for k in 0..grid.points.nrows() {
        let mut rest = k;
        for a in (0..d).rev() {
            let (m, (lo, hi)) = (grid.shape[a], bounds[a]);
            let i = rest % m;
            rest /= m;
            // An axis of one node has no spacing: its coordinate is free.
            if m < 2 {
                continue;
            }
            let want = lo + (hi - lo) * i as f64 / (m - 1) as f64;
            let got = grid.points[(k, a)];
            // Written so that a NaN point is not close.
            let close = (got - want).abs() <= 1e-9 * (hi - lo);
            if !close {
                return invalid(format!(
                    "safety grid point {k}, input {a} is {got}, but the regular grid of shape \
                     {:?} over the bounds has {want} there",
                    grid.shape
                ));
            }
        }
    }
    Ok(())
}

/// How many of the grid's true safe regions hold at least one of the rows of `points` (each
/// point labelled by its nearest grid point, [`nearest_node`]; a point whose nearest grid point
/// is unsafe counts for no region). The grid is the regular grid of its shape over the box
/// `bounds`.
///
/// # Errors
/// [`SafeError::Invalid`] for an inconsistent grid (shape, points and flags), points or
/// bounds with the wrong number of inputs, bad bounds, or grid points that are not the
/// regular grid over `bounds`.
pub fn regions_explored(
    grid: &SafetyGrid,
    bounds: &[(f64, f64)],
    points: MatRef<'_, f64>,
) -> Result<usize, SafeError> {
    let components = connected_components(&grid.shape, &grid.safe)?;
    let d = grid.shape.len();
    if grid.points.nrows() != grid.safe.len() || grid.points.ncols() != d {
        return invalid(format!(
            "the safety grid has {} flags and {} axes, but its points are {}×{}",
            grid.safe.len(),
            d,
            grid.points.nrows(),
            grid.points.ncols()
        ));
    }
    if bounds.len() != d || points.ncols() != d {
        return invalid(format!(
            "the safety grid has {d} axes, but the bounds give {} inputs and the points have {} \
             columns",
            bounds.len(),
            points.ncols()
        ));
    }
    check_regular(grid, bounds)?;
    let mut reached = vec![false; components.count];
    for i in 0..points.nrows() {
        let x: Vec<f64> = (0..d).map(|c| points[(i, c)]).collect();
        if let Some(label) = components.labels[nearest_node(bounds, &grid.shape, &x)] {
            reached[label] = true;
        }
    }
    Ok(reached.iter().filter(|&&r| r).count())
}

/// The true- and false-positive safe areas of a predicted safe set over a pool.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SafeAreas {
    /// `|S_N ∩ S_true| / N_pool` (larger is better).
    pub true_positive: f64,
    /// `|S_N \ S_true| / N_pool` (smaller is better).
    pub false_positive: f64,
}

/// The safe areas of the predicted safe set `predicted` against the truth `truth`, one entry
/// per pool candidate (areas are point counts over the pool size).
///
/// # Errors
/// [`SafeError::Invalid`] for an empty pool or slices of different lengths.
pub fn safe_areas(predicted: &[bool], truth: &[bool]) -> Result<SafeAreas, SafeError> {
    if predicted.len() != truth.len() || predicted.is_empty() {
        return invalid(format!(
            "safe areas need one predicted and one true flag per pool candidate (at least one), \
             got {} and {}",
            predicted.len(),
            truth.len()
        ));
    }
    let n = predicted.len() as f64;
    let tp = predicted
        .iter()
        .zip(truth)
        .filter(|(&p, &t)| p && t)
        .count();
    let fp = predicted
        .iter()
        .zip(truth)
        .filter(|(&p, &t)| p && !t)
        .count();
    Ok(SafeAreas {
        true_positive: tp as f64 / n,
        false_positive: fp as f64 / n,
    })
}

/// The fraction of queries that were truly safe (`None` without queries).
pub fn safe_query_ratio(truly_safe: &[bool]) -> Option<f64> {
    if truly_safe.is_empty() {
        return None;
    }
    Some(truly_safe.iter().filter(|&&s| s).count() as f64 / truly_safe.len() as f64)
}
