#!/usr/bin/env python3
"""spatix against the spatial indexes Python users pick today, in one process.

Times spatix and scipy's cKDTree, pykdtree, shapely's STRtree and geoindex-rs on the same
seeded data (N uniform points or boxes of half-size 1-3 in a square of side
1000 * sqrt(N / 10k), float64), one thread each (``workers=1``, ``OMP_NUM_THREADS=1``),
checks that every library returns the same answers (the run fails otherwise), and prints a
Markdown table: each time is the median of ``--repeat`` runs.

    python crates/spatix-py/bench.py            # 1M elements, prints the table
    python crates/spatix-py/bench.py --write    # and writes it into docs/BENCHMARKS.md
                                                # and the headline into README.md
    python crates/spatix-py/bench.py --n 100000 --repeat 1   # a quick look

``scripts/bench-python.sh`` installs the peers and spatix into a virtual environment and
runs this.
"""

import os

# One thread for every library: pykdtree reads OpenMP's variable when it is imported.
os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib.metadata  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pykdtree.kdtree  # noqa: E402
import scipy.spatial  # noqa: E402
import shapely  # noqa: E402
from geoindex_rs import rtree as gi  # noqa: E402

import spatix  # noqa: E402
from benchdoc import machine, replace_block, stamp  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN = "<!-- python-bench:begin -->"
END = "<!-- python-bench:end -->"
HEAD_BEGIN = "<!-- python-bench-headline:begin -->"
HEAD_END = "<!-- python-bench-headline:end -->"


class Mismatch(Exception):
    """Two libraries answered differently."""


def measure(fns, repeat):
    """``{name: (median seconds, last result)}`` of each ``fns[name]()`` over ``repeat``
    rounds; each round runs every function once, so that a slow period of a shared machine
    falls on all of them alike."""
    times = {name: [] for name in fns}
    results = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(times[name]), results[name]) for name in fns}


def data(n, queries, seed=1):
    """Points, boxes, query points and 50 x 50 query windows, all float64."""
    rng = np.random.default_rng(seed)
    side = 1000.0 * np.sqrt(n / 10_000)
    points = rng.uniform(0, side, (n, 2))
    centres = rng.uniform(0, side, (n, 2))
    half = rng.uniform(1, 3, (n, 2))
    boxes = np.hstack([centres - half, centres + half])
    q = rng.uniform(0, side, (queries, 2))
    corner = rng.uniform(-25, side - 25, (queries, 2))
    windows = np.hstack([corner, corner + 50])
    return points, boxes, q, windows


def sorted_pairs(a, b):
    """Pairs ``(a[i], b[i])`` as an ``(m, 2)`` int64 array sorted by row."""
    pairs = np.column_stack([np.asarray(a, np.int64), np.asarray(b, np.int64)])
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def same_pairs(name, reference, pairs):
    if reference.shape != pairs.shape or not np.array_equal(reference, pairs):
        raise Mismatch(f"{name}: {len(pairs)} pairs, the reference {len(reference)}")


def same_neighbours(name, points, q, reference, indices):
    """The same k nearest points for every query, up to the order of equal distances."""
    reference = reference.reshape(len(q), -1)
    indices = np.asarray(indices, np.int64).reshape(len(q), -1)
    if reference.shape != indices.shape:
        raise Mismatch(f"{name}: shape {indices.shape}, the reference {reference.shape}")
    for row in np.nonzero((reference != indices).any(axis=1))[0]:
        d = lambda i: np.sort(np.hypot(*(points[i] - q[row]).T))  # noqa: E731
        if not np.array_equal(d(reference[row]), d(indices[row])):
            raise Mismatch(f"{name}: query {row} finds {indices[row]}, the reference {reference[row]}")


def geoindex_tree(boxes):
    builder = gi.RTreeBuilder(len(boxes))
    builder.add(boxes)  # an (n, 4) C-contiguous array: its documented interleaved form
    return builder.finish()


def knn_rows(points, q, repeat):
    """Build + k nearest of each query point, k = 1 and 8."""
    rows = []
    point_boxes = np.hstack([points, points])
    for k in (1, 8):
        def spatix_kd():
            return spatix.KdTree(points).query(q, k=k)[1]

        def spatix_packed():
            return spatix.PackedIndex(points).nearest(q, k=k)[1]

        def scipy_kd():
            return scipy.spatial.cKDTree(points).query(q, k=k, workers=1)[1]

        def pykd():
            return pykdtree.kdtree.KDTree(points).query(q, k=k)[1]

        def geoindex():
            tree = geoindex_tree(point_boxes)
            return np.array(
                [np.asarray(gi.neighbors(tree, x, y, max_results=k, max_distance=None)) for x, y in q]
            )

        results = measure(
            {
                "spatix KdTree": spatix_kd,
                "spatix PackedIndex": spatix_packed,
                "scipy cKDTree": scipy_kd,
                "pykdtree KDTree": pykd,
                "geoindex-rs RTree": geoindex,
            },
            repeat,
        )
        reference = np.asarray(results["spatix KdTree"][1], np.int64)
        for name, (_, found) in results.items():
            same_neighbours(name, points, q, reference, found)
        rows.append((f"Build + {len(q) // 1000}k nearest neighbours, k = {k}", len(points), results))
    return rows


def box_rows(boxes, windows, repeat):
    """Build from boxes, window queries on the built index, all intersecting pairs."""
    geoms = shapely.box(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3])
    window_geoms = shapely.box(windows[:, 0], windows[:, 1], windows[:, 2], windows[:, 3])
    world = (0.0, 0.0, float(boxes[:, 2].max()), float(boxes[:, 3].max()))
    sample = boxes[:: max(1, len(boxes) // 10_000)]

    builds = measure(
        {
            "spatix PackedIndex": lambda: spatix.PackedIndex(boxes),
            "spatix LooseGrid": lambda: _inserted(spatix.LooseGrid(world, sample=sample), boxes),
            "shapely STRtree": lambda: shapely.STRtree(geoms),
            "geoindex-rs RTree": lambda: geoindex_tree(boxes),
        },
        repeat,
    )
    packed = builds["spatix PackedIndex"][1]
    grid, grid_ids = builds["spatix LooseGrid"][1]
    strtree = builds["shapely STRtree"][1]
    gitree = builds["geoindex-rs RTree"][1]
    # A grid's ids are handles: position of each id in insertion order.
    order = np.argsort(grid_ids)
    position = lambda ids: order[np.searchsorted(grid_ids, ids, sorter=order)]  # noqa: E731

    def shapely_windows():
        return strtree.query(window_geoms, predicate="intersects")

    def geoindex_windows():
        found = [np.asarray(gi.search(gitree, *w)) for w in windows]
        return np.repeat(np.arange(len(windows)), [len(f) for f in found]), np.concatenate(found)

    queries = measure(
        {
            "spatix PackedIndex": lambda: packed.query(windows),
            "spatix LooseGrid": lambda: grid.query(windows),
            "shapely STRtree": shapely_windows,
            "geoindex-rs RTree": geoindex_windows,
        },
        repeat,
    )
    reference = sorted_pairs(*queries["spatix PackedIndex"][1])
    for name, (_, (w, found)) in queries.items():
        if name == "spatix LooseGrid":
            found = position(found)
        same_pairs(name, reference, sorted_pairs(w, found))
    # A build is checked by the window queries of the index it built.

    def shapely_pairs():
        i, j = strtree.query(geoms, predicate="intersects")
        keep = i < j
        return i[keep], j[keep]

    def geoindex_pairs():
        joined = gi.tree_join(gitree, gitree)
        i = np.asarray(joined["left"])
        j = np.asarray(joined["right"])
        keep = i < j
        return i[keep], j[keep]

    pairs = measure(
        {
            "spatix PackedIndex": packed.pairs,
            "spatix LooseGrid": grid.pairs,
            "shapely STRtree": shapely_pairs,
            "geoindex-rs RTree": geoindex_pairs,
        },
        repeat,
    )
    reference = sorted_pairs(*pairs["spatix PackedIndex"][1].T)
    for name, (_, found) in pairs.items():
        if name.startswith("spatix"):
            found = found.T
            if name == "spatix LooseGrid":
                found = np.sort(position(found), axis=0)
        same_pairs(name, reference, sorted_pairs(*found))

    n = len(boxes)
    return [
        (f"Build from {n // 1000 if n < 1_000_000 else n // 1_000_000}"
         f"{'k' if n < 1_000_000 else 'M'} boxes", n, builds),
        (f"{len(windows) // 1000}k window queries (50 x 50) on the built boxes", n, queries),
        ("All intersecting pairs of the built boxes", n, pairs),
    ]


def convention_rows(points, boxes, q, repeat):
    """scipy's and shapely's own calls against spatix's, on indexes built beforehand:
    query_ball_point and query_pairs on the points, STRtree.query_nearest on the boxes, and
    count_neighbors between two trees of 100k points."""
    tree, theirs = spatix.KdTree(points), scipy.spatial.cKDTree(points)
    r = 3.0
    balls = measure(
        {
            "spatix KdTree": lambda: tree.query_ball_point(q, r),
            "scipy cKDTree": lambda: theirs.query_ball_point(q, r, workers=1),
        },
        repeat,
    )
    reference = [sorted(b) for b in balls["spatix KdTree"][1]]
    if [sorted(b) for b in balls["scipy cKDTree"][1]] != reference:
        raise Mismatch("scipy cKDTree: query_ball_point differs")
    close = measure(
        {
            "spatix KdTree": lambda: tree.query_pairs(1.0, output_type="ndarray"),
            "scipy cKDTree": lambda: theirs.query_pairs(1.0, output_type="ndarray"),
        },
        repeat,
    )
    same_pairs("scipy cKDTree", sorted_pairs(*close["spatix KdTree"][1].T), sorted_pairs(*close["scipy cKDTree"][1].T))
    packed, strtree = spatix.PackedIndex(boxes), shapely.STRtree(shapely.box(*boxes.T))
    q_points = shapely.points(q)
    nearest = measure(
        {
            "spatix PackedIndex": lambda: packed.query_nearest(q),
            "shapely STRtree": lambda: strtree.query_nearest(q_points),
        },
        repeat,
    )
    same_pairs("shapely STRtree", sorted_pairs(*nearest["spatix PackedIndex"][1]), sorted_pairs(*nearest["shapely STRtree"][1]))
    # Two sets of 100k uniform points at the data's density (a square of side
    # 1000 * sqrt(100k / 10k)), as the issue that asked for the call measured it.
    m = 100_000
    rng = np.random.default_rng(2)
    side = 1000.0 * (m / 10_000) ** 0.5
    one, other = rng.uniform(0, side, (m, 2)), rng.uniform(0, side, (m, 2))
    near_a, near_b = spatix.KdTree(one), spatix.KdTree(other)
    their_a, their_b = scipy.spatial.cKDTree(one), scipy.spatial.cKDTree(other)
    counts = measure(
        {
            "spatix KdTree": lambda: near_a.count_neighbors(near_b, r),
            "scipy cKDTree": lambda: their_a.count_neighbors(their_b, r),
        },
        repeat,
    )
    if counts["spatix KdTree"][1] != counts["scipy cKDTree"][1]:
        raise Mismatch("scipy cKDTree: count_neighbors differs")
    k = len(q) // 1000
    return [
        (f"{k}k query_ball_point (r = {r:g}) on a built tree", len(points), balls),
        ("query_pairs (r = 1) of the points of a built tree", len(points), close),
        (f"{k}k query_nearest (every tie) on built boxes", len(boxes), nearest),
        (f"count_neighbors (r = {r:g}) of two built trees of {m // 1000}k points", m, counts),
    ]


def frame_pairs_rows(boxes, repeat):
    """Boxes that change every frame: from the array to every intersecting pair, sorted
    (``i < j``, lexicographic), with no index kept between calls."""

    def shapely_frame():
        geoms = shapely.box(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3])
        i, j = shapely.STRtree(geoms).query(geoms, predicate="intersects")
        keep = i < j
        return sorted_pairs(i[keep], j[keep])

    def geoindex_frame():
        tree = geoindex_tree(boxes)
        joined = gi.tree_join(tree, tree)
        i = np.asarray(joined["left"])
        j = np.asarray(joined["right"])
        keep = i < j
        return sorted_pairs(i[keep], j[keep])

    frames = measure(
        {
            "spatix pairs()": lambda: spatix.pairs(boxes),
            "shapely STRtree": shapely_frame,
            "geoindex-rs RTree": geoindex_frame,
        },
        repeat,
    )
    reference = frames["spatix pairs()"][1]
    for name, (_, found) in frames.items():
        same_pairs(name, reference, found)
    return [("Build + all intersecting pairs, sorted (one frame)", len(boxes), frames)]


def _inserted(grid, boxes):
    return grid, grid.insert(boxes)


def fmt(seconds):
    ms = seconds * 1000
    return f"{ms:.3g} ms" if ms < 100 else f"{ms:.0f} ms"


def table(rows):
    peers = ["scipy cKDTree", "pykdtree KDTree", "shapely STRtree", "geoindex-rs RTree"]
    lines = [
        "| workload | N | best spatix | " + " | ".join(peers) + " | spatix ÷ fastest peer |",
        "| --- | ---: | --- | " + " | ".join("---:" for _ in peers) + " | ---: |",
    ]
    summary = []
    for name, n, results in rows:
        ours = {k: v[0] for k, v in results.items() if k.startswith("spatix")}
        best = min(ours, key=ours.get)
        theirs = {k: v[0] for k, v in results.items() if not k.startswith("spatix")}
        fastest = min(theirs, key=theirs.get)
        ratio = ours[best] / theirs[fastest]
        cells = [fmt(theirs[p]) if p in theirs else "—" for p in peers]
        lines.append(
            f"| {name} | {n:,} | {best.removeprefix('spatix ')} {fmt(ours[best])} | "
            + " | ".join(cells)
            + f" | {ratio:.2f} |"
        )
        summary.append((name, best, ours[best], fastest, theirs[fastest], ratio))
    return "\n".join(lines), summary


def versions():
    names = ["spatix", "numpy", "scipy", "pykdtree", "shapely", "geoindex-rs"]
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="points and boxes (1M)")
    parser.add_argument("--queries", type=int, default=10_000, help="queries per batch (10k)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--write", action="store_true", help="rewrite docs/BENCHMARKS.md and README.md")
    args = parser.parse_args()

    load_start = os.getloadavg()[0]
    points, boxes, q, windows = data(args.n, args.queries)
    rows = (
        knn_rows(points, q, args.repeat)
        + box_rows(boxes, windows, args.repeat)
        + convention_rows(points, boxes, q, args.repeat)
        + frame_pairs_rows(boxes, args.repeat)
    )
    load_end = os.getloadavg()[0]
    text, summary = table(rows)
    date = datetime.date.today().isoformat()
    header = (
        f"One run of `python crates/spatix-py/bench.py` on {date} ({machine()}; {versions()}). "
        f"One thread each (`workers=1`, `OMP_NUM_THREADS=1`); float64 data; median of "
        f"{args.repeat} runs; load average (1 min) {load_start:.2f} at the start, "
        f"{load_end:.2f} at the end. Every library's answers were checked equal."
    )
    print(header, "", text, sep="\n")
    worst = max(s[5] for s in summary)
    print(f"\nworst spatix ÷ fastest peer: {worst:.2f}")
    if args.write:
        replace_block(ROOT / "docs" / "BENCHMARKS.md", BEGIN, END, f"{header}\n\n{text}")
        headline = "\n".join(
            f"| {name} | {best.removeprefix('spatix ')} {fmt(t)} | {peer} {fmt(pt)} | {ratio:.2f} |"
            for name, best, t, peer, pt, ratio in summary
        )
        replace_block(
            ROOT / "README.md",
            HEAD_BEGIN,
            HEAD_END,
            f"One run of `python crates/spatix-py/bench.py` on {stamp(f'Python {platform.python_version()}')}; "
            f"load average (1 min) {load_start:.1f} at the start), {args.n:,} elements, one thread "
            f"(full table: [docs/BENCHMARKS.md](docs/BENCHMARKS.md#from-python)).\n\n"
            "| workload | spatix | fastest Python peer | spatix ÷ peer |\n"
            "| --- | --- | --- | ---: |\n" + headline,
        )


if __name__ == "__main__":
    main()
