#!/usr/bin/env python3
"""Soak runs: `spatix sim` for a long time on every structure, with a brute-force recount of
1000 sampled agents' pairs and a len() check every K frames. A difference stops the run (the
command exits 1, and so does this script); the table says, per structure, the frame times,
the recounts, whether the index's memory and the process's resident memory stayed flat over
the second half of the run, and the final state (the same for every structure, or the runs
disagree). Written into docs/RELIABILITY.md's `<!-- soak:begin -->` block with `--write`.

    python3 scripts/soak.py [--write] [--frames F] [--agents N] [--verify-every K] [INDEX...]

Defaults: 100,000 frames of 100,000 agents, a recount every 1000 frames, every structure but
brute-force (whose pairs are quadratic). Python 3 standard library only.
"""

import argparse
import datetime
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import cpu, replace_block  # noqa: E402  (the generated-block writer the benches share)

INDEXES = ["grid", "loose-grid", "point-grid", "hierarchical", "layered", "sweep", "quadtree",
           "loose-quadtree", "mxcif"]


def field(text, name):
    m = re.search(rf"^{re.escape(name)}\s+(.*)$", text, re.M)
    return m.group(1).strip() if m else ""


def soak(binary, index, args):
    command = [str(binary), "sim", "--index", index, "--agents", str(args.agents), "--frames",
               str(args.frames), "--verify-every", str(args.verify_every)]
    print(f"== soak: {' '.join(command[1:])}", file=sys.stderr)
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"{index}: exit code {run.returncode}\n{run.stderr}")
    out = run.stdout
    frame = re.search(r"^whole frame\s+([\d.]+) ms\s+([\d.]+) ms", out, re.M)
    return {
        "index": f"`{index}`",
        "frame": f"{frame.group(1)} / {frame.group(2)} ms" if frame else "",
        "verified": field(out, "verified"),
        "memory": field(out, "index memory"),
        "steady": field(out, "memory"),
        "state": field(out, "final state").split(" ")[0],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--verify-every", type=int, default=1000)
    parser.add_argument("indexes", nargs="*", default=INDEXES)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "spatix-cli"], cwd=ROOT,
                   check=True)
    binary = ROOT / "target" / "release" / "spatix"
    rows = [soak(binary, index, args) for index in args.indexes]
    states = {row["state"] for row in rows}
    load = os.getloadavg()[0]
    lines = [
        f"Written by `python3 scripts/soak.py --write --frames {args.frames} --agents {args.agents} "
        f"--verify-every {args.verify_every}` ({datetime.date.today()}, {cpu()}, {os.cpu_count()} "
        f"cores, load average (1 min) {load:.1f} when written). Final states: "
        + ("all identical." if len(states) == 1 else f"{len(states)} different: the runs disagree."),
        "",
        "| index | frame median / p95 | verified | index memory | memory (settled or not) | final state |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(row[k] for k in
                                          ["index", "frame", "verified", "memory", "steady", "state"])
                     + " |")
    text = "\n".join(lines)
    if args.write:
        replace_block(ROOT / "docs" / "RELIABILITY.md", "<!-- soak:begin -->", "<!-- soak:end -->",
                      text)
        print("wrote docs/RELIABILITY.md's soak block", file=sys.stderr)
    else:
        print(text)
    if len(states) != 1:
        sys.exit(1)


if __name__ == "__main__":
    main()
