#!/usr/bin/env bash
# Regenerates every measured block of README.md together, on this machine and day, each with
# the tool that measures it, then checks that all of them name the same day and CPU:
#
#   1. structures             cargo bench -p spatix-bench --bench structures -- ARGS below,
#                             tabulated by scripts/criterion-table.py --write
#   2. compare                cargo run --release -p spatix-bench --bin compare -- --write
#                             (README's full run: 10k, 100k and 1M, one thread; it also rewrites
#                             docs/BENCHMARKS.md above "## From Python" and docs/benchmarks/*.svg)
#   3. sim                    python3 scripts/sim-block.py (`spatix sim` with its defaults)
#   4. python-bench-headline  bash scripts/bench-python.sh --write (also docs/BENCHMARKS.md's
#                             python-bench block; it first runs scripts/test-python.sh)
#   5. python-test-deps       python3 scripts/check-docs.py --write (not measured: the
#                             packages scripts/test-python.sh installs), then the full check
#
# Estimated on a 2-core machine with nothing else running, from the bench settings and the
# last tables (not timed as a whole): 1. about 16 minutes of criterion (some 250 benchmarks,
# 0.5 s warm-up plus at least 1 s or 55 iterations each) plus a few of setup; 2. about 10
# minutes (6 runs of every entry, about 4 minutes of them timed, plus builds and checks);
# 3. under a minute; 4. 4-8 minutes (scripts/test-python.sh runs the pytest suite first, then
# bench.py at 1M, 3 repeats). Add 5-15 minutes of compiling when target/ is cold: about 35-50
# minutes in all. Run it on an otherwise idle machine: every block records the load average
# it saw. Each step's output goes
# to target/regenerate-readme/ as well as the terminal. Usage:
#
#   bash scripts/regenerate-readme.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
logs=target/regenerate-readme
mkdir -p "$logs"
# README's structures tables: every frame, and build, queries and pairs at 100k and 1M.
bench_args=(--warm-up-time 0.5 --measurement-time 1 '^frame/|^(build|query|pairs)/.*/(100000|1000000)$')

started=$SECONDS
step() {
    echo
    echo "==> [$((SECONDS - started))s] $*"
}

step "1/5 structures: cargo bench -p spatix-bench --bench structures -- ${bench_args[*]}"
cargo bench -p spatix-bench --bench structures -- "${bench_args[@]}" | tee "$logs/structures.txt"
python3 scripts/criterion-table.py --write --args "${bench_args[*]:0:4} '${bench_args[4]}'" \
    < "$logs/structures.txt"

step "2/5 compare: cargo run --release -p spatix-bench --bin compare -- --write"
cargo run --release -p spatix-bench --bin compare -- --write | tee "$logs/compare.txt"

step "3/5 sim: python3 scripts/sim-block.py"
python3 scripts/sim-block.py

step "4/5 python-bench-headline: bash scripts/bench-python.sh --write"
bash scripts/bench-python.sh --write | tee "$logs/bench-python.txt"

step "5/5 python-test-deps and the docs check: python3 scripts/check-docs.py --write"
python3 scripts/check-docs.py --write

step "every measured block names today and this machine"
python3 - <<'EOF'
import pathlib, re, sys
sys.path.insert(0, "crates/spatix-py")
import datetime
from benchdoc import cpu

want = f"{datetime.date.today().isoformat()} ({cpu()}, "  # each block: "... on DATE (CPU, N cores ..."
readme = pathlib.Path("README.md").read_text()
bad = []
for name in ("structures", "compare", "sim", "python-bench-headline"):
    m = re.search(rf"<!-- {name}:begin -->\n(.*?)<!-- {name}:end -->", readme, re.S)
    if m is None:
        bad.append(f"README.md has no {name} block")
    elif f" on {want}" not in m.group(1).splitlines()[0]:
        bad.append(f"the {name} block does not open with 'One run ... on {want}...': "
                   f"{m.group(1).splitlines()[0][:160]}")
if bad:
    sys.exit("regenerate-readme: " + "\n  ".join(bad))
print(f"regenerate-readme: all four blocks name {want.rstrip(', ')})")
EOF
step "done: review with git diff README.md docs/"
