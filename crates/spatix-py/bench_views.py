#!/usr/bin/env python3
"""Opening a saved static index from Python against building it, in one process.

For a ``PackedIndex`` of N boxes and a ``KdTree`` of N points (the seeded data of
``bench.py``, float64): the build, ``from_bytes`` (the arrays copied and checked), and
``from_buffer`` over a ``numpy.memmap(mode="r")`` of the saved file (read in place: one
pass that checks the bytes; the file is in the page cache), each the median of ``--repeat``
runs, with the opened index's answers checked equal to the built one's; then a protocol-5
pickle of the kd-tree with its byte form out of band (``buffer_callback``), and its round
trip.

    python crates/spatix-py/bench_views.py            # 1M, prints the table
    python crates/spatix-py/bench_views.py --write    # and writes it into docs/BENCHMARKS.md

``scripts/bench-python.sh views`` builds the extension in the release profile and runs this.
"""

import argparse
import datetime
import os
import pathlib
import pickle
import statistics
import tempfile
import time

import numpy as np

import spatix
from benchdoc import machine, replace_block

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN = "<!-- python-views:begin -->"
END = "<!-- python-views:end -->"


def median_time(fn, repeat):
    """The median seconds of ``repeat`` calls of ``fn``, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def fmt(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def same(a, b, q, windows):
    """The opened index answers as the built one."""
    if isinstance(a, spatix.KdTree):
        for x, y in zip(a.query(q, 4), b.query(q, 4)):
            np.testing.assert_array_equal(x, y)
    else:
        np.testing.assert_array_equal(a.query(windows), b.query(windows))
        for x, y in zip(a.nearest(q, 4), b.nearest(q, 4)):
            np.testing.assert_array_equal(x, y)


def rows_of(name, build, n, q, windows, repeat, folder):
    built_s, index = median_time(build, repeat)
    data = index.to_bytes()
    path = folder / f"{name}.spatix"
    path.write_bytes(data)
    cls = type(index)
    load_s, loaded = median_time(lambda: cls.from_bytes(data), repeat)
    view_s, view = median_time(lambda: cls.from_buffer(np.memmap(path, dtype=np.uint8, mode="r")), repeat)
    assert "in place" in repr(view), repr(view)
    same(loaded, index, q, windows)
    same(view, index, q, windows)
    size = f"{len(data) / 2**20:.1f} MiB"
    return [
        (f"{name}({n:,}) build", fmt(built_s), "1", size),
        (f"{name}.from_bytes", fmt(load_s), f"{built_s / load_s:.1f}×", size),
        (f"{name}.from_buffer(numpy.memmap)", fmt(view_s), f"{built_s / view_s:.1f}×", size),
    ], index


def pickle_rows(tree, q, repeat):
    def round_trip():
        buffers = []
        small = pickle.dumps(tree, protocol=5, buffer_callback=buffers.append)
        return small, buffers, pickle.loads(small, buffers=buffers)

    seconds, (small, buffers, again) = median_time(round_trip, repeat)
    same(again, tree, q, None)
    out_of_band = sum(len(memoryview(b).cast("B")) for b in buffers)
    return [
        (
            "KdTree pickle protocol 5 round trip (dumps + loads)",
            fmt(seconds),
            "",
            f"pickle {len(small)} B, {len(buffers)} buffer of {out_of_band / 2**20:.1f} MiB out of band",
        )
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="boxes and points (1M)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--write", action="store_true", help="rewrite docs/BENCHMARKS.md's block")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    side = 1000.0 * (args.n / 10_000) ** 0.5
    points = rng.uniform(0, side, (args.n, 2))
    half = rng.uniform(1, 3, (args.n, 2))
    boxes = np.hstack([points - half, points + half])
    q = rng.uniform(0, side, (1000, 2))
    windows = np.hstack([q - 5, q + 5])
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        packed, _ = rows_of("PackedIndex", lambda: spatix.PackedIndex(boxes), args.n, q, windows, args.repeat, folder)
        kd, tree = rows_of("KdTree", lambda: spatix.KdTree(points), args.n, q, windows, args.repeat, folder)
        rows = packed + kd + pickle_rows(tree, q, args.repeat)
    date = datetime.date.today().isoformat()
    header = (
        f"One run of `python crates/spatix-py/bench_views.py` on {date} ({machine()}); float64, "
        f"median of {args.repeat} runs; load average (1 min) {load_start:.2f} at the start. "
        "Every opened index answered as the built one."
    )
    text = "| step | time | build ÷ step | bytes |\n| --- | ---: | ---: | --- |\n" + "\n".join(
        f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows
    )
    print(header, "", text, sep="\n")
    if args.write:
        replace_block(ROOT / "docs" / "BENCHMARKS.md", BEGIN, END, f"{header}\n\n{text}")


if __name__ == "__main__":
    main()
