"""GaussianProcessClassifier: scikit-learn's numbers at fixed hyperparameters, the CLI's bit
for bit, labels of any type, pickling through the model file, and scikit-learn's checks."""

import json
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessClassifier as SkGPC
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.utils.estimator_checks import check_estimator

from trustgp import GaussianProcessClassifier

from test_cli_parity import run, write_csv


@pytest.fixture
def binary():
    """A seeded 2-D problem with a curved boundary and label noise."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-2.0, 2.0, size=(70, 2))
    logit = 2.0 * np.sin(1.5 * X[:, 0]) + X[:, 1]
    y = (rng.uniform(size=70) < 1.0 / (1.0 + np.exp(-3.0 * logit))).astype(int)
    Xt = rng.uniform(-2.5, 2.5, size=(30, 2))
    return X, y, Xt


def test_equals_scikit_learn_at_fixed_hyperparameters(binary):
    X, y, Xt = binary
    sk = SkGPC(ConstantKernel(1.7) * RBF([0.8, 1.3]), optimizer=None).fit(X, y)
    params = dict(kernel="const(var=1.7) * se(ls=[0.8, 1.3])", optimize=False,
                  standardize=False)
    ours = GaussianProcessClassifier(logit_integral="erf_mixture", **params).fit(X, y)
    # The same latent posterior and scikit-learn's integral: the same probabilities.
    p_sk = sk.predict_proba(Xt)
    np.testing.assert_allclose(ours.predict_proba(Xt), p_sk, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(ours.predict(Xt), sk.predict(Xt))
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        sk.log_marginal_likelihood_value_, rel=1e-9)
    # The library's quadrature is the integral itself; scikit-learn's mixture of probits is
    # within about 2e-3 of it, and the two differ.
    exact = GaussianProcessClassifier(**params).fit(X, y).predict_proba(Xt)
    gap = np.abs(exact - p_sk).max()
    assert 1e-6 < gap < 3e-3, gap
    np.testing.assert_allclose(exact.sum(axis=1), 1.0, rtol=0, atol=1e-15)


def test_equals_the_cli_bit_for_bit(tmp_path, cli, binary):
    X, y, Xt = binary
    write_csv(tmp_path / "train.csv", [*X.T, y.astype(float)], ["x0", "x1", "label"])
    # Labels are read as text by the CLI: write them as integers.
    text = (tmp_path / "train.csv").read_text().replace(".0\n", "\n")
    (tmp_path / "train.csv").write_text(text)
    write_csv(tmp_path / "test.csv", list(Xt.T), ["x0", "x1"])
    for likelihood, inference in [("logit", "laplace"), ("probit", "ep")]:
        summary = json.loads(run(
            cli, "fit", "--data", str(tmp_path / "train.csv"), "--target", "label",
            "--model", "gpc", "--likelihood", likelihood, "--inference", inference,
            "--restarts", "1", "--seed", "4", "--out", str(tmp_path / "cli.json")))
        ours = GaussianProcessClassifier(likelihood, inference, restarts=1,
                                         random_state=4).fit(X, y)
        assert ours.kernel_ == summary["kernel"]
        assert ours.log_marginal_likelihood_value_ == summary["lml"]
        assert summary["classes"] == ["0", "1"]
        run(cli, "predict", "--model", str(tmp_path / "cli.json"), "--data",
            str(tmp_path / "test.csv"), "--out", str(tmp_path / "p.csv"))
        header, *lines = (tmp_path / "p.csv").read_text().strip().splitlines()
        assert header == "prob_0,prob_1,label"
        proba = np.array([[float(v) for v in line.split(",")[:2]] for line in lines])
        labels = np.array([int(line.split(",")[2]) for line in lines])
        np.testing.assert_array_equal(ours.predict_proba(Xt), proba)
        np.testing.assert_array_equal(ours.predict(Xt), labels)
        # The estimator's model file is the CLI's but for the fit's duration and the label
        # column's name (Python's y has none: "y").
        ours_file = json.loads(ours.to_json())
        cli_file = json.loads((tmp_path / "cli.json").read_text())
        for key in ["fit_seconds", "target"]:
            ours_file.pop(key), cli_file.pop(key)
        assert ours_file == cli_file


def test_labels_of_any_type_and_order(binary):
    X, y, Xt = binary
    reference = GaussianProcessClassifier().fit(X, y).predict_proba(Xt)
    for a, b in [("cat", "dog"), (10, 9), (-1.0, 2.0), ("10", "9"), (True, False)]:
        labels = np.where(y == 1, b, a).astype(object if isinstance(a, str) else None)
        clf = GaussianProcessClassifier().fit(X, labels)
        np.testing.assert_array_equal(clf.classes_, np.unique(labels))
        p = clf.predict_proba(Xt)
        # Column k is the probability of classes_[k], whatever order the library keeps.
        second = list(clf.classes_).index(b)
        np.testing.assert_allclose(p[:, second], reference[:, 1], rtol=0, atol=1e-12)
        assert set(clf.predict(Xt)) <= {a, b}


def test_pickle_clone_and_params(binary):
    X, y, Xt = binary
    clf = GaussianProcessClassifier("probit", kernel="const * se", restarts=1).fit(X, y)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(Xt), clf.predict_proba(Xt))
    np.testing.assert_array_equal(back.classes_, clf.classes_)
    assert back.kernel_ == clf.kernel_
    params = clf.get_params()
    assert params["likelihood"] == "probit" and params["restarts"] == 1
    fresh = clone(clf)
    assert not hasattr(fresh, "classes_") and fresh.get_params() == params
    fresh.set_params(inference="ep")
    assert fresh.fit(X, y).summary_["inference"] == "ep"


def test_bad_input_is_a_value_error_with_the_librarys_message(binary):
    X, y, _ = binary
    with pytest.raises(ValueError, match="EP needs the probit"):
        GaussianProcessClassifier(inference="ep").fit(X, y)
    with pytest.raises(ValueError, match="likelihood"):
        GaussianProcessClassifier(likelihood="cauchit").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        GaussianProcessClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="logit_integral"):
        GaussianProcessClassifier(logit_integral="exact").fit(X, y).predict_proba(X)
    with pytest.raises(ValueError, match="applies to the logit"):
        GaussianProcessClassifier("probit", logit_integral="erf_mixture").fit(X, y).predict_proba(X)


# Every check passes (binary and multi-class); `check_array_api_input` and
# `check_classifier_data_not_an_array` skip themselves without SCIPY_ARRAY_API and pandas.


def test_check_estimator():
    check_estimator(GaussianProcessClassifier())
