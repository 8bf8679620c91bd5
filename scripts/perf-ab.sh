#!/usr/bin/env bash
# An A/B guard to run before landing a change, in two halves run interleaved (old, new, old,
# new, ...):
# - the caller like a user's (benches/as-dependency: spatix as a path dependency of a crate
#   outside the workspace, built at BASE's library and at the working tree's), each built under
#   cargo's default release profile (16 codegen units, no LTO: as every user builds it) and with
#   the caller cut into one codegen unit; per case the median new/old ratio under each, and the
#   default/one-unit ratio of each side (how much the caller's cut costs), with spreads;
# - `compare` built at BASE and at the working tree, each under the workspace's release profile
#   (thin LTO, one codegen unit) and under cargo's default one, per profile, workload, size and
#   structure the median of the pairs' ratios new/old with their spread (min-max).
# A row is marked SLOWER when its median ratio is above 1.05 and the two builds' medians do not
# overlap (the fastest of the new build's is slower than the slowest of the old's); a harness
# case is marked CUT when its default/one-unit ratio is above 1.05 the same way.
#
#   scripts/perf-ab.sh [--sizes N,N] [--only A,B] [--structures TEXT] [--pairs N] [--runs N]
#                      [--profiles workspace,default] [--harness ARGS] [--no-compare]
#                      [--no-harness] BASE
#
#   --sizes       compare's element counts (default 100000)
#   --only        workloads, each a substring of compare's names, run as one compare call
#                 each (default: frame,query,nearest-uniform-k8,radius-uniform)
#   --structures  compare's structure filter (default: every structure; the peers' ratios show
#                 the sitting's noise)
#   --pairs       old/new pairs per profile (at least 5, the default)
#   --runs        compare's measured runs per structure (at least 5, the default)
#   --profiles    which builds of compare (default both)
#   --harness     the harness's arguments (default: every case at its own sizes, 1M dense and
#                 500k sparse agents, 1M points: `--frames 5`; see its --help)
#   --no-compare  only the harness
#   --no-harness  only compare
#
# The builds are kept under target/perf-ab/ (BASE is checked out in a temporary git worktree),
# so a second run against the same BASE only rebuilds what changed. The JSON of every run is
# left in the temporary directory printed at the start.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

sizes=100000
only=frame,query,nearest-uniform-k8,radius-uniform
structures=
pairs=5
runs=5
profiles=workspace,default
harness_args="--frames 5"
run_compare=1
run_harness=1
base=
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case $1 in
        --sizes) sizes=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --structures) structures=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --profiles) profiles=$2; shift 2 ;;
        --harness) harness_args=$2; shift 2 ;;
        --no-compare) run_compare=0; shift ;;
        --no-harness) run_harness=0; shift ;;
        -h | --help) usage ;;
        -*) echo "unknown option $1" >&2; usage ;;
        *) [[ -z $base ]] || usage; base=$1; shift ;;
    esac
done
[[ -n $base ]] || usage
if ((pairs < 5)); then
    echo "--pairs needs at least 5" >&2
    exit 2
fi
base_commit=$(git rev-parse --verify "$base^{commit}")

work=$(mktemp -d "${TMPDIR:-/tmp}/perf-ab.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true
}
trap cleanup EXIT
echo "perf-ab: BASE $base ($(git rev-parse --short "$base_commit")) against the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- || echo ', with changes')); runs in $work"
git worktree add --detach --quiet "$work/base" "$base_commit"
# The harness is this tree's, built against each side's library (BASE may predate it).
rm -rf "$work/base/benches/as-dependency"
mkdir -p "$work/base/benches"
cp -r "$root/benches/as-dependency" "$work/base/benches/"
rm -rf "$work/base/benches/as-dependency/target"

# Builds the harness against the library of the tree at $1 into
# target/perf-ab/harness-$2-$3 (cut $3: default, or one codegen unit for the caller) and
# copies it to $work/harness-$2-$3.
build_harness() {
    local tree=$1 side=$2 cut=$3
    local units=()
    if [[ $cut == one ]]; then
        units=(env CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1)
    fi
    echo "perf-ab: building the harness, $side, caller cut: $cut"
    (cd "$tree/benches/as-dependency" && "${units[@]}" cargo build --quiet --release \
        --target-dir "$root/target/perf-ab/harness-$side-$cut")
    cp "$root/target/perf-ab/harness-$side-$cut/release/spatix-as-dependency" "$work/harness-$side-$cut"
}

# Builds compare from the tree at $1 into target/perf-ab/$2-$3 (profile $3) and copies it
# to $work/$2-$3.
build() {
    local tree=$1 side=$2 profile=$3
    local config=()
    if [[ $profile == default ]]; then
        config=(--config profile.release.lto=false --config profile.release.codegen-units=16)
    fi
    echo "perf-ab: building $side ($profile profile)"
    (cd "$tree" && cargo build --quiet --release -p spatix-bench --bin compare \
        "${config[@]}" --target-dir "$root/target/perf-ab/$side-$profile")
    cp "$root/target/perf-ab/$side-$profile/release/compare" "$work/$side-$profile"
}

IFS=, read -r -a profile_list <<<"$profiles"
IFS=, read -r -a only_list <<<"$only"
if ((run_harness)); then
    for cut in default one; do
        build_harness "$work/base" old "$cut"
        build_harness "$root" new "$cut"
    done
fi
if ((run_compare)); then
    for profile in "${profile_list[@]}"; do
        case $profile in workspace | default) ;; *) echo "unknown profile $profile" >&2; exit 2 ;; esac
        build "$work/base" old "$profile"
        build "$root" new "$profile"
    done
fi

read -r -a harness_list <<<"$harness_args"
for ((pair = 1; pair <= pairs; pair++)); do
    if ((run_harness)); then
        for cut in default one; do
            for side in old new; do
                echo "perf-ab: pair $pair/$pairs, harness, $side, caller cut: $cut"
                "$work/harness-$side-$cut" "${harness_list[@]}" >"$work/harness-$cut-$side-$pair.tsv"
            done
        done
    fi
    ((run_compare)) || continue
    for profile in "${profile_list[@]}"; do
        for workload in "${only_list[@]}"; do
            for side in old new; do
                echo "perf-ab: pair $pair/$pairs, $profile, $side, $workload"
                "$work/$side-$profile" --sizes "$sizes" --only "$workload" \
                    --structures "$structures" --runs "$runs" \
                    --json "$work/$profile-$side-$pair-$workload.json" >/dev/null
            done
        done
    done
done

python3 - "$work" "$pairs" "$profiles" <<'EOF'
import json, pathlib, statistics, sys
from collections import defaultdict

work, pairs, profiles = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")

def spread(ratios):
    return statistics.median(ratios), min(ratios), max(ratios)

# The harness: times[(cut, side)][case][pair] = median ms of that run.
times = defaultdict(lambda: defaultdict(dict))
order = []
for path in sorted(work.glob("harness-*-*-*.tsv")):
    _, cut, side, pair = path.stem.split("-")
    for line in path.read_text().splitlines():
        case, median = line.split("\t")[:2]
        times[(cut, side)][case][int(pair)] = float(median)
        if case not in order:
            order.append(case)
if order:
    print()
    print(f"harness (benches/as-dependency): medians of {pairs} interleaved runs, ms; new/old and default/one-unit ratios: median of the pairs (min-max)")
    print(f"SLOWER: new/old above 1.05 with the medians' ranges apart; CUT: default/one above 1.05 the same way")
    width = max(len(c) for c in order)
    print(f"{'case':{width}}  {'old':>9} {'new':>9}  {'new/old default':>21}  {'new/old one-unit':>21}  {'default/one old':>21}  {'default/one new':>21}")
    def ratio(a, b):
        both = sorted(set(a) & set(b))
        if not both:
            return None
        m, lo, hi = spread([a[p] / b[p] for p in both])
        apart = m > 1.05 and min(a[p] for p in both) > max(b[p] for p in both)
        return m, lo, hi, apart
    marks = 0
    for case in order:
        cells, flags = [], []
        for (a, b, flag) in [
            (("default", "new"), ("default", "old"), "SLOWER"),
            (("one", "new"), ("one", "old"), "SLOWER"),
            (("default", "old"), ("one", "old"), None),
            (("default", "new"), ("one", "new"), "CUT"),
        ]:
            r = ratio(times[a][case], times[b][case])
            if r is None:
                cells.append(f"{'-':>21}")
                continue
            cells.append(f"{r[0]:7.3f} ({r[1]:.3f}-{r[2]:.3f})")
            if r[3] and flag and flag not in flags:
                flags.append(flag)
        old = statistics.median(times[("default", "old")][case].values() or [0])
        new = statistics.median(times[("default", "new")][case].values() or [0])
        marks += bool(flags)
        print(f"{case:{width}}  {old:9.3f} {new:9.3f}  " + "  ".join(cells) + ("  " + " ".join(flags) if flags else ""))
    print(f"\n{len(order)} harness cases, {marks} marked")

# compare: medians[(profile, workload, n, structure)][side] = [median of pair 1, pair 2, ...]
medians = defaultdict(lambda: {"old": {}, "new": {}})
for path in work.glob("*.json"):  # profile-side-pair-workload.json
    profile, side, pair, _ = path.stem.split("-", 3)
    for w in json.loads(path.read_text())["workloads"]:
        for r in w["results"]:
            if r["median_seconds"] is not None:
                key = (profile, w["slug"], r["n"], r["structure"])
                medians[key][side][int(pair)] = r["median_seconds"]

rows = []
for key in sorted(medians, key=lambda k: (profiles.index(k[0]), k[1], k[2], k[3])):
    old, new = medians[key]["old"], medians[key]["new"]
    both = sorted(set(old) & set(new))
    if not both:
        continue
    ratios = [new[p] / old[p] for p in both]
    ratio = statistics.median(ratios)
    slower = ratio > 1.05 and min(new[p] for p in both) > max(old[p] for p in both)
    rows.append((*key, ratio, min(ratios), max(ratios), statistics.median(old[p] for p in both),
                 statistics.median(new[p] for p in both), slower))

if not rows:
    sys.exit(0)
width = max(len(r[3]) for r in rows)
print()
print(f"new/old: median of {pairs} interleaved pairs (min-max); SLOWER: above 1.05 and the medians' ranges apart")
print(f"{'profile':9} {'workload':22} {'n':>8}  {'structure':{width}}  {'old ms':>9} {'new ms':>9}  {'new/old':>7}  spread")
for profile, slug, n, structure, ratio, lo, hi, old, new, slower in rows:
    mark = "  SLOWER" if slower else ""
    print(f"{profile:9} {slug:22} {n:>8}  {structure:{width}}  {old * 1e3:9.3f} {new * 1e3:9.3f}  {ratio:7.3f}  {lo:.3f}-{hi:.3f}{mark}")
slow = sum(r[-1] for r in rows)
print(f"\n{len(rows)} rows, {slow} marked SLOWER")
EOF
