"""trustgp: trustworthy Gaussian processes from Python.

The estimators are thin scikit-learn layers over the trustgp Rust library (``trustgp._core``):
the options, their defaults and their validation are the library's, so a model fitted here
gives the same numbers as ``trustgp fit`` on the same data and seed.

Classes
-------
GaussianProcessRegressor
    Every regression model of the library (``gp``, ``rcgp``, ``mogp``, ``mo-rcgp``, ``sgpr``,
    ``svgp``, ``rcsvgp``, ``cagp``, ``rcagp``, ``rrp``, ``vbks``) as a scikit-learn regressor.
GaussianProcessClassifier
    GP classification (Laplace or EP; logit or probit) as a scikit-learn classifier.
BayesianOptimizer
    Ask/tell Bayesian optimisation, and safe learning (with transfer from source tasks) when
    constraints are given.

Functions
---------
verify
    Certified bounds of a fitted regressor's mean or variance around points (``trustgp
    verify``).

Notes
-----
Importing the package tunes glibc's allocator as the command-line tool does (freed matrices are
kept for reuse, up to 1 GiB; see ``trustgp::linalg::reuse_freed_memory``), which makes
repeated fits at a few thousand rows about a quarter faster. Set the environment variable
``TRUSTGP_KEEP_ALLOCATOR`` before importing to leave the allocator alone.
"""

from ._core import DEFAULT_KERNEL, MODEL_NAMES, __version__
from .classifier import GaussianProcessClassifier
from .optimizer import BayesianOptimizer
from .regressor import GaussianProcessRegressor
from .verify import verify

__all__ = [
    "BayesianOptimizer",
    "DEFAULT_KERNEL",
    "GaussianProcessClassifier",
    "GaussianProcessRegressor",
    "MODEL_NAMES",
    "__version__",
    "verify",
]
