"""Spatial joins of Dask DataFrames, with spatix doing the work in every partition or tile.

``pip install "spatix[dask]"`` brings ``dask[dataframe]`` and ``distributed``.

* :func:`box_join` -- every intersecting pair of boxes between two Dask DataFrames whose
  columns hold ``min_x, min_y, max_x, max_y``: ``(left_index, right_index)``.
* :func:`knn_join` -- for every point of ``left``, its ``k`` nearest points of ``right``:
  ``(left_index, right_index, distance, rank)``.

Each takes one of two paths, and both give the same rows:

* **broadcast**, when ``right`` is small (at most ``broadcast_rows`` rows, default
  1,000,000): the right side's index (:class:`spatix.PackedIndex` / :class:`spatix.KdTree`)
  is built once, in one task, and every partition of ``left`` is answered against it where
  it lies. No shuffle, no tiles. The index is a ``dask.delayed`` result that every
  partition's task takes as an argument: the threaded scheduler shares it, and a
  ``distributed`` cluster sends it to each worker once, pickled as its byte form (loading
  it copies arrays, it does not rebuild).
* **tiled**, when both sides are large: the plane is cut into :class:`Tiles` (half-open
  rectangles chosen from a sample, or given), each row is sent to the tiles it needs (a
  shuffle on the tile number), and spatix runs once per tile.

spatix releases the GIL in both. Indices in the results are the DataFrames' index labels.
Both return lazy Dask DataFrames; ``.compute()`` runs them on whatever scheduler is active
(a ``distributed.Client``, for a cluster). What is computed at call time: to choose the
path, the length of ``right`` and its sample, in one pass over ``right`` (not when
``broadcast`` is given, nor when ``tiles`` or ``halo`` is, which asks for the tiled path);
for the tiled path, a sample of a few rows of every partition of both sides (unless
``box_join`` is given its tiles) and, for ``knn_join``, the length of ``right``.

Example
-------
>>> import dask.dataframe as dd, pandas as pd
>>> from spatix.dask import box_join
>>> boxes = pd.DataFrame({"min_x": [0.0, 2.0, 9.0], "min_y": [0.0, 2.0, 9.0],
...                       "max_x": [2.0, 3.0, 9.5], "max_y": [2.0, 3.0, 9.5]})
>>> left = dd.from_pandas(boxes, npartitions=2)
>>> right = dd.from_pandas(boxes.iloc[1:], npartitions=1)
>>> pairs = box_join(left, right).compute()
>>> sorted(zip(pairs.left_index, pairs.right_index))
[(0, 1), (1, 1), (2, 2)]
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Sequence

import dask
import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask.delayed import Delayed

from ._spatix import KdTree, PackedIndex

__all__ = ["Tiles", "box_join", "knn_join"]

BOX_COLUMNS = ("min_x", "min_y", "max_x", "max_y")
POINT_COLUMNS = ("x", "y")
# Rows per partition taken for the sample that places the tiles (at most).
SAMPLE_ROWS = 20_000
# Tiles per output partition when the caller does not say: several, so that the hash
# shuffle on the tile number spreads the work evenly.
TILES_PER_PARTITION = 4
# Relative slack of the float comparisons that decide whether a kNN answer is proven
# complete: a query that is not proven is answered again by the exact fallback, so too
# much slack costs time, never correctness.
SLACK = 1e-9
# The broadcast path's default limit on the rows of ``right`` (see ``box_join``).
BROADCAST_ROWS = 1_000_000


class Tiles:
    """Half-open rectangles ``[x0, x1) x [y0, y1)`` that cover the plane exactly once.

    The tiles are the leaves of a tree of cuts (a cut at ``c`` on an axis sends ``< c`` one
    way and ``>= c`` the other). The outer tiles reach to infinity, so a row outside the
    sample's extent still has a tile, and every point of the plane lies in exactly one tile.
    Build them with :meth:`grid` (given edges) or :meth:`from_sample` (a kd split of sample
    points). ``bounds`` holds each tile's ``x0, y0, x1, y1``.

    Examples
    --------
    >>> from spatix.dask import Tiles
    >>> tiles = Tiles.grid([0.0], [10.0])
    >>> len(tiles)
    4
    >>> tiles.locate([[-1.0, 5.0], [0.0, 10.0]]).tolist()
    [0, 3]
    """

    def __init__(self, nodes: Sequence[tuple[int, float, int, int]], bounds: npt.ArrayLike) -> None:
        # One row per cut: axis, cut, below, above; a child >= 0 is a cut's row, < 0 the
        # tile ~child. No rows: one tile, the whole plane.
        self._axis = np.array([n[0] for n in nodes], dtype=np.int64)
        self._cut = np.array([n[1] for n in nodes], dtype=np.float64)
        self._below = np.array([n[2] for n in nodes], dtype=np.int64)
        self._above = np.array([n[3] for n in nodes], dtype=np.int64)
        self.bounds = np.asarray(bounds, dtype=np.float64).reshape(-1, 4)

    @classmethod
    def grid(cls, x_edges: npt.ArrayLike, y_edges: npt.ArrayLike) -> Tiles:
        """The grid cut at the strictly increasing, finite ``x_edges`` and ``y_edges``:
        ``(len(x_edges) + 1) * (len(y_edges) + 1)`` tiles, row by row from the lower left.

        Examples
        --------
        >>> from spatix.dask import Tiles
        >>> Tiles.grid([0.0, 1.0], []).bounds[:, [0, 2]].tolist()
        [[-inf, 0.0], [0.0, 1.0], [1.0, inf]]
        """
        xs = _edges(x_edges, "x_edges")
        ys = _edges(y_edges, "y_edges")
        bx = np.concatenate([[-np.inf], xs, [np.inf]])
        by = np.concatenate([[-np.inf], ys, [np.inf]])
        columns = len(bx) - 1
        nodes: list[Any] = []

        def build(ix0: int, ix1: int, iy0: int, iy1: int) -> int:
            # Columns ix0..ix1 and rows iy0..iy1 (exclusive ends): cut the longer run.
            if ix1 - ix0 == 1 and iy1 - iy0 == 1:
                return ~(iy0 * columns + ix0)
            row = len(nodes)
            nodes.append(None)
            if ix1 - ix0 >= iy1 - iy0:
                mid = (ix0 + ix1) // 2
                nodes[row] = (0, bx[mid], build(ix0, mid, iy0, iy1), build(mid, ix1, iy0, iy1))
            else:
                mid = (iy0 + iy1) // 2
                nodes[row] = (1, by[mid], build(ix0, ix1, iy0, mid), build(ix0, ix1, mid, iy1))
            return row

        build(0, columns, 0, len(by) - 1)
        gy, gx = (g.ravel() for g in np.meshgrid(np.arange(len(by) - 1), np.arange(columns), indexing="ij"))
        return cls(nodes, np.column_stack([bx[gx], by[gy], bx[gx + 1], by[gy + 1]]))

    @classmethod
    def from_sample(cls, points: npt.ArrayLike, count: int) -> Tiles:
        """About ``count`` tiles (rounded up to a power of two, fewer where the sample
        cannot be split) holding equal shares of the ``(n, 2)`` sample ``points``: each tile
        is cut at the median of its points along their wider spread. Non-finite sample rows
        are ignored.

        Examples
        --------
        >>> import numpy as np
        >>> from spatix.dask import Tiles
        >>> tiles = Tiles.from_sample(np.random.default_rng(1).uniform(0, 1, (1000, 2)), 4)
        >>> np.bincount(tiles.locate(np.random.default_rng(2).uniform(0, 1, (4000, 2)))).tolist()
        [1000, 1037, 959, 1004]
        """
        points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        points = points[np.isfinite(points).all(axis=1)]
        depth = max(0, math.ceil(math.log2(max(1, int(count)))))
        nodes: list[Any] = []
        bounds: list[np.ndarray] = []

        def build(inside: np.ndarray, box: np.ndarray, level: int) -> int:
            if level < depth and len(inside) >= 2:
                axis = int(np.ptp(inside[:, 1]) > np.ptp(inside[:, 0]))
                cut = float(np.median(inside[:, axis]))
                below = inside[:, axis] < cut
                if below.any() and not below.all():
                    row = len(nodes)
                    nodes.append(None)
                    low, high = box.copy(), box.copy()
                    low[axis + 2] = cut
                    high[axis] = cut
                    nodes[row] = (
                        axis,
                        cut,
                        build(inside[below], low, level + 1),
                        build(inside[~below], high, level + 1),
                    )
                    return row
            bounds.append(box)
            return ~(len(bounds) - 1)

        build(points, np.array([-np.inf, -np.inf, np.inf, np.inf]), 0)
        return cls(nodes, np.array(bounds))

    def __len__(self) -> int:
        return len(self.bounds)

    def __repr__(self) -> str:
        return f"Tiles(<{len(self)} tiles>)"

    def locate(self, points: npt.ArrayLike) -> np.ndarray:
        """The tile holding each of the ``(n, 2)`` finite points (exactly one each)."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        out = np.zeros(len(points), dtype=np.int64)
        if len(self._axis) == 0:
            return out
        rows = np.arange(len(points))
        node = np.zeros(len(points), dtype=np.int64)
        while len(rows):
            above = points[rows, self._axis[node]] >= self._cut[node]
            child = np.where(above, self._above[node], self._below[node])
            leaf = child < 0
            out[rows[leaf]] = ~child[leaf]
            rows, node = rows[~leaf], child[~leaf]
        return out

    def overlapping(self, boxes: npt.ArrayLike, closed: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(row, tile)`` of every tile each of the ``(n, 4)`` closed boxes overlaps;
        with ``closed``, of every closed tile each box touches (a superset)."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        if len(self._axis) == 0:
            return np.arange(len(boxes)), np.zeros(len(boxes), dtype=np.int64)
        found_rows, found_tiles = [], []
        if not closed:
            # A box whose corners lie in the same tile lies in it alone (tiles are
            # rectangles): most boxes, found by two point descents.
            first, last = self.locate(boxes[:, :2]), self.locate(boxes[:, 2:])
            alone = first == last
            found_rows.append(np.flatnonzero(alone))
            found_tiles.append(first[alone])
            rows = np.flatnonzero(~alone)
        else:
            rows = np.arange(len(boxes))
        found_rows.append(rows[:0])
        found_tiles.append(rows[:0])
        node = np.zeros(len(rows), dtype=np.int64)
        while len(rows):
            axis, cut = self._axis[node], self._cut[node]
            low = boxes[rows, axis]
            below = low <= cut if closed else low < cut
            above = boxes[rows, axis + 2] >= cut
            rows = np.concatenate([rows[below], rows[above]])
            child = np.concatenate([self._below[node[below]], self._above[node[above]]])
            leaf = child < 0
            found_rows.append(rows[leaf])
            found_tiles.append(~child[leaf])
            rows, node = rows[~leaf], child[~leaf]
        return np.concatenate(found_rows), np.concatenate(found_tiles)

    def grown(self, halo: npt.ArrayLike) -> np.ndarray:
        """The tiles' bounds grown by ``halo`` (one value, or one per tile) on every side,
        as an ``(n, 4)`` array of closed rectangles."""
        halo = np.broadcast_to(np.asarray(halo, dtype=np.float64), (len(self),))
        return self.bounds + np.column_stack([-halo, -halo, halo, halo])


def _edges(values: npt.ArrayLike, name: str) -> np.ndarray:
    edges = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ValueError(f"{name} must be finite and strictly increasing")
    return edges


def _check_rows(values: np.ndarray, labels: pd.Index, what: str, boxes: bool) -> None:
    """Raises ``ValueError`` naming the first row (by its index label) with a NaN or
    infinite coordinate, or with min > max for boxes."""
    bad = ~np.isfinite(values).all(axis=1)
    if boxes:
        bad |= (values[:, 0] > values[:, 2]) | (values[:, 1] > values[:, 3])
    if bad.any():
        i = int(np.argmax(bad))
        kind = "box" if boxes else "point"
        raise ValueError(
            f"{what}: row with index {labels[i]!r}: invalid {kind} {values[i].tolist()} "
            f"(NaN or infinite coordinate{', or min > max' if boxes else ''})"
        )


def _columns(df: dd.DataFrame, columns: Sequence[str], what: str) -> dd.DataFrame:
    columns = list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} has no column {missing[0]!r} (columns: {list(df.columns)})")
    return df[columns]


def _spread(df: pd.DataFrame, rows: int) -> pd.DataFrame:
    """Up to ``rows`` rows of a partition, spread evenly over it."""
    if len(df) <= rows:
        return df
    return df.iloc[np.linspace(0, len(df) - 1, rows).astype(np.int64)]


def _sample(frames: Sequence[dd.DataFrame], sample_size: int, *extra: Any) -> list[Any]:
    """Evenly spread sample rows of each frame as float64 arrays, and the values of the
    lazy ``extra``, computed together."""
    parts = [
        f.map_partitions(_spread, max(1, sample_size // f.npartitions), meta=f._meta)
        for f in frames
    ]
    computed = dask.compute(*parts, *extra)
    return [s.to_numpy(dtype=np.float64) for s in computed[: len(frames)]] + list(computed[len(frames) :])


def _routed_meta(index_dtype: Any, names: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "tile": pd.Series([], dtype=np.int64),
            "side": pd.Series([], dtype=np.int8),
            "label": pd.Series([], dtype=index_dtype),
            **{n: pd.Series([], dtype=np.float64) for n in names},
        }
    )


def _routed(
    rows: np.ndarray, tiles: np.ndarray, labels: np.ndarray, side: int, values: np.ndarray, names: Sequence[str]
) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "tile": tiles.astype(np.int64),
            "side": np.full(len(rows), side, dtype=np.int8),
            "label": labels[rows],
        }
    )
    for j, n in enumerate(names):
        frame[n] = values[rows, j]
    return frame


def _route(
    left: dd.DataFrame, right: dd.DataFrame, route: Callable[..., pd.DataFrame], names: Sequence[str], *args: Any
) -> dd.DataFrame:
    """Both sides' rows sent to their tiles by ``route(partition, *args, side, what)``, as
    one frame (side 0 the left, 1 the right)."""
    return dd.concat(
        [
            frame.map_partitions(route, *args, side, what, meta=_routed_meta(frame.index.dtype, names))
            for side, (frame, what) in enumerate([(left, "left"), (right, "right")])
        ]
    )


def _route_boxes(df: pd.DataFrame, tiles: Tiles, side: int, what: str) -> pd.DataFrame:
    values = df.to_numpy(dtype=np.float64)
    _check_rows(values, df.index, what, boxes=True)
    rows, tile = tiles.overlapping(values)
    return _routed(rows, tile, df.index.to_numpy(), side, values, BOX_COLUMNS)


def _by_tile(df: pd.DataFrame) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(tile, rows of side 0, rows of side 1)`` for each tile of a shuffled partition."""
    key = df["tile"].to_numpy() * 2 + df["side"].to_numpy()
    if len(key) and key.max() < 2**16:
        key = key.astype(np.uint16)  # numpy sorts 16-bit keys by radix: linear time
    order = np.argsort(key, kind="stable")
    key = key[order]
    tile = key // 2
    starts = np.flatnonzero(np.r_[True, tile[1:] != tile[:-1]]) if len(key) else np.empty(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(key)]
    for s, e in zip(starts, ends):
        mid = s + int(np.searchsorted(key[s:e] % 2, 1))
        yield int(tile[s]), order[s:mid], order[mid:e]


def _float_columns(df: pd.DataFrame, names: Sequence[str]) -> np.ndarray:
    """The columns ``names`` of ``df`` as one ``(n, len(names))`` float64 array."""
    return np.column_stack([df[n].to_numpy(dtype=np.float64) for n in names]).reshape(len(df), len(names))


def _pairs_meta(left_dtype: Any, right_dtype: Any) -> pd.DataFrame:
    return pd.DataFrame(
        {"left_index": pd.Series([], dtype=left_dtype), "right_index": pd.Series([], dtype=right_dtype)}
    )


def _join_boxes(df: pd.DataFrame, tiles: Tiles, meta: pd.DataFrame) -> pd.DataFrame:
    boxes = _float_columns(df, BOX_COLUMNS)
    labels = df["label"].to_numpy()
    lefts, rights = [], []
    for t, lrows, rrows in _by_tile(df):
        if len(lrows) == 0 or len(rrows) == 0:
            continue
        # One index over both sides' boxes, left first: its pairs (i < j) with i on the left
        # and j on the right are the tile's candidates (faster than a window query per box).
        rows = np.concatenate([lrows, rrows])
        pairs = PackedIndex(_aligned(boxes[rows])).pairs()
        i, j = pairs[:, 0], pairs[:, 1]
        cross = (i < len(lrows)) & (j >= len(lrows))
        li, ri = rows[i[cross]], rows[j[cross]]
        # The pair's reference point: the lower-left corner of the intersection. It lies in
        # exactly one tile, so the pair is kept exactly once.
        x = np.maximum(boxes[li, 0], boxes[ri, 0])
        y = np.maximum(boxes[li, 1], boxes[ri, 1])
        x0, y0, x1, y1 = tiles.bounds[t]
        keep = (x0 <= x) & (x < x1) & (y0 <= y) & (y < y1)
        lefts.append(li[keep])
        rights.append(ri[keep])
    if not lefts:
        return meta
    return pd.DataFrame(
        {
            "left_index": pd.Series(labels[np.concatenate(lefts)]).astype(meta["left_index"].dtype),
            "right_index": pd.Series(labels[np.concatenate(rights)]).astype(meta["right_index"].dtype),
        }
    )


def _tile_count(tiles: Tiles | int | None, left: dd.DataFrame, right: dd.DataFrame) -> int:
    """How many tiles: a given ``Tiles``' length, else the count asked for or the default."""
    if isinstance(tiles, Tiles):
        return len(tiles)
    if tiles is None:
        return TILES_PER_PARTITION * max(left.npartitions, right.npartitions)
    if int(tiles) < 1:
        raise ValueError(f"tiles must be a Tiles, a positive count or None, got {tiles!r}")
    return int(tiles)


def _choose_broadcast(
    broadcast: bool | None, broadcast_rows: int, tiled: bool, right: dd.DataFrame, sample_size: int
) -> tuple[bool, tuple[np.ndarray, int] | None]:
    """Whether to take the broadcast path, with ``right``'s sample and length when they were
    computed to decide (else ``None``): ``broadcast`` when given; else the tiled path when
    ``tiled`` (the caller gave tiles or a halo); else whether ``right`` has at most
    ``broadcast_rows`` rows, its length and sample computed in one pass."""
    if int(broadcast_rows) < 0:
        raise ValueError(f"broadcast_rows must be >= 0, got {broadcast_rows!r}")
    if broadcast is not None:
        return bool(broadcast), None
    if tiled:
        return False, None
    sample, length = _sample([right], sample_size, right.shape[0])
    return int(length) <= int(broadcast_rows), (sample, int(length))


def _whole_right(parts: list[pd.DataFrame], boxes: bool) -> tuple[np.ndarray, np.ndarray]:
    """All of ``right``'s rows (its partitions in order) as one aligned float64 array, and
    their index labels."""
    right = pd.concat(parts)
    values = _aligned(right.to_numpy(dtype=np.float64))
    _check_rows(values, right.index, "right", boxes=boxes)
    return values, right.index.to_numpy()


def _pack_right(parts: list[pd.DataFrame]) -> tuple[PackedIndex | None, np.ndarray]:
    """The broadcast ``box_join``'s one build: a PackedIndex of every right box (``None``
    for no boxes), and the boxes' index labels by position."""
    boxes, labels = _whole_right(parts, boxes=True)
    return (PackedIndex(boxes) if len(boxes) else None), labels


def _query_packed(
    df: pd.DataFrame, packed: tuple[PackedIndex | None, np.ndarray], meta: pd.DataFrame
) -> pd.DataFrame:
    """The broadcast ``box_join`` of one left partition: its boxes as windows on the right
    side's PackedIndex (closed boxes, as the tiled path's pairs)."""
    index, right_labels = packed
    values = df.to_numpy(dtype=np.float64)
    _check_rows(values, df.index, "left", boxes=True)
    if index is None or len(values) == 0:
        return meta
    li, ri = index.query(_aligned(values))
    return pd.DataFrame(
        {
            "left_index": pd.Series(df.index.to_numpy()[li]).astype(meta["left_index"].dtype),
            "right_index": pd.Series(right_labels[ri]).astype(meta["right_index"].dtype),
        }
    )


def _tree_right(parts: list[pd.DataFrame]) -> tuple[KdTree | None, np.ndarray, np.ndarray]:
    """The broadcast ``knn_join``'s one build: a KdTree of every right point (``None`` for
    no points), the points, and their index labels by position."""
    points, labels = _whole_right(parts, boxes=False)
    return (KdTree(points) if len(points) else None), points, labels


def _query_tree(
    df: pd.DataFrame,
    built: tuple[KdTree | None, np.ndarray, np.ndarray],
    k: int,
    meta: pd.DataFrame,
    workers: int,
) -> pd.DataFrame:
    """The broadcast ``knn_join`` of one left partition: each point's ``k`` nearest of all
    right points, by (distance, right index), from the right side's KdTree."""
    tree, points, right_labels = built
    values = df.to_numpy(dtype=np.float64)
    _check_rows(values, df.index, "left", boxes=False)
    query, pos, dist, rank = _nearest(points, right_labels, values, k, workers, tree)
    frame = pd.DataFrame(
        {
            "left_index": df.index.to_numpy()[query],
            "right_index": right_labels[pos],
            "distance": dist,
            "rank": rank,
        }
    )
    return _cast([frame], meta)


def box_join(
    left: dd.DataFrame,
    right: dd.DataFrame,
    *,
    columns: Sequence[str] = BOX_COLUMNS,
    right_columns: Sequence[str] | None = None,
    tiles: Tiles | int | None = None,
    npartitions: int | None = None,
    sample_size: int = SAMPLE_ROWS,
    shuffle_method: str | None = None,
    broadcast: bool | None = None,
    broadcast_rows: int = BROADCAST_ROWS,
) -> dd.DataFrame:
    """Every pair of intersecting boxes between two Dask DataFrames.

    Boxes are closed: boxes that only touch intersect. Each pair appears exactly once.

    The broadcast path (``right`` small) builds one PackedIndex of all of ``right`` in one
    task and queries each left partition's boxes against it: one build, no shuffle, and the
    result has ``left``'s partitions. The tiled path (both sides large) shuffles both sides
    to tiles and joins each tile with one PackedIndex of both sides' boxes there. Which is
    taken: ``broadcast`` when given; else the tiled path when ``tiles`` is given; else the
    broadcast path when ``right`` has at most ``broadcast_rows`` rows, which computes the
    length of ``right`` (and its sample, for the tiled path) at call time, in one pass.

    Parameters
    ----------
    left, right : dask.dataframe.DataFrame
        Boxes, one a row, in the columns ``columns`` (``right_columns`` for ``right``).
    columns : sequence of 4 str, default ``("min_x", "min_y", "max_x", "max_y")``
        The columns holding each box.
    right_columns : sequence of 4 str, optional
        ``right``'s columns, when they differ from ``columns``.
    tiles : Tiles or int, optional
        The tiles, or how many to place from a sample of both sides (default: 4 per output
        partition).
    npartitions : int, optional
        Partitions of the result (the shuffle's); default the larger input's count.
    sample_size : int, default 20000
        Sample rows (of each side) that place the tiles.
    shuffle_method : str, optional
        Passed to ``DataFrame.shuffle`` (``"p2p"``, ``"tasks"``, ...); default Dask's choice.
    broadcast : bool, optional
        ``True`` for the broadcast path, ``False`` for the tiled path; default by size, as
        above. ``tiles``, ``npartitions``, ``sample_size`` and ``shuffle_method`` are the
        tiled path's, unused by the broadcast path.
    broadcast_rows : int, default 1000000
        The most rows of ``right`` that the default broadcasts: its index is built in one
        task, and held by every worker that answers a left partition.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns ``left_index`` and ``right_index``: the index labels of each pair, with the
        inputs' index dtypes. No particular order. Both paths give the same rows.

    Raises
    ------
    ValueError
        When computed, for a box with a NaN or infinite coordinate or min > max (the message
        names the row by its index label); at once for a missing column, a bad ``tiles``
        or ``broadcast_rows < 0``.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from spatix.dask import Tiles, box_join
    >>> df = pd.DataFrame({"x0": [0.0, 1.0], "y0": [0.0, 1.0], "x1": [1.0, 2.0], "y1": [1.0, 2.0]})
    >>> ddf = dd.from_pandas(df, npartitions=1)
    >>> out = box_join(ddf, ddf, columns=["x0", "y0", "x1", "y1"], tiles=Tiles.grid([1.0], [1.0]))
    >>> sorted(zip(out.compute().left_index, out.compute().right_index))
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    lcols = _columns(left, columns, "left")
    rcols = _columns(right, columns if right_columns is None else right_columns, "right")
    count = _tile_count(tiles, left, right)
    meta = _pairs_meta(left.index.dtype, right.index.dtype)
    chosen, seen = _choose_broadcast(broadcast, broadcast_rows, tiles is not None, rcols, sample_size)
    if chosen:
        packed: Delayed = dask.delayed(_pack_right)(rcols.to_delayed())
        return lcols.map_partitions(_query_packed, packed, meta, meta=meta)
    if isinstance(tiles, Tiles):
        placed = tiles
    else:
        if seen is None:
            lsample, rsample = _sample([lcols, rcols], sample_size)
        else:
            (lsample,), rsample = _sample([lcols], sample_size), seen[0]
        centres = np.vstack([(s[:, :2] + s[:, 2:]) / 2 for s in (lsample, rsample)])
        placed = Tiles.from_sample(centres, count)
    routed = _route(lcols, rcols, _route_boxes, BOX_COLUMNS, placed)
    parts = npartitions or max(left.npartitions, right.npartitions)
    shuffled = routed.shuffle(on="tile", npartitions=parts, shuffle_method=shuffle_method)
    return shuffled.map_partitions(_join_boxes, placed, meta, meta=meta)


def _distances(px: np.ndarray, py: np.ndarray, qx: np.ndarray, qy: np.ndarray) -> np.ndarray:
    dx = px - qx
    dy = py - qy
    return np.sqrt(dx * dx + dy * dy)


def _aligned(values: npt.ArrayLike) -> np.ndarray:
    """``values`` as a C-contiguous, aligned float64 array: what Dask hands a worker may be
    a view of a message buffer at an odd address, which the extension reads as no rows."""
    return np.require(values, dtype=np.float64, requirements=["C", "A"])


def _nearest(
    points: np.ndarray,
    labels: np.ndarray,
    queries: np.ndarray,
    k: int,
    workers: int,
    tree: KdTree | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` nearest of ``points`` to each query, ordered by (distance, label):
    ``(query, position, distance, rank)`` flat arrays, ``min(k, len(points))`` per query.
    ``tree`` is a KdTree of ``points`` already built (the broadcast path's), else one is.

    Distances are numpy's ``sqrt(dx * dx + dy * dy)`` in float64; the kd-tree finds
    candidates, and a query is asked again with more neighbours until the last candidate
    is strictly farther than the k-th, so that ties at the k-th distance are all seen.
    """
    points, queries = _aligned(points), _aligned(queries)
    n, m = len(points), len(queries)
    k = min(k, n)
    if k == 0 or m == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0), empty
    tree = KdTree(points) if tree is None else tree
    chosen = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k))
    todo = np.arange(m)
    ask = min(n, k + 2)
    while len(todo):
        d, i = tree.query(queries[todo], k=ask, workers=workers)
        d, i = d.reshape(len(todo), ask), i.reshape(len(todo), ask)
        nd = _distances(points[i, 0], points[i, 1], queries[todo, :1], queries[todo, 1:])
        order = np.lexsort((labels[i], nd))
        i = np.take_along_axis(i, order, axis=1)
        nd = np.take_along_axis(nd, order, axis=1)
        done = (ask == n) | (nd[:, k - 1] < d[:, ask - 1] * (1 - SLACK))
        chosen[todo[done]] = i[done, :k]
        dist[todo[done]] = nd[done, :k]
        todo = todo[~done]
        ask = min(n, 2 * ask)
    query = np.repeat(np.arange(m), k)
    rank = np.tile(np.arange(1, k + 1), m)
    return query, chosen.ravel(), dist.ravel(), rank


def _route_points(df: pd.DataFrame, tiles: Tiles, halo: np.ndarray, side: int, what: str) -> pd.DataFrame:
    """Left points (side 0) to the tile holding each; right points (side 1) to every tile
    whose rectangle grown by its ``halo`` (closed) holds them."""
    values = df.to_numpy(dtype=np.float64)
    _check_rows(values, df.index, what, boxes=False)
    if side == 0:
        rows, tile = np.arange(len(values)), tiles.locate(values)
    else:
        reach = float(np.max(halo, initial=0.0)) * (1 + SLACK)
        rows, tile = tiles.overlapping(np.hstack([values - reach, values + reach]), closed=True)
        g = tiles.grown(halo)[tile]
        x, y = values[rows, 0], values[rows, 1]
        keep = (g[:, 0] <= x) & (x <= g[:, 2]) & (g[:, 1] <= y) & (y <= g[:, 3])
        rows, tile = rows[keep], tile[keep]
    return _routed(rows, tile, df.index.to_numpy(), side, values, POINT_COLUMNS)


def _filler(dtype: Any, n: int) -> pd.Series:
    """``n`` placeholder values of ``dtype`` (the right index of a row that has none)."""
    if np.dtype(getattr(dtype, "numpy_dtype", dtype)).kind in "iub":
        return pd.Series(np.zeros(n, dtype=dtype))
    return pd.Series([None] * n, dtype=dtype)


def _knn_meta(left_dtype: Any, right_dtype: Any, retry: bool) -> pd.DataFrame:
    columns = {
        "left_index": pd.Series([], dtype=left_dtype),
        "right_index": pd.Series([], dtype=right_dtype),
        "distance": pd.Series([], dtype=np.float64),
        "rank": pd.Series([], dtype=np.int64),
    }
    if retry:
        columns |= {n: pd.Series([], dtype=np.float64) for n in POINT_COLUMNS}
    return pd.DataFrame(columns)


def _knn_tiles(df: pd.DataFrame, grown: np.ndarray, k: int, meta: pd.DataFrame, workers: int) -> pd.DataFrame:
    """Round one: each tile's queries against the tile's right points and halo. A query is
    answered when the ball reaching its k-th neighbour lies inside the grown tile (so no
    point outside could be nearer or tie); otherwise it comes back as a retry row (rank 0,
    ``distance`` an upper bound on its k-th distance, or inf)."""
    xy = _float_columns(df, POINT_COLUMNS)
    labels = df["label"].to_numpy()
    frames = []
    for t, lrows, rrows in _by_tile(df):
        if len(lrows) == 0:
            continue
        q = xy[lrows]
        query, pos, dist, rank = _nearest(xy[rrows], labels[rrows], q, k, workers)
        x0, y0, x1, y1 = grown[t]
        margin = np.minimum.reduce([q[:, 0] - x0, x1 - q[:, 0], q[:, 1] - y0, y1 - q[:, 1]])
        if len(rrows) >= k:
            kth = dist.reshape(len(q), k)[:, -1]
            ok = kth < margin * (1 - SLACK)
        else:
            kth = np.full(len(q), np.inf)
            ok = np.isinf(margin)
        answered = ok[query]
        frames.append(
            pd.DataFrame(
                {
                    "left_index": labels[lrows[query[answered]]],
                    "right_index": labels[rrows[pos[answered]]],
                    "distance": dist[answered],
                    "rank": rank[answered],
                }
            )
        )
        retry = ~ok
        frames.append(
            pd.DataFrame(
                {
                    "left_index": labels[lrows[retry]],
                    "right_index": _filler(meta["right_index"].dtype, int(retry.sum())),
                    "distance": kth[retry],
                    "rank": np.zeros(int(retry.sum()), dtype=np.int64),
                    "x": q[retry, 0],
                    "y": q[retry, 1],
                }
            )
        )
    return _cast(frames, meta)


def _cast(frames: list[pd.DataFrame], meta: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return meta
    joined = pd.concat(frames, ignore_index=True).reindex(columns=meta.columns)
    return joined.astype(meta.dtypes.to_dict())


def _knn_fallback(
    part: pd.DataFrame, retry: pd.DataFrame, k: int, meta: pd.DataFrame, what: str, workers: int
) -> pd.DataFrame:
    """Round two, on one partition of ``right``: the k nearest of its points to each retried
    query (the true k nearest are among the union over the partitions)."""
    values = part.to_numpy(dtype=np.float64)
    _check_rows(values, part.index, what, boxes=False)
    if len(retry) == 0 or len(values) == 0:
        return meta
    queries = retry[list(POINT_COLUMNS)].to_numpy(dtype=np.float64)
    query, pos, dist, rank = _nearest(values, part.index.to_numpy(), queries, k, workers)
    frame = pd.DataFrame(
        {
            "left_index": retry["left_index"].to_numpy()[query],
            "right_index": part.index.to_numpy()[pos],
            "distance": dist,
            "rank": rank,
        }
    )
    return _cast([frame], meta)


def _top_k(candidates: pd.DataFrame, k: int, meta: pd.DataFrame) -> pd.DataFrame:
    """The first ``k`` candidates of each left index by (distance, right index), ranked."""
    if len(candidates) == 0:
        return meta
    left = candidates["left_index"].to_numpy()
    right = candidates["right_index"].to_numpy()
    dist = candidates["distance"].to_numpy()
    order = np.lexsort((right, dist, left))
    left, right, dist = left[order], right[order], dist[order]
    first = np.r_[True, left[1:] != left[:-1]]
    starts = np.flatnonzero(first)
    rank = np.arange(len(left)) - np.repeat(starts, np.diff(np.r_[starts, len(left)])) + 1
    keep = rank <= k
    frame = pd.DataFrame(
        {"left_index": left[keep], "right_index": right[keep], "distance": dist[keep], "rank": rank[keep]}
    )
    return _cast([frame], meta)


def _halo(tiles: Tiles, left_sample: np.ndarray, right_sample: np.ndarray, right_len: int, k: int) -> np.ndarray:
    """Each tile's halo: twice the 95th percentile of the k-th neighbour distance estimated
    for the sample's left points in the tile (from the right sample, scaled to the full
    density). Too small a halo only sends more queries to round two."""
    left_sample = left_sample[np.isfinite(left_sample).all(axis=1)]
    right_sample = right_sample[np.isfinite(right_sample).all(axis=1)]
    s = len(right_sample)
    if s == 0 or right_len == 0 or len(left_sample) == 0:
        return np.zeros(len(tiles))
    j = min(s, max(8, math.ceil(k * s / right_len)))
    d, _ = KdTree(_aligned(right_sample)).query(_aligned(left_sample), k=j)
    estimate = d.reshape(len(left_sample), j)[:, -1] * math.sqrt(k * s / (right_len * j))
    overall = 2 * float(np.quantile(estimate, 0.95))
    halo = np.full(len(tiles), overall)
    where = tiles.locate(left_sample)
    for t in np.unique(where):
        halo[t] = 2 * float(np.quantile(estimate[where == t], 0.95))
    return halo


def knn_join(
    left: dd.DataFrame,
    right: dd.DataFrame,
    k: int = 1,
    *,
    columns: Sequence[str] = POINT_COLUMNS,
    right_columns: Sequence[str] | None = None,
    tiles: Tiles | int | None = None,
    npartitions: int | None = None,
    sample_size: int = SAMPLE_ROWS,
    halo: float | None = None,
    shuffle_method: str | None = None,
    workers: int = 1,
    broadcast: bool | None = None,
    broadcast_rows: int = BROADCAST_ROWS,
) -> dd.DataFrame:
    """For every point of ``left``, its ``k`` nearest points of ``right``, exactly.

    Distances are Euclidean, computed in float64 as ``sqrt(dx * dx + dy * dy)``. Ties are
    broken by the right index label: the neighbours of a point are the first ``k`` right
    points in (distance, right index) order, ranked 1 to ``k``.

    The broadcast path (``right`` small) builds one KdTree of all of ``right`` in one task
    and asks it for each left partition's points: one build, no shuffle, no halo or second
    round, and the result has ``left``'s partitions. The tiled path (both sides large)
    shuffles the left points to tiles and the right points to the tiles grown by a halo,
    and answers again, against every partition of ``right``, the queries a tile cannot
    prove. Which is taken: ``broadcast`` when given; else the tiled path when ``tiles`` or
    ``halo`` is given; else the broadcast path when ``right`` has at most
    ``broadcast_rows`` rows. Deciding computes ``right``'s length and sample at call time,
    which the tiled path needs anyway, in one pass over ``right``.

    Parameters
    ----------
    left, right : dask.dataframe.DataFrame
        Points, one a row, in the columns ``columns`` (``right_columns`` for ``right``).
    k : int, default 1
        Neighbours per left point (fewer when ``right`` has fewer than ``k`` rows).
    columns : sequence of 2 str, default ``("x", "y")``
        The columns holding each point.
    right_columns, tiles, npartitions, sample_size, shuffle_method
        As for :func:`box_join` (the sample also sizes the halos).
    halo : float, optional
        How far beyond its tile each tile takes right points in the first round (default:
        per tile, from the sample). Queries whose k-th neighbour may lie beyond it are
        answered again exactly, so it changes the time, not the answer.
    workers : int, default 1
        spatix threads per tile (or, broadcast, per left partition) query.
    broadcast, broadcast_rows
        As for :func:`box_join`; ``tiles``, ``npartitions``, ``sample_size``, ``halo`` and
        ``shuffle_method`` are the tiled path's, unused by the broadcast path.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns ``left_index``, ``right_index`` (index labels, with the inputs' dtypes),
        ``distance`` (float64) and ``rank`` (1 for the nearest). No particular row order.
        Both paths give the same rows.

    Raises
    ------
    ValueError
        When computed, for a point with a NaN or infinite coordinate (the message names the
        row by its index label); at once for a missing column, ``k < 1``, a bad ``tiles``
        or ``halo``, or ``broadcast_rows < 0``.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from spatix.dask import knn_join
    >>> shops = dd.from_pandas(pd.DataFrame({"x": [0.0, 10.0], "y": [0.0, 0.0]}), npartitions=1)
    >>> homes = dd.from_pandas(pd.DataFrame({"x": [1.0, 3.0, 9.0], "y": [0.0, 0.0, 0.0]}), npartitions=2)
    >>> out = knn_join(shops, homes, k=2).compute().sort_values(["left_index", "rank"])
    >>> out[["left_index", "right_index", "rank"]].values.tolist()
    [[0, 0, 1], [0, 1, 2], [1, 2, 1], [1, 1, 2]]
    >>> out["distance"].tolist()
    [1.0, 3.0, 1.0, 7.0]
    """
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k!r}")
    k = int(k)
    lcols = _columns(left, columns, "left")
    rcols = _columns(right, columns if right_columns is None else right_columns, "right")
    count = _tile_count(tiles, left, right)
    meta = _knn_meta(left.index.dtype, right.index.dtype, retry=False)
    given = tiles is not None or halo is not None
    chosen, seen = _choose_broadcast(broadcast, broadcast_rows, given, rcols, sample_size)
    if chosen:
        built: Delayed = dask.delayed(_tree_right)(rcols.to_delayed())
        return lcols.map_partitions(_query_tree, built, k, meta, workers, meta=meta)
    if seen is None:
        lsample, rsample, right_len = _sample([lcols, rcols], sample_size, rcols.shape[0])
    else:
        (lsample,), (rsample, right_len) = _sample([lcols], sample_size), seen
    placed = tiles if isinstance(tiles, Tiles) else Tiles.from_sample(np.vstack([lsample, rsample]), count)
    if halo is None:
        halos = _halo(placed, lsample, rsample, right_len, k)
    elif not float(halo) >= 0 or not math.isfinite(float(halo)):
        raise ValueError(f"halo must be a finite number >= 0, got {halo!r}")
    else:
        halos = np.full(len(placed), float(halo))
    grown = placed.grown(halos)
    routed = _route(lcols, rcols, _route_points, POINT_COLUMNS, placed, halos)
    parts = npartitions or max(left.npartitions, right.npartitions)
    retry_meta = _knn_meta(left.index.dtype, right.index.dtype, retry=True)
    first = routed.shuffle(on="tile", npartitions=parts, shuffle_method=shuffle_method).map_partitions(
        _knn_tiles, grown, k, retry_meta, workers, meta=retry_meta
    )
    answered = first[first["rank"] > 0][list(meta.columns)]
    retry = first[first["rank"] == 0].repartition(npartitions=1)
    candidates = rcols.map_partitions(_knn_fallback, retry, k, meta, "right", workers, meta=meta)
    second = candidates.repartition(npartitions=1).map_partitions(_top_k, k, meta, meta=meta)
    return dd.concat([answered, second])
