#!/usr/bin/env python3
"""Turns the output of the adversarial bench into docs/RELIABILITY.md's tables.

    cargo bench -p spatix-bench --bench adversarial | tee adversarial.txt
    python3 scripts/reliability-tables.py < adversarial.txt           # the tables, on stdout
    python3 scripts/reliability-tables.py --write < adversarial.txt   # RELIABILITY's blocks

Criterion prints each benchmark's id (`adversarial/<set>/<op>/<structure>`) and then its
estimate `time: [low median high]`; the bench prints `memory <structure> on '<set>' N=<n>:
<b> bytes/element ...` lines. Two blocks: `adversarial` (build, query, pairs, frame and bytes
per element of every structure on each adversarial set) and `strays` (the same on 100k clean
boxes against the same with strays, with the worst ratio). A benchmark that did not run shows
as an empty cell. Python 3 standard library only.
"""

import datetime
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import cpu, replace_block  # noqa: E402  (the generated-block writer the benches share)

UNITS = {"ps": 1e-9, "ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}

# The adversarial sets (spatix_workload::Adversary::all), as the bench names them, and a
# column label each.
SETS = [
    ("100k coincident points", "coincident"),
    ("a world-sized box among 100k tiny boxes", "world box + dust"),
    ("boxes on cell and node boundaries", "on boundaries"),
    ("coordinates near 1e7 (the limit of f32's precision)", "near 1e7"),
    ("extremely thin boxes", "thin"),
    ("agents crossing one boundary every frame", "crossing"),
]
CLEAN = "100k boxes, clean"
STRAYS = [
    ("the same and one stray at 1e9", "a stray at 1e9"),
    ("the same and strays at -1e12, 1e30, ±MAX", "strays at -1e12, 1e30, ±MAX"),
]


def parse(lines):
    """Medians in ms by (set, op, structure), bytes per element by (structure, set), and the
    structures in the order they ran."""
    times, memory, order = {}, {}, []
    current = None
    for line in lines:
        line = line.strip()
        m = re.match(r"^adversarial/(.+)/(build|query|pairs|frame)/(\w+)$", line)
        if m:
            current = (m.group(1), m.group(2), m.group(3))
            if m.group(3) not in order:
                order.append(m.group(3))
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if t and current:
            times[current] = float(t.group(1)) * UNITS[t.group(2)]
            current = None
        mem = re.match(r"^memory (\w+) on '(.+)' N=\d+: ([\d.]+) bytes/element", line)
        if mem:
            memory[(mem.group(1), mem.group(2))] = float(mem.group(3))
    return times, memory, order


def ms(value):
    if value is None:
        return ""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def table(title, header, rows):
    out = [f"**{title}**", "", "| " + " | ".join(header) + " |",
           "| --- |" + " ---: |" * (len(header) - 1)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def adversarial(times, memory, order):
    labels = [label for _, label in SETS]
    blocks = []
    for op in ["build", "query", "pairs"]:
        rows = [[s] + [ms(times.get((name, op, s))) for name, _ in SETS] for s in order]
        blocks.append(table(f"{op}, ms", ["structure", *labels], rows))
    rows = []
    for s in order:
        mem = [memory.get((s, name)) for name, _ in SETS]
        rows.append([s, ms(times.get((SETS[5][0], "frame", s)))]
                    + ["" if m is None else f"{m:.1f}" for m in mem])
    blocks.append(table("frame (ms, crossing set) and bytes per element (with the 8-byte value slot)",
                        ["structure", "frame", *labels], rows))
    return "\n\n".join(blocks)


def strays(times, memory, order):
    """Clean against stray sets: each cell `clean / with strays`, the last column the worst
    ratio of any time or memory figure of the row."""
    header = ["structure"]
    for op in ["build", "query", "pairs"]:
        header += [f"{op} ms: clean / {label}" for _, label in STRAYS]
    header += [f"bytes: clean / {label}" for _, label in STRAYS] + ["worst ratio"]
    rows = []
    for s in order:
        row, ratios = [s], []
        for op in ["build", "query", "pairs"]:
            clean = times.get((CLEAN, op, s))
            for name, _ in STRAYS:
                got = times.get((name, op, s))
                row.append(f"{ms(clean)} / {ms(got)}" if clean and got else "")
                if clean and got:
                    ratios.append(got / clean)
        clean = memory.get((s, CLEAN))
        for name, _ in STRAYS:
            got = memory.get((s, name))
            row.append(f"{clean:.1f} / {got:.1f}" if clean and got else "")
            if clean and got:
                ratios.append(got / clean)
        row.append(f"{max(ratios):.2f}" if ratios else "")
        rows.append(row)
    return table("clean against stray data (f32, `u32` values)", header, rows)


def header():
    load = os.getloadavg()[0]
    return (f"Written by `python3 scripts/reliability-tables.py --write` from one run of "
            f"`cargo bench -p spatix-bench --bench adversarial` ({datetime.date.today()}, {cpu()}, "
            f"{os.cpu_count()} cores, load average (1 min) {load:.1f} when written).")


def main():
    times, memory, order = parse(sys.stdin)
    if not order:
        sys.exit("no benchmark results on standard input")
    blocks = {
        "adversarial": adversarial(times, memory, order),
        "strays": strays(times, memory, order),
    }
    if "--write" in sys.argv[1:]:
        path = ROOT / "docs" / "RELIABILITY.md"
        for name, text in blocks.items():
            replace_block(path, f"<!-- {name}:begin -->", f"<!-- {name}:end -->",
                          header() + "\n\n" + text)
        print(f"wrote {path}'s adversarial and strays blocks", file=sys.stderr)
    else:
        print("\n\n".join(blocks.values()))


if __name__ == "__main__":
    main()
