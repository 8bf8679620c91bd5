"""What the benchmark scripts (bench.py, bench_dask.py, bench_strays.py, and scripts/'s
criterion-table.py, sim-block.py, fuzz-table.py) share: the machine line of their headers, the
stamp README's blocks open with, and rewriting a generated block of a Markdown file."""

import datetime
import os
import pathlib
import platform
import re


def cpu():
    """The CPU's model name (from /proc/cpuinfo), or ``unknown CPU``."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def machine():
    """``CPU, cores, Python version`` of this machine."""
    return f"{cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def stamp(extra=""):
    """``DATE (CPU, N cores[, extra]``: how every measured block of README.md names its day and
    machine, after ``One run ... on``; the caller closes the parenthesis.
    scripts/regenerate-readme.sh checks that all of them name the same day and CPU."""
    return f"{datetime.date.today().isoformat()} ({cpu()}, {os.cpu_count()} cores" + (f", {extra}" if extra else "")


def replace_block(path, begin, end, text):
    """Replaces the text between the markers ``begin`` and ``end`` of the file ``path``."""
    content = path.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{path}: no {begin} ... {end} block to rewrite")
    path.write_text(pattern.sub(lambda _: f"{begin}\n{text}\n{end}", content))
