#!/usr/bin/env bash
# spatix against scipy, pykdtree, shapely and geoindex-rs from Python: installs spatix-py and
# the peers (from PyPI) into target/python-venv, then runs crates/spatix-py/bench.py with the
# arguments given (`--write` rewrites the generated blocks of docs/BENCHMARKS.md and README.md);
# `bench-python.sh views [--write]` runs crates/spatix-py/bench_views.py instead (opening a
# saved PackedIndex and KdTree against building them, and the protocol-5 pickle).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SPATIX_PY_PROFILE=release bash scripts/test-python.sh scipy pykdtree shapely geoindex-rs >/dev/null
script=crates/spatix-py/bench.py
if [[ ${1:-} == views ]]; then
    script=crates/spatix-py/bench_views.py
    shift
fi
exec target/python-venv/bin/python "$script" "$@"
