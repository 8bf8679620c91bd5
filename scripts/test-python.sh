#!/usr/bin/env bash
# The Python package's tests: builds spatix-py (the quick-release profile) into a virtual environment under
# target/, with numpy, pytest, scipy and shapely (KdTree's scipy conventions are tested against cKDTree, the box
# indexes' shapely conventions against STRtree), mypy (its stubtest checks the type stubs against the built
# extension) and the `dask` extra's packages (dask[dataframe], distributed:
# the spatix.dask tests start a LocalCluster) from PyPI, and runs crates/spatix-py/tests.
# Part of README's test command; the venv is reused by later runs (and by
# scripts/bench-python.sh), and cargo rebuilds only what changed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv"
fi
export VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH"
python -m pip install --quiet --disable-pip-version-check 'maturin>=1.9.4,<2' numpy pytest scipy shapely mypy 'pyarrow>=15' 'polars>=1.20' \
    'dask[dataframe]>=2025.1' 'distributed>=2025.1' "$@"
# maturin from the venv, so a rebuild needs nothing from the network. The tests load the
# extension built in the `quick-release` profile (release code without LTO, codegen in
# parallel: minutes less to build); the benchmarks' scripts set SPATIX_PY_PROFILE=release.
maturin develop --quiet --profile "${SPATIX_PY_PROFILE:-quick-release}" --manifest-path crates/spatix-py/Cargo.toml
# The hand-kept stubs against the extension itself.
python -m mypy.stubtest spatix --mypy-config-file crates/spatix-py/stubtest.ini
python -m pytest -q crates/spatix-py/tests
