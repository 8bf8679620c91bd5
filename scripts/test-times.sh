#!/usr/bin/env bash
# Times the tests as a new user meets them, and with --write puts the figures into README's
# `test-times` block: a fresh clone of HEAD into a temporary directory (nothing built, the
# Python venv made anew), then in it
#   --fast: README's test command (the fast tier), its Rust test build timed apart from the rest
#           (`cargo nextest run ... --no-run`, then the whole command: the tests, the doctests,
#           the Python package's build and tests);
#   --deep: the deep tier, `scripts/test-deep.sh`, from its own fresh clone.
# Both when neither is given. One run each, on this machine; each line of the block records
# its date, commit, CPU, cores and the load average when its run began (a loaded machine takes
# longer). --write replaces only the lines of the tiers it measured.
#
#   bash scripts/test-times.sh [--write] [--fast] [--deep]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
write=0
fast=0
deep=0
for arg in "$@"; do
    case $arg in
        --write) write=1 ;;
        --fast) fast=1 ;;
        --deep) deep=1 ;;
        *) echo "usage: scripts/test-times.sh [--write] [--fast] [--deep]" >&2; exit 2 ;;
    esac
done
if ((!fast && !deep)); then
    fast=1
    deep=1
fi
test_command=$(sed -n "s/^readonly TEST_COMMAND='\(.*\)'$/\1/p" .ci/run)
[[ -n $test_command ]] || { echo "no TEST_COMMAND in .ci/run" >&2; exit 1; }
commit=$(git rev-parse --short HEAD)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="${cpu}, $(nproc) cores"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Clones HEAD into $work/$1 and enters it.
fresh() {
    git clone --quiet "$root" "$work/$1"
    cd "$work/$1"
}

# "M min S s"
minutes() {
    echo "$(($1 / 60)) min $(($1 % 60)) s"
}

# Replaces this tier's line of README's block (with --write).
record() {
    ((write)) || return 0
    python3 - "$root/README.md" "$1" <<'PY'
import re, sys
path, line = sys.argv[1], sys.argv[2]
readme = open(path, encoding="utf-8").read()
pattern = re.compile(r"(<!-- test-times:begin -->\n)(.*?)(<!-- test-times:end -->)", re.S)
m = pattern.search(readme)
if not m:
    sys.exit("README.md has no test-times block")
kept = {l.split(":", 1)[0]: l for l in m.group(2).splitlines() if l.startswith("- ")}
kept[line.split(":", 1)[0]] = line
head = "Measured by `bash scripts/test-times.sh --write`, one run each:\n"
body = head + "".join(kept[k] + "\n" for k in ("- fast", "- deep") if k in kept)
open(path, "w", encoding="utf-8").write(readme[: m.start(2)] + body + readme[m.end(2):])
PY
    echo "README.md's test-times block: $1"
}

if ((fast)); then
    load=$(cut -d' ' -f1 /proc/loadavg)
    fresh fast
    started=$SECONDS
    cargo nextest run --workspace --all-features --no-run
    build=$((SECONDS - started))
    bash -c "$test_command"
    took=$((SECONDS - started))
    echo "fast tier from a fresh clone: ${took} s, of which the Rust test build ${build} s"
    record "- fast: README's test command on a fresh clone, $(minutes "$took") in all, of which the Rust test build $(minutes "$build") (the Python package's build is in the rest); $(date -u +%Y-%m-%d), commit ${commit}, ${machine}, load average ${load} at the start"
    cd "$root"
fi
if ((deep)); then
    load=$(cut -d' ' -f1 /proc/loadavg)
    fresh deep
    started=$SECONDS
    bash scripts/test-deep.sh
    took=$((SECONDS - started))
    echo "deep tier from a fresh clone: ${took} s"
    record "- deep: \`bash scripts/test-deep.sh\` on a fresh clone, build included, $(minutes "$took"); $(date -u +%Y-%m-%d), commit ${commit}, ${machine}, load average ${load} at the start"
    cd "$root"
fi

