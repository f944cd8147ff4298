"""The scikit-learn regressor over every regression model of trustgp."""

from __future__ import annotations

import json
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted

from . import _core

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(estimator, X, **kwargs):
        return estimator._validate_data(X, **kwargs)


# Constructor parameters passed to the library under the same name (``random_state`` is its
# ``seed``).
_LIBRARY_OPTIONS = (
    "model",
    "kernel",
    "noise",
    "mean",
    "restarts",
    "optimize",
    "standardize",
    "epsilon",
    "weight",
    "shared_noise",
    "rank",
    "inducing",
    "actions",
    "action_kind",
    "likelihood",
    "optimizer",
    "iterations",
    "lr",
    "batch_size",
    "free_noise",
    "kernels",
    "top",
    "epochs",
    "mode",
    "period_init",
)

# Per-output summary fields that every model has (the others become ``…_`` attributes).
_COMMON_PER_OUTPUT = {"target", "kernel", "noise", "objective", "mean", "starts", "n_train",
                      "missing_target_rows"}


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian process regression with any model of the trustgp library.

    Every option is the library's (the flags of ``trustgp fit``); ``None`` means the library's
    default, and the library checks every value and says which option is wrong (as a
    ``ValueError``). Inputs and targets are standardised with the training statistics unless
    ``standardize=False``; predictions are in the units of ``y``.

    Parameters
    ----------
    model : str, default="gp"
        One of ``trustgp.MODEL_NAMES``: ``gp`` (exact), ``rcgp`` (robust conjugate), ``mogp``
        and ``mo-rcgp`` (multi-output, all columns of ``y`` jointly), ``sgpr``, ``svgp``,
        ``rcsvgp`` (sparse), ``cagp``, ``rcagp`` (computation-aware), ``rrp`` (relevance
        pursuit), ``vbks`` (kernel selection: a model average over candidate kernels).
    kernel : str or None, default=None
        A kernel expression such as ``"const * se"`` (the default of the single-output models;
        the multi-output models default to ``"se"``, one expression per LMC term separated by
        ``;``). Hyperparameters can be given, e.g. ``"const(var=2) * se(ls=[0.5, 1])"``.
    noise : float or None, default=None
        The initial (with ``optimize=False``: fixed) noise variance, in standardised units
        unless ``standardize=False``.
    mean : {"zero", "constant", "linear"} or None, default=None
        The prior mean (default: zero for the exact and robust models, constant otherwise).
    restarts : int, default=0
        Random restarts of the hyperparameter optimisation besides the initial start.
    optimize : bool, default=True
        Optimise the hyperparameters; ``False`` keeps those of ``kernel`` and ``noise`` (as
        scikit-learn's ``optimizer=None``).
    standardize : bool, default=True
        Z-score inputs and targets with the training statistics.
    epsilon : float, list of float or None, default=None
        Robust models: the expected outlier fraction (one, or one per output).
    weight, shared_noise, rank
        MO-RCGP's weight (``"morcgp"`` or ``"rcgp"``); multi-output models' shared noise and
        coregionalisation rank.
    inducing, actions, action_kind, likelihood, optimizer, iterations, lr, batch_size, free_noise
        Settings of the sparse, variational and computation-aware models (see ``trustgp fit
        --help``).
    kernels : str or None, default=None
        ``vbks``: the candidate kernels, a grammar name (``"k144"``, ``"k12"``, see ``trustgp
        kernels``) or a ``;``-separated list of expressions.
    top : int or None, default=None
        ``vbks``: how many of the best candidates the model averages.
    epochs : int or None, default=None
        ``vbks``: passes of the selection's training over the data.
    mode : {"point", "full"} or None, default=None
        ``vbks``: hyperparameters as point estimates (``"point"``, the default) or with a
        Gaussian posterior over each kernel's log-hyperparameters (``"full"``).
    period_init : {"data", "unit"} or None, default=None
        ``vbks``: where each PER factor's period starts: ``"data"`` (``None`` means it) reads
        it off the training series' periodogram peaks that pass Fisher's g-test at level
        0.01 (one input column); ``"unit"`` is the spec's period 1 in standardised units.
        The fitted ``period_init_`` reports the rule, the periods (in the input's units) and
        their p-values, or that no peak was significant.
    random_state : int, default=0
        The seed of every random step (restarts, inducing points, minibatches).
    force : bool, default=False
        Fit even when the library estimates that the fit does not fit in memory.

    Attributes
    ----------
    kernel_ : str
        The fitted kernel expression (it parses back to the same kernel).
    log_marginal_likelihood_value_ : float or None
        The log marginal likelihood of the (standardised) training targets for ``gp`` and
        ``mogp``; ``None`` for models trained by another objective (see ``objective_``).
    objective_ : dict
        The training objective's ``name`` and ``value``.
    noise_ : ndarray of shape (n_outputs,)
        The fitted noise variance of each output (model units).
    summary_ : dict
        The fit summary, the JSON object ``trustgp fit`` prints.
    per_output_ : list of dict
        Each output's part of the summary (kernel, noise and the model's extras: ``epsilon``,
        ``soft_threshold``, ``downweighted``, ``inducing``, ``actions``, …).
    terms_ : list of dict
        Multi-output models: each LMC term's kernel and coregionalisation matrix.
    epsilon_, soft_threshold_, downweighted_, inducing_, actions_, action_kind_, likelihood_, \
    support_, training_, kernel_posterior_, model_average_, period_init_
        The model's extras where it has them (a value for one output, a list over outputs).
    fit_warnings_ : list of str
        What the library says the user should know about the fit (also issued as warnings).
    n_features_in_ : int
        Number of input columns.
    """

    def __init__(
        self,
        model="gp",
        kernel=None,
        *,
        noise=None,
        mean=None,
        restarts=0,
        optimize=True,
        standardize=True,
        epsilon=None,
        weight=None,
        shared_noise=False,
        rank=None,
        inducing=None,
        actions=None,
        action_kind=None,
        likelihood=None,
        optimizer=None,
        iterations=None,
        lr=None,
        batch_size=None,
        free_noise=False,
        kernels=None,
        top=None,
        epochs=None,
        mode=None,
        period_init=None,
        random_state=0,
        force=False,
    ):
        self.model = model
        self.kernel = kernel
        self.noise = noise
        self.mean = mean
        self.restarts = restarts
        self.optimize = optimize
        self.standardize = standardize
        self.epsilon = epsilon
        self.weight = weight
        self.shared_noise = shared_noise
        self.rank = rank
        self.inducing = inducing
        self.actions = actions
        self.action_kind = action_kind
        self.likelihood = likelihood
        self.optimizer = optimizer
        self.iterations = iterations
        self.lr = lr
        self.batch_size = batch_size
        self.free_noise = free_noise
        self.kernels = kernels
        self.top = top
        self.epochs = epochs
        self.mode = mode
        self.period_init = period_init
        self.random_state = random_state
        self.force = force

    def _options(self):
        options = {name: getattr(self, name) for name in _LIBRARY_OPTIONS}
        seed = self.random_state
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(
                f"random_state: expected an integer seed (every random step of trustgp is "
                f"seeded), got {seed!r}"
            )
        options["seed"] = None if seed is None else int(seed)
        if isinstance(options["epsilon"], np.ndarray):
            options["epsilon"] = options["epsilon"].tolist()
        return options

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs (finite).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Training targets; NaN marks a missing value (each output is fitted on its observed
            rows; the multi-output models use every observed entry).

        Returns
        -------
        self : GaussianProcessRegressor
            The fitted estimator.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = _validate_data(self, X, dtype=np.float64, reset=True)
        y = check_array(
            y, ensure_2d=False, dtype=np.float64, ensure_all_finite="allow-nan", input_name="y"
        )
        check_consistent_length(X, y)
        if y.ndim > 2:
            raise ValueError(f"y must be 1-D or 2-D, got {y.ndim} dimensions")
        self._y_ndim = y.ndim
        y2 = y.reshape(-1, 1) if y.ndim == 1 else y
        names = getattr(self, "feature_names_in_", None)
        self._model = _core.Regressor.fit(
            X,
            y2,
            self._options(),
            input_names=None if names is None else [str(n) for n in names],
            force=bool(self.force),
        )
        self._set_fitted_attributes()
        for w in self.fit_warnings_:
            warnings.warn(w, stacklevel=2)
        return self

    def _set_fitted_attributes(self):
        summary = json.loads(self._model.summary_json())
        self.summary_ = summary
        self.kernel_ = summary["kernel"]
        self.objective_ = summary["objective"]
        self.log_marginal_likelihood_value_ = summary.get("lml")
        self.noise_ = np.asarray(summary["noise"], dtype=np.float64)
        self.per_output_ = summary.get("per_output", [])
        self.terms_ = summary.get("terms", [])
        self.fit_warnings_ = list(self._model.warnings)
        # The model's extras (epsilon, soft_threshold, downweighted, inducing, actions, …) as
        # attributes: a value for one output, a list over outputs for several.
        for key in sorted({k for out in self.per_output_ for k in out} - _COMMON_PER_OUTPUT):
            values = [out.get(key) for out in self.per_output_]
            setattr(self, f"{key}_", values[0] if len(values) == 1 else values)

    def _check_X(self, X):
        check_is_fitted(self, "_model")
        return _validate_data(self, X, dtype=np.float64, reset=False)

    def _squeeze(self, a):
        return a[:, 0] if self._y_ndim == 1 else a

    def predict(self, X, return_std=False, return_cov=False, latent=False):
        """Predict with the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query inputs.
        return_std : bool, default=False
            Also return the predictive standard deviation.
        return_cov : bool, default=False
            Also return the joint predictive covariance (not together with ``return_std``).
        latent : bool, default=False
            Standard deviation and covariance of the latent function (without the observation
            noise), as scikit-learn's when its kernel has no ``WhiteKernel``; by default those
            of a new noisy observation, as ``trustgp predict``.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        y_std : ndarray of the same shape, if ``return_std``
        y_cov : ndarray of shape (n_samples, n_samples) or (n_samples, n_samples, n_outputs),
            if ``return_cov``
        """
        if return_std and return_cov:
            raise RuntimeError(
                "At most one of return_std or return_cov can be requested."
            )
        X = self._check_X(X)
        if return_cov:
            joints = [
                self._model.predict_joint(X, output=t, latent=latent)
                for t in range(len(self._model.targets))
            ]
            mean = np.stack([m for m, _ in joints], axis=1)
            cov = np.stack([c for _, c in joints], axis=2)
            if self._y_ndim == 1:
                return mean[:, 0], cov[:, :, 0]
            return mean, cov
        mean, std = self._model.predict(X, latent=latent)
        if return_std:
            return self._squeeze(mean), self._squeeze(std)
        return self._squeeze(mean)

    def sample_y(self, X, n_samples=1, random_state=0, latent=True):
        """Draw samples of the posterior at ``X`` (as scikit-learn's ``sample_y``).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Query inputs.
        n_samples : int, default=1
            Samples per query point.
        random_state : int, RandomState instance or None, default=0
            numpy's generator of the samples (``sklearn.utils.check_random_state``).
        latent : bool, default=True
            Samples of the latent function (scikit-learn's convention); ``False`` adds the
            observation noise.

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples) or
            (n_samples_X, n_outputs, n_samples)
        """
        rng = check_random_state(random_state)
        mean, cov = self.predict(X, return_cov=True, latent=latent)
        if mean.ndim == 1:
            return rng.multivariate_normal(mean, cov, n_samples).T
        return np.stack(
            [
                rng.multivariate_normal(mean[:, t], cov[:, :, t], n_samples).T
                for t in range(mean.shape[1])
            ],
            axis=1,
        )

    def to_json(self):
        """The model file's text (what ``trustgp fit --out`` writes; ``trustgp predict`` reads it)."""
        check_is_fitted(self, "_model")
        return self._model.to_json()

    def __getstate__(self):
        state = self.__dict__.copy()
        model = state.pop("_model", None)
        if model is not None:
            state["_model_file"] = model.to_json()
            state["_model_n"] = model.n
        return state

    def __setstate__(self, state):
        state = dict(state)
        text = state.pop("_model_file", None)
        n = state.pop("_model_n", None)
        self.__dict__.update(state)
        if text is not None:
            self._model = _core.Regressor.from_json(text, n)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"multioutput": True}
