"""Overhead of the Python package: fit + predict at N = 2000 from Python against the CLI
(same data, same seed, so the same optimisation) and against scikit-learn in the same process.

Run (after building the wheel and `cargo build --release`)::

    python crates/trustgp-py/benchmarks/overhead.py [--n 2000] [--repeats 3] [--cli PATH]

It prints a Markdown table. The CLI's time is the wall-clock time of `trustgp fit` plus
`trustgp predict` as processes (CSV reading and writing included); Python's is that of
``fit`` plus ``predict`` on numpy arrays; scikit-learn's is its ``GaussianProcessRegressor``
with ``ConstantKernel() * RBF(ARD) + WhiteKernel()`` and ``normalize_y=True`` (the same model
as trustgp's default ``const * se`` with a learned noise on standardised data).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import tempfile
import time
import warnings

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[3]


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(2 * n, d))
    f = np.sin(X[:, 0] * 1.5) + 0.5 * np.cos(X[:, 1] * 2) + 0.2 * X[:, 2:].sum(axis=1)
    y = f + 0.1 * rng.normal(size=2 * n)
    return X[:n], y[:n], X[n:]


def write_csv(path, X, y=None):
    names = [f"x{j}" for j in range(X.shape[1])] + ([] if y is None else ["y"])
    cols = list(X.T) + ([] if y is None else [y])
    lines = [",".join(names)] + [",".join(repr(float(v)) for v in row) for row in zip(*cols)]
    path.write_text("\n".join(lines) + "\n")


def cpu_seconds():
    """CPU time of this process and of its finished children (all threads, user + system):
    on a shared machine it moves far less with the load than wall-clock time does."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(f):
    """(wall seconds, CPU seconds) of ``f()``, and its result."""
    start, cpu = time.perf_counter(), cpu_seconds()
    out = f()
    return (time.perf_counter() - start, cpu_seconds() - cpu), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--d", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sklearn-repeats", type=int, default=1)
    p.add_argument("--cli", default=str(REPO / "target" / "release" / "trustgp"))
    a = p.parse_args()
    import trustgp
    from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y, Xt = make_data(a.n, a.d)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        write_csv(tmp / "train.csv", X, y)
        write_csv(tmp / "test.csv", Xt)
        # CLI and Python alternate, so that both see the same load on a shared machine.
        cli, cli_fit, py = [], [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(a.repeats):
                t_fit, out = timed(lambda: subprocess.run(
                    [a.cli, "fit", "--data", str(tmp / "train.csv"), "--target", "y",
                     "--out", str(tmp / "m.json")], check=True, capture_output=True, text=True))
                t_pred, _ = timed(lambda: subprocess.run(
                    [a.cli, "predict", "--model", str(tmp / "m.json"), "--data",
                     str(tmp / "test.csv"), "--out", str(tmp / "p.csv")], check=True,
                    capture_output=True))
                cli.append((t_fit, t_pred))
                cli_fit.append(json.loads(out.stdout)["fit_seconds"])
                m = trustgp.GaussianProcessRegressor()
                t_fit, _ = timed(lambda: m.fit(X, y))
                t_pred, _ = timed(lambda: m.predict(Xt, return_std=True))
                py.append((t_fit, t_pred))
            rows["CLI (processes, CSV in/out)"] = cli
            rows["Python trustgp (in process)"] = py
            sk = []
            for _ in range(a.sklearn_repeats):
                kernel = ConstantKernel() * RBF(np.ones(a.d)) + WhiteKernel(0.1)
                s = SkGPR(kernel, normalize_y=True, random_state=0)
                t_fit, _ = timed(lambda: s.fit((X - X.mean(0)) / X.std(0), y))
                t_pred, _ = timed(lambda: s.predict((Xt - X.mean(0)) / X.std(0), return_std=True))
                sk.append((t_fit, t_pred))
            rows["scikit-learn (in process)"] = sk

    def med(k, part, clock):
        return statistics.median(run[part][clock] for run in rows[k])

    cli_key, py_key = "CLI (processes, CSV in/out)", "Python trustgp (in process)"
    print(f"N = {a.n} training and {a.n} test rows, d = {a.d}; median of {a.repeats} runs "
          f"(scikit-learn: {a.sklearn_repeats}); CLI's own fit_seconds: "
          f"{statistics.median(cli_fit):.3f} s; allocator tuned: {trustgp._core.allocator_tuned}")
    for clock, label in ((0, "wall-clock"), (1, "CPU (user + system, all threads)")):
        cli_total = med(cli_key, 0, clock) + med(cli_key, 1, clock)
        py_fit = med(py_key, 0, clock)
        print()
        print(f"{label} seconds:")
        print()
        print("| | fit | predict | fit + predict | vs CLI | fit time / trustgp's |")
        print("|---|---|---|---|---|---|")
        for k in rows:
            f, p_ = med(k, 0, clock), med(k, 1, clock)
            print(f"| {k} | {f:.3f} | {p_:.3f} | {f + p_:.3f} | {(f + p_) / cli_total:.3f}× | "
                  f"{f / py_fit:.1f}× |")
    print()
    print("raw ((fit wall, cpu), (predict wall, cpu)):",
          json.dumps({k: [[[round(t, 3) for t in part] for part in run] for run in v]
                      for k, v in rows.items()}))
    print(f"load average at the end: {os.getloadavg()}")
    print(f"lml trustgp: {m.log_marginal_likelihood_value_:.4f}; "
          f"scikit-learn: {s.log_marginal_likelihood_value_:.4f}")


if __name__ == "__main__":
    main()
