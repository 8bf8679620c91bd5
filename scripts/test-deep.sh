#!/usr/bin/env bash
# The deep tier of the tests: what a change to a structure runs and quotes in its closing note.
# README's test command (the fast tier) and more: nextest's `deep` profile adds the conformance
# instances of module `deep` (more configurations of each structure), and SPATIX_TESTS=deep
# gives every property four times the fast tier's random cases (128 per data variant instead
# of 32), the bulk tests at 100k agents instead of 20k, the adversarial sets at their full
# 100k instead of 10k, the static bulk sets at 10k instead of 2k;
# then the doctests, the fuzz smoke run at 15 s per target instead of CI's 3, and the Python
# package's tests. Prints its time at the end.
#
#   bash scripts/test-deep.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$SECONDS
SPATIX_TESTS=deep cargo nextest run --workspace --all-features --profile deep
cargo test --workspace --exclude spatix-py --doc --all-features
cargo run --profile quick-release -p spatix-fuzz --bin smoke -- 15
bash scripts/test-python.sh
echo "deep tier passed in $((SECONDS - started)) s"
