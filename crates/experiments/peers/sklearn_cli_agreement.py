"""Peer check: `trustgp fit --no-optimize` + `trustgp predict` against scikit-learn at the same
fixed hyperparameters, on any CSV (last column = target). Python is used only to run the peer.

Usage (from the repository root, after `cargo build --release` and `pip install scikit-learn`):
    python crates/experiments/peers/sklearn_cli_agreement.py ../shared/data/uci_energy_heating_hl/data.csv

It z-scores inputs and target with the training rows' population statistics (trustgp's default),
fits C(1.7) * Matern(nu=2.5, ARD) + WhiteKernel(0.02) with the optimiser off, and prints the
relative differences of the log marginal likelihood and of the test predictive means and stds.
"""
import json, os, subprocess, sys, tempfile
import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel as C, Matern, WhiteKernel

path = sys.argv[1]
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/trustgp"
head = open(path).readline().strip().split(",")
data = np.genfromtxt(path, delimiter=",", skip_header=1)
perm = np.random.default_rng(3).permutation(len(data))
n_train = min(500, int(0.8 * len(data)))
tr, te = perm[:n_train], perm[n_train:n_train + 60]
tmp = tempfile.mkdtemp()
files = {k: os.path.join(tmp, k) for k in ["train.csv", "test.csv", "model.json", "pred.csv"]}
for name, rows in [("train.csv", tr), ("test.csv", te)]:
    np.savetxt(files[name], data[rows], delimiter=",", header=",".join(head), comments="", fmt="%.17g")
X, y = data[tr, :-1], data[tr, -1]
mx, sx, my, sy = X.mean(0), X.std(0), y.mean(), y.std()
ls = [0.7 + 0.3 * i for i in range(X.shape[1])]
kernel = C(1.7, "fixed") * Matern(ls, nu=2.5, length_scale_bounds="fixed") + WhiteKernel(0.02, "fixed")
gp = GaussianProcessRegressor(kernel, optimizer=None, alpha=1e-10).fit((X - mx) / sx, (y - my) / sy)
mean, std = gp.predict((data[te, :-1] - mx) / sx, return_std=True)
mean, std = mean * sy + my, std * sy
expr = "const(var=1.7) * matern52(ls=[%s])" % ",".join(repr(v) for v in ls)
fit = subprocess.run([binary, "fit", "--data", files["train.csv"], "--target", head[-1], "--kernel", expr,
                      "--noise", "0.02", "--no-optimize", "--out", files["model.json"]],
                     capture_output=True, text=True, check=True)
subprocess.run([binary, "predict", "--model", files["model.json"], "--data", files["test.csv"],
                "--out", files["pred.csv"]], capture_output=True, check=True)
ours = json.loads(fit.stdout)["lml"]
pred = np.genfromtxt(files["pred.csv"], delimiter=",", skip_header=1)
print(json.dumps({
    "lml_trustgp": ours, "lml_sklearn": gp.log_marginal_likelihood_value_,
    "lml_rel_diff": abs(ours / gp.log_marginal_likelihood_value_ - 1),
    "mean_max_rel_diff": float(np.max(np.abs(pred[:, 0] / mean - 1))),
    "std_max_rel_diff": float(np.max(np.abs(pred[:, 1] / std - 1))),
}))
