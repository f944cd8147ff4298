"""Rover60 in Python: an independent implementation for cross-checking trustgp's Rust one.

Dependencies: `pip install numpy scipy`.

Definition (as the RCaGP reference code's task "Rover60D", `rcagp.md` §5.5; Wang et al. 2018):
x in [-2/60, 4/60]^60 are 30 steps (dx, dy); the waypoints are the start (0.05, 0.05) and its
running sums with the steps; consecutive repeats are dropped; the curve is SciPy's
interpolating parametric cubic spline `splprep(points, k=3, s=0)` (FITPACK, chord-length
parameter), sampled at `linspace(0, 1, 1000)`; the cost is the trapezoidal integral along the
samples of 0.05 + 20·[inside one of 34 half-open squares [a-0.04, a+0.04)² centred on
{0, 0.2, …, 1}² minus the corners (0,0), (1,1), or outside [0, 1)²], plus 100·L1 distance of
the last sample to the goal (0.95, 0.95); the reward is 5 − cost.

The Rust implementation (`crates/trustgp/src/sequential/problems/rover.rs`) solves the
not-a-knot spline system itself; this one calls FITPACK, so agreement checks the spline.

`python rover.py --fixtures` prints the rewards at the fixed points that the Rust tests use:
`fixture_point(k)`, coordinate j = lb + (ub − lb)·(((j+1)·√2 + (k+1)·√3) mod 1).
"""
import itertools
import math
import sys

import numpy as np
import scipy.interpolate as si

DIM = 60
START = np.array([0.05, 0.05])
GOAL = np.array([0.95, 0.95])


def bounds():
    """(lower, upper) lists of the 60-D box."""
    return [-0.5 * 4.0 / DIM] * DIM, [4.0 / DIM] * DIM


def _obstacles():
    grid = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    centres = np.array(list(itertools.product(grid, grid)))[1:-1]
    return centres - 0.04, centres + 0.04


LOW, HIGH = _obstacles()


def _state_costs(q):
    """Cost per unit length at each row of q (n×2)."""
    in_tree = ((LOW[None, :, :] <= q[:, None, :]) & (q[:, None, :] < HIGH[None, :, :])).all(axis=2)
    in_unit = ((0.0 <= q) & (q < 1.0)).all(axis=1)
    hit = in_tree.any(axis=1) | ~in_unit
    return 0.05 + 20.0 * hit


def rover60(x):
    """The reward (maximised) of the 60 step coordinates x."""
    x = np.asarray(x, dtype=float)
    pts = np.vstack([START, x.reshape(-1, 2)]).cumsum(axis=0)
    keep = np.abs(np.diff(pts, axis=0)).sum(axis=1) > 0
    pts = np.vstack([pts[:-1][keep], pts[-1:]])
    tck, _ = si.splprep([pts[:, 0], pts[:, 1]], k=3, s=0)
    q = np.vstack(si.splev(np.linspace(0.0, 1.0, 1000), tck)).T
    c = _state_costs(q)
    seg = np.linalg.norm(np.diff(q, axis=0), axis=1)
    cost = np.sum(seg * 0.5 * (c[:-1] + c[1:]))
    cost += 100.0 * np.abs(q[-1] - GOAL).sum()
    return float(5.0 - cost)


def fixture_point(k):
    lo, hi = bounds()
    r2, r3 = math.sqrt(2.0), math.sqrt(3.0)
    return [lo[j] + (hi[j] - lo[j]) * (((j + 1) * r2 + (k + 1) * r3) % 1.0) for j in range(DIM)]


if __name__ == "__main__":
    if "--fixtures" in sys.argv:
        for k in range(4):
            print(k, repr(rover60(fixture_point(k))))
