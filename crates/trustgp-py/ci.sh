#!/usr/bin/env bash
# Build the trustgp wheel in a fresh virtual environment, install it and run its tests.
# Needs the CLI built first (`cargo build --release`): the tests compare against it.
set -euo pipefail
cd "$(dirname "$0")"
REPO="$(cd ../.. && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q maturin numpy scikit-learn "dask[distributed]" pytest pandas
"$WORK/venv/bin/maturin" build --release --quiet --out "$WORK/wheels"
"$PY" -m pip install -q "$WORK"/wheels/trustgp-*.whl
# Run from outside the source tree so that the installed wheel, not the sources, is imported.
cd "$WORK"
status=0
TRUSTGP_CLI="$REPO/target/release/trustgp" "$PY" -m pytest "$REPO/crates/trustgp-py/tests" \
    -q -p no:cacheprovider || status=$?
# pytest: 0 = all passed; 5 = no test collected, which must fail CI as much as a failure does.
if [ "$status" -ne 0 ]; then
    echo "python tests failed (pytest exit code $status)" >&2
    exit "$status"
fi
