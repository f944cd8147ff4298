"""The scikit-learn classifier over trustgp's GP classification (``estimators::Classifier``)."""

from __future__ import annotations

import json
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import _core
from .regressor import _validate_data

# Constructor parameters passed to the library under the same name (``random_state`` is its
# ``seed``).
_LIBRARY_OPTIONS = ("kernel", "likelihood", "inference", "restarts", "optimize", "standardize")


class GaussianProcessClassifier(ClassifierMixin, BaseEstimator):
    """Gaussian process classification with the trustgp library (``trustgp fit --model gpc``).

    The options, defaults and checks are the library's; a wrong value is a ``ValueError``
    naming the option. Inputs are standardised with the training statistics unless
    ``standardize=False``. The classes are the sorted distinct labels (``classes_``);
    ``predict_proba`` has one column per class in that order. The number of classes is the
    library's business: a build with the softmax model accepts more than two.

    Parameters
    ----------
    likelihood : {"logit", "probit"}, default="logit"
        The link of the Bernoulli likelihood (``logit`` as scikit-learn).
    inference : {"laplace", "ep"}, default="laplace"
        The approximation of the latent posterior; EP needs the probit.
    kernel : str or None, default=None
        A kernel expression (default ``trustgp.DEFAULT_KERNEL``, ``"const * se"``);
        hyperparameters can be given, e.g. ``"const(var=2) * se(ls=[0.5, 1])"``.
    restarts : int, default=0
        Random restarts of the hyperparameter optimisation besides the initial start.
    optimize : bool, default=True
        Optimise the hyperparameters; ``False`` keeps those of ``kernel`` (as scikit-learn's
        ``optimizer=None``).
    standardize : bool, default=True
        Z-score the inputs with the training statistics (scikit-learn does not: use
        ``standardize=False`` to compare with it).
    logit_integral : {"quadrature", "erf_mixture"}, default="quadrature"
        How a binary logit model's class probability ``∫ σ(f) N(f; μ, v) df`` is computed:
        Gauss–Hermite quadrature (as ``trustgp predict``), or scikit-learn's mixture of five
        probits (off from the integral by up to about 1e-3; for agreement with scikit-learn).
    random_state : int, default=0
        The seed of the restarts.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted classes.
    kernel_ : str
        The fitted kernel expression (of the standardised inputs).
    log_marginal_likelihood_value_ : float
        The approximate log marginal likelihood of the fitted model.
    summary_ : dict
        The fit summary, the JSON object ``trustgp fit --model gpc`` prints.
    fit_warnings_ : list of str
        What the library says the user should know about the fit (also issued as warnings).
    n_features_in_ : int
        Number of input columns.
    """

    def __init__(
        self,
        likelihood="logit",
        inference="laplace",
        kernel=None,
        *,
        restarts=0,
        optimize=True,
        standardize=True,
        logit_integral="quadrature",
        random_state=0,
    ):
        self.likelihood = likelihood
        self.inference = inference
        self.kernel = kernel
        self.restarts = restarts
        self.optimize = optimize
        self.standardize = standardize
        self.logit_integral = logit_integral
        self.random_state = random_state

    def _options(self):
        options = {name: getattr(self, name) for name in _LIBRARY_OPTIONS}
        seed = self.random_state
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(
                f"random_state: expected an integer seed (every random step of trustgp is "
                f"seeded), got {seed!r}"
            )
        options["seed"] = None if seed is None else int(seed)
        return options

    def fit(self, X, y):
        """Fit the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs (finite).
        y : array-like of shape (n_samples,)
            Class labels (any type numpy can sort).

        Returns
        -------
        self : GaussianProcessClassifier
            The fitted estimator.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X, y = _validate_data(self, X, y=y, dtype=np.float64, reset=True)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        classes, index = np.unique(y, return_inverse=True)
        # The library sees each label as its text; two labels with the same text (1 and
        # "1") cannot be told apart there, so they are passed as their index instead.
        texts = [str(c) for c in classes]
        if len(set(texts)) != len(texts):
            texts = [str(i) for i in range(len(classes))]
        names = getattr(self, "feature_names_in_", None)
        self._model = _core.Classifier.fit(
            X,
            [texts[i] for i in index],
            self._options(),
            input_names=None if names is None else [str(n) for n in names],
        )
        self.classes_ = classes
        # The library sorts the texts (numerically when all read as numbers): the column of
        # each of ``classes_`` in its probabilities.
        self._columns = np.array([self._model.classes.index(t) for t in texts])
        summary = json.loads(self._model.summary_json())
        self.summary_ = summary
        self.kernel_ = summary["kernel"]
        self.log_marginal_likelihood_value_ = summary["lml"]
        self.fit_warnings_ = list(self._model.warnings)
        for w in self.fit_warnings_:
            warnings.warn(w, stacklevel=2)
        return self

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The probability of each class, columns in the order of ``classes_``.
        """
        check_is_fitted(self, "_model")
        X = _validate_data(self, X, dtype=np.float64, reset=False)
        p = self._model.predict_proba(X, logit_integral=self.logit_integral)
        return p[:, self._columns]

    def predict(self, X):
        """The most probable class of each row (the first of ``classes_`` on a tie).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "_model")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def to_json(self):
        """The model file's text (what ``trustgp fit --model gpc --out`` writes)."""
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
            self._model = _core.Classifier.from_json(text, n)
