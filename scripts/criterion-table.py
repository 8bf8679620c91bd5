#!/usr/bin/env python3
"""Turns the output of `cargo bench -p spatix-bench --bench structures` into README tables.

    cargo bench -p spatix-bench --bench structures | tee bench.txt
    python3 scripts/criterion-table.py < bench.txt            # the tables, on standard output
    python3 scripts/criterion-table.py --write < bench.txt    # README's structures block
    python3 scripts/criterion-table.py --write --args "ARGS" < bench.txt   # ... naming the
                                                              # bench's arguments in its header


Criterion prints each benchmark's id (`<group>/<structure>/<mix>/<N>`) and then its estimate
`time: [low median high]`; the harness prints `memory <structure> <mix> N=<n>: <b>
bytes/element ...` lines. Prints one Markdown table per mix: a row per structure, the median
of each benchmark (frame at every N; pairs, queries and build at the largest N) and the bytes
per element at the largest N. A benchmark that did not run shows as an empty cell.
"""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import replace_block, stamp  # noqa: E402  (the generated-block writer the benches share)

BEGIN = "<!-- structures:begin -->"
END = "<!-- structures:end -->"

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


def tables(times, memory):
    """One Markdown table per mix, as one string."""
    out = []
    sizes = sorted({key[3] for key in times})
    largest = sizes[-1]
    mixes = [m for m in ("uniform", "clustered", "mixed") if any(k[2] == m for k in times)]
    structures = []
    for key in times:
        if key[1] not in structures:
            structures.append(key[1])
    for mix in mixes:
        out.append(f"\n**{mix}** (ms; bytes per element with the 8-byte value slot)\n")
        n_label = lambda n: f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"
        head = [f"frame {n_label(n)}" for n in sizes]
        head += [f"pairs {n_label(largest)}", f"10k queries {n_label(largest)}",
                 f"build {n_label(largest)}", f"B/elem {n_label(largest)}"]
        out.append("| structure | " + " | ".join(head) + " |")
        out.append("| --- |" + " ---: |" * len(head))
        for s in structures:
            if not any(k[1] == s and k[2] == mix for k in times):
                continue
            row = [ms(times.get(("frame", s, mix, n))) for n in sizes]
            row += [ms(times.get((g, s, mix, largest))) for g in ("pairs", "query", "build")]
            b = memory.get((s, mix, largest))
            row.append("" if b is None else f"{b:.1f}")
            out.append(f"| {s} | " + " | ".join(row) + " |")
    return "\n".join(out)


def header(args=""):
    """Date, machine, compiler and load of this run (the bench ran just before, here); `args`
    are the arguments the bench was given (after `--`), if the caller says."""
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    command = "cargo bench -p spatix-bench --bench structures" + (f" -- {args}" if args else "")
    return (f"One run of `{command}` on {stamp()}; {rustc}; "
            f"load average (1 min) {os.getloadavg()[0]:.1f} when the tables were written); single "
            "thread; criterion's median estimates.")


def main():
    times, memory = parse(sys.stdin)
    if not times:
        sys.exit("no criterion estimates in the input")
    argv = sys.argv[1:]
    if argv[:1] == ["--write"] and (len(argv) == 1 or (len(argv) == 3 and argv[1] == "--args")):
        args = argv[2] if len(argv) == 3 else ""
        replace_block(ROOT / "README.md", BEGIN, END, header(args) + "\n" + tables(times, memory))
        print(f"wrote README.md's {BEGIN} block", file=sys.stderr)
    elif sys.argv[1:]:
        sys.exit('usage: criterion-table.py [--write [--args "BENCH ARGS"]] < criterion-output')
    else:
        print(tables(times, memory))


if __name__ == "__main__":
    main()
