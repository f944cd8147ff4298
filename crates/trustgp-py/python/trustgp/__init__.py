"""trustgp: trustworthy Gaussian processes from Python.

The estimators are thin scikit-learn layers over the trustgp Rust library (``trustgp._core``):
the options, their defaults and their validation are the library's, so a model fitted here
gives the same numbers as ``trustgp fit`` on the same data and seed.

Classes
-------
GaussianProcessRegressor
    Every regression model of the library (``gp``, ``rcgp``, ``mogp``, ``mo-rcgp``, ``sgpr``,
    ``svgp``, ``rcsvgp``, ``cagp``, ``rcagp``, ``rrp``) as a scikit-learn regressor.
BayesianOptimizer
    Ask/tell Bayesian optimisation, and safe learning (with transfer from source tasks) when
    constraints are given.

Notes
-----
Importing the package tunes glibc's allocator as the command-line tool does (freed matrices are
kept for reuse, up to 1 GiB; see ``trustgp::linalg::reuse_freed_memory``), which makes
repeated fits at a few thousand rows about a quarter faster. Set the environment variable
``TRUSTGP_KEEP_ALLOCATOR`` before importing to leave the allocator alone.
"""

from ._core import DEFAULT_KERNEL, MODEL_NAMES, __version__
from .optimizer import BayesianOptimizer
from .regressor import GaussianProcessRegressor

__all__ = [
    "BayesianOptimizer",
    "DEFAULT_KERNEL",
    "GaussianProcessRegressor",
    "MODEL_NAMES",
    "__version__",
]
