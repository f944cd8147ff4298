use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::sequential::safe::metrics::{
    connected_components, nearest_node, regions_explored, safe_areas, safe_query_ratio,
};
use crate::sequential::safe::SafetyGrid;

fn grid(rows: &[&str]) -> (Vec<usize>, Vec<bool>) {
    let shape = vec![rows.len(), rows[0].len()];
    let safe = rows
        .iter()
        .flat_map(|r| r.chars().map(|c| c == '#'))
        .collect();
    (shape, safe)
}

/// Components by breadth-first flood fill (an independent algorithm).
fn flood_count(shape: &[usize], safe: &[bool]) -> usize {
    let (h, w) = (shape[0], shape[1]);
    let mut seen = vec![false; safe.len()];
    let mut count = 0;
    for start in 0..safe.len() {
        if !safe[start] || seen[start] {
            continue;
        }
        count += 1;
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(i) = stack.pop() {
            let (r, c) = (i / w, i % w);
            let mut next = vec![];
            if r > 0 {
                next.push(i - w);
            }
            if r + 1 < h {
                next.push(i + w);
            }
            if c > 0 {
                next.push(i - 1);
            }
            if c + 1 < w {
                next.push(i + 1);
            }
            for j in next {
                if safe[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
    }
    count
}

#[test]
fn one_dimensional_runs() {
    let safe: Vec<bool> = "##.#..##.".chars().map(|c| c == '#').collect();
    let c = connected_components(&[safe.len()], &safe).unwrap();
    assert_eq!(c.count, 3);
    assert_eq!(
        c.labels,
        vec![
            Some(0),
            Some(0),
            None,
            Some(1),
            None,
            None,
            Some(2),
            Some(2),
            None
        ]
    );
    assert_eq!(connected_components(&[3], &[false; 3]).unwrap().count, 0);
    assert_eq!(connected_components(&[4], &[true; 4]).unwrap().count, 1);
}

#[test]
fn two_dimensional_shapes() {
    // A U: the two arms meet only through the bottom row, after both were labelled apart.
    let (s, f) = grid(&["#.#", "#.#", "###"]);
    assert_eq!(connected_components(&s, &f).unwrap().count, 1);
    // Diagonal contacts do not connect (4-neighbours).
    let (s, f) = grid(&["#.", ".#"]);
    assert_eq!(connected_components(&s, &f).unwrap().count, 2);
    let (s, f) = grid(&["#.#", ".#.", "#.#"]);
    assert_eq!(connected_components(&s, &f).unwrap().count, 5);
    // A spiral and an M that needs label merging across several rows.
    let (s, f) = grid(&["#####", "....#", "###.#", "#...#", "#####"]);
    assert_eq!(connected_components(&s, &f).unwrap().count, 1);
    let (s, f) = grid(&["#.#.#", "#.#.#", "#####"]);
    let c = connected_components(&s, &f).unwrap();
    assert_eq!(c.count, 1);
    assert!(c.labels.iter().flatten().all(|&l| l == 0));
    // A lone corner and a ring: labels in the order of each region's first cell.
    let (s, f) = grid(&["#...", ".###", ".#.#", "####"]);
    let c = connected_components(&s, &f).unwrap();
    assert_eq!(c.count, 2);
    assert_eq!(c.labels[0], Some(0));
    assert!(c.labels[5..8].iter().all(|&l| l == Some(1)));
}

/// The nearest row of `points` by brute force in the box-scaled distance (ties: lowest row).
fn brute_nearest(points: &Mat<f64>, widths: &[f64], x: &[f64]) -> (usize, f64, f64) {
    let mut dist: Vec<(usize, f64)> = (0..points.nrows())
        .map(|g| {
            let d: f64 = (0..x.len())
                .map(|c| ((x[c] - points[(g, c)]) / widths[c]).powi(2))
                .sum();
            (g, d)
        })
        .collect();
    dist.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    (dist[0].0, dist[0].1, dist[1].1)
}

#[test]
fn nearest_node_is_the_brute_force_nearest_grid_point() {
    let mut rng = StdRng::seed_from_u64(17);
    for _ in 0..200 {
        let d = rng.random_range(1..=2);
        let shape: Vec<usize> = (0..d).map(|_| rng.random_range(2..9)).collect();
        let bounds: Vec<(f64, f64)> = (0..d)
            .map(|_| {
                let lo = rng.random_range(-3.0..1.0);
                (lo, lo + rng.random_range(0.5..4.0))
            })
            .collect();
        let n: usize = shape.iter().product();
        // Row-major, the last axis fastest.
        let points = Mat::from_fn(n, d, |k, a| {
            let stride: usize = shape[a + 1..].iter().product();
            let i = (k / stride) % shape[a];
            let (lo, hi) = bounds[a];
            lo + (hi - lo) * i as f64 / (shape[a] - 1) as f64
        });
        let widths: Vec<f64> = bounds.iter().map(|b| b.1 - b.0).collect();
        // Points inside and somewhat outside the box.
        let x: Vec<f64> = bounds
            .iter()
            .map(|&(lo, hi)| rng.random_range(lo - 0.2 * (hi - lo)..hi + 0.2 * (hi - lo)))
            .collect();
        let (want, best, second) = brute_nearest(&points, &widths, &x);
        // Skip near-ties, where either node is right.
        if second - best > 1e-9 {
            assert_eq!(nearest_node(&bounds, &shape, &x), want, "{shape:?} {x:?}");
        }
    }
    // Halfway goes up, outside goes to the boundary.
    assert_eq!(nearest_node(&[(0.0, 4.0)], &[5], &[1.5]), 2);
    assert_eq!(nearest_node(&[(0.0, 4.0)], &[5], &[-7.0]), 0);
    assert_eq!(
        nearest_node(&[(0.0, 4.0), (0.0, 1.0)], &[5, 3], &[9.0, 0.4]),
        13
    );
}

#[test]
fn random_grids_match_flood_fill() {
    let mut rng = StdRng::seed_from_u64(41);
    for _ in 0..300 {
        let shape = vec![rng.random_range(1..15), rng.random_range(1..15)];
        let p = rng.random_range(0.2..0.8);
        let safe: Vec<bool> = (0..shape[0] * shape[1])
            .map(|_| rng.random_bool(p))
            .collect();
        let c = connected_components(&shape, &safe).unwrap();
        assert_eq!(c.count, flood_count(&shape, &safe));
        // Neighbours share labels; labels are 0..count.
        let w = shape[1];
        for i in 0..safe.len() {
            assert_eq!(c.labels[i].is_some(), safe[i]);
            if i % w + 1 < w && safe[i] && safe[i + 1] {
                assert_eq!(c.labels[i], c.labels[i + 1]);
            }
            if i + w < safe.len() && safe[i] && safe[i + w] {
                assert_eq!(c.labels[i], c.labels[i + w]);
            }
        }
        let max = c.labels.iter().flatten().max().map_or(0, |&m| m + 1);
        assert_eq!(max, c.count);
    }
}

#[test]
fn bad_grids_are_clear_errors() {
    assert!(connected_components(&[], &[])
        .unwrap_err()
        .to_string()
        .contains("at least one axis"));
    assert!(connected_components(&[2, 0], &[]).is_err());
    let e = connected_components(&[2, 2], &[true; 3])
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 cells") && e.contains("3 safety flags"), "{e}");
}

#[test]
fn regions_are_counted_by_nearest_grid_point() {
    // 1-D grid on [0, 10]: safe on [0, 3] and [6, 8] (11 points, step 1).
    let safe: Vec<bool> = (0..=10).map(|i| i <= 3 || (6..=8).contains(&i)).collect();
    let g = SafetyGrid {
        shape: vec![11],
        points: Mat::from_fn(11, 1, |i, _| i as f64),
        safe,
    };
    let b = [(0.0, 10.0)];
    let pts = |v: &[f64]| Mat::from_fn(v.len(), 1, |i, _| v[i]);
    assert_eq!(
        regions_explored(&g, &b, pts(&[0.2, 2.6]).as_ref()).unwrap(),
        1
    );
    assert_eq!(
        regions_explored(&g, &b, pts(&[0.2, 7.4]).as_ref()).unwrap(),
        2
    );
    // 4.4 is nearest the unsafe grid point 4: no region.
    assert_eq!(regions_explored(&g, &b, pts(&[4.4]).as_ref()).unwrap(), 0);
    assert_eq!(regions_explored(&g, &b, pts(&[]).as_ref()).unwrap(), 0);
    let e = regions_explored(&g, &[(0.0, 1.0), (0.0, 1.0)], pts(&[1.0]).as_ref()).unwrap_err();
    assert!(e.to_string().contains("axes"), "{e}");
    // A grid that is not the regular grid over the bounds is an error, not a wrong count.
    let e = regions_explored(&g, &[(0.0, 20.0)], pts(&[1.0]).as_ref()).unwrap_err();
    assert!(e.to_string().contains("point 1, input 0 is 1"), "{e}");
    let e = regions_explored(&g, &[(1.0, 1.0)], pts(&[1.0]).as_ref()).unwrap_err();
    assert!(e.to_string().contains("lo < hi"), "{e}");
}

#[test]
fn areas_and_ratio_by_counting() {
    let predicted = [true, true, false, true, false];
    let truth = [true, false, false, true, true];
    let a = safe_areas(&predicted, &truth).unwrap();
    assert_eq!(a.true_positive, 2.0 / 5.0);
    assert_eq!(a.false_positive, 1.0 / 5.0);
    assert!(safe_areas(&[true], &[true, false]).is_err());
    assert!(safe_areas(&[], &[]).is_err());
    assert_eq!(safe_query_ratio(&[true, false, true, true]), Some(0.75));
    assert_eq!(safe_query_ratio(&[]), None);
}
