#!/usr/bin/env python3
"""Every intersecting pair between two sets of boxes (10M and 10M by default), on Dask.

Generates both sides in the workers (uniform boxes of half-size 1-3 in a square of side
1000 * sqrt(n / 10k), the data of crates/spatix-py/bench.py), keeps them in the cluster's
memory, then times ``spatix.dask.box_join`` and counts the pairs:

    python examples/dask_join.py                      # 10M x 10M, LocalCluster
    python examples/dask_join.py --n 1000000 --workers 2
    python examples/dask_join.py --scheduler tcp://10.0.0.5:8786

Needs ``pip install "spatix[dask]"``.
"""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster, wait

from spatix.dask import box_join

COLUMNS = ["min_x", "min_y", "max_x", "max_y"]


def side(n):
    """The side of the square the boxes' centres fill (about 0.6 pairs per box)."""
    return 1000.0 * np.sqrt(max(n, 1) / 10_000)


def partition(i, n, partitions, seed):
    """Partition ``i`` of ``n`` boxes: rows ``[i * n // partitions, (i + 1) * n // partitions)``,
    indexed by their row numbers, the same for any cluster."""
    start, stop = i * n // partitions, (i + 1) * n // partitions
    rng = np.random.default_rng([seed, i])
    centres = rng.uniform(0, side(n), (stop - start, 2))
    half = rng.uniform(1, 3, (stop - start, 2))
    return pd.DataFrame(np.hstack([centres - half, centres + half]), columns=COLUMNS, index=pd.RangeIndex(start, stop))


def boxes(n, partitions, seed):
    """``n`` boxes as a Dask DataFrame of ``partitions`` partitions, made in the workers."""
    meta = pd.DataFrame({c: pd.Series([], dtype=np.float64) for c in COLUMNS})
    return dd.from_map(partition, range(partitions), n=n, partitions=partitions, seed=seed, meta=meta)


def default_partitions(n):
    return max(2, n // 500_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="boxes on each side (10M)")
    parser.add_argument("--partitions", type=int, help="partitions of each side (default n / 500k)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (2)")
    parser.add_argument("--scheduler", help="address of a running scheduler instead of a LocalCluster")
    parser.add_argument("--shuffle", help="the shuffle's method: p2p or tasks (default: Dask's choice)")
    args = parser.parse_args()
    parts = args.partitions or default_partitions(args.n)

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0"))
    with client:
        left = boxes(args.n, parts, seed=1).persist()
        right = boxes(args.n, parts, seed=2).persist()
        wait([left, right])
        start = time.perf_counter()
        pairs = len(box_join(left, right, shuffle_method=args.shuffle))
        elapsed = time.perf_counter() - start
        print(f"{args.n:,} x {args.n:,} boxes, {parts} partitions each, {len(client.nthreads())} workers: "
              f"{pairs:,} intersecting pairs in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
