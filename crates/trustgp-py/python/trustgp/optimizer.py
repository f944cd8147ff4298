"""Ask/tell Bayesian optimisation and safe learning over a box."""

from __future__ import annotations

import json

import numpy as np

from . import _core

_DIRECTIONS = ("maximize", "minimize")


def _bounds(bounds):
    """``[(name, lo, hi)]`` from a dict ``{name: (lo, hi)}`` or a list of ``(lo, hi)``."""
    if isinstance(bounds, dict):
        items = list(bounds.items())
    else:
        items = [(f"x{i}", b) for i, b in enumerate(bounds)]
    out = []
    for name, b in items:
        try:
            lo, hi = (float(v) for v in b)
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds: the bound of '{name}' must be a pair (lo, hi) of numbers, got {b!r}"
            ) from None
        out.append((str(name), lo, hi))
    return out


def _as_2d(a, what):
    """``a`` as a float64 matrix; a 1-D array is one column."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{what}: expected a 2-D array, got {a.ndim} dimensions")
    return a


class BayesianOptimizer:
    """Ask/tell Bayesian optimisation of a black box over a box, or safe learning of it.

    Without ``constraints`` this is the library's ``BayesOpt`` (``trustgp suggest``): a seeded
    Sobol design for the first ``n_init`` evaluations, then the surrogate's acquisition
    (``ask(n)`` proposes a batch of ``n``). With ``constraints`` it is safe learning
    (``trustgp suggest --constraint``): every point proposed is certified safe by the models,
    starting from told points known to be safe; ``sources`` transfer what related tasks
    showed. Every random step is seeded by ``seed``.

    Parameters
    ----------
    bounds : dict of name -> (lo, hi), or list of (lo, hi)
        The box (inputs unnamed in a list are called ``x0, x1, …``).
    direction : {"maximize", "minimize"}, default="maximize"
        Whether the objective is maximised or minimised.
    acquisition : str or None, default=None
        Without constraints: ``logei`` (default), ``ei``, ``pi``, ``ucb``, ``qlogei``, ``ts``.
        With constraints: ``entropy`` (safe active learning, default), ``logei`` or ``ucb``
        (safe optimisation).
    model : str, default="gp"
        The surrogate, any single-output model of the library (without constraints).
    method : str, default="standard"
        ``standard``, ``turbo``, ``eulbo``, ``eulbo-turbo``, ``dpp``, ``dpp-turbo``.
    n_init : int, default=10
        Evaluations of the initial design (without constraints).
    constraints : list of str or None, default=None
        Safety constraints ``"COLUMN<=V"`` or ``"COLUMN>=V"`` on the objective (named
        ``target``) or on other measured columns; ``tell`` then takes one column per name of
        ``output_names_``.
    sources : list of (X, Y) or None, default=None
        Evaluations of related tasks (same inputs and output columns) to transfer from.
    transfer : str or None, default=None
        ``none``, ``efficient-hgp`` (default with sources), ``hgp``, ``lmc``, ``source-prior``.
    pool : array-like of shape (n_candidates, n_inputs) or None, default=None
        Safe learning: propose from these candidates instead of the whole box.
    beta : float or None, default=None
        Safe learning: the confidence scale of the safe set (library default when None).
    seed : int, default=0
        Seed of the design, the fits and the optimiser.
    target : str, default="y"
        The objective's name.
    robust_centre : {"prior", "loo"}, default="prior"
        Where the robust surrogates (rcgp, rcagp) centre their weights.
    expert_mean : None, "off", float or "corrections", default=None
        The expert-guided robust prior mean of the robust surrogates (rcgp, rcsvgp, rcagp;
        RCaGP paper §5): a float is a constant mean in the objective's units; ``"corrections"``
        builds it from the corrections given to :meth:`correct`. None or ``"off"``: none.
    """

    def __init__(
        self,
        bounds,
        direction="maximize",
        acquisition=None,
        model="gp",
        constraints=None,
        sources=None,
        seed=0,
        *,
        method="standard",
        n_init=10,
        transfer=None,
        pool=None,
        beta=None,
        target="y",
        robust_centre="prior",
        expert_mean=None,
    ):
        if direction not in _DIRECTIONS:
            raise ValueError(
                f"direction: unknown direction {direction!r} (expected maximize or minimize)"
            )
        self.bounds = _bounds(bounds)
        self.direction = direction
        self.acquisition = acquisition
        self.model = model
        self.constraints = list(constraints or [])
        self.sources = [
            (_as_2d(x, "sources X"), _as_2d(y, "sources Y")) for x, y in (sources or [])
        ]
        self.seed = int(seed)
        self.method = method
        self.n_init = n_init
        self.transfer = transfer
        self.pool = None if pool is None else _as_2d(pool, "pool")
        self.beta = beta
        self.target = target
        self.robust_centre = robust_centre
        self.expert_mean = expert_mean
        self.safe = bool(self.constraints or self.sources or transfer or pool is not None)
        if self.safe:
            if not self.constraints:
                raise ValueError(
                    "sources, transfer and pool are for safe learning: give at least one "
                    'constraint "COLUMN<=VALUE" (or >=)'
                )
            for name, value in (("model", model), ("method", method)):
                default = "gp" if name == "model" else "standard"
                if value != default:
                    raise ValueError(
                        f"{name} {value!r} is not available with constraints (the safe "
                        "models are chosen by transfer)"
                    )
            # The objective first, then each constrained column once, as the CLI orders them.
            self._parsed = [_core.parse_constraint(str(c)) for c in self.constraints]
            names = [target]
            for column, _, _ in self._parsed:
                if column not in names:
                    names.append(column)
            self.output_names_ = names
            self._x = np.empty((0, len(self.bounds)))
            self._outputs = np.empty((0, len(names)))
            self._asks = 0
        else:
            self.output_names_ = [target]
            settings = {
                "bounds": [{"name": n, "lo": lo, "hi": hi} for n, lo, hi in self.bounds],
                "target": target,
                "minimize": direction == "minimize",
                "model": model,
                "acquisition": acquisition or "logei",
                "method": method,
                "n_init": n_init,
                "seed": self.seed,
                "robust_centre": robust_centre,
            }
            expert = _expert_prior(expert_mean)
            if expert is not None:
                settings["expert_mean"] = expert
            self._run = _core.BayesOpt(json.dumps(settings))

    @property
    def input_names_(self):
        """The names of the inputs, in the order of the columns of ``X``."""
        return [n for n, _, _ in self.bounds]

    def ask(self, n=1):
        """The next ``n`` points to evaluate.

        Parameters
        ----------
        n : int, default=1
            Batch size (safe learning proposes one point at a time).

        Returns
        -------
        X : ndarray of shape (n, n_inputs)
        """
        if not self.safe:
            points, self.last_acquisition_, self.last_region_ = self._run.ask(int(n))
            return points
        if n != 1:
            raise ValueError(
                f"safe learning proposes one point at a time (n = 1), asked for {n}"
            )
        s = _core.safe_suggest(
            [(lo, hi) for _, lo, hi in self.bounds],
            self._x,
            self._outputs,
            self.output_names_,
            [str(c) for c in self.constraints],
            sources=self.sources,
            pool=self.pool,
            acquisition_name=self.acquisition or "entropy",
            minimize=self.direction == "minimize",
            transfer=self.transfer,
            beta=self.beta,
            seed=self.seed + self._asks,
        )
        self._asks += 1
        self.last_acquisition_ = s["acquisition"]
        self.last_suggestion_ = s
        return np.asarray([s["x"]], dtype=np.float64)

    def correct(self, index, value):
        """The expert's corrected value of observation ``index`` (0-based, in the order told)
        for the expert-guided prior mean (``expert_mean="corrections"``)."""
        if self.safe:
            raise ValueError("correct: expert corrections apply to Bayesian optimisation runs")
        self._run.correct(int(index), float(value))
        return self

    def tell(self, X, y):
        """Record evaluations.

        Parameters
        ----------
        X : array-like of shape (m, n_inputs)
            The points evaluated.
        y : array-like of shape (m,) or (m, len(output_names_))
            Their values: the objective, and with constraints one column per name of
            ``output_names_`` (the objective first).
        """
        d = len(self.bounds)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(1, -1) if X.size == d else X.reshape(-1, 1)
        y = np.asarray(y, dtype=np.float64)
        if not self.safe:
            self._run.tell(np.ascontiguousarray(X), np.ascontiguousarray(y.reshape(-1)))
            return self
        k = len(self.output_names_)
        y = y.reshape(-1, k) if y.ndim == 1 and (k > 1 or y.size == X.shape[0]) else y
        if X.ndim != 2 or X.shape[1] != d:
            raise ValueError(f"tell: X must have {d} columns ({', '.join(self.input_names_)})")
        if y.ndim != 2 or y.shape != (X.shape[0], k):
            raise ValueError(
                f"tell: y must have one row per point and {k} columns "
                f"({', '.join(self.output_names_)}), got shape {y.shape}"
            )
        if not np.all(np.isfinite(y)):
            raise ValueError("tell: every value of y must be finite")
        lo = np.array([b[1] for b in self.bounds])
        hi = np.array([b[2] for b in self.bounds])
        outside = ~((X >= lo) & (X <= hi))
        if outside.any():
            i, j = np.argwhere(outside)[0]
            raise ValueError(
                f"tell: point {i + 1}, input '{self.input_names_[j]}': {X[i, j]} is not "
                f"inside [{lo[j]}, {hi[j]}]"
            )
        self._x = np.vstack([self._x, X])
        self._outputs = np.vstack([self._outputs, y])
        return self

    @property
    def X_(self):
        """The points told, in order."""
        return self._x.copy() if self.safe else self._run.x

    @property
    def y_(self):
        """The values told (safe learning: every output column)."""
        return self._outputs.copy() if self.safe else self._run.y

    def best(self):
        """The best told point and its objective value (safe learning: among rows that
        satisfy every constraint)."""
        X, y = self.X_, self.y_
        values = y[:, 0] if y.ndim == 2 else y
        if len(values) == 0:
            raise ValueError("best: nothing has been told yet")
        ok = np.ones(len(values), dtype=bool)
        if self.safe:
            for column, lower, upper in self._parsed:
                v = y[:, self.output_names_.index(column)]
                ok &= (v >= (-np.inf if lower is None else lower)) & (
                    v <= (np.inf if upper is None else upper)
                )
            if not ok.any():
                raise ValueError("best: no told point satisfies every constraint")
        sign = -1.0 if self.direction == "minimize" else 1.0
        i = np.flatnonzero(ok)[np.argmax(sign * values[ok])]
        return X[i].copy(), float(values[i])

    def state_dict(self):
        """The whole run as plain data (JSON-serialisable); ``load_state_dict`` resumes it."""
        if not self.safe:
            return {"kind": "bayes_opt", "state": json.loads(self._run.to_json())}
        return {
            "kind": "safe",
            "bounds": self.bounds,
            "output_names": self.output_names_,
            "constraints": self.constraints,
            "X": self._x.tolist(),
            "y": self._outputs.tolist(),
            "asks": self._asks,
            "seed": self.seed,
        }

    def load_state_dict(self, state):
        """Resume the run stored by ``state_dict`` (the library checks the state)."""
        kind = state.get("kind")
        if kind == "bayes_opt" and not self.safe:
            self._run = _core.BayesOpt.from_json(json.dumps(state["state"]))
        elif kind == "safe" and self.safe:
            same = (
                [tuple(b) for b in state["bounds"]] == [tuple(b) for b in self.bounds]
                and list(state["output_names"]) == self.output_names_
                and list(state["constraints"]) == self.constraints
                and int(state["seed"]) == self.seed
            )
            if not same:
                raise ValueError(
                    "load_state_dict: the state's bounds, outputs, constraints or seed differ "
                    "from this optimizer's"
                )
            x = np.asarray(state["X"], dtype=np.float64).reshape(-1, len(self.bounds))
            y = np.asarray(state["y"], dtype=np.float64).reshape(-1, len(self.output_names_))
            self._x, self._outputs = np.empty((0, x.shape[1])), np.empty((0, y.shape[1]))
            if len(x):
                self.tell(x, y)
            self._asks = int(state["asks"])
        else:
            raise ValueError(
                f"load_state_dict: a state of kind {kind!r} does not fit this optimizer "
                f"({'safe learning' if self.safe else 'Bayesian optimisation'})"
            )
        return self


def _expert_prior(expert_mean):
    """The library's JSON of an ``expert_mean`` argument (None when off)."""
    if expert_mean is None or (isinstance(expert_mean, str) and expert_mean == "off"):
        return None
    if isinstance(expert_mean, str):
        if expert_mean == "corrections":
            return {"kind": "corrections"}
        raise ValueError(
            f"expert_mean: {expert_mean!r} is not None, 'off', a number or 'corrections'"
        )
    if isinstance(expert_mean, bool):
        raise ValueError("expert_mean: a bool is not a mean (give a number or 'corrections')")
    try:
        return {"kind": "constant", "value": float(expert_mean)}
    except (TypeError, ValueError):
        raise ValueError(
            f"expert_mean: {expert_mean!r} is not None, 'off', a number or 'corrections'"
        ) from None
