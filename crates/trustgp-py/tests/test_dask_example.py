"""The Dask example: a 4-worker batch BO on a LocalCluster of processes (small budget)."""

import json
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dask_batch_bo.py"


def test_dask_batch_bo_runs_on_four_worker_processes():
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--workers", "4", "--batch", "4", "--budget", "24"],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["evaluations"] == 24
    # The batches were spread over the cluster's processes, none of them this one.
    assert 2 <= result["worker_processes"] <= 4
    # 8 design points and 4 model batches of 4: well below random search's typical regret.
    assert result["regret"] < 1.0, result
