#!/usr/bin/env python3
"""spatix.dask.box_join against dask-geopandas' sjoin, on the same boxes and cluster;
and spatix.dask.knn_join checked against single-machine spatix.

Both sides are the boxes of ``examples/dask_join.py`` (uniform, half-size 1-3, made in the
workers and kept in memory); dask-geopandas gets GeoDataFrames of ``shapely.box`` polygons
built from the same rows, also made and kept in memory beforehand (untimed). Timed: spatix's
``box_join`` and counting its pairs; dask-geopandas' ``sjoin(predicate="intersects")`` and
counting its pairs, as is (its partitions' hulls decide which partition pairs it joins) and
after ``spatial_shuffle()`` of both sides (timed with the join). The pair counts must agree
(the run fails otherwise). With ``--knn N``, ``knn_join`` of N uniform points with N others
(k = 8) is timed too and checked against ``spatix.KdTree.query`` on one machine: the same
distances for every point, the same neighbours wherever the k-th distance is not tied. One
LocalCluster of ``--workers`` processes, one thread each.

    python crates/spatix-py/bench_dask.py --n 1000000            # prints the table
    python crates/spatix-py/bench_dask.py --n 1000000 --write    # and rewrites the block
                                                                 # of docs/BENCHMARKS.md

``scripts/bench-dask.sh`` installs dask-geopandas and geopandas into the venv and runs this.
"""

import argparse
import datetime
import importlib.metadata
import os
import pathlib
import sys
import time

import cloudpickle
import dask.dataframe as dd
import dask_geopandas
import geopandas
import pandas as pd
import shapely
from distributed import Client, LocalCluster, wait

import numpy as np
import spatix
from benchdoc import machine, replace_block
from spatix.dask import box_join, knn_join

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "examples"))
import dask_join  # noqa: E402

cloudpickle.register_pickle_by_value(dask_join)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN = "<!-- dask-bench:begin -->"
END = "<!-- dask-bench:end -->"


def polygons(df):
    """The boxes of a partition as shapely polygons, in a GeoDataFrame with the same index."""
    geometry = shapely.box(df["min_x"], df["min_y"], df["max_x"], df["max_y"])
    return geopandas.GeoDataFrame(geometry=geometry, index=df.index)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run(n, partitions, shuffle, spatial_shuffle):
    """``[(name, seconds, pairs)]`` for one size (printed as they come)."""
    left = dask_join.boxes(n, partitions, seed=1).persist()
    right = dask_join.boxes(n, partitions, seed=2).persist()
    meta = polygons(dask_join.partition(0, 0, 1, 0))
    gleft = dask_geopandas.from_dask_dataframe(left.map_partitions(polygons, meta=meta)).persist()
    gright = dask_geopandas.from_dask_dataframe(right.map_partitions(polygons, meta=meta)).persist()
    wait([left, right, gleft, gright])
    joins = {
        # The tiled join (both sides large): the comparison docs/BENCHMARKS.md keeps.
        "spatix.dask box_join": lambda: len(box_join(left, right, shuffle_method=shuffle, broadcast=False)),
        "dask-geopandas sjoin": lambda: len(dask_geopandas.sjoin(gleft, gright, predicate="intersects")),
    }
    if spatial_shuffle:
        joins["dask-geopandas spatial_shuffle + sjoin"] = lambda: len(
            dask_geopandas.sjoin(gleft.spatial_shuffle(), gright.spatial_shuffle(), predicate="intersects")
        )
    rows = []
    for name, join in joins.items():
        rows.append((name, *timed(join)))
        print(f"{n:,}: {name}: {rows[-1][1]:.1f} s, {rows[-1][2]:,} pairs", flush=True)
    if len({pairs for _, _, pairs in rows}) != 1:
        raise SystemExit(f"pair counts differ: {rows}")
    return rows


def knn_check(n, k=8):
    """Times ``knn_join`` of ``n`` points with ``n`` points and checks it against one
    ``KdTree``; ``(seconds, rows)``."""
    rng = np.random.default_rng(3)
    side = dask_join.side(n)
    left_xy, right_xy = rng.uniform(0, side, (n, 2)), rng.uniform(0, side, (n, 2))
    parts = dask_join.default_partitions(n)
    left = dd.from_pandas(pd.DataFrame(left_xy, columns=["x", "y"]), npartitions=parts).persist()
    right = dd.from_pandas(pd.DataFrame(right_xy, columns=["x", "y"]), npartitions=parts).persist()
    wait([left, right])
    seconds, out = timed(lambda: knn_join(left, right, k, broadcast=False).compute())
    out = out.sort_values(["left_index", "rank"])
    if len(out) != n * k or not np.array_equal(out["rank"].to_numpy(), np.tile(np.arange(1, k + 1), n)):
        raise SystemExit(f"knn_join: {len(out)} rows for {n} points, k = {k}")
    d, i = spatix.KdTree(right_xy).query(left_xy, k=k + 1)
    got_d = out["distance"].to_numpy().reshape(n, k)
    got_i = out["right_index"].to_numpy().reshape(n, k)
    if not np.allclose(got_d, d[:, :k], rtol=1e-12, atol=0):
        raise SystemExit("knn_join: distances differ from KdTree.query")
    untied = d[:, k - 1] < d[:, k]  # the k nearest are one set
    if not (np.sort(got_i, axis=1) == np.sort(i[:, :k], axis=1))[untied].all():
        raise SystemExit("knn_join: neighbours differ from KdTree.query")
    return seconds, len(out)


def versions():
    names = ["spatix", "dask", "distributed", "dask-geopandas", "geopandas", "shapely"]
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1_000_000], help="boxes on each side (1M)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (2)")
    parser.add_argument("--knn", type=int, help="also time and check knn_join on this many points a side")
    parser.add_argument("--shuffle", default="tasks", help="box_join's shuffle method (tasks; or p2p)")
    parser.add_argument(
        "--no-spatial-shuffle", action="store_true", help="skip dask-geopandas' spatial_shuffle + sjoin"
    )
    parser.add_argument("--write", action="store_true", help="rewrite the block of docs/BENCHMARKS.md")
    args = parser.parse_args()

    load_start = os.getloadavg()[0]
    lines = [
        "| boxes per side | partitions | pairs | spatix.dask box_join | dask-geopandas sjoin "
        "| spatial_shuffle + sjoin | fastest dask-geopandas ÷ spatix |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    with Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0")):
        for n in args.n:
            parts = dask_join.default_partitions(n)
            rows = run(n, parts, args.shuffle, not args.no_spatial_shuffle)
            ours, theirs = rows[0][1], [r[1] for r in rows[1:]]
            shuffled = f"{theirs[1]:.1f} s" if len(theirs) > 1 else "not run"
            lines.append(
                f"| {n:,} | {parts} | {rows[0][2]:,} | {ours:.1f} s | {theirs[0]:.1f} s | {shuffled} "
                f"| {min(theirs) / ours:.1f} |"
            )
            print(lines[-1], flush=True)
        if args.knn:
            seconds, rows = knn_check(args.knn)
            knn_line = (
                f"`knn_join` of {args.knn:,} points with {args.knn:,} (k = 8): {rows:,} rows in "
                f"{seconds:.1f} s, checked against one `KdTree.query` (same distances everywhere, "
                "same neighbours wherever the 8th distance is not tied)."
            )
            print(knn_line, flush=True)
    load_end = os.getloadavg()[0]
    header = (
        f"One run of `python crates/spatix-py/bench_dask.py` on {datetime.date.today().isoformat()} "
        f"({machine()}; {versions()}). LocalCluster of {args.workers} worker processes, one thread "
        f"each; box_join with `shuffle_method={args.shuffle!r}`; load average (1 min) "
        f"{load_start:.2f} at the start, {load_end:.2f} at the end. "
        "Pair counts checked equal."
    )
    text = "\n".join([header, "", *lines] + (["", knn_line] if args.knn else []))
    print(text)
    if args.write:
        replace_block(ROOT / "docs" / "BENCHMARKS.md", BEGIN, END, text)


if __name__ == "__main__":
    main()
