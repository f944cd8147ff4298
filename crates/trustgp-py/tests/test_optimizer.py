"""BayesianOptimizer: it beats random search (seeded), resumes from its state bit for bit,
runs safe learning with and without transfer, and refuses bad input with ValueError."""

import json

import numpy as np
import pytest

from trustgp import BayesianOptimizer


def branin(x):
    a, b, c = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi
    r, s, t = 6.0, 10.0, 1 / (8 * np.pi)
    return a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * np.cos(x[0]) + s


HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
HARTMANN3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
HARTMANN3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann3(x):
    """Hartmann-3 (minimum −3.86278 at (0.1146, 0.5556, 0.8525))."""
    inner = np.sum(HARTMANN3_A * (np.asarray(x) - HARTMANN3_P) ** 2, axis=1)
    return -float(np.sum(HARTMANN3_ALPHA * np.exp(-inner)))


def bo_best(f, bounds, budget, seed, q=1):
    opt = BayesianOptimizer(bounds, direction="minimize", n_init=5, seed=seed)
    while len(opt.y_) < budget:
        X = opt.ask(min(q, budget - len(opt.y_)))
        opt.tell(X, [f(x) for x in X])
    return opt.best()[1]


def random_best(f, bounds, budget, seed):
    rng = np.random.default_rng(seed)
    lo, hi = np.array(bounds).T
    return min(f(x) for x in rng.uniform(lo, hi, size=(budget, len(bounds))))


@pytest.mark.parametrize(
    "f, bounds, budget, optimum",
    [
        (branin, [(-5.0, 10.0), (0.0, 15.0)], 25, 0.397887),
        (hartmann3, [(0.0, 1.0)] * 3, 30, -3.86278),
    ],
)
def test_bayesian_optimisation_beats_random_search(f, bounds, budget, optimum):
    seeds = range(3)
    bo = [bo_best(f, bounds, budget, s) for s in seeds]
    rs = [random_best(f, bounds, budget, 100 + s) for s in seeds]
    # Regret: BO's is smaller on every seed and at least 5× smaller in the median.
    bo_regret = np.array(bo) - optimum
    rs_regret = np.array(rs) - optimum
    assert np.all(bo_regret < rs_regret), (bo, rs)
    assert np.median(bo_regret) * 5 < np.median(rs_regret), (bo, rs)


def test_batches_state_and_resume_bit_for_bit():
    bounds = {"a": (-5.0, 10.0), "b": (0.0, 15.0)}
    opt = BayesianOptimizer(bounds, direction="minimize", n_init=4, seed=11)
    for _ in range(3):
        X = opt.ask(2)
        assert X.shape == (2, 2)
        opt.tell(X, [branin(x) for x in X])
    state = json.loads(json.dumps(opt.state_dict()))
    resumed = BayesianOptimizer(bounds, direction="minimize", n_init=4, seed=11)
    resumed.load_state_dict(state)
    np.testing.assert_array_equal(resumed.ask(2), opt.ask(2))
    np.testing.assert_array_equal(resumed.X_, opt.X_)
    assert opt.input_names_ == ["a", "b"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bounds": [(1.0, 0.0)]}, "lo < hi"),
        ({"bounds": [(0.0, 1.0)], "model": "mogp"}, "multi-output"),
        ({"bounds": [(0.0, 1.0)], "acquisition": "best"}, "unknown variant"),
        ({"bounds": [(0.0, 1.0)], "direction": "up"}, "direction"),
        ({"bounds": [(0.0, 1.0)], "n_init": 0}, "n_init"),
        ({"bounds": [(0.0, 1.0)], "sources": [([[0.5]], [[1.0]])]}, "constraint"),
    ],
)
def test_bad_settings_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BayesianOptimizer(**kwargs)


def test_bad_tells_are_value_errors():
    opt = BayesianOptimizer([(0.0, 1.0), (0.0, 2.0)], seed=1)
    with pytest.raises(ValueError, match="not inside"):
        opt.tell([[0.5, 3.0]], [1.0])
    with pytest.raises(ValueError, match="not finite"):
        opt.tell([[0.5, 1.0]], [np.nan])
    with pytest.raises(ValueError, match="q ≥ 1"):
        opt.ask(0)
    with pytest.raises(ValueError, match="does not fit"):
        opt.load_state_dict({"kind": "safe"})


def safe_f(x):
    """A 1-D function with two safe regions (f ≥ 0) separated by an unsafe gap."""
    x = float(np.asarray(x).reshape(-1)[0])
    return np.sin(x) + 0.3 * np.sin(3 * x) + 0.1 * x


@pytest.mark.parametrize("with_source", [False, True])
def test_safe_learning_is_safe_and_transfer_reaches_the_other_safe_region(with_source):
    """f ≥ 0 holds on [−5.94, −3.32] and [0, 3.32] (and a sliver at the right end). From
    safe evaluations in the right region every proposal is safe; only a source task (f plus an
    offset) lets the learner cross the unsafe gap, as global safe learning by transfer should."""
    sources = []
    if with_source:
        xs = np.linspace(-6, 6, 30).reshape(-1, 1)
        sources = [(xs, np.array([[safe_f(x) + 0.05] for x in xs]))]
    opt = BayesianOptimizer(
        {"x": (-6.0, 6.0)}, constraints=["y>=0"], sources=sources, seed=3
    )
    start = np.linspace(0.3, 3.0, 8).reshape(-1, 1)
    opt.tell(start, [[safe_f(x)] for x in start])
    for _ in range(10):
        X = opt.ask()
        value = safe_f(X[0])
        assert value >= 0, (X, value)
        assert opt.last_suggestion_["safety_probability"][0] > 0.5
        opt.tell(X, [[value]])
    explored = opt.X_[8:, 0]
    if with_source:
        assert explored.min() < -3.4, explored
        assert opt.last_suggestion_["transfer"] == "efficient-hgp"
    else:
        assert np.all((explored > -0.01) & (explored < 3.33)), explored
        assert explored.max() - explored.min() > 2.5, explored
    state = opt.state_dict()
    again = BayesianOptimizer({"x": (-6.0, 6.0)}, constraints=["y>=0"], sources=sources, seed=3)
    again.load_state_dict(json.loads(json.dumps(state)))
    np.testing.assert_array_equal(again.ask(), opt.ask())
    assert opt.best()[1] == max(safe_f(x) for x in opt.X_)


def test_safe_learning_errors():
    opt = BayesianOptimizer({"x": (0.0, 1.0)}, constraints=["y<=1"])
    with pytest.raises(ValueError, match="at least one evaluated target row"):
        opt.ask()
    with pytest.raises(ValueError, match="one point at a time"):
        opt.ask(2)
    with pytest.raises(ValueError, match="columns"):
        opt.tell([[0.5]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="=<"):
        BayesianOptimizer({"x": (0.0, 1.0)}, constraints=["y=<1"])


def test_expert_guided_prior_mean():
    """The expert-guided mean of the robust surrogates: off and "corrections" without any
    correction propose the same point; a correction and a constant mean change the proposal;
    the setting and the corrections survive the JSON state; bad values are errors."""
    bounds = {"x1": (0.0, 1.0), "x2": (0.0, 1.0)}
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(12, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    y[4] += 6.0  # an outlier the expert will flag

    def run(**kw):
        opt = BayesianOptimizer(bounds, model="rcgp", seed=1, n_init=4, **kw)
        opt.tell(X, y)
        return opt

    plain = run().ask(1)
    waiting = run(expert_mean="corrections")
    np.testing.assert_array_equal(waiting.ask(1), plain)
    corrected = run(expert_mean="corrections").correct(4, y[4] - 6.0)
    state = json.loads(corrected._run.to_json())
    assert state["settings"]["expert_mean"] == {"kind": "corrections"}
    assert not np.array_equal(corrected.ask(1), plain)
    assert not np.array_equal(run(expert_mean=5.0).ask(1), plain)
    with pytest.raises(ValueError, match="expert_mean"):
        BayesianOptimizer(bounds, model="rcgp", expert_mean="sometimes")
    with pytest.raises(ValueError, match="robust models"):
        BayesianOptimizer(bounds, model="gp", expert_mean=1.0)
    with pytest.raises(ValueError, match="does not exist"):
        run(expert_mean="corrections").correct(99, 0.0)
