#!/usr/bin/env python3
"""The fuzz runs of docs/RELIABILITY.md, from fuzz/runs.csv.

    python3 scripts/fuzz-table.py           # the block, on standard output
    python3 scripts/fuzz-table.py --write   # rewrites docs/RELIABILITY.md's fuzz-runs block
    python3 scripts/fuzz-table.py --append DATE,MACHINE,LOAD,DRIVER,TARGET,SECONDS,EXECUTIONS,FINDINGS,COMMIT

`scripts/fuzz.sh --write` appends one row per target it ran (`--append`, with what it
measured: the date, the machine and its load, libFuzzer's or the smoke driver's seconds and
executions, the findings, the commit fuzzed) and then writes the block. The table lists every
row; the totals per structure add up the libFuzzer rows (a row naming several targets, an
unpinned run, shares its seconds equally among their structures). Python 3 standard library
only.
"""

import csv
import io
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import replace_block  # noqa: E402  (the generated-block writer the benches share)

RUNS = ROOT / "fuzz" / "runs.csv"
DOC = ROOT / "docs" / "RELIABILITY.md"
BEGIN = "<!-- fuzz-runs:begin -->"
END = "<!-- fuzz-runs:end -->"
FIELDS = ["date", "machine", "load", "driver", "target", "seconds", "executions", "findings", "commit", "notes"]
# A target's structure is the part of its name before the precision; these read better.
NAMES = {"mxcif": "MX-CIF", "loose-quadtree": "loose quadtree", "kdtree": "kd-tree",
         "hierarchical": "hierarchical grid", "points": "point grid", "loose-grid": "loose grid",
         "sweep": "sweep grid", "packed": "packed"}


def structure(target):
    for precision in ("-f32", "-f64"):
        if precision in target:
            target = target[: target.index(precision)]
    return NAMES.get(target, target)


def count(text):
    """`text` with thousands separators if it is a whole number (`?` where libFuzzer printed none)."""
    return f"{int(text):,}" if text.isdigit() else text


def read():
    with RUNS.open(newline="") as f:
        return list(csv.DictReader(f))


def block(rows):
    out = io.StringIO()
    out.write("Written by `python3 scripts/fuzz-table.py --write` from `fuzz/runs.csv`, whose rows "
              "`scripts/fuzz.sh --write` appends (one per target run; the rows of 2026-11-21 and "
              "2026-11-27 were transcribed from its printed summaries). Seconds are libFuzzer's "
              "`-max_total_time` or the smoke driver's; on a loaded machine the executions per "
              "second are far below what an idle core gives.\n\n")
    out.write("| date | machine (load) | driver | target | seconds | executions | findings | code fuzzed | notes |\n")
    out.write("| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |\n")
    for r in rows:
        machine = r["machine"] + (f" ({r['load']})" if r["load"] else "")
        out.write(f"| {r['date']} | {machine} | {r['driver']} | {r['target']} | {r['seconds']} | "
                  f"{count(r['executions'])} | {r['findings']} | {r['commit']} | {r['notes']} |\n")
    totals = {}
    for r in rows:
        if r["driver"] != "libFuzzer":
            continue
        names = []
        for target in r["target"].split(","):
            if structure(target.strip()) not in names:
                names.append(structure(target.strip()))
        for name in names:
            t = totals.setdefault(name, {"seconds": 0.0, "executions": 0, "shared": [], "about": False})
            t["seconds"] += float(r["seconds"]) / len(names)
            t["about"] |= r["notes"].startswith("about")
            executions = int(r["executions"]) if r["executions"].isdigit() else 0
            if len(names) == 1:
                t["executions"] += executions
            else:
                t["shared"].append(executions)
    parts = []
    for name, t in totals.items():
        shared = "".join(f" plus a share of the {s:,} of an unpinned run" for s in t["shared"])
        about = "about " if t["about"] else ""
        parts.append(f"{name} {about}{t['seconds']:.0f} s ({t['executions']:,} executions{shared})")
    findings = sum(int(r["findings"]) for r in rows)
    out.write(f"\nTotals of the libFuzzer runs per structure: {', '.join(parts)}. "
              f"Findings in all: {findings}.")
    return out.getvalue()


def main():
    args = sys.argv[1:]
    if args[:1] == ["--append"] and len(args) == 2:
        values = next(csv.reader([args[1]]))
        if len(values) != len(FIELDS) - 1:
            sys.exit(f"--append needs {len(FIELDS) - 1} comma-separated fields: {','.join(FIELDS[:-1])}")
        with RUNS.open("a", newline="") as f:
            csv.writer(f).writerow(values + [""])
    elif args == ["--write"]:
        replace_block(DOC, BEGIN, END, block(read()))
        print(f"wrote {DOC.relative_to(ROOT)}'s {BEGIN} block", file=sys.stderr)
    elif not args:
        print(block(read()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
