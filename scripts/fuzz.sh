#!/usr/bin/env bash
# Fuzzes every spatix structure against BruteForce for a fixed time.
#
#   scripts/fuzz.sh [SECONDS]     (default 600)
#
# With a nightly toolchain: coverage-guided libFuzzer through cargo-fuzz (installed here if
# missing), on the `ops` target whose first input byte picks the structure, starting from the
# committed corpus fuzz/corpus/ops (new interesting inputs are added to a scratch copy, not to
# the repository). Without nightly: the stable `smoke` driver (random mutation of the corpus),
# SECONDS per structure. Failing inputs land in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-600}

if cargo +nightly --version >/dev/null 2>&1; then
    if ! cargo fuzz --version >/dev/null 2>&1; then
        cargo install cargo-fuzz --locked
    fi
    scratch=$(mktemp -d)
    cp fuzz/corpus/ops/* "$scratch"/
    cd fuzz
    # -timeout: an input running longer than 10 s is a hang; -rss_limit_mb bounds blow-ups.
    # No sanitizer: the code under test is safe Rust (unsafe is forbidden), so ASan would only
    # slow the search down.
    cargo +nightly fuzz run --sanitizer none ops "$scratch" -- \
        -max_total_time="$seconds" -max_len=1024 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
    echo "fuzz: corpus grew to $(ls "$scratch" | wc -l) inputs in $scratch"
else
    echo "fuzz: no nightly toolchain; running the stable smoke driver instead"
    cargo run --release -p spatix-fuzz --bin smoke -- "$seconds"
fi
