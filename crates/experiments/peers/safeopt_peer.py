"""Classic SafeOpt (the `safeopt` package) on an exported safe-learning benchmark, for safe BO.

Install (SafeOpt 0.16 predates NumPy 2 and Python 3.10):
    python -m venv peerenv && peerenv/bin/pip install "numpy<2" GPy safeopt scipy
SafeOpt imports `collections.Sequence` (gone since Python 3.10) and uses `np.float` /
`np.bool` (gone since NumPy 1.24); this script sets the shim
    import collections, collections.abc; collections.Sequence = collections.abc.Sequence
    np.float, np.bool = float, bool
before `import safeopt`.

Usage:
    peerenv/bin/python crates/experiments/peers/safeopt_peer.py --problem gp1d --seed 0 \
        --queries 40 --export-dir results/safe_loop/export/gp1d_seed0 \
        --out results/safe_loop/safeopt_gp1d_seed0.json
    (--ucb: SafeOpt's safe-UCB rule instead of the maximiser/expander rule)

Same problem as `safe_suggest_loop.py --acquisition ucb|logei` sees: the benchmark exported by
`trustgp safe-al --export` (done here when the folder has no `pool.csv` yet), maximise the
target `y` subject to the exported constraints, starting from the same `initial.csv`, the
candidates (SafeOpt's `parameter_set`) = the pool inputs (the first `--pool-rows`, default
1000, a uniform subset: with all 5000, 40 SafeOpt queries on gp1d took 628 s here, almost all
in the expander search; pass the same `--pool-rows` to `safe_suggest_loop.py`), and each
query's outputs = that pool row's outputs (the oracle). β = 4 in trustgp (a bound holds when
μ − √β·s ≥ T) is SafeOpt's `beta = 2` (its confidence interval is μ ± beta·s).

GP hyperparameters are pinned, SafeOpt never refits them: for each modelled output (the
target, and each constraint output that is not the target) a GPy `GPRegression` with a
Matérn-5/2 ARD kernel (trustgp's kernel) and zero mean (every exported threshold is 0, so the
prior mean sits on the threshold) is fitted once, by `optimize_restarts(5)` with
`numpy.random.seed(seed)`, on the source task's rows (the related task, as prior knowledge; on
the initial rows when there is no source), and then conditioned on the target's initial rows
only. Fitting one single-task GP on initial + source rows together was tried first and is
worse: the GP explains the two tasks' difference as noise (gp1d seed 0: noise variance 0.30
for y against the benchmark's 1e-4), which makes SafeOpt's bounds needlessly wide. An upper
bound `z<=U` is modelled as `−z ≥ −U`.

SafeOpt picks among all candidates, evaluated ones included, so it may query a pool row again;
`distinct_queries` counts the rows. Scores are those of `safe_suggest_loop.score`.
"""
import argparse
import collections
import collections.abc
import json
import os
import sys
import time
import warnings

import numpy as np

collections.Sequence = collections.abc.Sequence
np.float, np.bool = float, bool
warnings.filterwarnings("ignore", category=FutureWarning)

import GPy  # noqa: E402
import safeopt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safe_suggest_loop import Benchmark, export, read_csv, score  # noqa: E402


def modelled_outputs(bench):
    """[(column, sign, fmin)]: the target first (fmin −inf unless it is also constrained)."""
    checks = bench.constraint_checks()
    target = bench.column(bench.target)
    out = [[target, 1.0, -np.inf]]
    for col, op, t in checks:
        sign, fmin = (1.0, t) if op == ">=" else (-1.0, -t)
        if col == target:
            if sign < 0:
                raise SystemExit("an upper bound on the maximised target is not supported")
            out[0][2] = fmin
        else:
            out.append([col, sign, fmin])
    return out


def fit_gps(bench, outputs, seed):
    """One GP per modelled output: hyperparameters fitted on the source rows, pinned."""
    d = bench.dim
    rows = [] if bench.sources else [bench.initial]
    for s in bench.sources:
        header, src = read_csv(s)
        if header != bench.columns:
            raise SystemExit(f"{s}: columns {header}, expected {bench.columns}")
        rows.append(np.array([[float(v) for v in r] for r in src]))
    fit_data = np.vstack(rows)
    gps, fitted = [], []
    for col, sign, _ in outputs:
        np.random.seed(seed)
        kernel = GPy.kern.Matern52(d, ARD=True)
        m = GPy.models.GPRegression(fit_data[:, :d], sign * fit_data[:, [col]], kernel)
        m.optimize_restarts(5, verbose=False, robust=True)
        noise = float(max(m.Gaussian_noise.variance[0], 1e-6))
        gp = GPy.models.GPRegression(
            bench.initial[:, :d], sign * bench.initial[:, [col]], kernel.copy(), noise_var=noise
        )
        gps.append(gp)
        fitted.append({
            "output": bench.columns[col],
            "variance": float(kernel.variance[0]),
            "lengthscales": [float(v) for v in kernel.lengthscale],
            "noise_variance": noise,
        })
    return gps, fitted


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--ucb", action="store_true", help="SafeOpt's safe-UCB rule")
    ap.add_argument("--pool-rows", type=int, default=1000,
                    help="candidates: the first N pool rows (SafeOpt's expander search costs "
                    "about candidates × unsafe candidates GP predictions per query)")
    ap.add_argument("--export-dir", required=True)
    ap.add_argument("--trustgp", default="target/release/trustgp")
    ap.add_argument("--out")
    a = ap.parse_args()
    info = export(a.trustgp, a.problem, a.seed, a.export_dir)
    bench = Benchmark(a.export_dir, info, a.pool_rows)
    outputs = modelled_outputs(bench)
    gps, fitted = fit_gps(bench, outputs, a.seed)
    t0 = time.perf_counter()
    candidates = bench.pool_x[: bench.candidates]
    opt = safeopt.SafeOpt(gps, candidates, [f for _, _, f in outputs], beta=2.0)
    queried, stopped = [], None
    for i in range(a.queries):
        try:
            x = opt.optimize(ucb=a.ucb)
        except EnvironmentError as e:
            stopped = f"query {i + 1}: {e}"
            break
        row = int(np.argmin(np.sum((candidates - x) ** 2, axis=1)))
        queried.append(row)
        y = np.array([[s * bench.pool[row, c] for c, s, _ in outputs]])
        opt.add_new_data_point(bench.pool_x[row], y)
    seconds = time.perf_counter() - t0
    result = {
        "problem": a.problem, "seed": a.seed,
        "tool": "safeopt " + ("SafeOpt-UCB" if a.ucb else "SafeOpt"),
        "candidates": bench.candidates,
        **score(bench, queried, seconds, stopped),
        "distinct_queries": len(set(queried)),
        "hyperparameters": fitted,
        "queried_pool_rows": [r + 1 for r in queried],
    }
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "queried_pool_rows"}))
    if stopped:
        print(f"stopped early: {stopped}", file=sys.stderr)


if __name__ == "__main__":
    main()
