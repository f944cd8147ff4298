"""Batch Bayesian optimisation whose evaluations run on a Dask cluster.

trustgp proposes a batch of points (``BayesianOptimizer.ask(q)``); any executor can evaluate
them. Here each batch is mapped over the workers of a ``dask.distributed`` cluster — a
``LocalCluster`` of worker processes on this machine; point ``--scheduler`` at a real cluster's
scheduler to spread an expensive experiment over many machines — and the values are told back.

Run::

    python dask_batch_bo.py --workers 4 --batch 4 --budget 40

It prints one JSON object: the best point and value, the number of evaluations and the worker
processes that ran them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

from trustgp import BayesianOptimizer

BOUNDS = {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}
BRANIN_MINIMUM = 0.397887


def expensive_branin(x, delay=0.05):
    """The Branin function, standing in for an expensive experiment: returns the value and
    the id of the process that evaluated it."""
    time.sleep(delay)
    x1, x2 = float(x[0]), float(x[1])
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    value = (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10
    return value, os.getpid()


def optimise(client, batch=4, budget=40, n_init=8, seed=0):
    """Minimise Branin with batches of ``batch`` points evaluated on ``client``'s workers."""
    opt = BayesianOptimizer(BOUNDS, direction="minimize", n_init=n_init, seed=seed)
    workers = set()
    while len(opt.y_) < budget:
        X = opt.ask(min(batch, budget - len(opt.y_)))
        futures = client.map(expensive_branin, list(X), pure=False)
        results = client.gather(futures)
        opt.tell(X, [v for v, _ in results])
        workers.update(pid for _, pid in results)
    x, y = opt.best()
    return {
        "best_x": x.tolist(),
        "best": y,
        "regret": y - BRANIN_MINIMUM,
        "evaluations": len(opt.y_),
        "worker_processes": len(workers),
        "state": opt.state_dict(),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--budget", type=int, default=40)
    p.add_argument("--n-init", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler")
    a = p.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    if a.scheduler:
        with Client(a.scheduler) as client:
            result = optimise(client, a.batch, a.budget, a.n_init, a.seed)
    else:
        with LocalCluster(
            n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            result = optimise(client, a.batch, a.budget, a.n_init, a.seed)
    result["seconds"] = time.perf_counter() - start
    result.pop("state")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
