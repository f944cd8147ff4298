"""Safe learning driven only through `trustgp suggest`, on an exported safe-learning benchmark.

Dependencies: `pip install numpy scipy`. Needs a `trustgp` binary
(`cargo build --release` → `target/release/trustgp`).

Usage:
    python crates/experiments/peers/safe_suggest_loop.py --problem gp1d --seed 0 \
        --transfer efficient-hgp --acquisition entropy \
        --export-dir results/safe_loop/gp1d_seed0 --out results/safe_loop/gp1d_ehgp_seed0.json
    (--transfer none: no source task, SAL; --queries N: queries after the initial data,
    default the benchmark's N_query; --acquisition ucb|logei: safe BO, maximising the target;
    --pool-rows N: the first N pool rows are the candidates, as for the SafeOpt peer)

This is the loop a user with a safety-critical experiment writes, with `pool.csv` standing in
for the experiment. First the benchmark is exported once (when `--export-dir` holds no
`pool.csv` yet):
    trustgp safe-al --problem P --seed S --export DIR
which writes `initial.csv` (the target's initial, truly safe rows), `pool.csv` (candidate inputs
x1…, the outputs a query there returns — y and z1… — and the noise-free label `truly_safe`),
`source1.csv` (a related task's rows) and prints the `suggest` flags (bounds, target,
constraints). Then every iteration runs
    trustgp suggest --data evaluated.csv --target y --bounds B --constraint C … --pool pool.csv
                    --acquisition A --seed S·1000+i [--source source1.csv --transfer T]
reads the proposed pool row (`safe_set.pool_row`, 1-based) from its JSON, copies that row's
outputs from `pool.csv` (the oracle; the text is copied verbatim, so `suggest` recognises the
row as evaluated and skips it from then on) and appends it to `evaluated.csv`. The loop never
looks at `truly_safe`: that column is only read afterwards to score the run. When `suggest`
certifies no pool point as safe it exits non-zero with a message; the loop stops there and
says so.

Scores (one JSON object per run, also printed):
* `unsafe_queries`, `unsafe_ratio`: queries (initial rows excluded) whose pool row is not
  truly safe, and their share of the queries made (Table 5 reports 1 − this ratio);
* `regions`: the true safe set split into connected regions and how many of them the initial
  rows and the queries reach (see `safe_regions`), `new_region`: whether a truly safe query
  lies in a region that no initial row lies in;
* `best_safe_y`: the largest observed target value among the truly safe queries (for safe BO);
* `seconds`: wall time of all `suggest` processes together.
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
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

# Linking radius of the safe-region graph, in units of the box side (see `safe_regions`).
REGION_RADIUS = {1: 0.01, 2: 0.04}


def export(trustgp, problem, seed, directory):
    """Export the benchmark to `directory` (once) and return the `suggest` flags it prints."""
    flags = os.path.join(directory, "suggest_flags.json")
    if not os.path.exists(os.path.join(directory, "pool.csv")) or not os.path.exists(flags):
        run = subprocess.run(
            [trustgp, "safe-al", "--problem", problem, "--seed", str(seed), "--export", directory],
            capture_output=True, text=True,
        )
        if run.returncode != 0:
            raise SystemExit(f"trustgp safe-al --export failed: {run.stderr.strip()}")
        info = json.loads(run.stdout)
        with open(flags, "w") as f:
            json.dump(info, f, indent=1)
    with open(flags) as f:
        return json.load(f)


class Benchmark:
    """The exported files of one benchmark: initial rows, pool (the oracle), sources, flags."""

    def __init__(self, directory, info, pool_rows=None):
        self.dir = directory
        self.info = info
        s = info["suggest"]
        self.bounds_arg = s["bounds"]
        self.target = s["target"]
        self.constraints = s["constraints"]
        self.bounds = []
        for part in self.bounds_arg.split(","):
            name, rng = part.split("=")
            lo, hi = rng.split(":")
            self.bounds.append((name, float(lo), float(hi)))
        self.inputs = [b[0] for b in self.bounds]
        self.dim = len(self.inputs)
        self.lower = np.array([b[1] for b in self.bounds])
        self.upper = np.array([b[2] for b in self.bounds])
        self.initial_header, self.initial_rows = read_csv(os.path.join(directory, "initial.csv"))
        header, rows = read_csv(os.path.join(directory, "pool.csv"))
        if header[-1] != "truly_safe" or header[: self.dim] != self.inputs:
            raise SystemExit(f"{directory}/pool.csv: unexpected columns {header}")
        if header[:-1] != self.initial_header:
            raise SystemExit(
                f"{directory}: pool columns {header[:-1]} differ from initial {self.initial_header}"
            )
        # Text of each pool row without `truly_safe`: what an evaluation appends.
        self.pool_text = [r[:-1] for r in rows]
        self.pool = np.array([[float(v) for v in r[:-1]] for r in rows])
        self.pool_x = self.pool[:, : self.dim]
        self.truly_safe = np.array([r[-1] == "1" for r in rows])
        self.columns = self.initial_header
        self.initial = np.array([[float(v) for v in r] for r in self.initial_rows])
        self.sources = sorted(
            os.path.join(directory, f)
            for f in os.listdir(directory)
            if f.startswith("source") and f.endswith(".csv")
        )
        self.n_query = info["n_query"]
        # Candidates: the first `pool_rows` pool rows (i.i.d. uniform, so a uniform subset) or
        # all; scores still use the whole pool's truth.
        n = len(rows) if pool_rows is None else pool_rows
        if not 0 < n <= len(rows):
            raise SystemExit(f"--pool-rows {pool_rows}: expected 1 to {len(rows)}")
        self.candidates = n
        self.pool_file = os.path.join(directory, "pool.csv")
        if n < len(rows):
            self.pool_file = os.path.join(directory, f"pool_first{n}.csv")
            with open(self.pool_file, "w", newline="") as f:
                csv.writer(f).writerows([header, *rows[:n]])

    def column(self, name):
        return self.columns.index(name)

    def constraint_checks(self):
        """(column index, '>=' or '<=', threshold) of each constraint."""
        out = []
        for c in self.constraints:
            op = ">=" if ">=" in c else "<="
            name, t = c.split(op)
            out.append((self.column(name.strip()), op, float(t)))
        return out


def read_csv(path):
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        return header, [row for row in r]


def safe_regions(bench):
    """Label the truly safe pool rows by connected region; (labels, number of regions).

    There is no noise-free truth on a grid in the export, so the pool (5000 i.i.d. uniform
    points with the noise-free `truly_safe` label) stands in for the spec's grid (§5.3): two
    truly safe pool points are linked when they lie within `REGION_RADIUS` (box sides) of each
    other, and the regions are the connected components of that graph. In 1-D the pool's mean
    spacing is 2e-4 box sides, so a region split by an unsafe gap wider than 0.01 counts as
    two; in 2-D a point has on average 25 pool neighbours within 0.04. Unsafe rows get -1.
    """
    if bench.dim > 2:
        return None, None
    unit = (bench.pool_x - bench.lower) / (bench.upper - bench.lower)
    safe = np.flatnonzero(bench.truly_safe)
    pairs = cKDTree(unit[safe]).query_pairs(REGION_RADIUS[bench.dim], output_type="ndarray")
    n = len(safe)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    count, comp = connected_components(graph, directed=False)
    labels = np.full(len(unit), -1)
    labels[safe] = comp
    return labels, count


def region_of(bench, labels, x):
    """Region label of input x: that of the nearest truly safe pool row."""
    unit = (bench.pool_x - bench.lower) / (bench.upper - bench.lower)
    u = (np.asarray(x) - bench.lower) / (bench.upper - bench.lower)
    safe = np.flatnonzero(bench.truly_safe)
    nearest = safe[np.argmin(np.sum((unit[safe] - u) ** 2, axis=1))]
    return int(labels[nearest])


def score(bench, queried_rows, seconds, stopped):
    """The run's scores from the pool rows it queried (0-based), in query order."""
    q = np.array(queried_rows, dtype=int)
    unsafe = int(np.sum(~bench.truly_safe[q])) if len(q) else 0
    y = bench.column(bench.target)
    safe_q = q[bench.truly_safe[q]] if len(q) else q
    out = {
        "queries": len(q),
        "unsafe_queries": unsafe,
        "unsafe_ratio": unsafe / len(q) if len(q) else None,
        "safe_ratio": 1 - unsafe / len(q) if len(q) else None,
        "best_safe_y": float(np.max(bench.pool[safe_q, y])) if len(safe_q) else None,
        "best_initial_y": float(np.max(bench.initial[:, y])),
        "seconds": seconds,
        "stopped": stopped,
    }
    labels, count = safe_regions(bench)
    if labels is not None:
        initial = {region_of(bench, labels, r[: bench.dim]) for r in bench.initial}
        reached = {int(labels[i]) for i in safe_q}
        out["regions"] = {
            "true_safe_regions": count,
            "region_sizes": sorted(np.bincount(labels[labels >= 0]).tolist(), reverse=True),
            "initial": sorted(initial),
            "explored": len(initial | reached),
        }
        out["new_region"] = bool(reached - initial)
    return out


def suggest(trustgp, bench, evaluated, acquisition, transfer, seed):
    """One `trustgp suggest` call: (0-based pool row or None when no point is safe, message)."""
    cmd = [
        trustgp, "suggest", "--data", evaluated, "--target", bench.target,
        "--bounds", bench.bounds_arg, "--pool", bench.pool_file,
        "--acquisition", acquisition, "--seed", str(seed),
    ]
    for c in bench.constraints:
        cmd += ["--constraint", c]
    if transfer != "none":
        for s in bench.sources:
            cmd += ["--source", s]
        cmd += ["--transfer", transfer]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip()
    out = json.loads(run.stdout)
    return out["safe_set"]["pool_row"] - 1, out


def run_loop(trustgp, bench, queries, acquisition, transfer, seed, log=None):
    """The suggest-only loop; returns (queried pool rows, suggest seconds, stop message)."""
    queried, seconds, stopped = [], 0.0, None
    with tempfile.TemporaryDirectory() as work:
        evaluated = os.path.join(work, "evaluated.csv")
        rows = [list(r) for r in bench.initial_rows]
        for i in range(queries):
            with open(evaluated, "w", newline="") as f:
                csv.writer(f).writerows([bench.columns, *rows])
            t0 = time.perf_counter()
            row, out = suggest(trustgp, bench, evaluated, acquisition, transfer, seed * 1000 + i)
            seconds += time.perf_counter() - t0
            if row is None:
                stopped = f"query {i + 1}: {out}"
                break
            queried.append(row)
            rows.append(list(bench.pool_text[row]))
            if log:
                log(i, row, out)
    return queried, seconds, stopped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transfer", default="none",
                    help="none (SAL) or a transfer method: efficient-hgp, hgp, lmc, source-prior")
    ap.add_argument("--acquisition", default="entropy")
    ap.add_argument("--queries", type=int, help="default: the benchmark's N_query")
    ap.add_argument("--pool-rows", type=int,
                    help="candidates: the first N pool rows only (default all)")
    ap.add_argument("--export-dir", required=True)
    ap.add_argument("--trustgp", default="target/release/trustgp")
    ap.add_argument("--out", help="write the run's scores and queried rows as JSON here")
    a = ap.parse_args()
    info = export(a.trustgp, a.problem, a.seed, a.export_dir)
    bench = Benchmark(a.export_dir, info, a.pool_rows)
    queries = a.queries or bench.n_query
    queried, seconds, stopped = run_loop(
        a.trustgp, bench, queries, a.acquisition, a.transfer, a.seed
    )
    result = {
        "problem": a.problem, "seed": a.seed, "transfer": a.transfer,
        "acquisition": a.acquisition, "tool": "trustgp suggest",
        "candidates": bench.candidates,
        **score(bench, queried, seconds, stopped),
        "queried_pool_rows": [r + 1 for r in queried],
    }
    text = json.dumps(result, indent=1)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text + "\n")
    summary = {k: v for k, v in result.items() if k != "queried_pool_rows"}
    print(json.dumps(summary))
    if stopped:
        print(f"stopped early: {stopped}", file=sys.stderr)


if __name__ == "__main__":
    main()
