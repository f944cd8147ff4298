//! Best-first branch and bound over a box (spec §2.11, Algorithm 1, eager variant): anytime
//! (valid bounds at every exit) and ε-exact (the gap closes to ε in finitely many steps when
//! the region bounds converge as boxes shrink).
//!
//! The global bound keeps the lower bounds of fathomed regions (erratum 11): it is
//! `min(fathomed, min over the queue)`, never the queue alone.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::region::Region;
use super::variance_qp::VarianceMethod;

/// Whether the minimum or the maximum over the box is wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    /// `min_T f`.
    Min,
    /// `max_T f`.
    Max,
}

/// A value at a concrete point, with a certified bracket of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointValue {
    /// The computed value.
    pub value: f64,
    /// A certified lower bound of the true value.
    pub lower: f64,
    /// A certified upper bound of the true value.
    pub upper: f64,
}

/// What branch and bound needs of a quantity.
pub trait Bounded {
    /// A sound bound over `region` (`≤ min` for [`Sense::Min`], `≥ max` for [`Sense::Max`]) and
    /// candidate points of `region` where the extremum may be.
    fn bound(&self, region: &Region, sense: Sense) -> (f64, Vec<Vec<f64>>);
    /// The quantity at `x`.
    fn at(&self, x: &[f64]) -> PointValue;
}

/// How regions are split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Bisect the widest coordinate (deterministic; the default).
    Widest,
    /// Bisect a uniformly chosen free coordinate (the paper's rule), seeded.
    Random(u64),
}

/// Stopping rules and settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BnbOptions {
    /// Stop when the certified gap is at most this.
    pub tolerance: f64,
    /// Stop after this many splits.
    pub max_iterations: usize,
    /// Stop after this long.
    pub time_limit: Option<Duration>,
    /// Regions narrower than this in every coordinate are not split (fathomed with their bound).
    pub min_width: f64,
    /// The split rule.
    pub split: Split,
    /// Stop as soon as the answer to "is the extremum beyond this threshold?" is decided.
    pub decide_at: Option<f64>,
    /// Record the anytime bounds after every iteration.
    pub record: bool,
    /// How the latent variance is bounded on each region.
    pub variance: VarianceMethod,
}

impl Default for BnbOptions {
    fn default() -> Self {
        BnbOptions {
            tolerance: 1e-2,
            max_iterations: 10_000,
            time_limit: None,
            min_width: 1e-12,
            split: Split::Widest,
            decide_at: None,
            record: false,
            variance: VarianceMethod::default(),
        }
    }
}

/// Why branch and bound stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitReason {
    /// The gap is at most the tolerance.
    Converged,
    /// Every region was fathomed.
    QueueEmpty,
    /// The iteration cap.
    MaxIterations,
    /// The time limit.
    TimeLimit,
    /// The threshold question is decided.
    Decided,
}

impl ExitReason {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            ExitReason::Converged => "converged",
            ExitReason::QueueEmpty => "queue_empty",
            ExitReason::MaxIterations => "max_iterations",
            ExitReason::TimeLimit => "time_limit",
            ExitReason::Decided => "decided",
        }
    }
}

/// The result of one branch and bound run.
#[derive(Clone, Debug, PartialEq)]
pub struct BnbResult {
    /// The sound bound: `≤ min_T f` (Min) or `≥ max_T f` (Max).
    pub bound: f64,
    /// The best value found at a concrete point.
    pub found: f64,
    /// The certified side of `found`'s bracket (`≥ found`'s true value for Min, `≤` for Max):
    /// with `bound`, it brackets the true extremum.
    pub found_certified: f64,
    /// The point where `found` was attained.
    pub point: Vec<f64>,
    /// `|found_certified − bound|`: how far the extremum can be from the value found.
    pub gap: f64,
    /// Number of regions split.
    pub iterations: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Why it stopped.
    pub exit: ExitReason,
    /// `(bound, found_certified)` after every iteration (when recorded), in the quantity's
    /// sign.
    pub history: Vec<(f64, f64)>,
}

struct Entry {
    lb: f64,
    seq: u64,
    region: Region,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` pops the smallest lower bound (ties: oldest first).
    fn cmp(&self, o: &Self) -> Ordering {
        o.lb.total_cmp(&self.lb).then(o.seq.cmp(&self.seq))
    }
}

/// Branch and bound for `sense` of `problem` over `region`.
pub fn branch_and_bound<P: Bounded + ?Sized>(
    problem: &P,
    region: &Region,
    sense: Sense,
    options: &BnbOptions,
) -> BnbResult {
    let start = Instant::now();
    // Work on g = s·f and minimise.
    let s = if sense == Sense::Min { 1.0 } else { -1.0 };
    let lower_of = |r: &Region| -> (f64, Vec<Vec<f64>>) {
        let (b, c) = problem.bound(r, sense);
        let lb = s * b;
        // A NaN bound is no information: −∞.
        (if lb.is_nan() { f64::NEG_INFINITY } else { lb }, c)
    };
    let mut rng = match options.split {
        Split::Random(seed) => Some(StdRng::seed_from_u64(seed)),
        Split::Widest => None,
    };
    let mut best_cert = f64::INFINITY;
    let mut best_value = f64::NAN;
    let mut best_point = region.centre();
    let mut consider = |x: Vec<f64>, r: &Region, best_cert: &mut f64| {
        let x = r.clip(&x);
        let pv = problem.at(&x);
        let (cert, value) = if s > 0.0 {
            (pv.upper, pv.value)
        } else {
            (-pv.lower, -pv.value)
        };
        if cert < *best_cert || best_value.is_nan() {
            *best_cert = cert.min(*best_cert);
            best_value = value;
            best_point = x;
        }
    };
    let (lb0, cands) = lower_of(region);
    consider(region.centre(), region, &mut best_cert);
    for c in cands {
        consider(c, region, &mut best_cert);
    }
    let mut heap = BinaryHeap::new();
    let mut fathomed = f64::INFINITY;
    let mut seq = 0u64;
    let eps = options.tolerance.max(0.0);
    if lb0 >= best_cert - eps {
        fathomed = lb0;
    } else {
        heap.push(Entry {
            lb: lb0,
            seq,
            region: region.clone(),
        });
    }
    let mut iterations = 0;
    let mut history = Vec::new();
    let global = |heap: &BinaryHeap<Entry>, fathomed: f64| {
        heap.peek().map_or(fathomed, |e| e.lb.min(fathomed))
    };
    let exit = loop {
        let lstar = global(&heap, fathomed);
        if options.record {
            history.push((s * lstar, s * best_cert));
        }
        if best_cert - lstar <= eps {
            break ExitReason::Converged;
        }
        if let Some(t) = options.decide_at {
            let t = s * t;
            if lstar > t || best_cert < t {
                break ExitReason::Decided;
            }
        }
        if heap.is_empty() {
            break ExitReason::QueueEmpty;
        }
        if iterations >= options.max_iterations {
            break ExitReason::MaxIterations;
        }
        if options.time_limit.is_some_and(|t| start.elapsed() >= t) {
            break ExitReason::TimeLimit;
        }
        let Entry { lb, region: r, .. } = heap.pop().expect("not empty");
        let (widest, width) = r.widest();
        if lb >= best_cert - eps || width <= options.min_width {
            fathomed = fathomed.min(lb);
            continue;
        }
        iterations += 1;
        let j = match rng.as_mut() {
            Some(rng) => {
                let free: Vec<usize> = (0..r.dim())
                    .filter(|&k| r.upper[k] - r.lower[k] > options.min_width)
                    .collect();
                free[rng.random_range(0..free.len())]
            }
            None => widest,
        };
        let (left, right) = r.bisect(j);
        for child in [left, right] {
            let (clb, cands) = lower_of(&child);
            // Children inherit the parent's bound (sound: child ⊂ parent).
            let clb = clb.max(lb);
            consider(child.centre(), &child, &mut best_cert);
            for c in cands {
                consider(c, &child, &mut best_cert);
            }
            if clb >= best_cert - eps {
                fathomed = fathomed.min(clb);
            } else {
                seq += 1;
                heap.push(Entry {
                    lb: clb,
                    seq,
                    region: child,
                });
            }
        }
    };
    let lstar = global(&heap, fathomed).min(best_cert);
    BnbResult {
        bound: s * lstar,
        found: s * best_value,
        found_certified: s * best_cert,
        point: best_point,
        gap: best_cert - lstar,
        iterations,
        seconds: start.elapsed().as_secs_f64(),
        exit,
        history,
    }
}
