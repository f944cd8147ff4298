"""scikit-learn's side of `experiments bench-gpc`: fit GaussianProcessClassifier (binary
Laplace, logit) on a CSV (`x1,x2,y`, y in {0, 1}) from `ConstantKernel(1) * RBF([1, 1])`,
L-BFGS-B from that one start, on the raw inputs; print one JSON object with the fit's
wall-clock seconds (the `fit` call only), the log marginal likelihood and the fitted kernel.

Usage: python crates/experiments/peers/gpc_sklearn_speed.py DATA.csv
"""
import json
import sys
import time

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


def main():
    data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
    x, y = data[:, :2], data[:, 2].astype(int)
    gpc = GaussianProcessClassifier(kernel=ConstantKernel(1.0) * RBF([1.0, 1.0]))
    start = time.perf_counter()
    gpc.fit(x, y)
    seconds = time.perf_counter() - start
    print(json.dumps({
        "fit_seconds": seconds,
        "lml": float(gpc.log_marginal_likelihood_value_),
        "kernel": str(gpc.kernel_),
        "sklearn": sklearn.__version__,
    }))


if __name__ == "__main__":
    main()
