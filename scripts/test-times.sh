#!/usr/bin/env bash
# Times the tests as a new user meets them, and writes README's `test-times` block with --write:
# a fresh clone of HEAD into a temporary directory (nothing built, the Python venv made anew),
# then in it
#   1. README's test command, the fast tier, its build apart from its run: the Rust test
#      build (`cargo nextest run ... --no-run`), then the whole command (what is left of its
#      build, the tests, the doctests, the Python package's build and tests);
#   2. unless --fast-only, the deep tier (`scripts/test-deep.sh`) in the same clone.
# One run each, on this machine; the block records the date, the CPU, its cores and the load
# average when the run began (a loaded machine takes longer).
#
#   bash scripts/test-times.sh [--write] [--fast-only]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
write=0
deep=1
for arg in "$@"; do
    case $arg in
        --write) write=1 ;;
        --fast-only) deep=0 ;;
        *) echo "usage: scripts/test-times.sh [--write] [--fast-only]" >&2; exit 2 ;;
    esac
done
test_command=$(sed -n "s/^readonly TEST_COMMAND='\(.*\)'$/\1/p" .ci/run)
[[ -n $test_command ]] || { echo "no TEST_COMMAND in .ci/run" >&2; exit 1; }

clone=$(mktemp -d)
trap 'rm -rf "$clone"' EXIT
git clone --quiet "$root" "$clone"
commit=$(git -C "$clone" rev-parse --short HEAD)
load=$(cut -d' ' -f1 /proc/loadavg)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cores=$(nproc)
cd "$clone"

started=$SECONDS
cargo nextest run --workspace --all-features --no-run
build=$((SECONDS - started))
bash -c "$test_command"
fast=$((SECONDS - started))
echo "fast tier (README's test command) from a fresh clone: ${fast} s (Rust test build ${build} s)"
deep_line=""
if ((deep)); then
    deep_started=$SECONDS
    bash scripts/test-deep.sh
    deep_took=$((SECONDS - deep_started))
    echo "deep tier (scripts/test-deep.sh) after it: ${deep_took} s"
    deep_line="- the deep tier, \`bash scripts/test-deep.sh\`, in the same clone after it: $((deep_took / 60)) min $((deep_took % 60)) s"
fi

if ((write)); then
    cd "$root"
    block=$(cat <<EOF
<!-- test-times:begin -->
Measured by \`bash scripts/test-times.sh --write\` on $(date -u +%Y-%m-%d) at commit ${commit}, one run each, on ${cpu} (${cores} cores; load average ${load} when it began):
- README's test command on a fresh clone: $((fast / 60)) min $((fast % 60)) s in all, of which the Rust test build $((build / 60)) min $((build % 60)) s (the Python package's build is in the rest)
${deep_line}
<!-- test-times:end -->
EOF
)
    python3 - "$block" <<'PY'
import re, sys
block = sys.argv[1].replace("\n\n", "\n")
readme = open("README.md", encoding="utf-8").read()
pattern = re.compile(r"<!-- test-times:begin -->.*?<!-- test-times:end -->", re.S)
if not pattern.search(readme):
    sys.exit("README.md has no test-times block")
open("README.md", "w", encoding="utf-8").write(pattern.sub(lambda _: block, readme))
PY
    echo "README.md's test-times block rewritten"
fi
