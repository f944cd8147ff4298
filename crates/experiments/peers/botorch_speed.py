"""Time one BoTorch BO iteration and one `trustgp suggest` call on the same 100 Hartmann6 rows.

Dependencies: `pip install botorch numpy`; a `trustgp` binary
(`cargo build --release -p trustgp-cli`).

Usage:
    python crates/experiments/peers/botorch_speed.py target/release/trustgp \
        [--n 100] [--repeats 7] [--csv results/bo/speed_hartmann6_n100.csv] \
        [--out results/bo/speed.json]

The rows: `--n` points uniform in [0, 1]⁶ from `numpy.random.default_rng(12345)`, with their
(maximised) Hartmann6 values, written to `--csv`. One BoTorch iteration = `SingleTaskGP`
(Normalize + Standardize, BoTorch's default priors) fitted by `fit_gpytorch_mll`, then
`qLogExpectedImprovement` maximised by `optimize_acqf` (q = 1, 10 restarts, 512 raw samples),
float64, torch's default thread count unless `--torch-threads`. One trustgp call = the process
`trustgp suggest --bounds … --data CSV --target y --seed r` (exact GP + LogEI, q = 1), timed
from outside (process start, CSV read, fit, acquisition optimisation, output); the time the
binary reports for its own work is recorded too. Both alternate, `--repeats` times each, in
the same process on the same machine; the medians and their ratio are printed and written to
`--out` as JSON.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bo_problems  # noqa: E402
from botorch_bo import propose  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trustgp")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--csv", default="results/bo/speed_hartmann6_n100.csv")
    ap.add_argument("--out", default="results/bo/speed.json")
    ap.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    a = ap.parse_args()
    if a.torch_threads > 0:
        torch.set_num_threads(a.torch_threads)
    load_before = os.getloadavg()
    warnings.filterwarnings("ignore")
    p = bo_problems.get_problem("hartmann6")
    x = np.random.default_rng(12345).uniform(p.lower, p.upper, size=(a.n, p.dim))
    y = np.array([p(xi) for xi in x])
    bo_problems.write_rows(a.csv, x, y)
    bounds = torch.tensor(np.stack([p.lower, p.upper]))
    cmd = [a.trustgp, "suggest", "--bounds", p.bounds_arg(), "--data", a.csv, "--target", "y"]
    botorch_s, trustgp_s, trustgp_reported = [], [], []
    propose(x, y, bounds)  # warm-up: imports, first-call compilation
    for r in range(a.repeats):
        torch.manual_seed(r)
        t0 = time.perf_counter()
        propose(x, y, bounds)
        botorch_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run = subprocess.run(cmd + ["--seed", str(r)], capture_output=True, text=True, check=True)
        trustgp_s.append(time.perf_counter() - t0)
        trustgp_reported.append(json.loads(run.stdout)["seconds"])
    result = {
        "n": a.n,
        "d": p.dim,
        "repeats": a.repeats,
        "botorch_median_s": statistics.median(botorch_s),
        "trustgp_median_s": statistics.median(trustgp_s),
        "trustgp_reported_median_s": statistics.median(trustgp_reported),
        "ratio_botorch_over_trustgp": statistics.median(botorch_s) / statistics.median(trustgp_s),
        "botorch_s": botorch_s,
        "trustgp_s": trustgp_s,
        "trustgp_reported_s": trustgp_reported,
        "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "botorch": __import__("botorch").__version__,
        "machine": platform.processor() or platform.machine(),
        "command": "python " + " ".join(sys.argv),
        "load_average_before_after": [load_before[0], os.getloadavg()[0]],
    }
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print(
        f"BoTorch iteration: {result['botorch_median_s']:.3f} s, trustgp suggest: "
        f"{result['trustgp_median_s']:.3f} s (self-reported {result['trustgp_reported_median_s']:.3f} s), "
        f"ratio {result['ratio_botorch_over_trustgp']:.1f}x (medians of {a.repeats})"
    )


if __name__ == "__main__":
    main()
