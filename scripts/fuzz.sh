#!/usr/bin/env bash
# Fuzzes spatix structures against BruteForce, one target after another.
#
#   scripts/fuzz.sh [--write] [SECONDS [TARGET...]]     (default: 600 s, every target)
#
# --write: appends one row per target run to fuzz/runs.csv (date, machine, load, driver,
# target, seconds, executions, findings, commit) and rewrites docs/RELIABILITY.md's fuzz-runs
# block from it (scripts/fuzz-table.py).
#
# TARGET is a name from spatix_fuzz::TARGETS (crates/spatix-fuzz/src/lib.rs), e.g.
# `scripts/fuzz.sh 300 mxcif-f32 mxcif-f64-threshold-one`; each runs for SECONDS with
# SPATIX_FUZZ_TARGET pinning the driver to it.
#
# With a nightly toolchain: coverage-guided libFuzzer through cargo-fuzz (installed here if
# missing), on the `ops` target. Each target starts from its own scratch corpus,
# fuzz/corpus/ops-TARGET (created from the committed fuzz/corpus/ops, kept between runs so a
# later run resumes where the last one stopped; not committed), and writes failing inputs to
# fuzz/artifacts/TARGET/. Without nightly: the stable `smoke` driver, SECONDS per target.
# Prints, per target, the executions and the findings; exits 1 if there was any finding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
write=0
if [[ ${1:-} == --write ]]; then
    write=1
    shift
fi
seconds=${1:-600}
shift || true
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(sed -n '/^pub const TARGETS/,/^];/p' crates/spatix-fuzz/src/lib.rs |
        grep -o '"[^"]*"' | tr -d '"')
fi

# One row of fuzz/runs.csv (with --write): DRIVER TARGET SECONDS EXECUTIONS FINDINGS LOAD.
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates fuzz ':!fuzz/runs.csv' || echo "-dirty")
record() {
    [[ $write == 1 ]] || return 0
    local cpu
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    python3 scripts/fuzz-table.py --append "$(python3 -c 'import csv, sys; csv.writer(sys.stdout).writerow(sys.argv[1:])' \
        "$(date -u +%F)" "${cpu:-unknown CPU}, $(nproc) cores" "load average (1 min) $6 at the start" \
        "$1" "$2" "$3" "$4" "$5" "$commit" | tr -d '\r\n')"
}
finish() {
    if [[ $write == 1 ]]; then
        python3 scripts/fuzz-table.py --write
    fi
}

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: no nightly toolchain; running the stable smoke driver instead"
    status=0
    for target in "${targets[@]}"; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        log=$(mktemp)
        if SPATIX_FUZZ_TARGET=$target cargo run --release -p spatix-fuzz --bin smoke -- "$seconds" | tee "$log"; then
            findings=0
        else
            findings=1
            status=1
        fi
        # smoke: TARGET: RUNS inputs in T s, no failure
        runs=$(grep -o "$target: [0-9]* inputs in [0-9.]*" "$log" | head -1)
        ran=${runs##* }
        executions=$(echo "$runs" | grep -o ' [0-9]* inputs' | grep -o '[0-9]*')
        record smoke "$target" "${ran:-$seconds}" "${executions:-0}" "$findings" "$load"
        rm -f "$log"
    done
    finish
    exit $status
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

summary=()
found=0
for target in "${targets[@]}"; do
    corpus=fuzz/corpus/ops-$target
    artifacts=fuzz/artifacts/$target
    mkdir -p "$corpus" "$artifacts"
    cp -n fuzz/corpus/ops/* "$corpus"/
    before=$(find "$artifacts" -type f | wc -l)
    log=$(mktemp)
    started=$SECONDS
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "==> fuzz: $target for $seconds s (corpus $corpus: $(ls "$corpus" | wc -l) inputs)"
    # -timeout: an input running longer than 10 s is a hang; -rss_limit_mb bounds blow-ups.
    # No sanitizer: the code under test is safe Rust (unsafe is forbidden), so ASan would only
    # slow the search down.
    (cd fuzz && SPATIX_FUZZ_TARGET=$target cargo +nightly fuzz run --sanitizer none ops \
        "../$corpus" -- -max_total_time="$seconds" -max_len=1024 -timeout=10 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="../$artifacts/") \
        2>&1 | tee "$log" || true
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    findings=$(($(find "$artifacts" -type f | wc -l) - before))
    found=$((found + findings))
    # libFuzzer's own time ("Done N runs in T second(s)"), else the wall time with the build.
    ran=$(grep -o 'Done [0-9]* runs in [0-9]*' "$log" | grep -o '[0-9]*$' || echo $((SECONDS - started)))
    summary+=("$target: $ran s, ${executions:-?} executions, $findings findings, corpus $(ls "$corpus" | wc -l) inputs")
    record libFuzzer "$target" "$ran" "${executions:-0}" "$findings" "$load"
    rm -f "$log"
done
finish
echo
echo "fuzz: summary"
printf '  %s\n' "${summary[@]}"
if [[ $found -gt 0 ]]; then
    echo "fuzz: $found findings under fuzz/artifacts/ (minimise: cd fuzz && SPATIX_FUZZ_TARGET=... cargo +nightly fuzz tmin --sanitizer none ops FILE)"
    exit 1
fi
