//! Initial inducing inputs for the sparse models: k-means++ seeding refined by Lloyd's
//! iterations (seeded), simply the first rows (the RCaGP paper's protocol), or inputs the
//! caller gives (DPP-BO's selection).

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ModelError;

/// Lloyd iterations after the k-means++ seeding; the inducing inputs are optimised afterwards,
/// so a rough clustering is all that is needed.
const LLOYD_ITERATIONS: usize = 10;

/// How the inducing inputs start.
#[derive(Clone, Debug, PartialEq)]
pub enum InducingInit {
    /// k-means++ centres refined by a few Lloyd iterations (seeded).
    KMeans,
    /// The first `m` training inputs, in data order.
    FirstRows,
    /// These inputs (one row each, in the training inputs' units); `m` is their number.
    Given(Mat<f64>),
}

impl InducingInit {
    /// `m` initial inducing inputs (m×d) chosen from the rows of `x` (for
    /// [`InducingInit::Given`], the given inputs, whatever `m`).
    ///
    /// # Errors
    /// If `m` is 0 or exceeds the number of rows; given inputs that are none, have another
    /// number of columns than `x`, or a non-finite entry.
    pub fn select(&self, x: MatRef<'_, f64>, m: usize, seed: u64) -> Result<Mat<f64>, ModelError> {
        let n = x.nrows();
        let count = || {
            if m == 0 || m > n {
                return Err(ModelError::Invalid(format!(
                    "number of inducing points must be between 1 and the number of training \
                     rows ({n}), got {m}"
                )));
            }
            Ok(m)
        };
        match self {
            InducingInit::FirstRows => Ok(x.subrows(0, count()?).to_owned()),
            InducingInit::KMeans => Ok(kmeans(x, count()?, seed)),
            InducingInit::Given(z) => check_given(z, x.ncols()),
        }
    }
}

/// Given inducing inputs: at least one row, `d` columns, every entry finite.
fn check_given(z: &Mat<f64>, d: usize) -> Result<Mat<f64>, ModelError> {
    if z.nrows() == 0 || z.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "given inducing inputs: expected at least one row of {d} inputs, got {}×{}",
            z.nrows(),
            z.ncols()
        )));
    }
    for i in 0..z.nrows() {
        for j in 0..d {
            if !z[(i, j)].is_finite() {
                return Err(ModelError::Invalid(format!(
                    "given inducing input {}, column {}: {} is not finite",
                    i + 1,
                    j + 1,
                    z[(i, j)]
                )));
            }
        }
    }
    Ok(z.clone())
}

fn sq_dist(x: MatRef<'_, f64>, i: usize, c: &Mat<f64>, k: usize) -> f64 {
    (0..x.ncols())
        .map(|j| (x[(i, j)] - c[(k, j)]).powi(2))
        .sum()
}

/// k-means++ seeding (each new centre drawn with probability ∝ squared distance to the nearest
/// centre so far) followed by Lloyd iterations; an emptied cluster keeps its centre.
fn kmeans(x: MatRef<'_, f64>, m: usize, seed: u64) -> Mat<f64> {
    let (n, d) = (x.nrows(), x.ncols());
    let mut rng = StdRng::seed_from_u64(seed);
    let mut centres = Mat::<f64>::zeros(m, d);
    let first = rng.random_range(0..n);
    (0..d).for_each(|j| centres[(0, j)] = x[(first, j)]);
    let mut nearest: Vec<f64> = (0..n).map(|i| sq_dist(x, i, &centres, 0)).collect();
    for k in 1..m {
        let total: f64 = nearest.iter().sum();
        // All remaining points coincide with a centre: take the next row in order.
        let pick = if total > 0.0 {
            let mut u = rng.random::<f64>() * total;
            nearest
                .iter()
                .position(|&v| {
                    u -= v;
                    u <= 0.0
                })
                .unwrap_or(n - 1)
        } else {
            k % n
        };
        (0..d).for_each(|j| centres[(k, j)] = x[(pick, j)]);
        for (i, v) in nearest.iter_mut().enumerate() {
            *v = v.min(sq_dist(x, i, &centres, k));
        }
    }
    let mut assign = vec![0usize; n];
    for _ in 0..LLOYD_ITERATIONS {
        for (i, a) in assign.iter_mut().enumerate() {
            *a = (0..m)
                .map(|k| (k, sq_dist(x, i, &centres, k)))
                .min_by(|p, q| p.1.total_cmp(&q.1))
                .map_or(0, |p| p.0);
        }
        let mut sums = Mat::<f64>::zeros(m, d);
        let mut counts = vec![0usize; m];
        for (i, &k) in assign.iter().enumerate() {
            counts[k] += 1;
            (0..d).for_each(|j| sums[(k, j)] += x[(i, j)]);
        }
        for k in (0..m).filter(|&k| counts[k] > 0) {
            (0..d).for_each(|j| centres[(k, j)] = sums[(k, j)] / counts[k] as f64);
        }
    }
    centres
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three tight, well separated clusters: the centres land on them, one each.
    #[test]
    fn kmeans_finds_separated_clusters_and_is_seeded() {
        let means = [(-5.0, 0.0), (0.0, 5.0), (5.0, 0.0)];
        let x = Mat::from_fn(60, 2, |i, j| {
            let (a, b) = means[i % 3];
            let jitter = 0.01 * ((i * 7 + j * 3) % 11) as f64;
            if j == 0 {
                a + jitter
            } else {
                b - jitter
            }
        });
        let z = InducingInit::KMeans.select(x.as_ref(), 3, 4).unwrap();
        for (a, b) in means {
            let best = (0..3)
                .map(|k| ((z[(k, 0)] - a).powi(2) + (z[(k, 1)] - b).powi(2)).sqrt())
                .fold(f64::INFINITY, f64::min);
            assert!(best < 0.1, "no centre near ({a}, {b}): {z:?}");
        }
        assert_eq!(z, InducingInit::KMeans.select(x.as_ref(), 3, 4).unwrap());
    }

    #[test]
    fn first_rows_and_bad_counts() {
        let x = Mat::from_fn(5, 2, |i, j| (i * 2 + j) as f64);
        let z = InducingInit::FirstRows.select(x.as_ref(), 2, 0).unwrap();
        assert_eq!(z, x.subrows(0, 2).to_owned());
        assert!(InducingInit::KMeans.select(x.as_ref(), 0, 0).is_err());
        assert!(InducingInit::KMeans.select(x.as_ref(), 6, 0).is_err());
        // Duplicate rows: still m centres, no panic.
        let same = Mat::from_fn(4, 2, |_, _| 1.0);
        assert_eq!(
            InducingInit::KMeans
                .select(same.as_ref(), 3, 1)
                .unwrap()
                .nrows(),
            3
        );
    }
}
