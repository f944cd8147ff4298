"""Fixtures for the binary-Laplace agreement test of trustgp's GP classifier with scikit-learn.

Writes `crates/trustgp/tests/fixtures/sklearn_gpc.json`: for each case, training inputs and
0/1 labels, test inputs, the fixed kernel `ConstantKernel(c) * RBF(ℓ)` (sklearn's
parametrisation; trustgp's `const(var=c) * se(ls=ℓ)`), and what scikit-learn's
`GaussianProcessClassifier(optimizer=None)` (binary Laplace, logit link) reports at those
hyperparameters: `log_marginal_likelihood_value_`, the latent mean and variance of the test
points (`base_estimator_.latent_mean_and_variance`), and `predict_proba[:, 1]` (its erf-mixture
approximation of the logistic integral).

The data are drawn here from `numpy.random.default_rng(seed)` (two Gaussian blobs with label
noise in 2-D; a noisy nonlinear boundary in 3-D), not taken from any dataset.

Usage: /work/pyenv/bin/python crates/experiments/peers/gpc_sklearn_fixture.py [OUT.json]
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


def blobs(rng, n):
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 2)) + np.where(y[:, None] == 1, [1.0, 0.5], [-0.5, -0.5])
    flip = rng.random(n) < 0.1
    return x, np.where(flip, 1 - y, y)


def boundary(rng, n):
    x = rng.uniform(-2, 2, size=(n, 3))
    s = np.sin(1.5 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)
    return x, (s > 0).astype(int)


def case(name, make, seed, n_train, n_test, c, ls):
    rng = np.random.default_rng(seed)
    x, y = make(rng, n_train + n_test)
    xtr, ytr, xte = x[:n_train], y[:n_train], x[n_train:]
    kernel = ConstantKernel(c, "fixed") * RBF(ls, "fixed")
    gpc = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(xtr, ytr)
    mean, var = gpc.base_estimator_.latent_mean_and_variance(xte)
    return {
        "name": name,
        "x_train": xtr.tolist(),
        "y_train": ytr.tolist(),
        "x_test": xte.tolist(),
        "constant": c,
        "lengthscales": list(np.atleast_1d(ls).astype(float)),
        "lml": float(gpc.log_marginal_likelihood_value_),
        "latent_mean": mean.tolist(),
        "latent_var": var.tolist(),
        "proba": gpc.predict_proba(xte)[:, 1].tolist(),
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "crates/trustgp/tests/fixtures/sklearn_gpc.json"
    cases = [
        case("blobs2d", blobs, 20261126, 80, 40, 2.5, [0.9, 1.4]),
        case("boundary3d", boundary, 7, 120, 50, 6.0, [1.1]),
    ]
    with open(out, "w") as f:
        json.dump({"sklearn": sklearn.__version__, "cases": cases}, f, indent=1)
    print(out)


if __name__ == "__main__":
    main()
