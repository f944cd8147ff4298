"""Benchmark objectives for the BO peer scripts, all MAXIMISED (trustgp's `sequential/` convention).

Dependencies: `pip install numpy` (and `pip install "gymnasium[box2d]"` for lunar12 only).

These are independent Python implementations of the problems that trustgp has in Rust
(`crates/trustgp/src/sequential/problems/`), plus `lunar12`, which needs Box2D physics and so
exists only here:

* `hartmann6`: −H₆ on [0, 1]⁶ (constants of `rcagp.md` §5.5), maximum 3.32236801141551.
* `branin`: −Branin on [−5, 10] × [0, 15], maximum −5/(4π).
* `rover60`: the 60-D rover trajectory problem (`rover.py` in this folder).
* `lunar12`: the 12-parameter heuristic LunarLander controller of Eriksson et al. (2019), reward
  averaged over fixed terrain seeds (`lunar.py` in this folder).

The initial design shared by every peer run is `initial_design(problem, n, seed)`: uniform draws
in the box from `numpy.random.default_rng(seed)`, one `rng.uniform(lb, ub)` call of shape (n, d).
"""
import csv
import math

import numpy as np

H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
H6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)


def hartmann6(x):
    """−H₆(x), maximised (maximum 3.32236801141551)."""
    x = np.asarray(x, dtype=float)
    inner = (H6_A * (x[None, :] - H6_P) ** 2).sum(axis=1)
    return float((H6_ALPHA * np.exp(-inner)).sum())


def branin(x):
    """−Branin(x), maximised (maximum −5/(4π))."""
    x1, x2 = float(x[0]), float(x[1])
    b = 5.1 / (4.0 * math.pi**2)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    return -((x2 - b * x1 * x1 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * math.cos(x1) + 10.0)


class Problem:
    """A named objective on a box; `optimum` is None where it is not known."""

    def __init__(self, name, lower, upper, fn, optimum):
        self.name = name
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.fn = fn
        self.optimum = optimum

    @property
    def dim(self):
        return len(self.lower)

    def __call__(self, x):
        return self.fn(np.asarray(x, dtype=float))

    def bounds_arg(self):
        """The `--bounds` argument of `trustgp suggest` for this box (names x1…xd)."""
        return ",".join(
            f"x{j + 1}={float(lo)!r}:{float(hi)!r}"
            for j, (lo, hi) in enumerate(zip(self.lower, self.upper))
        )


def get_problem(name, lunar_seeds=50):
    """The problem called `name` (hartmann6, branin, rover60, lunar12)."""
    if name == "hartmann6":
        return Problem(name, [0.0] * 6, [1.0] * 6, hartmann6, 3.32236801141551)
    if name == "branin":
        return Problem(name, [-5.0, 0.0], [10.0, 15.0], branin, -5.0 / (4.0 * math.pi))
    if name == "rover60":
        import rover

        return Problem(name, *rover.bounds(), rover.rover60, None)
    if name == "lunar12":
        import lunar

        return Problem(
            name, [0.0] * 12, [1.0] * 12, lambda x: lunar.lunar12(x, lunar_seeds), None
        )
    raise SystemExit(f"unknown problem {name!r}; expected hartmann6, branin, rover60 or lunar12")


def initial_design(problem, n, seed):
    """`n` uniform points in the box from `numpy.random.default_rng(seed)`."""
    rng = np.random.default_rng(seed)
    return rng.uniform(problem.lower, problem.upper, size=(n, problem.dim))


def write_rows(path, x, y):
    """Writes columns x1…xd and y (full precision) to `path`."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"x{j + 1}" for j in range(x.shape[1])] + ["y"])
        for xi, yi in zip(x, y):
            w.writerow([repr(float(v)) for v in xi] + [repr(float(yi))])


def read_rows(path):
    """Reads a CSV written by `write_rows`: (x as an n×d array, y as an n-vector)."""
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        rows = [[float(v) for v in row] for row in r if row]
    a = np.array(rows, dtype=float)
    if header[-1] != "y":
        raise SystemExit(f"{path}: the last column must be y, found {header[-1]!r}")
    return a[:, :-1], a[:, -1]


def init_rows(problem, n, seed, path):
    """The shared initial design: read from `path` if it exists, else drawn, evaluated and
    written there, so every tool starts from the same rows."""
    import os

    if os.path.exists(path):
        x, y = read_rows(path)
        if x.shape != (n, problem.dim):
            raise SystemExit(f"{path}: expected {n} rows of {problem.dim} inputs, found {x.shape}")
        return x, y
    x = initial_design(problem, n, seed)
    y = np.array([problem(xi) for xi in x])
    write_rows(path, x, y)
    return x, y
