"""What the Python benchmark scripts (bench.py, bench_dask.py) share: the machine line
of their headers, and rewriting a generated block of a Markdown file."""

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


def replace_block(path, begin, end, text):
    """Replaces the text between the markers ``begin`` and ``end`` of the file ``path``."""
    content = path.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{path}: no {begin} ... {end} block to rewrite")
    path.write_text(pattern.sub(lambda _: f"{begin}\n{text}\n{end}", content))
