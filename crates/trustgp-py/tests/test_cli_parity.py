"""The package gives the CLI's numbers bit for bit: the same data and seed through `trustgp
fit`/`trustgp predict` and through GaussianProcessRegressor, and model files pass both ways."""

import json
import subprocess

import numpy as np
import pytest

from trustgp import GaussianProcessRegressor


def write_csv(path, columns, names):
    """A CSV whose cells are Python's shortest round-trip reprs (exact f64); NaN = empty."""
    rows = [",".join(names)]
    for row in zip(*columns):
        rows.append(",".join("" if np.isnan(v) else repr(float(v)) for v in row))
    path.write_text("\n".join(rows) + "\n")


def read_predictions(path, targets):
    header, *lines = path.read_text().strip().splitlines()
    cols = header.split(",")
    values = np.array([[float(v) for v in line.split(",")] for line in lines])
    mean = values[:, [cols.index(f"mean_{t}") for t in targets]]
    std = values[:, [cols.index(f"std_{t}") for t in targets]]
    return mean, std


def run(cli, *args):
    out = subprocess.run([cli, *args], check=True, capture_output=True, text=True)
    return out.stdout


CASES = [
    # (model, extra CLI flags, estimator parameters, number of targets)
    ("gp", ["--restarts", "2", "--seed", "3"], {"restarts": 2, "random_state": 3}, 1),
    ("rcgp", ["--epsilon", "0.1", "--seed", "1"], {"epsilon": 0.1, "random_state": 1}, 1),
    ("svgp", ["--inducing", "15", "--iterations", "150", "--seed", "9"],
     {"inducing": 15, "iterations": 150, "random_state": 9}, 1),
    ("mogp", ["--seed", "2"], {"random_state": 2}, 2),
]


@pytest.mark.parametrize("model, flags, params, t", CASES)
def test_fit_and_predict_equal_the_cli_bit_for_bit(tmp_path, cli, data, model, flags, params, t):
    X, y, Xt = data
    Y = np.column_stack([y, np.cos(X[:, 0]) + 0.2 * y][:t])
    if t > 1:
        Y[::7, 1] = np.nan
    targets = ["y"] if t == 1 else ["y0", "y1"]
    inputs = ["x0", "x1"]
    write_csv(tmp_path / "train.csv", [*X.T, *Y.T], inputs + targets)
    write_csv(tmp_path / "test.csv", list(Xt.T), inputs)
    summary = json.loads(
        run(cli, "fit", "--data", str(tmp_path / "train.csv"), "--target", ",".join(targets),
            "--model", model, *flags, "--out", str(tmp_path / "cli.json"))
    )
    ours = GaussianProcessRegressor(model=model, **params).fit(X, Y if t > 1 else y)
    for latent in [False, True]:
        flag = ["--latent"] if latent else []
        run(cli, "predict", "--model", str(tmp_path / "cli.json"), "--data",
            str(tmp_path / "test.csv"), *flag, "--out", str(tmp_path / "p.csv"))
        mean_cli, std_cli = read_predictions(tmp_path / "p.csv", targets)
        mean, std = ours.predict(Xt, return_std=True, latent=latent)
        np.testing.assert_array_equal(mean.reshape(mean_cli.shape), mean_cli)
        np.testing.assert_array_equal(std.reshape(std_cli.shape), std_cli)
    assert ours.kernel_ == summary["kernel"]
    assert ours.objective_ == summary["objective"]
    assert ours.summary_["noise"] == summary["noise"]
    # The estimator's model file is one the CLI predicts with, to the same numbers.
    (tmp_path / "py.json").write_text(ours.to_json())
    run(cli, "predict", "--model", str(tmp_path / "py.json"), "--data",
        str(tmp_path / "test.csv"), "--out", str(tmp_path / "q.csv"))
    np.testing.assert_array_equal(read_predictions(tmp_path / "q.csv", targets)[0],
                                  ours.predict(Xt).reshape(-1, t))
