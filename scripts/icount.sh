#!/usr/bin/env bash
# The instruction-count guard (run by .ci/run): builds the `icount` harness
# (crates/spatix-bench/src/bin/icount.rs) in the quick-release profile (cargo's default release
# settings, as users build spatix; CI's other release builds share it), runs it once
# under callgrind, counting only each case's measured part (its call of `icount_measured`),
# and compares every case with crates/spatix-bench/icount-baseline.txt: a case more than 2%
# above its baseline fails, and so does a case whose answer (pairs, hits or neighbours found)
# differs from the baseline's, since it no longer measures the same work. Counts depend on the
# compiler, so the check is skipped (exit 0, with a message) when the baseline was written by
# another rustc.
#
#   scripts/icount.sh                   check against the baseline
#   scripts/icount.sh --write "REASON"  write the baseline from this run, with a line saying
#                                       why (commit it with the change that moved the counts)
#
# Instruction counts are exact and do not depend on the machine's load: a change that adds
# work shows here even when timings are too noisy to see it (scripts/perf-ab.sh times them).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BASELINE=crates/spatix-bench/icount-baseline.txt
readonly LIMIT_PERCENT=2

reason=
if [[ ${1:-} == --write ]]; then
    reason=${2:?--write needs a reason}
elif [[ $# -gt 0 ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

rustc_version=$(rustc --version)
if [[ -z $reason && -f $BASELINE ]] && ! grep -qxF "rustc: $rustc_version" "$BASELINE"; then
    echo "icount: skipped: the baseline was counted with $(sed -n 's/^rustc: //p' "$BASELINE"), this is $rustc_version (rewrite it with --write)"
    exit 0
fi
if ! command -v valgrind >/dev/null; then
    echo "icount: valgrind is not installed" >&2
    exit 1
fi

cargo build --quiet --profile quick-release -p spatix-bench --bin icount
binary=${CARGO_TARGET_DIR:-target}/quick-release/icount
out=$(mktemp -d "${TMPDIR:-/tmp}/icount.XXXXXX")
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --collect-atstart=no \
    --toggle-collect=icount::icount_measured --dump-after=icount::icount_measured \
    --callgrind-out-file="$out/callgrind.out" "$binary" >"$out/cases" 2>"$out/valgrind.log" || {
    cat "$out/valgrind.log" >&2
    exit 1
}

# One dump per case, numbered from 1 in the order the harness printed the cases.
python3 - "$out" "$BASELINE" "$LIMIT_PERCENT" "$rustc_version" "$reason" <<'EOF'
import pathlib, sys

out, baseline_path, limit, rustc, reason = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
cases = [line.split("\t") for line in (out / "cases").read_text().splitlines() if "\t" in line]
counts = {}
for i, (name, answer) in enumerate(cases, 1):
    totals = [l for l in (out / f"callgrind.out.{i}").read_text().splitlines() if l.startswith("totals:")]
    counts[name] = (int(totals[0].split()[1]), answer)

if reason:
    lines = [
        "# Instruction counts of scripts/icount.sh (callgrind, the measured part of each case of",
        "# crates/spatix-bench/src/bin/icount.rs): case, instructions, answer. Rewritten by",
        "# `scripts/icount.sh --write REASON`; each rewrite adds its reason below.",
        f"rustc: {rustc}",
    ]
    if baseline_path.exists():
        lines += [l for l in baseline_path.read_text().splitlines() if l.startswith("why: ")]
    lines.append(f"why: {reason}")
    lines += [f"{name}\t{count}\t{answer}" for name, (count, answer) in counts.items()]
    baseline_path.write_text("\n".join(lines) + "\n")
    print(f"icount: wrote {baseline_path} ({len(counts)} cases)")
    for name, (count, _) in counts.items():
        print(f"  {name:24} {count:>13,}")
    sys.exit(0)

baseline = {}
for line in baseline_path.read_text().splitlines():
    fields = line.split("\t")
    if len(fields) == 3:
        baseline[fields[0]] = (int(fields[1]), fields[2])
failed = []
print(f"{'case':24} {'baseline':>13} {'now':>13}  change")
for name, (count, answer) in counts.items():
    if name not in baseline:
        failed.append(f"{name}: not in the baseline")
        print(f"{name:24} {'-':>13} {count:>13,}  new")
        continue
    base, base_answer = baseline[name]
    change = 100.0 * (count - base) / base
    mark = ""
    if change > limit:
        mark = "  ABOVE"
        failed.append(f"{name}: {change:+.2f}% (limit +{limit}%)")
    if answer != base_answer:
        mark += f"  answer {answer}, was {base_answer}"
        failed.append(f"{name}: answer {answer}, the baseline's {base_answer} (the case no longer measures the same work)")
    print(f"{name:24} {base:>13,} {count:>13,}  {change:+6.2f}%{mark}")
for name in baseline.keys() - counts.keys():
    failed.append(f"{name}: in the baseline, not run")
if failed:
    print("icount: FAILED (update the baseline in the same commit with scripts/icount.sh --write \"why\" if the change is meant):")
    for f in failed:
        print(f"  {f}")
    sys.exit(1)
print(f"icount: every case within +{limit}% of the baseline")
EOF
