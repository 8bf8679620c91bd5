#!/usr/bin/env python3
"""Measures what stray rows cost `spatix pairs` and `spatix query`, for every `--index`, and
writes the table into docs/RELIABILITY.md's `<!-- strays-cli:begin -->` block.

    python3 scripts/strays-cli.py            # the table, on standard output
    python3 scripts/strays-cli.py --write    # and into docs/RELIABILITY.md

The data: 200,000 boxes of half-size 1 to 3 spread uniformly over [0, 20000]² (seeded), then
the same file with one more box at (1e9, 1e9), at (-1e12, 0), at (1e30, 1e30), and with two at
(±MAX, ±MAX); the queries are the first 2,000 boxes. Each command runs three times per file (release
build, output to a file under a temporary directory); the table gives its median wall time and the
index's memory per element (as the command reports it), clean and with each kind of stray, and the worst ratio to the
clean run. `brute-force` is left out: its pairs are quadratic in the file's length by design.
Python 3 standard library only.
"""

import datetime
import os
import pathlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import cpu, replace_block  # noqa: E402  (the generated-block writer the benches share)

N = 200_000
QUERIES = 2_000
# Runs of each command: the table gives the median wall time.
RUNS = 3
MAX = 1.7976931348623157e308
STRAYS = [
    ("1e9", [(1e9, 1e9)]),
    ("-1e12", [(-1e12, 0.0)]),
    ("1e30", [(1e30, 1e30)]),
    ("±MAX", [(MAX, MAX), (-MAX, -MAX)]),
]
INDEXES = ["packed", "grid", "loose-grid", "point-grid", "hierarchical", "layered", "sweep",
           "quadtree", "loose-quadtree", "mxcif"]


def write_files(folder):
    rng = random.Random(23)
    rows = []
    for i in range(N):
        x, y = rng.uniform(0, 20000), rng.uniform(0, 20000)
        w, h = rng.uniform(1, 3), rng.uniform(1, 3)
        rows.append(f"{i},{x - w!r},{y - h!r},{x + w!r},{y + h!r}")
    header = "id,min_x,min_y,max_x,max_y\n"
    files = {}
    clean = folder / "clean.csv"
    clean.write_text(header + "\n".join(rows) + "\n")
    files["clean"] = clean
    for name, spots in STRAYS:
        extra = [f"{N + k},{x!r},{y!r},{x!r},{y!r}" for k, (x, y) in enumerate(spots)]
        path = folder / f"stray-{len(files)}.csv"
        path.write_text(header + "\n".join(rows + extra) + "\n")
        files[name] = path
    queries = folder / "queries.csv"
    queries.write_text(header + "\n".join(rows[:QUERIES]) + "\n")
    return files, queries


def run(args):
    """Wall seconds of one command (which must succeed) and the index's bytes per element
    that it reports. (Not the process's peak resident memory: on Linux a child forked from
    this script inherits the script's high-water mark, which the file generation sets.)"""
    start = time.perf_counter()
    child = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    err = child.stderr.decode()
    if child.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed: {err}")
    found = re.search(r"([0-9.]+) bytes per element", err)
    if not found:
        sys.exit(f"{' '.join(map(str, args))}: no 'bytes per element' in its report: {err}")
    return wall, float(found.group(1))


def measure(binary, files, queries, folder):
    results = {}
    for index in INDEXES:
        for command in ["pairs", "query"]:
            for name, path in files.items():
                out = folder / "out.csv"
                args = [binary, command, path] + ([queries] if command == "query" else [])
                runs = [run(args + ["--index", index, "--out", out]) for _ in range(RUNS)]
                results[(index, command, name)] = (statistics.median(w for w, _ in runs), runs[0][1])
                print(f"{index} {command} {name}: {results[(index, command, name)]}",
                      file=sys.stderr)
    return results


def table(results):
    names = ["clean"] + [name for name, _ in STRAYS]
    header = ["`--index`", "command"] + [f"s / B: {n}" for n in names] + ["worst ratio"]
    lines = ["| " + " | ".join(header) + " |", "| --- | --- |" + " ---: |" * (len(header) - 2)]
    for index in INDEXES:
        for command in ["pairs", "query"]:
            clean = results[(index, command, "clean")]
            cells, ratios = [], []
            for n in names:
                wall, per = results[(index, command, n)]
                cells.append(f"{wall:.2f} / {per:.0f}")
                ratios += [wall / clean[0], per / clean[1]]
            lines.append(f"| {index} | {command} | " + " | ".join(cells) + f" | {max(ratios):.2f} |")
    return "\n".join(lines)


def main():
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "spatix-cli"], cwd=ROOT,
                   check=True)
    binary = ROOT / "target" / "release" / "spatix"
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        files, queries = write_files(folder)
        results = measure(binary, files, queries, folder)
    load = os.getloadavg()[0]
    text = (f"Written by `python3 scripts/strays-cli.py --write` ({datetime.date.today()}, {cpu()}, "
            f"{os.cpu_count()} cores, load average (1 min) {load:.1f} when written; median wall seconds of {RUNS} runs "
            "/ the index's bytes per element as the command reports it):\n\n"
            + table(results))
    if "--write" in sys.argv[1:]:
        replace_block(ROOT / "docs" / "RELIABILITY.md", "<!-- strays-cli:begin -->",
                      "<!-- strays-cli:end -->", text)
        print("wrote docs/RELIABILITY.md's strays-cli block", file=sys.stderr)
    else:
        print(text)


if __name__ == "__main__":
    main()
