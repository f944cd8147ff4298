"""trustgp.verify: the numbers of `trustgp verify` on the estimator's model file."""

import json

import numpy as np
import pytest

import trustgp
from trustgp import GaussianProcessRegressor

from test_cli_parity import run, write_csv


@pytest.mark.parametrize("quantity, delta, features", [
    ("mean", 0.3, None),
    ("variance", None, ["x1"]),
])
def test_equals_the_cli(tmp_path, cli, data, quantity, delta, features):
    X, y, Xt = data
    model = GaussianProcessRegressor(random_state=1).fit(X, y)
    (tmp_path / "m.json").write_text(model.to_json())
    points = Xt[:4]
    write_csv(tmp_path / "p.csv", list(points.T), ["x0", "x1"])
    flags = ["--quantity", quantity, "--tolerance", "0.001"]
    if delta is not None:
        flags += ["--delta", repr(delta)]
    if features is not None:
        flags += ["--features", ",".join(features)]
    cli_out = json.loads(run(cli, "verify", "--model", str(tmp_path / "m.json"), "--data",
                             str(tmp_path / "p.csv"), "--radius", "0.2", *flags))
    ours = trustgp.verify(model, points, 0.2, quantity, delta=delta, features=features,
                          tolerance=0.001)
    for i, p in enumerate(cli_out["points"]):
        for key in ["value", "lower", "upper", "min_found", "max_found", "gap", "iterations"]:
            assert ours[key][i] == p[key], (key, i)
        assert list(ours["argmin"][i]) == [p["argmin_input"][c] for c in ["x0", "x1"]]
        assert list(ours["argmax"][i]) == [p["argmax_input"][c] for c in ["x0", "x1"]]
        assert list(ours["exit"][i]) == p["exit"]
        if delta is None:
            assert p["certified"] is None
        else:
            assert bool(ours["certified"][i]) == p["certified"]
    assert ours["certified"] is None if delta is None else ours["certified"].dtype == bool
    # The bounds are sound: they enclose the values found and the value at the point.
    assert np.all(ours["lower"] <= ours["min_found"])
    assert np.all(ours["min_found"] <= ours["value"])
    assert np.all(ours["value"] <= ours["max_found"])
    assert np.all(ours["max_found"] <= ours["upper"])


def test_a_box_of_radius_zero_is_the_point(data):
    X, y, Xt = data
    model = GaussianProcessRegressor(random_state=1).fit(X, y)
    ours = trustgp.verify(model, Xt[:3], 0.0)
    # The value at the point is the latent mean of that row (predicted alone: the batch's
    # triangular solves round differently in the last digits).
    np.testing.assert_allclose(ours["value"], model.predict(Xt[:3]), rtol=1e-7, atol=0)
    assert np.all(ours["lower"] <= ours["value"]) and np.all(ours["value"] <= ours["upper"])
    width = ours["upper"] - ours["lower"]
    assert np.all(width <= 1e-8 * (1.0 + np.abs(ours["value"]))), width


def test_bad_input_is_a_value_error(data):
    X, y, Xt = data
    model = GaussianProcessRegressor().fit(X, y)
    with pytest.raises(ValueError, match="radius must be a finite number"):
        trustgp.verify(model, Xt, -1.0)
    with pytest.raises(ValueError, match="quantity must be mean or variance"):
        trustgp.verify(model, Xt, 0.1, "probability")
    with pytest.raises(ValueError, match="X has 1 columns, the model takes 2"):
        trustgp.verify(model, Xt[:, :1], 0.1)
    with pytest.raises(ValueError, match="feature 'x9'"):
        trustgp.verify(model, Xt, 0.1, features=["x9"])
    multi = GaussianProcessRegressor("mogp").fit(X, np.column_stack([y, -y]))
    with pytest.raises(ValueError, match="output"):
        trustgp.verify(multi, Xt, 0.1, output=5)


def test_multi_output_models_are_verified_one_output_at_a_time(data):
    X, y, Xt = data
    multi = GaussianProcessRegressor("mogp").fit(X, np.column_stack([y, 0.5 * y + X[:, 0]]))
    predicted = multi.predict(Xt[:3])
    for output in (0, 1):
        res = trustgp.verify(multi, Xt[:3], 0.05, output=output)
        np.testing.assert_allclose(res["value"], predicted[:, output], rtol=1e-7, atol=1e-9)
        assert np.all(res["lower"] <= res["value"]) and np.all(res["value"] <= res["upper"])
        assert np.all(res["upper"] - res["lower"] > 0)
