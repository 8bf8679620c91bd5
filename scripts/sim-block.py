#!/usr/bin/env python3
"""Runs README's main job (`spatix sim` with its defaults, release build) and writes what it
printed, with the date, machine and load, into README.md's `<!-- sim:begin -->` block.

    python3 scripts/sim-block.py

Extra arguments go to `spatix sim` (e.g. `--frames 60` for a quick look; the block then says
which arguments were given). Python 3 standard library only.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
from benchdoc import replace_block, stamp  # noqa: E402  (the generated-block writer the benches share)

BEGIN = "<!-- sim:begin -->"
END = "<!-- sim:end -->"


def main():
    args = sys.argv[1:]
    load = os.getloadavg()[0]
    command = ["cargo", "run", "--quiet", "--release", "-p", "spatix-cli", "--", "sim", *args]
    run = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"`{' '.join(command)}` failed with exit code {run.returncode}; README.md unchanged")
    given = f" `{' '.join(args)}`" if args else " its defaults"
    text = (f"One run of `spatix sim` with{given} on {stamp()}; release build; load average "
            f"(1 min) {load:.1f} at the start; written by `python3 scripts/sim-block.py`). This is "
            "what it printed:\n\n```text\n" + run.stdout.rstrip() + "\n```")
    replace_block(ROOT / "README.md", BEGIN, END, text)
    print(f"wrote README.md's {BEGIN} block", file=sys.stderr)


if __name__ == "__main__":
    main()
