"""``trustgp.verify``: certified bounds of a fitted regressor's predictions around points."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from . import _core


def _index(value, names, what):
    """The position of ``value`` (a name or an integer index) among ``names``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if not 0 <= value < len(names):
            raise ValueError(f"{what} {value} is out of range: the model has {len(names)}")
        return int(value)
    if value in names:
        return names.index(value)
    raise ValueError(f"{what} {value!r} is not one of the model's ({', '.join(names)})")


def verify(
    estimator,
    X,
    radius,
    quantity="mean",
    *,
    output=0,
    features=None,
    delta=None,
    tolerance=0.01,
    max_iterations=10_000,
    time_limit=None,
):
    """Certified bounds of a fitted regressor's latent mean or variance near each row of ``X``.

    For each row ``x``, branch and bound (``trustgp verify``) bounds the quantity over the
    ℓ∞ box of half-width ``radius`` around ``x`` (data units): ``lower ≤ quantity ≤ upper``
    everywhere in the box (sound, rounded outward), and ``min_found``/``max_found`` are values
    attained at the concrete inputs ``argmin``/``argmax``. The numbers equal those of
    ``trustgp verify`` on the estimator's model file (``to_json``).

    Parameters
    ----------
    estimator : GaussianProcessRegressor
        A fitted model: ``gp``, ``rcgp``, ``sgpr``, ``svgp``, ``rcsvgp``, ``cagp``,
        ``rcagp``, ``rrp``, or ``mogp``/``mo-rcgp`` one output at a time (``output``).
    X : array-like of shape (n_points, n_features)
        The points to verify around.
    radius : float
        Half-width of the box in every free input, in the data's units.
    quantity : {"mean", "variance"}, default="mean"
        The latent mean or the latent variance.
    output : int or str, default=0
        The target to verify (index or name), for a model of several targets.
    features : sequence of int or str, optional
        The inputs that may move (indices or names); the others stay at ``x``. Default: all.
    delta : float, optional
        Decide whether the quantity moves at most ``delta`` from its value at ``x``
        (``certified``).
    tolerance : float, default=0.01
        Stop when each bound is within this of a value attained in the box.
    max_iterations : int, default=10000
        Maximum number of box splits per bound.
    time_limit : float, optional
        Seconds per bound (results then depend on the machine's speed).

    Returns
    -------
    result : dict
        Arrays with one entry per row of ``X``: ``value`` (the quantity at ``x``), ``lower``,
        ``upper``, ``min_found``, ``max_found``, ``gap`` (the larger certified gap of the two
        searches), ``argmin`` and ``argmax`` (n_points × n_features), ``iterations``,
        ``seconds``, ``certified`` (bool; ``None`` without ``delta``) and ``exit`` (list of the
        two searches' stopping reasons per row).
    """
    check_is_fitted(estimator, "_model")
    model = estimator._model
    if not isinstance(model, _core.Regressor):
        raise ValueError(
            f"verify takes a fitted trustgp GaussianProcessRegressor, got "
            f"{type(estimator).__name__}"
        )
    X = check_array(X, dtype=np.float64, input_name="X")
    free = None
    if features is not None:
        free = [_index(f, list(model.inputs), "feature") for f in features]
    return _core.verify_regressor(
        model,
        X,
        float(radius),
        quantity=quantity,
        output=_index(output, list(model.targets), "output"),
        features=free,
        delta=None if delta is None else float(delta),
        tolerance=float(tolerance),
        max_iterations=int(max_iterations),
        time_limit=None if time_limit is None else float(time_limit),
    )
