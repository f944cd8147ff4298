//! Fresh matrices whose memory is written by every thread.
//!
//! `Mat::zeros` and `Mat::from_fn` fill a matrix on the calling thread. For the n × n buffers
//! of a multi-output evaluation (10 MB at n = 1152) that fill is serial work between parallel
//! factorisations and products, and the other cores wait through it (`perf`: 3% of an Energy
//! MO-RCGP fit's samples, all in `memset` on the main thread; `docs/benchmarks.md`).

use std::mem::MaybeUninit;

use faer::Mat;
use rayon::prelude::*;

use super::Parallelism;

/// Below this many entries [`par_zeros`] zeroes on the calling thread: handing so little work
/// to other threads costs more than it saves.
const PARALLEL_ZEROS_MIN: usize = 1 << 16;

/// The start of a matrix's buffer, shared by the threads that fill its (disjoint) columns.
#[derive(Clone, Copy)]
struct Buffer(*mut MaybeUninit<f64>);

// SAFETY: each thread writes only the columns it is given, and no two columns overlap (the
// column stride is at least the number of rows), so sharing the pointer races on nothing.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// The `len` entries from `start` on.
    ///
    /// # Safety
    /// They must lie within the allocation, and no other live slice may overlap them.
    unsafe fn entries<'a>(self, start: usize, len: usize) -> &'a mut [MaybeUninit<f64>] {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}

/// An `nrows × ncols` matrix whose column `j` is first zeroed and then passed to `fill(j, col)`;
/// with [`Parallelism::Parallel`] the columns are spread over rayon's threads.
pub(crate) fn par_from_columns(
    nrows: usize,
    ncols: usize,
    par: Parallelism,
    fill: impl Fn(usize, &mut [f64]) + Sync,
) -> Mat<f64> {
    if par == Parallelism::Sequential || nrows * ncols == 0 {
        let mut m = Mat::<f64>::zeros(nrows, ncols);
        for j in 0..ncols {
            fill(j, m.col_as_slice_mut(j));
        }
        return m;
    }
    let mut m = Mat::<f64>::with_capacity(nrows, ncols);
    let stride = m.col_stride().unsigned_abs();
    let buffer = Buffer(m.as_ptr_mut().cast::<MaybeUninit<f64>>());
    (0..ncols).into_par_iter().for_each(|j| {
        // SAFETY: the allocation holds `ncols` columns of `stride ≥ nrows` entries, so column
        // j's `nrows` entries are in bounds and belong to no other column.
        let raw = unsafe { buffer.entries(j * stride, nrows) };
        raw.fill(MaybeUninit::new(0.0));
        // SAFETY: every entry of the column was initialised just above.
        let col = unsafe { std::slice::from_raw_parts_mut(raw.as_mut_ptr().cast::<f64>(), nrows) };
        fill(j, col);
    });
    // SAFETY: within the reserved capacity, and every entry now in bounds was written above.
    unsafe { m.set_dims(nrows, ncols) };
    m
}

/// An `nrows × ncols` matrix of zeros, written by rayon's threads when `par` allows and the
/// matrix is large (see [`par_from_columns`]).
pub(crate) fn par_zeros(nrows: usize, ncols: usize, par: Parallelism) -> Mat<f64> {
    let par = if nrows * ncols < PARALLEL_ZEROS_MIN {
        Parallelism::Sequential
    } else {
        par
    };
    par_from_columns(nrows, ncols, par, |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_zeroed_then_filled_whatever_the_threads() {
        for (nrows, ncols) in [(0, 0), (3, 0), (0, 4), (7, 5), (300, 257), (1152, 64)] {
            for par in [Parallelism::Sequential, Parallelism::Parallel] {
                let m = par_from_columns(nrows, ncols, par, |j, col| {
                    (col.iter_mut().enumerate())
                        .filter(|(i, _)| (i + j) % 3 == 0)
                        .for_each(|(i, v)| *v = (i * 1000 + j) as f64);
                });
                assert_eq!((m.nrows(), m.ncols()), (nrows, ncols));
                for j in 0..ncols {
                    for i in 0..nrows {
                        let expected = if (i + j) % 3 == 0 {
                            (i * 1000 + j) as f64
                        } else {
                            0.0
                        };
                        assert_eq!(m[(i, j)], expected, "({i}, {j}) of {nrows}×{ncols}");
                    }
                }
                assert!(par_zeros(nrows, ncols, par)
                    .col_iter()
                    .all(|c| c.iter().all(|v| *v == 0.0)));
            }
        }
    }
}
