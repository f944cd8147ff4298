//! Regular grids over a box: the points (row-major, the last input varying fastest, as
//! [`SafetyGrid`](crate::sequential::safe::SafetyGrid) stores them), the nearest node of a
//! point, and multilinear interpolation of values given at the nodes (linear in 1-D, bilinear
//! in 2-D) — the GP benchmarks' oracle on the continuous box.

use faer::Mat;

use crate::sequential::safe::metrics::{axis_position, nearest_node};

/// A regular grid of `per_dim` points per input over a box, both ends included.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    bounds: Vec<(f64, f64)>,
    per_dim: usize,
}

impl Grid {
    /// The grid over `bounds` (each `lo < hi`) with `per_dim ≥ 2` points per input; `None`
    /// otherwise.
    pub fn new(bounds: &[(f64, f64)], per_dim: usize) -> Option<Grid> {
        let ok = !bounds.is_empty()
            && per_dim >= 2
            && bounds
                .iter()
                .all(|&(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi);
        ok.then(|| Grid {
            bounds: bounds.to_vec(),
            per_dim,
        })
    }

    /// Number of inputs.
    pub fn dim(&self) -> usize {
        self.bounds.len()
    }

    /// Points per input.
    pub fn per_dim(&self) -> usize {
        self.per_dim
    }

    /// `[per_dim; dim]`.
    pub fn shape(&self) -> Vec<usize> {
        vec![self.per_dim; self.dim()]
    }

    /// Number of nodes, `per_dim^dim`.
    pub fn len(&self) -> usize {
        self.per_dim.pow(self.dim() as u32)
    }

    /// Whether the grid has no nodes (never: kept for the `len` convention).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Coordinate `i` of input `d`.
    pub fn coordinate(&self, d: usize, i: usize) -> f64 {
        let (lo, hi) = self.bounds[d];
        if i + 1 == self.per_dim {
            hi
        } else {
            lo + (hi - lo) * i as f64 / (self.per_dim - 1) as f64
        }
    }

    /// The per-input indices of flat node `k` (row-major, last input fastest).
    pub fn unflatten(&self, mut k: usize) -> Vec<usize> {
        let mut idx = vec![0; self.dim()];
        for d in (0..self.dim()).rev() {
            idx[d] = k % self.per_dim;
            k /= self.per_dim;
        }
        idx
    }

    /// The flat index of per-input indices `idx`.
    pub fn flatten(&self, idx: &[usize]) -> usize {
        idx.iter().fold(0, |k, &i| k * self.per_dim + i)
    }

    /// All nodes, one per row, in flat order.
    pub fn points(&self) -> Mat<f64> {
        let idx: Vec<Vec<usize>> = (0..self.len()).map(|k| self.unflatten(k)).collect();
        Mat::from_fn(self.len(), self.dim(), |k, d| self.coordinate(d, idx[k][d]))
    }

    /// The position of `x` in grid units along input `d` (clamped to the box).
    fn position(&self, d: usize, x: f64) -> f64 {
        axis_position(self.bounds[d], self.per_dim, x)
    }

    /// The flat index of the node nearest to `x` ([`nearest_node`]: points outside the box go
    /// to the nearest boundary node).
    pub fn nearest(&self, x: &[f64]) -> usize {
        nearest_node(&self.bounds, &self.shape(), x)
    }

    /// Multilinear interpolation at `x` of `values` given at the nodes (flat order); points
    /// outside the box take the value at the nearest boundary. Exact at the nodes.
    pub fn interpolate(&self, values: &[f64], x: &[f64]) -> f64 {
        let d = self.dim();
        // Lower cell corner and weight of the upper corner per input; the last cell is used
        // for the upper boundary so that every node lies in some cell.
        let (base, w): (Vec<usize>, Vec<f64>) = (0..d)
            .map(|j| {
                let t = self.position(j, x[j]);
                let i = (t.floor() as usize).min(self.per_dim - 2);
                (i, t - i as f64)
            })
            .unzip();
        let mut idx = vec![0; d];
        (0..1usize << d)
            .map(|corner| {
                let mut weight = 1.0;
                for j in 0..d {
                    let up = (corner >> j) & 1 == 1;
                    idx[j] = base[j] + usize::from(up);
                    weight *= if up { w[j] } else { 1.0 - w[j] };
                }
                if weight == 0.0 {
                    0.0
                } else {
                    weight * values[self.flatten(&idx)]
                }
            })
            .sum()
    }
}
