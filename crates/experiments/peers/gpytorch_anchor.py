"""Peer timing: a GPyTorch exact GP on the rows and start of `../shared/bench/sklearn_anchor.py`.

Usage (after `pip install gpytorch scipy`; Python is used only to run the peer):
    python crates/experiments/peers/gpytorch_anchor.py ../shared/data/uci_kin8nm/data.csv 500,1000,2000

The first N rows of the CSV (last column = target) in the order
`np.random.default_rng(0).permutation(len(data))`, inputs and target z-scored with population
statistics, as the scikit-learn anchor and `experiments bench-exact --order` use them. Model:
`ScaleKernel(RBFKernel(ARD))` plus a Gaussian likelihood, float64, started at outputscale 1,
lengthscales 1 and noise 0.1; exact Cholesky at every size (GPyTorch's default switches to
conjugate gradients above 800 rows, which would not be the same computation). Hyperparameters
are fitted by SciPy's L-BFGS-B with its default tolerances on the negated log marginal
likelihood and its autograd gradient, as BoTorch's `fit_gpytorch_mll` does. Prints one JSON
line per N: seconds per LML+gradient at the start (median of `--reps`), fit seconds,
evaluations and the final log marginal likelihood (summed over rows, comparable with
trustgp's and scikit-learn's).
"""
import json, sys, time
import numpy as np
import scipy.optimize
import torch
import gpytorch

torch.set_default_dtype(torch.float64)
path = sys.argv[1]
sizes = [int(s) for s in sys.argv[2].split(",")]
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
data = np.genfromtxt(path, delimiter=",", skip_header=1)
data = data[np.random.default_rng(0).permutation(len(data))]


class Exact(gpytorch.models.ExactGP):
    def __init__(self, x, y, likelihood):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ZeroMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.RBFKernel(ard_num_dims=x.shape[1])
        )

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(
            self.mean_module(x), self.covar_module(x)
        )


for n in sizes:
    X, y = data[:n, :-1], data[:n, -1]
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    x_t, y_t = torch.tensor(X), torch.tensor(y)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = Exact(x_t, y_t, likelihood)
    model.covar_module.outputscale = 1.0
    model.covar_module.base_kernel.lengthscale = torch.ones(1, X.shape[1])
    likelihood.noise = 0.1
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    params = [p for p in model.parameters() if p.requires_grad]
    model.train()
    likelihood.train()

    def set_flat(v):
        offset = 0
        with torch.no_grad():
            for p in params:
                k = p.numel()
                p.copy_(torch.tensor(v[offset : offset + k]).view_as(p))
                offset += k

    def negated(v):
        set_flat(v)
        for p in params:
            p.grad = None
        loss = -mll(model(x_t), y_t) * n
        loss.backward()
        grad = np.concatenate([p.grad.detach().numpy().ravel() for p in params])
        return loss.item(), grad

    with gpytorch.settings.max_cholesky_size(10**9), gpytorch.settings.fast_computations(
        log_prob=False, covar_root_decomposition=False, solves=False
    ):
        v0 = np.concatenate([p.detach().numpy().ravel() for p in params])
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            negated(v0)
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        res = scipy.optimize.minimize(negated, v0, jac=True, method="L-BFGS-B")
        fit_s = time.perf_counter() - t
    print(
        json.dumps(
            {
                "n": n,
                "torch_threads": torch.get_num_threads(),
                "sec_per_lml_grad": round(float(np.median(times)), 4),
                "fit_s": round(fit_s, 3),
                "evals": int(res.nfev),
                "lml": -float(res.fun),
                "message": str(res.message),
            }
        ),
        flush=True,
    )
