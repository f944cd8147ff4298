"""Type stubs of the Rust extension module ``trustgp._core``."""

from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

__version__: str
MODEL_NAMES: list[str]
DEFAULT_KERNEL: str
allocator_tuned: bool

class Regressor:
    """A fitted regression model of the library (standardiser plus model)."""

    @staticmethod
    def fit(
        x: npt.NDArray[np.float64],
        y: npt.NDArray[np.float64],
        options: dict[str, Any],
        input_names: Optional[Sequence[str]] = None,
        target_names: Optional[Sequence[str]] = None,
        force: bool = False,
    ) -> "Regressor":
        """Fit to ``x`` (n × d) and ``y`` (n × T, NaN = missing); ``options`` keyed by the
        library's option names (``model``, ``kernel``, ``noise``, …, ``seed``)."""
    @staticmethod
    def from_json(text: str, n: int) -> "Regressor":
        """The model of a model file's text, fitted on ``n`` rows."""
    def to_json(self) -> str:
        """The model file's text."""
    def summary_json(self) -> str:
        """The fit summary (the JSON object ``trustgp fit`` prints)."""
    def predict(
        self, x: npt.NDArray[np.float64], latent: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Mean and standard deviation, n × T each."""
    def predict_joint(
        self, x: npt.NDArray[np.float64], output: int = 0, latent: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Joint mean (m) and covariance (m × m) of one output."""
    @property
    def model(self) -> str: ...
    @property
    def inputs(self) -> list[str]: ...
    @property
    def targets(self) -> list[str]: ...
    @property
    def n(self) -> int: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def fit_seconds(self) -> float: ...

class Classifier:
    """A fitted GP classifier of the library (input standardiser plus model)."""

    @staticmethod
    def fit(
        x: npt.NDArray[np.float64],
        labels: Sequence[str],
        options: dict[str, Any],
        input_names: Optional[Sequence[str]] = None,
    ) -> "Classifier":
        """Fit to ``x`` (n × d) and one label (text) per row; ``options`` keyed by ``kernel``,
        ``likelihood``, ``inference``, ``restarts``, ``seed``, ``optimize``, ``standardize``."""
    @staticmethod
    def from_json(text: str, n: int) -> "Classifier":
        """The classifier of a model file's text, fitted on ``n`` rows."""
    def to_json(self) -> str:
        """The model file's text."""
    def summary_json(self) -> str:
        """The fit summary (the JSON object ``trustgp fit --model gpc`` prints)."""
    def predict_proba(
        self, x: npt.NDArray[np.float64], logit_integral: str = "quadrature"
    ) -> npt.NDArray[np.float64]:
        """Class probabilities, n × classes in the order of ``classes``."""
    @property
    def classes(self) -> list[str]: ...
    @property
    def n(self) -> int: ...
    @property
    def warnings(self) -> list[str]: ...

def verify_regressor(
    model: Regressor,
    x: npt.NDArray[np.float64],
    radius: float,
    quantity: str = "mean",
    output: int = 0,
    features: Optional[Sequence[int]] = None,
    delta: Optional[float] = None,
    tolerance: float = 0.01,
    max_iterations: int = 10000,
    time_limit: Optional[float] = None,
) -> dict[str, Any]:
    """Certified bounds around each row of ``x`` (``trustgp verify``)."""

class BayesOpt:
    """The library's ask/tell Bayesian optimisation run."""

    def __init__(self, settings_json: str) -> None: ...
    @staticmethod
    def from_json(text: str) -> "BayesOpt": ...
    def to_json(self) -> str: ...
    def ask(
        self, q: int
    ) -> tuple[
        npt.NDArray[np.float64], Optional[float], Optional[tuple[list[float], list[float]]]
    ]: ...
    def tell(self, x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> None: ...
    def correct(self, index: int, value: float) -> None: ...
    @property
    def x(self) -> npt.NDArray[np.float64]: ...
    @property
    def y(self) -> npt.NDArray[np.float64]: ...
    def settings_json(self) -> str: ...

def parse_constraint(text: str) -> tuple[str, Optional[float], Optional[float]]: ...
def safe_suggest(
    bounds: Sequence[tuple[float, float]],
    x: npt.NDArray[np.float64],
    outputs: npt.NDArray[np.float64],
    output_names: Sequence[str],
    constraints: Sequence[str],
    sources: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = ...,
    pool: Optional[npt.NDArray[np.float64]] = None,
    acquisition_name: str = "entropy",
    minimize: bool = False,
    transfer: Optional[str] = None,
    beta: Optional[float] = None,
    seed: int = 0,
) -> dict[str, Any]: ...
