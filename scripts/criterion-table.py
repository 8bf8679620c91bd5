#!/usr/bin/env python3
"""Turns the output of `cargo bench -p spatix-bench --bench structures` into README tables.

    cargo bench -p spatix-bench --bench structures | tee bench.txt
    python3 scripts/criterion-table.py < bench.txt

Criterion prints each benchmark's id (`<group>/<structure>/<mix>/<N>`) and then its estimate
`time: [low median high]`; the harness prints `memory <structure> <mix> N=<n>: <b>
bytes/element ...` lines. Prints one Markdown table per mix: a row per structure, the median
of each benchmark (frame at every N; pairs, queries and build at the largest N) and the bytes
per element at the largest N. A benchmark that did not run shows as an empty cell.
"""

import re
import sys

UNITS = {"ps": 1e-9, "ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}


def parse(lines):
    """Medians in ms by (group, structure, mix, n), and bytes per element by (structure, mix, n)."""
    times, memory = {}, {}
    current = None
    for line in lines:
        m = re.match(r"^(build|query|pairs|frame)/(\w+)/(\w+)/(\d+)", line.strip())
        if m:
            current = (m.group(1), m.group(2), m.group(3), int(m.group(4)))
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if t and current:
            times[current] = float(t.group(1)) * UNITS[t.group(2)]
            current = None
        mem = re.match(r"^memory (\w+) (\w+) N=(\d+): ([\d.]+) bytes/element", line.strip())
        if mem:
            memory[(mem.group(1), mem.group(2), int(mem.group(3)))] = float(mem.group(4))
    return times, memory


def ms(value):
    if value is None:
        return ""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def main():
    times, memory = parse(sys.stdin)
    if not times:
        sys.exit("no criterion estimates in the input")
    sizes = sorted({key[3] for key in times})
    largest = sizes[-1]
    mixes = [m for m in ("uniform", "clustered", "mixed") if any(k[2] == m for k in times)]
    structures = []
    for key in times:
        if key[1] not in structures:
            structures.append(key[1])
    for mix in mixes:
        print(f"\n**{mix}** (ms; bytes per element with the 8-byte value slot)\n")
        n_label = lambda n: f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"
        head = [f"frame {n_label(n)}" for n in sizes]
        head += [f"pairs {n_label(largest)}", f"10k queries {n_label(largest)}",
                 f"build {n_label(largest)}", f"B/elem {n_label(largest)}"]
        print("| structure | " + " | ".join(head) + " |")
        print("| --- |" + " ---: |" * len(head))
        for s in structures:
            if not any(k[1] == s and k[2] == mix for k in times):
                continue
            row = [ms(times.get(("frame", s, mix, n))) for n in sizes]
            row += [ms(times.get((g, s, mix, largest))) for g in ("pairs", "query", "build")]
            b = memory.get((s, mix, largest))
            row.append("" if b is None else f"{b:.1f}")
            print(f"| {s} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
