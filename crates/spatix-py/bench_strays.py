"""What stray rows cost every Python class: 200,000 boxes of half-size 1 to 3 spread uniformly
over [0, 20000]^2 (seeded), clean and with one more box at (1e9, 1e9), at (-1e12, 0), at
(1e30, 1e30), or two at (+-MAX, +-MAX). Each class is set up as a new user would: `KdTree` on
the boxes' lower-left corners, `PackedIndex` on the boxes, every dynamic class over the box
around all the data (strays included) and sized from it (`sample=boxes`), then filled with
`insert`. Per class and file, in ms: build (and insert), `pairs()` (`KdTree`: the 4 nearest of
the first 2,000 corners) and `query` of the first 2,000 boxes, medians of 3 runs (queries of
21), and the worst ratio to the clean file.

    python crates/spatix-py/bench_strays.py            # the table, on standard output
    python crates/spatix-py/bench_strays.py --write    # and into docs/RELIABILITY.md

Run it with the package installed (scripts/bench-python.sh's virtual environment).
"""

import datetime
import pathlib
import statistics
import sys
import time

import numpy as np

import spatix
from benchdoc import machine, replace_block

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
N = 200_000
QUERIES = 2_000
# Runs of the batch queries (a fraction of a millisecond each: the median of a few is noise).
QUERY_RUNS = 21
MAX = float(np.finfo(np.float64).max)
STRAYS = {
    "1e9": [(1e9, 1e9)],
    "-1e12": [(-1e12, 0.0)],
    "1e30": [(1e30, 1e30)],
    "±MAX": [(MAX, MAX), (-MAX, -MAX)],
}
DYNAMIC = ["UniformGrid", "LooseGrid", "PointGrid", "HierarchicalGrid", "Quadtree", "LooseQuadtree",
           "MxCifQuadtree", "Layered"]


def data():
    rng = np.random.default_rng(23)
    centres = rng.uniform(0, 20000, (N, 2))
    half = rng.uniform(1, 3, (N, 2))
    clean = np.hstack([centres - half, centres + half])
    files = {"clean": clean}
    for name, spots in STRAYS.items():
        files[name] = np.vstack([clean, [[x, y, x, y] for x, y in spots]])
    return files


def timed(job):
    start = time.perf_counter()
    job()
    return (time.perf_counter() - start) * 1e3


def median_ms(job, runs=3):
    return statistics.median(timed(job) for _ in range(runs))


def measure(name, boxes):
    """(build, pairs, query) medians in ms for class ``name`` on ``boxes``."""
    windows = boxes[:QUERIES]
    if name == "KdTree":
        points = np.ascontiguousarray(boxes[:, :2])
        tree = spatix.KdTree(points)
        return (median_ms(lambda: spatix.KdTree(points)),
                median_ms(lambda: tree.query(points[:QUERIES], k=4), runs=QUERY_RUNS),
                float("nan"))
    if name == "PackedIndex":
        index = spatix.PackedIndex(boxes)
        return (median_ms(lambda: spatix.PackedIndex(boxes)), median_ms(index.pairs),
                median_ms(lambda: index.query(windows), runs=QUERY_RUNS))
    world = (float(boxes[:, 0].min()), float(boxes[:, 1].min()), float(boxes[:, 2].max()),
             float(boxes[:, 3].max()))
    cls = getattr(spatix, name)

    def build():
        index = cls(world, sample=boxes)
        index.insert(boxes)
        return index

    index = build()
    return (median_ms(build), median_ms(index.pairs),
            median_ms(lambda: index.query(windows), runs=QUERY_RUNS))


def table():
    files = data()
    rows = []
    for name in ["PackedIndex", "KdTree"] + DYNAMIC:
        got = {label: measure(name, boxes) for label, boxes in files.items()}
        clean = got["clean"]
        worst = max(
            (v / c for label, ms in got.items() if label != "clean"
             for v, c in zip(ms, clean) if c == c and c > 0),
            default=float("nan"),
        )
        cells = " | ".join(
            "/".join("–" if v != v else f"{v:.1f}" for v in got[label]) for label in files
        )
        rows.append(f"| `{name}` | {cells} | {worst:.2f}× |")
        print(rows[-1], file=sys.stderr)
    header = (
        f"Measured {datetime.date.today()} on {machine()}: "
        f"`python crates/spatix-py/bench_strays.py --write`. Each cell: build / pairs / query "
        "of 2,000 windows, in ms (medians of 3 runs, queries of 21; `KdTree`: build / 4 nearest of 2,000 corners); "
        "the last column is the worst ratio to the clean file.\n\n"
        "| class | clean | + a stray at 1e9 | + at -1e12 | + at 1e30 | + two at ±MAX | worst |\n"
        "| --- | --- | --- | --- | --- | --- | ---: |"
    )
    return header + "\n" + "\n".join(rows)


def main():
    text = table()
    print(text)
    if "--write" in sys.argv[1:]:
        replace_block(ROOT / "docs" / "RELIABILITY.md", "<!-- strays-python:begin -->",
                      "<!-- strays-python:end -->", text)


if __name__ == "__main__":
    main()
