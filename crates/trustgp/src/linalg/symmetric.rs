//! Completing a symmetric matrix from its lower triangle.

use faer::{MatMut, MatRef};

/// Side of the square tiles copied sequentially when mirroring (fits in L1).
const TILE: usize = 64;

/// Copies the strict lower triangle of a square matrix onto its strict upper triangle, by
/// recursive halving so that each copy touches cache-sized tiles and the two diagonal halves
/// can proceed in parallel.
pub fn mirror_lower(a: MatMut<'_, f64>) {
    let n = a.nrows();
    if n <= TILE {
        let mut a = a;
        for j in 0..n {
            for i in 0..j {
                a[(i, j)] = a[(j, i)];
            }
        }
        return;
    }
    let h = n / 2;
    let (top_left, top_right, bottom_left, bottom_right) = a.split_at_mut(h, h);
    copy_transposed(top_right, bottom_left.as_ref());
    rayon::join(|| mirror_lower(top_left), || mirror_lower(bottom_right));
}

/// dst = srcᵀ, tile by tile (halves in parallel).
pub(crate) fn copy_transposed(dst: MatMut<'_, f64>, src: MatRef<'_, f64>) {
    let (r, c) = (dst.nrows(), dst.ncols());
    if r <= TILE && c <= TILE {
        let mut dst = dst;
        for j in 0..c {
            for i in 0..r {
                dst[(i, j)] = src[(j, i)];
            }
        }
    } else if r >= c {
        let (d1, d2) = dst.split_at_row_mut(r / 2);
        let (s1, s2) = src.split_at_col(r / 2);
        rayon::join(|| copy_transposed(d1, s1), || copy_transposed(d2, s2));
    } else {
        let (d1, d2) = dst.split_at_col_mut(c / 2);
        let (s1, s2) = src.split_at_row(c / 2);
        rayon::join(|| copy_transposed(d1, s1), || copy_transposed(d2, s2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn mirror_completes_every_size_around_the_tile_and_leaves_the_lower_triangle() {
        for n in [1, 2, 63, 64, 65, 129, 300] {
            let lower = Mat::from_fn(n, n, |i, j| if i >= j { (i * n + j) as f64 } else { -1.0 });
            let mut a = lower.clone();
            mirror_lower(a.as_mut());
            for j in 0..n {
                for i in 0..n {
                    let want = lower[(i.max(j), i.min(j))];
                    assert_eq!(a[(i, j)], want, "n = {n}, ({i}, {j})");
                }
            }
        }
    }
}
