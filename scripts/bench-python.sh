#!/usr/bin/env bash
# spatix against scipy, pykdtree, shapely and geoindex-rs from Python: installs spatix-py and
# the peers (from PyPI) into target/python-venv, then runs crates/spatix-py/bench.py with the
# arguments given (`--write` rewrites the generated blocks of docs/BENCHMARKS.md and README.md).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SPATIX_PY_PROFILE=release bash scripts/test-python.sh scipy pykdtree shapely geoindex-rs >/dev/null
exec target/python-venv/bin/python crates/spatix-py/bench.py "$@"
