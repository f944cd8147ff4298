"""The scikit-learn regressor: scikit-learn's own checks, agreement with scikit-learn's exact GP
at fixed hyperparameters, the scikit-learn tooling, pickling, and errors."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import trustgp
from trustgp import GaussianProcessRegressor

# Checks scikit-learn itself skips here, and why (the test fails on any other skip).
EXPECTED_SKIPS = {
    # Only run when SCIPY_ARRAY_API=1: the estimator computes in Rust on float64 numpy arrays
    # and does not claim array-API support.
    "check_array_api_input",
    # Only run when pandas is installed (the CI installs it; a bare venv may not have it).
    "check_regressor_data_not_an_array",
}


@pytest.mark.parametrize("model", ["gp", "rcgp", "sgpr"])
def test_check_estimator_passes(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(GaussianProcessRegressor(model=model), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert skipped <= EXPECTED_SKIPS, skipped
    assert sum(r["status"] == "passed" for r in results) >= 45


def test_fixed_hyperparameters_agree_with_scikit_learn(data):
    """ConstantKernel * RBF with optimizer=None against kernel "const * se" with
    optimize=False, on raw (unstandardised) data: means, latent std and covariance, sample
    covariance and log marginal likelihood to 1e-6 (they agree far closer)."""
    X, y, Xt = data
    c, ls, alpha = 1.7, [0.9, 1.6], 0.03
    sk = SkGPR(
        ConstantKernel(c, "fixed") * RBF(ls, "fixed"), alpha=alpha, optimizer=None
    ).fit(X, y)
    ours = GaussianProcessRegressor(
        kernel=f"const(var={c!r}) * se(ls=[{ls[0]!r}, {ls[1]!r}])",
        noise=alpha,
        optimize=False,
        standardize=False,
    ).fit(X, y)
    m_sk, s_sk = sk.predict(Xt, return_std=True)
    m, s = ours.predict(Xt, return_std=True, latent=True)
    np.testing.assert_allclose(m, m_sk, rtol=0, atol=1e-6 * np.abs(m_sk).max())
    np.testing.assert_allclose(s, s_sk, rtol=1e-6)
    _, c_sk = sk.predict(Xt, return_cov=True)
    _, cov = ours.predict(Xt, return_cov=True, latent=True)
    np.testing.assert_allclose(cov, c_sk, rtol=0, atol=1e-6 * np.abs(c_sk).max())
    assert abs(ours.log_marginal_likelihood_value_ - sk.log_marginal_likelihood_value_) < 1e-6 * abs(
        sk.log_marginal_likelihood_value_
    )
    # A new observation's std adds the noise variance.
    _, s_obs = ours.predict(Xt, return_std=True)
    np.testing.assert_allclose(s_obs**2, s**2 + alpha, rtol=1e-10)
    # Samples follow the same distribution as scikit-learn's (same generator, same cov).
    a = ours.sample_y(Xt[:4], 3, random_state=7)
    b = sk.sample_y(Xt[:4], 3, random_state=7)
    assert a.shape == b.shape == (4, 3)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_covariance_diagonal_is_the_predicted_variance(data):
    X, y, Xt = data
    for model in ["gp", "rcgp", "sgpr"]:
        m = GaussianProcessRegressor(model=model).fit(X, y)
        for latent in [False, True]:
            mean, std = m.predict(Xt, return_std=True, latent=latent)
            mean2, cov = m.predict(Xt, return_cov=True, latent=latent)
            np.testing.assert_allclose(mean2, mean, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(np.diag(cov), std**2, rtol=1e-9, atol=1e-14)
            np.testing.assert_allclose(cov, cov.T, rtol=0, atol=1e-12)


def test_samples_have_the_predicted_mean_and_covariance(data):
    X, y, Xt = data
    m = GaussianProcessRegressor().fit(X, y)
    mean, cov = m.predict(Xt[:3], return_cov=True, latent=True)
    s = m.sample_y(Xt[:3], 20000, random_state=1)
    assert s.shape == (3, 20000)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(s.mean(axis=1) - mean) < 5 * sd / np.sqrt(20000))
    np.testing.assert_allclose(np.cov(s), cov, atol=0.05 * sd.max() ** 2)
    np.testing.assert_array_equal(m.sample_y(Xt[:3], 2, 5), m.sample_y(Xt[:3], 2, 5))


def test_multi_output_with_missing_targets():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(40, 1))
    Y = np.column_stack([np.sin(6 * X[:, 0]), np.sin(6 * X[:, 0]) + 0.5 * X[:, 0]])
    Y[::5, 1] = np.nan
    for model in ["mogp", "gp"]:
        m = GaussianProcessRegressor(model=model).fit(X, Y)
        mean, std = m.predict(X, return_std=True)
        assert mean.shape == std.shape == (40, 2)
        assert np.all(np.isfinite(mean)) and np.all(std > 0)
        # The held-out cells are predicted from the other output and the neighbours.
        truth = np.sin(6 * X[::5, 0]) + 0.5 * X[::5, 0]
        assert np.max(np.abs(mean[::5, 1] - truth)) < 0.1
        _, cov = m.predict(X[:5], return_cov=True)
        assert cov.shape == (5, 5, 2)
        assert m.sample_y(X[:5], 4).shape == (5, 2, 4)
    assert len(m.per_output_) == 2


def test_model_extras_are_attributes(data):
    X, y, _ = data
    y = y.copy()
    y[:4] += 25.0
    m = GaussianProcessRegressor(model="rcgp", epsilon=0.1).fit(X, y)
    assert m.log_marginal_likelihood_value_ is None
    assert m.objective_["name"] == "weighted_loo_cv"
    (out,) = m.per_output_
    assert out["epsilon"] == 0.1 and out["downweighted"] >= 4
    assert m.epsilon_ == 0.1 and m.downweighted_ == out["downweighted"]
    assert m.soft_threshold_ == out["soft_threshold"] > 0
    sparse = GaussianProcessRegressor(model="sgpr", inducing=12).fit(X, y)
    assert sparse.inducing_ == 12 and not hasattr(sparse, "epsilon_")
    assert m.noise_.shape == (1,)
    mo = GaussianProcessRegressor(model="mogp").fit(X, np.column_stack([y, -y]))
    assert len(mo.terms_) == 1 and len(mo.terms_[0]["coregionalization"]) == 2


def test_pipeline_cross_validation_and_grid_search(data):
    X, y, _ = data
    pipe = make_pipeline(StandardScaler(), GaussianProcessRegressor())
    scores = cross_val_score(pipe, X, y, cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,) and scores.min() > 0.9
    grid = GridSearchCV(
        GaussianProcessRegressor(),
        {"kernel": ["const * se", "const * matern52", "lin"]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, y)
    assert grid.best_params_["kernel"] != "lin"
    assert grid.best_estimator_.kernel_.startswith("const(")


def test_pickle_clone_and_params(data):
    X, y, Xt = data
    m = GaussianProcessRegressor(model="cagp", actions=20, random_state=4).fit(X, y)
    back = pickle.loads(pickle.dumps(m))
    for latent in [False, True]:
        np.testing.assert_array_equal(
            back.predict(Xt, return_std=True, latent=latent)[1],
            m.predict(Xt, return_std=True, latent=latent)[1],
        )
    assert back.kernel_ == m.kernel_ and back.summary_ == m.summary_
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "_model")
    c.set_params(model="gp", actions=None)
    assert c.fit(X, y).summary_["model"] == "gp"
    # An unfitted estimator pickles too.
    assert pickle.loads(pickle.dumps(GaussianProcessRegressor())).get_params()["model"] == "gp"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"model": "bogus"}, "--model bogus: unknown model"),
        ({"kernel": "se +"}, "--kernel 'se +'"),
        ({"kernel": "se(dims=[5])"}, "--kernel"),
        ({"model": "gp", "epsilon": 0.1}, "--epsilon 0.1: applies to"),
        ({"noise": -1.0}, "--noise -1"),
        ({"restarts": 10**7}, "--restarts"),
        ({"random_state": 1.5}, "random_state"),
        ({"model": "mogp", "rank": 3}, "--rank 3"),
    ],
)
def test_bad_options_are_value_errors_with_the_library_message(data, params, message):
    X, y, _ = data
    with pytest.raises(ValueError, match=None) as e:
        GaussianProcessRegressor(**params).fit(X, np.column_stack([y, y]) if "rank" in params else y)
    assert message in str(e.value)


def test_bad_data_is_a_value_error(data):
    X, y, Xt = data
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        GaussianProcessRegressor().fit(bad, y)
    with pytest.raises(ValueError, match="no observed"):
        GaussianProcessRegressor().fit(X, np.full_like(y, np.nan))
    m = GaussianProcessRegressor().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(Xt[:, :1])
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        trustgp._core.Regressor.fit(X, y.reshape(-1, 1), {"colour": "blue"})
    with pytest.raises(ValueError, match="restarts: expected"):
        trustgp._core.Regressor.fit(X, y.reshape(-1, 1), {"restarts": "many"})
    with pytest.raises(ValueError, match="row 2, column 'x0'"):
        trustgp._core.Regressor.fit(np.where(np.arange(80)[:, None] == 2, np.inf, X), y.reshape(-1, 1), {})
    with pytest.raises(ValueError, match="test input row 1"):
        m._model.predict(np.array([[0.0, 0.0], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="model file"):
        trustgp._core.Regressor.from_json('{"version": 99}', 3)


def test_vbks_options_reach_the_library_and_the_kernel_posterior_comes_back():
    x = np.linspace(0.0, 6.0, 40).reshape(-1, 1)
    y = np.sin(2.0 * x[:, 0]) + 0.3 * x[:, 0]
    model = GaussianProcessRegressor(
        "vbks", kernels="se; lin; se + lin", top=2, epochs=3, mode="point", random_state=2
    ).fit(x, y)
    posterior = model.kernel_posterior_
    assert posterior == model.summary_["per_output"][0]["kernel_posterior"]
    assert 1 <= len(posterior) <= 3 and all(k["kernel"] for k in posterior)
    probabilities = np.array([k["probability"] for k in posterior])
    assert np.all(probabilities >= 0.0) and probabilities.sum() <= 1.0 + 1e-12
    assert len(model.model_average_) == 2
    assert sum(k["weight"] for k in model.model_average_) == pytest.approx(1.0, abs=1e-12)
    # A bad value is the library's error, naming the option.
    with pytest.raises(ValueError, match="--top 0"):
        GaussianProcessRegressor("vbks", top=0).fit(x, y)
    with pytest.raises(ValueError, match="--mode fast"):
        GaussianProcessRegressor("vbks", mode="fast").fit(x, y)
    # Full-θ mode: each kept kernel is averaged over 16 samples of its q(θ).
    full = GaussianProcessRegressor(
        "vbks", kernels="se; se + lin", top=2, epochs=3, mode="full", random_state=2
    ).fit(x, y)
    assert len(full.model_average_) == 2 * 16
    assert sum(k["weight"] for k in full.model_average_) == pytest.approx(1.0, abs=1e-12)


def test_vbks_period_init_is_a_keyword_and_its_report_comes_back():
    # A cycle of period 0.75 (x units) over 8 cycles, with a trend and a little noise.
    rng = np.random.default_rng(5)
    x = np.linspace(0.0, 6.0, 200).reshape(-1, 1)
    y = np.sin(2.0 * np.pi * x[:, 0] / 0.75) + 0.2 * x[:, 0] + 0.1 * rng.standard_normal(200)
    params = dict(kernels="se; per + lin", top=2, epochs=2, inducing=10, random_state=1)
    data = GaussianProcessRegressor("vbks", **params).fit(x, y)
    report = data.period_init_
    assert report == data.summary_["per_output"][0]["period_init"]
    assert report["method"] == "data" and report["alpha"] == 0.01
    assert report["periods"][0]["period"] == pytest.approx(0.75, rel=0.02)
    assert report["periods"][0]["p_value"] < 1e-6
    # The spec's period 1 (standardised) is x's standard deviation in x's units.
    assert report["unit_period"][0]["period"] == pytest.approx(x.std(), rel=1e-12)
    explicit = GaussianProcessRegressor("vbks", period_init="data", **params).fit(x, y)
    assert explicit.period_init_ == report
    unit = GaussianProcessRegressor("vbks", period_init="unit", **params).fit(x, y)
    assert unit.period_init_["method"] == "unit" and unit.period_init_["periods"] == []
    assert clone(unit).get_params()["period_init"] == "unit"
    # White noise: no significant peak.
    white = np.random.default_rng(7).standard_normal(200)
    noise = GaussianProcessRegressor("vbks", **params).fit(x, white)
    assert noise.period_init_["periods"] == []
    assert "no significant periodogram peak" in noise.period_init_["note"]
    with pytest.raises(ValueError, match="--period-init fft: expected data or unit"):
        GaussianProcessRegressor("vbks", period_init="fft").fit(x, y)
    with pytest.raises(ValueError, match="--period-init unit: applies to vbks"):
        GaussianProcessRegressor("gp", period_init="unit").fit(x, y)
