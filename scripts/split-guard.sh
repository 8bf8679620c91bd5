#!/usr/bin/env bash
# The caller's-cut guard (run by .ci/run; issue 47): spatix's hot paths are generic, so they
# are compiled in the *caller's* crate and cut into its codegen units with the caller's own
# code. A path whose inlining depends on where the caller's cut falls is as fast as a one-unit
# build in one program and a third slower in the next (issue 47's bisect: a commit that touched
# no frame code moved three grids' frames by 35%). This guard builds the caller like a user's
# (benches/as-dependency, cargo's default release profile) three times, its crate cut into 16
# codegen units (cargo's default), 4 and 1, runs each once under callgrind on small inputs
# (every case's measured part only: `--toggle-collect` and `--dump-after` on its `measured`),
# and fails when, for any case:
# - its instruction count under a cut differs from the one-unit build's by more than
#   LIMIT_PERCENT (the same code, inlined alike, counts alike), or
# - a function is called out of line HOT_CALLS times or more (per element or per query at
#   these sizes) under one cut and less than nine tenths as often under another (spatix's
#   own, or core's generic code that spatix instantiates: they are cut alike), or
# - a function of spatix is called out of line HOT_CALLS times or more and is not listed in
#   benches/as-dependency/out-of-line.txt (the slow paths kept out of line on purpose,
#   `#[inline(never)]` in the source, each with its reason).
# Counts are exact, whatever the machine's load; they depend on the compiler, which builds
# all three alike, so no baseline is kept. Timings of the same builds: scripts/perf-ab.sh.
#
#   scripts/split-guard.sh            check
#   scripts/split-guard.sh --report   also print every case's counts and hot calls
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly LIMIT_PERCENT=4
readonly HOT_CALLS=1000
readonly CUTS="16 4 1"
readonly ARGS="--dense 20000 --sparse 20000 --points 20000 --queries 2000 --frames 1"
harness=benches/as-dependency
target=${CARGO_TARGET_DIR:-$PWD/target}/split-guard

report=0
case ${1:-} in
    --report) report=1 ;;
    "") ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
if ! command -v valgrind >/dev/null; then
    echo "split-guard: valgrind is not installed" >&2
    exit 1
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/split-guard.XXXXXX")
trap 'rm -rf "$out"' EXIT
for units in $CUTS; do
    (cd "$harness" && CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$units cargo build --quiet --release \
        --locked --target-dir "$target/cut-$units")
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect=spatix_as_dependency::measured \
        --dump-after=spatix_as_dependency::measured \
        --callgrind-out-file="$out/cut-$units.out" \
        "$target/cut-$units/release/spatix-as-dependency" $ARGS \
        >"$out/cut-$units.cases" 2>"$out/cut-$units.log" || {
        cat "$out/cut-$units.log" >&2
        exit 1
    }
done

python3 - "$out" "$CUTS" "$LIMIT_PERCENT" "$HOT_CALLS" "$harness/out-of-line.txt" "$report" <<'EOF'
import collections, pathlib, re, sys

out, cuts, limit, hot, allowed_path, report = sys.argv[1:]
out, cuts, limit, hot, report = pathlib.Path(out), cuts.split(), float(limit), int(hot), report == "1"
allowed = {l.split("\t")[0] for l in pathlib.Path(allowed_path).read_text().splitlines()
           if l.strip() and not l.startswith("#")}

def parse(path):
    """The dump's total instructions, and the calls into each function of spatix."""
    names, calls, callee, total = {}, collections.Counter(), None, None
    for line in path.read_text().splitlines():
        if line.startswith(("fn=", "cfn=")):
            key, rest = line.split("=", 1)
            m = re.match(r"\((\d+)\)(?: (.*))?", rest)
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if key == "cfn":
                callee = names[m.group(1)]
        elif line.startswith("calls=") and callee is not None:
            calls[callee] += int(line.split("=")[1].split()[0])
        elif line.startswith("totals:"):
            total = int(line.split()[1])
    # Every callee but the measured run itself and core's sorting, bulk work behind one
    # call whatever its inside does.
    sorting = re.compile(r"core::slice::(sort::|<impl \[T\]>::(sort|select_nth))")
    return total, {f: c for f, c in calls.items()
                   if f != "spatix_as_dependency::measured" and not sorting.match(f)}

def ours(f):
    """Rust's legacy symbols of spatix: `spatix::...` or `<spatix::... as ...>::...`."""
    return re.match(r"<?spatix::", f) is not None

cases = {}
for cut in cuts:
    names = [l.split("\t")[0] for l in (out / f"cut-{cut}.cases").read_text().splitlines() if "\t" in l]
    for i, name in enumerate(names, 1):
        cases.setdefault(name, {})[cut] = parse(out / f"cut-{cut}.out.{i}")

failures = []
for name, by_cut in cases.items():
    base_total, base_calls = by_cut["1"]
    lines = []
    for cut, (total, calls) in by_cut.items():
        off = 100 * (total / base_total - 1)
        lines.append(f"  {cut:>2} units: {total:>12,} instructions ({off:+.2f}% of one unit)")
        if abs(off) > limit:
            failures.append(f"{name}: {total:,} instructions cut into {cut} units, {off:+.2f}% of the one-unit build's {base_total:,}")
        for f, c in sorted(calls.items(), key=lambda x: -x[1]):
            if c >= hot and ours(f):
                lines.append(f"      {c:>9,} calls  {f}")
        for f in sorted(set(calls) | set(base_calls)):
            a, b = calls.get(f, 0), base_calls.get(f, 0)
            if max(a, b) >= hot and min(a, b) < 0.9 * max(a, b):
                failures.append(f"{name}: {f} called out of line {a:,} times cut into {cut} units, {b:,} times in one")
            if a >= hot and ours(f) and f not in allowed:
                failures.append(f"{name}: {f} called out of line {a:,} times cut into {cut} units, and not listed in {allowed_path}")
    if report:
        print(name)
        print("\n".join(lines))

failures = list(dict.fromkeys(failures))
for f in failures:
    print(f"split-guard: {f}", file=sys.stderr)
print(f"split-guard: {len(cases)} cases under {len(cuts)} cuts of the caller ({', '.join(cuts)} codegen units): {len(failures)} failures")
sys.exit(1 if failures else 0)
EOF
