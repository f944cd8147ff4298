"""Drive any Python objective with `trustgp suggest` (ask/tell over CSV), or with random search.

Dependencies: `pip install numpy` (+ `pip install scipy` for rover60,
`pip install "gymnasium[box2d]"` for lunar12). Needs a `trustgp` binary
(`cargo build --release -p trustgp-cli` → `target/release/trustgp`).

Usage:
    python crates/experiments/peers/suggest_loop.py --problem hartmann6 --seed 0 \
        --init 20 --budget 100 --init-csv results/bo/init_hartmann6_seed0.csv \
        --trustgp target/release/trustgp --method suggest \
        --out results/bo/trustgp_hartmann6_seed0.jsonl
    (--method random: uniform random search instead; --lunar-seeds N: terrains per lunar12
    evaluation, default 50)

This is the loop a user with an external simulator writes. Each iteration it writes every
evaluated row (columns x1…xd, y) to a CSV, runs
    trustgp suggest --bounds "x1=lo:hi,…" --data rows.csv --target y --direction maximize
                    --acquisition logei --seed <seed·1000 + iteration> --out next.csv
reads the proposed point from next.csv, evaluates the objective there and appends the row.
The initial rows are those of `--init-csv` (the same file `botorch_bo.py` reads or writes, so
both tools start from the same points; drawn by `bo_problems.initial_design` if missing).
Random search draws its points uniformly from `numpy.random.default_rng(10_000 + seed)`.

Output: one JSON line per evaluation, as `botorch_bo.py` writes them (`eval`, `phase`, `x`,
`y`, `best`, `regret`, `seconds`); `seconds` is the wall time of the `trustgp suggest`
process (fit + acquisition optimisation + process start and CSV input/output) and
`suggest_seconds` the time that `trustgp` itself reports.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bo_problems  # noqa: E402


def suggest(trustgp, problem, x, y, seed, workdir):
    """One `trustgp suggest` call on the rows (x, y): (next point, wall seconds, reported s)."""
    data = os.path.join(workdir, "rows.csv")
    nxt = os.path.join(workdir, "next.csv")
    bo_problems.write_rows(data, x, y)
    cmd = [
        trustgp, "suggest",
        "--bounds", problem.bounds_arg(),
        "--data", data, "--target", "y",
        "--direction", "maximize", "--acquisition", "logei",
        "--seed", str(seed), "--out", nxt,
    ]
    t0 = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"trustgp suggest failed ({run.returncode}): {run.stderr.strip()}")
    reported = json.loads(run.stdout)["seconds"]
    with open(nxt) as f:
        r = csv.reader(f)
        header = next(r)
        row = next(r)
    expected = [f"x{j + 1}" for j in range(problem.dim)]
    if header != expected:
        raise SystemExit(f"{nxt}: expected columns {expected}, found {header}")
    return np.array([float(v) for v in row]), secs, reported


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="hartmann6")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--init", type=int, default=20)
    ap.add_argument("--budget", type=int, default=100, help="total evaluations, init included")
    ap.add_argument("--init-csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--method", choices=["suggest", "random"], default="suggest")
    ap.add_argument("--trustgp", default="target/release/trustgp")
    ap.add_argument("--lunar-seeds", type=int, default=50)
    a = ap.parse_args()
    p = bo_problems.get_problem(a.problem, lunar_seeds=a.lunar_seeds)
    x, y = bo_problems.init_rows(p, a.init, a.seed, a.init_csv)
    rng = np.random.default_rng(10_000 + a.seed)
    with open(a.out, "w") as out, tempfile.TemporaryDirectory() as work:

        def record(phase, secs, reported=None):
            i = len(y) - 1
            best = float(np.max(y))
            line = {
                "eval": i + 1,
                "phase": phase,
                "x": [float(v) for v in x[i]],
                "y": float(y[i]),
                "best": best,
                "regret": None if p.optimum is None else p.optimum - best,
                "seconds": secs,
            }
            if reported is not None:
                line["suggest_seconds"] = reported
            out.write(json.dumps(line) + "\n")
            out.flush()

        x0, y0 = x, y
        for i in range(len(y0)):
            x, y = x0[: i + 1], y0[: i + 1]
            record("init", 0.0)
        while len(y) < a.budget:
            if a.method == "suggest":
                seed = a.seed * 1000 + len(y)
                xn, secs, reported = suggest(a.trustgp, p, x, y, seed, work)
            else:
                xn, secs, reported = rng.uniform(p.lower, p.upper), 0.0, None
            yn = p(xn)
            x = np.vstack([x, xn])
            y = np.append(y, yn)
            record(a.method, secs, reported)


if __name__ == "__main__":
    main()
