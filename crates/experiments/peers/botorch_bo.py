"""Peer BO loop: BoTorch SingleTaskGP + qLogExpectedImprovement on a built-in problem.

Dependencies: `pip install botorch numpy` (botorch pulls torch and gpytorch; run on CPU).

Usage:
    python crates/experiments/peers/botorch_bo.py --problem hartmann6 --seed 0 \
        --init 20 --budget 100 --init-csv results/bo/init_hartmann6_seed0.csv \
        --out results/bo/botorch_hartmann6_seed0.jsonl [--threads 1]

Protocol (issue 22, item 7): the `--init` initial rows come from `--init-csv` if it exists,
otherwise they are drawn by `bo_problems.initial_design` (uniform in the box,
`numpy.random.default_rng(seed)`), evaluated and written there, so `suggest_loop.py` (trustgp)
starts from the very same rows. Then `budget − init` sequential evaluations (q = 1), each:
inputs mapped to the unit cube (`Normalize`), targets standardised (`Standardize`),
`SingleTaskGP` with BoTorch's default priors fitted by `fit_gpytorch_mll`,
`qLogExpectedImprovement` with `best_f` = best observed (standardised) y, `optimize_acqf`
with 10 restarts and 512 raw samples in the box. All in float64; `torch.manual_seed(seed)`.

Output: one JSON line per evaluation: `eval` (1-based), `phase` (init|bo), `x`, `y`, `best`
(best value so far; the problems are noise-free, so this is the best clean value), `regret`
(optimum − best, null where the optimum is unknown) and `seconds` (wall time of the fit +
acquisition optimisation that proposed the point; 0 for initial rows).
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bo_problems  # noqa: E402

from botorch.acquisition.logei import qLogExpectedImprovement  # noqa: E402
from botorch.fit import fit_gpytorch_mll  # noqa: E402
from botorch.models import SingleTaskGP  # noqa: E402
from botorch.models.transforms import Normalize, Standardize  # noqa: E402
from botorch.optim import optimize_acqf  # noqa: E402
from gpytorch.mlls import ExactMarginalLogLikelihood  # noqa: E402

torch.set_default_dtype(torch.float64)


def propose(x, y, bounds):
    """One BoTorch iteration: fit the GP to (x, y) and maximise qLogEI (q = 1)."""
    tx = torch.tensor(x)
    ty = torch.tensor(y).unsqueeze(-1)
    model = SingleTaskGP(
        tx,
        ty,
        input_transform=Normalize(d=tx.shape[-1], bounds=bounds),
        outcome_transform=Standardize(m=1),
    )
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    fit_gpytorch_mll(mll)
    acq = qLogExpectedImprovement(model, best_f=ty.max())
    cand, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
    return cand.detach().numpy()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="hartmann6")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--init", type=int, default=20)
    ap.add_argument("--budget", type=int, default=100, help="total evaluations, init included")
    ap.add_argument("--init-csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    warnings.filterwarnings("ignore")
    p = bo_problems.get_problem(a.problem)
    x, y = bo_problems.init_rows(p, a.init, a.seed, a.init_csv)
    bounds = torch.tensor(np.stack([p.lower, p.upper]))
    with open(a.out, "w") as out:

        def record(i, phase, xi, yi, secs):
            best = float(np.max(y[: i + 1]))
            regret = None if p.optimum is None else p.optimum - best
            out.write(
                json.dumps(
                    {
                        "eval": i + 1,
                        "phase": phase,
                        "x": [float(v) for v in xi],
                        "y": float(yi),
                        "best": best,
                        "regret": regret,
                        "seconds": secs,
                    }
                )
                + "\n"
            )
            out.flush()

        for i in range(len(y)):
            record(i, "init", x[i], y[i], 0.0)
        while len(y) < a.budget:
            t0 = time.perf_counter()
            xn = propose(x, y, bounds)
            secs = time.perf_counter() - t0
            yn = p(xn)
            x = np.vstack([x, xn])
            y = np.append(y, yn)
            record(len(y) - 1, "bo", xn, yn, secs)


if __name__ == "__main__":
    main()
