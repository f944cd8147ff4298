"""Shared fixtures: seeded data and the CLI binary built from the same sources."""

import os
import pathlib
import shutil

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture
def data():
    """A seeded 2-D regression problem (not one of the library's bundled data sets)."""
    rng = np.random.default_rng(20261126)
    X = rng.uniform(-3.0, 3.0, size=(80, 2))
    y = np.sin(1.3 * X[:, 0]) * np.cos(0.7 * X[:, 1]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=80)
    Xt = rng.uniform(-3.0, 3.0, size=(25, 2))
    return X, y, Xt


@pytest.fixture(scope="session")
def cli():
    """The `trustgp` binary: $TRUSTGP_CLI, else the workspace's release build, else on PATH.

    The CI builds it (`cargo test --release --workspace`) before running these tests; a
    missing binary is an error, not a skip, so that the comparison cannot silently vanish.
    """
    candidates = [os.environ.get("TRUSTGP_CLI"), str(REPO / "target" / "release" / "trustgp")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    found = shutil.which("trustgp")
    if found:
        return found
    raise RuntimeError(
        "the trustgp CLI was not found: build it with `cargo build --release` or set TRUSTGP_CLI"
    )
