#!/usr/bin/env bash
# spatix.dask.box_join against dask-geopandas' sjoin on a LocalCluster: installs spatix-py
# (with the dask extra's packages) and dask-geopandas, geopandas into target/python-venv, then
# runs crates/spatix-py/bench_dask.py with the arguments given (`--write` rewrites the
# generated block of docs/BENCHMARKS.md; `--n 1000000 10000000` picks the sizes).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SPATIX_PY_PROFILE=release bash scripts/test-python.sh dask-geopandas geopandas >/dev/null
exec target/python-venv/bin/python crates/spatix-py/bench_dask.py "$@"
