"""spatix.dask on a real two-process LocalCluster, against numpy brute force and
single-machine spatix: uniform, clustered and seam-crossing data, empty partitions, given
tiles and bad rows."""

import doctest
import pathlib

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import spatix
import spatix.dask as sd
from oracle import intersecting, random_boxes

COLS = ["min_x", "min_y", "max_x", "max_y"]


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture
def rng():
    return np.random.default_rng(23)


def box_frame(boxes, npartitions=3, index=None):
    df = pd.DataFrame(np.asarray(boxes, dtype=np.float64), columns=COLS, index=index)
    return dd.from_pandas(df, npartitions=npartitions, sort=False)


def point_frame(points, npartitions=3, index=None):
    df = pd.DataFrame(np.asarray(points, dtype=np.float64), columns=["x", "y"], index=index)
    return dd.from_pandas(df, npartitions=npartitions, sort=False)


def brute_pairs(left, right, lnames, rnames):
    """Sorted ``(p, 2)`` array of (left name, right name) of every intersecting pair."""
    found = [(lnames[i], rnames[j]) for i, b in enumerate(left) for j in np.nonzero(intersecting(right, b))[0]]
    return np.array(sorted(found), dtype=np.int64).reshape(-1, 2)


def as_sorted(pairs):
    """The join's pairs as a sorted ``(p, 2)`` array (duplicates kept, so that a pair found
    twice fails the comparison)."""
    got = np.column_stack([pairs["left_index"].to_numpy(), pairs["right_index"].to_numpy()])
    return got[np.lexsort((got[:, 1], got[:, 0]))] if len(got) else got.reshape(0, 2)


def check_box_join(left, right, lnames=None, rnames=None, **kwargs):
    lnames = np.arange(len(left)) if lnames is None else np.asarray(lnames)
    rnames = np.arange(len(right)) if rnames is None else np.asarray(rnames)
    nl, nr = kwargs.pop("npartitions_in", (3, 2))
    out = sd.box_join(box_frame(left, nl, lnames), box_frame(right, nr, rnames), **kwargs).compute()
    assert list(out.columns) == ["left_index", "right_index"]
    got = as_sorted(out)
    expected = brute_pairs(left, right, lnames, rnames)
    np.testing.assert_array_equal(got, expected)
    if len(left) and len(right):
        wi, bi = spatix.PackedIndex(right).query(left)
        single = np.column_stack([lnames[wi], rnames[bi]])
        np.testing.assert_array_equal(got, single[np.lexsort((single[:, 1], single[:, 0]))])
    return got


def brute_knn(left, right, k, rnames):
    """Sorted rows (left position, right name, distance, rank) of the first k right points
    of each left point by (distance, right name), distances as ``sqrt(dx*dx + dy*dy)``."""
    rows = []
    for i, q in enumerate(left):
        dx = right[:, 0] - q[0]
        dy = right[:, 1] - q[1]
        d = np.sqrt(dx * dx + dy * dy)
        order = np.lexsort((rnames, d))[:k]
        rows += [(i, rnames[j], d[j], r + 1) for r, j in enumerate(order)]
    return rows


def check_knn_join(left, right, k, lnames=None, rnames=None, **kwargs):
    lnames = np.arange(len(left)) if lnames is None else np.asarray(lnames)
    rnames = np.arange(len(right)) if rnames is None else np.asarray(rnames)
    nl, nr = kwargs.pop("npartitions_in", (3, 2))
    out = sd.knn_join(point_frame(left, nl, lnames), point_frame(right, nr, rnames), k, **kwargs).compute()
    assert list(out.columns) == ["left_index", "right_index", "distance", "rank"]
    position = {int(n): i for i, n in enumerate(lnames)}
    got = sorted(
        (position[int(a)], int(b), float(c), int(d))
        for a, b, c, d in zip(out.left_index, out.right_index, out.distance, out["rank"])
    )
    expected = sorted(brute_knn(left, right, k, rnames))
    assert got == expected
    if len(right) >= k and len(left):
        d, _ = spatix.KdTree(right).query(left, k=k)
        mine = np.array([row[2] for row in sorted(got, key=lambda r: (r[0], r[3]))]).reshape(len(left), k)
        np.testing.assert_allclose(mine, d.reshape(len(left), k), rtol=1e-12)
    return got


@pytest.mark.parametrize("tiles, broadcast", [(None, None), (None, False), (1, None), (7, None), (64, None)])
def test_box_join_uniform(client, rng, tiles, broadcast):
    check_box_join(random_boxes(rng, 1500), random_boxes(rng, 1200), tiles=tiles, broadcast=broadcast)


def test_box_join_clustered_with_labels(client, rng):
    centres = rng.normal(50, 3, (6, 2))
    left = np.vstack([random_boxes(rng, 200, half=(0, 1), spread=(*c - 4, *c + 4)) for c in centres])
    right = np.vstack([random_boxes(rng, 150, half=(0, 2), spread=(*c - 4, *c + 4)) for c in centres])
    lnames = rng.permutation(len(left)) * 7 + 10**6
    rnames = rng.permutation(len(right)) * 3 - 5000
    check_box_join(left, right, lnames, rnames, tiles=16, npartitions=5)


def test_box_join_seams(client, rng):
    """Integer boxes on a grid of integer tile edges: boxes exactly on edges, touching
    across edges, corners meeting on tile corners, degenerate boxes on edges, and boxes
    spanning many tiles."""
    tiles = sd.Tiles.grid(np.arange(10.0, 100.0, 10.0), np.arange(10.0, 100.0, 10.0))
    lo = rng.integers(0, 10, (800, 2)) * 10 + rng.integers(-1, 2, (800, 2))
    size = rng.integers(0, 3, (800, 2)) * rng.integers(0, 2, (800, 1)) * 5
    left = np.hstack([lo, lo + size]).astype(float)
    right = np.vstack(
        [
            np.hstack([lo[:400] + size[:400], lo[:400] + size[:400] + 10]),  # touch at corners
            [[10.0, 10.0, 10.0, 10.0], [0.0, 0.0, 100.0, 100.0], [-5.0, 45.0, 105.0, 55.0]],
        ]
    ).astype(float)
    got = check_box_join(left, right, tiles=tiles)
    assert len(got) > 1000
    check_box_join(left, left, tiles=tiles, npartitions=3)


def test_box_join_outside_the_sample(client, rng):
    """Tiles come from the sample only; rows far outside land in the unbounded outer tiles."""
    left = np.vstack([random_boxes(rng, 500), [[-1e300, -1e300, -1e299, -1e299], [1e300, 5, 1e300, 5]]])
    right = np.vstack([random_boxes(rng, 500), [[-1e300, -1e300, -1e300, -1e300], [0, 0, 1e300, 1e300]]])
    check_box_join(left, right, tiles=8, sample_size=20)


def test_box_join_empty_partitions_and_sides(client, rng):
    left = random_boxes(rng, 600)
    right = random_boxes(rng, 600)
    lframe = box_frame(left, 6)
    sparse = lframe[lframe["min_x"] > 60]  # most partitions keep something, and from_pandas
    empty_parts = box_frame(left[np.argsort(left[:, 0])], 6)
    empty_parts = empty_parts[empty_parts["min_x"] > 80]  # sorted: the first partitions empty
    for frame, mask in [(sparse, left[:, 0] > 60), (empty_parts, np.sort(left[:, 0]) > 80)]:
        source = left if frame is sparse else left[np.argsort(left[:, 0])]
        out = sd.box_join(frame, box_frame(right, 2), tiles=9).compute()
        names = np.nonzero(mask)[0]
        np.testing.assert_array_equal(as_sorted(out), brute_pairs(source[mask], right, names, np.arange(len(right))))
    for broadcast in (False, True):
        check_box_join(np.empty((0, 4)), right, npartitions_in=(1, 2), broadcast=broadcast)
        check_box_join(left, np.empty((0, 4)), npartitions_in=(2, 1), broadcast=broadcast)


def test_box_join_columns_and_float32(client, rng):
    left = random_boxes(rng, 300).astype(np.float32)
    right = random_boxes(rng, 300)
    lframe = dd.from_pandas(pd.DataFrame(left, columns=["a", "b", "c", "d"]), npartitions=2)
    expected = brute_pairs(left.astype(np.float64), right, np.arange(300), np.arange(300))
    for broadcast in (False, True):
        out = sd.box_join(
            lframe, box_frame(right, 2), columns=["a", "b", "c", "d"], right_columns=COLS, broadcast=broadcast
        ).compute()
        np.testing.assert_array_equal(as_sorted(out), expected)
    with pytest.raises(ValueError, match="no column 'min_x'"):
        sd.box_join(lframe, box_frame(right, 2))


@pytest.mark.parametrize(
    "bad, message",
    [([np.nan, 0, 1, 1], "NaN or infinite"), ([0, 0, np.inf, 1], "NaN or infinite"), ([5, 0, 1, 1], "min > max")],
)
def test_box_join_bad_rows_name_the_users_row(client, rng, bad, message):
    for side in ("left", "right"):
        boxes = random_boxes(rng, 900)
        boxes[777] = bad
        frames = {"left": box_frame(random_boxes(rng, 100), 2), "right": box_frame(random_boxes(rng, 100), 2)}
        frames[side] = box_frame(boxes, 4)  # row 777 sits at position 102 of partition 3
        with pytest.raises(ValueError, match=f"{side}: row with index 777: .*{message}"):
            sd.box_join(frames["left"], frames["right"], tiles=4).compute()


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("tiles, broadcast", [(None, None), (None, False), (1, None), (16, None)])
def test_knn_join_uniform(client, rng, k, tiles, broadcast):
    check_knn_join(rng.uniform(0, 100, (700, 2)), rng.uniform(0, 100, (900, 2)), k, tiles=tiles, broadcast=broadcast)


def test_knn_join_clustered_and_outliers(client, rng):
    """Dense clusters and lone points: tiles whose halo is far too small for the outliers,
    answered exactly by the retry."""
    centres = rng.uniform(0, 1000, (5, 2))
    right = np.vstack([c + rng.normal(0, 2, (200, 2)) for c in centres] + [rng.uniform(-5000, 5000, (10, 2))])
    left = np.vstack([c + rng.normal(0, 5, (100, 2)) for c in centres] + [rng.uniform(-9000, 9000, (40, 2))])
    rnames = rng.permutation(len(right)) + 10**9
    check_knn_join(left, right, 7, rnames=rnames, tiles=16)


def test_knn_join_ties_across_seams(client):
    """Points equidistant across the seams of given tiles: the tie rule (distance, then
    right index) decides, whatever tile the neighbours are in."""
    tiles = sd.Tiles.grid([50.0], [50.0])
    g = np.arange(0.0, 101.0, 5.0)
    right = np.array([(x, y) for x in g for y in g])  # every query has many equal distances
    left = np.array([[50.0, 50.0], [50.0, 12.5], [47.5, 50.0], [52.5, 52.5], [0.0, 0.0], [100.0, 50.0]])
    rnames = np.arange(len(right))[::-1] * 2  # names ordered against the positions
    for k in (1, 4, 9, 13):
        got = check_knn_join(left, right, k, rnames=rnames, tiles=tiles, npartitions_in=(2, 3))
        assert len(got) == k * len(left)


def test_knn_join_retry_path(rng, monkeypatch):
    """With no halo, the queries near a seam cannot be proven in their tile and go through
    the second round (seen here on the in-process scheduler); the answers stay exact."""
    seen = []
    top_k = sd._top_k

    def counting(candidates, k, meta):
        seen.append(candidates["left_index"].nunique())
        return top_k(candidates, k, meta)

    monkeypatch.setattr(sd, "_top_k", counting)
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        check_knn_join(rng.uniform(0, 100, (400, 2)), rng.uniform(0, 100, (500, 2)), 4, tiles=16, halo=0.0)
    assert 0 < sum(seen) < 400
    with pytest.raises(ValueError, match="halo must be"):
        sd.knn_join(point_frame(np.zeros((1, 2))), point_frame(np.zeros((1, 2))), 1, halo=-1.0)


def test_knn_join_small_sample_and_few_right_points(client, rng):
    """A one-row sample, no halo, and k beyond the right side's size: still exact (with
    fewer than k neighbours where right is short)."""
    left = rng.uniform(0, 100, (300, 2))
    check_knn_join(left, rng.uniform(0, 100, (400, 2)), 6, tiles=16, sample_size=1)
    check_knn_join(left, rng.uniform(0, 100, (400, 2)), 6, tiles=16, halo=0.0)
    check_knn_join(left, rng.uniform(0, 100, (5, 2)), 8, tiles=4, npartitions_in=(3, 2))
    for broadcast in (False, True):
        check_knn_join(left, np.empty((0, 2)), 3, npartitions_in=(3, 1), broadcast=broadcast)
        check_knn_join(np.empty((0, 2)), left, 3, npartitions_in=(1, 2), broadcast=broadcast)


def test_knn_join_empty_partitions(client, rng):
    points = rng.uniform(0, 100, (800, 2))
    points = points[np.argsort(points[:, 0])]
    frame = point_frame(points, 8)
    frame = frame[frame["x"] > 70]
    right = rng.uniform(0, 100, (500, 2))
    out = sd.knn_join(frame, point_frame(right, 3), 3, tiles=8).compute()
    keep = np.nonzero(points[:, 0] > 70)[0]
    got = sorted(
        (int(a), int(b), float(c), int(d)) for a, b, c, d in zip(out.left_index, out.right_index, out.distance, out["rank"])
    )
    expected = sorted((int(keep[i]), b, c, d) for i, b, c, d in brute_knn(points[keep], right, 3, np.arange(500)))
    assert got == expected


def test_knn_join_bad_rows_and_arguments(client, rng):
    points = rng.uniform(0, 100, (900, 2))
    points[640] = [np.nan, 1.0]
    good = point_frame(rng.uniform(0, 100, (50, 2)), 1)
    for left, right, side in [(point_frame(points, 4), good, "left"), (good, point_frame(points, 4), "right")]:
        with pytest.raises(ValueError, match=f"{side}: row with index 640: invalid point"):
            sd.knn_join(left, right, 2, tiles=4).compute()
    with pytest.raises(ValueError, match="k must be at least 1"):
        sd.knn_join(good, good, 0)
    with pytest.raises(ValueError, match="no column 'x'"):
        sd.knn_join(good, good.rename(columns={"x": "lon"}), 1)


def both_paths(join, left, right, *args, **kwargs):
    """The join computed on the tiled and the broadcast path (forced), after checking that
    both give the same columns and dtypes."""
    tiled = join(left, right, *args, broadcast=False, **kwargs).compute()
    broadcast = join(left, right, *args, broadcast=True, **kwargs).compute()
    assert list(tiled.columns) == list(broadcast.columns)
    assert tiled.dtypes.to_dict() == broadcast.dtypes.to_dict()
    return tiled, broadcast


def knn_rows(out):
    return sorted(zip(out.left_index.tolist(), out.right_index.tolist(), out.distance.tolist(), out["rank"].tolist()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_and_tiled_box_join_agree(client, rng, dtype):
    centres = rng.uniform(0, 100, (4, 2))
    left = np.vstack([random_boxes(rng, 1000), *[random_boxes(rng, 300, spread=(*c - 3, *c + 3)) for c in centres]])
    right = np.vstack([random_boxes(rng, 800, half=(0, 3)), [[0.0, 0.0, 100.0, 100.0], [40.0, 40.0, 40.0, 40.0]]])
    lnames = rng.permutation(len(left)) * 3 + 7
    rnames = rng.permutation(len(right)) - 500
    lframe = box_frame(left.astype(dtype), 5, lnames)
    rframe = box_frame(right.astype(dtype), 3, rnames)
    tiled, broadcast = both_paths(sd.box_join, lframe, rframe, tiles=16)
    np.testing.assert_array_equal(as_sorted(broadcast), as_sorted(tiled))
    cast = left.astype(dtype).astype(np.float64), right.astype(dtype).astype(np.float64)
    np.testing.assert_array_equal(as_sorted(broadcast), brute_pairs(*cast, lnames, rnames))
    assert broadcast.dtypes.to_dict() == {"left_index": np.dtype(np.int64), "right_index": np.dtype(np.int64)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 6])
def test_broadcast_and_tiled_knn_join_agree(client, rng, dtype, k):
    """Clustered points, outliers and a grid full of equal distances: the same rows, to the
    bit, from the broadcast KdTree as from the tiles and their second round."""
    centres = rng.uniform(0, 1000, (4, 2))
    g = np.arange(0.0, 101.0, 5.0)
    grid = np.array([(x, y) for x in g for y in g])
    right = np.vstack([grid, *[c + rng.normal(0, 3, (150, 2)) for c in centres], rng.uniform(-4000, 4000, (8, 2))])
    left = np.vstack([grid[::7] + 2.5, *[c + rng.normal(0, 6, (120, 2)) for c in centres], rng.uniform(-9000, 9000, (30, 2))])
    rnames = rng.permutation(len(right))[::-1] * 2
    lframe = point_frame(left.astype(dtype), 4)
    rframe = point_frame(right.astype(dtype), 3, rnames)
    tiled, broadcast = both_paths(sd.knn_join, lframe, rframe, k, tiles=16)
    assert knn_rows(broadcast) == knn_rows(tiled)
    assert len(broadcast) == k * len(left)
    cast = left.astype(dtype).astype(np.float64), right.astype(dtype).astype(np.float64)
    expected = sorted((i, b, c, d) for i, b, c, d in brute_knn(*cast, k, rnames))
    assert knn_rows(broadcast) == expected


def test_broadcast_empty_sides_and_partitions(client, rng):
    """The right side empty, and left partitions left empty by a filter, on both paths."""
    boxes = random_boxes(rng, 900)
    boxes = boxes[np.argsort(boxes[:, 0])]
    lframe = box_frame(boxes, 6)
    lframe = lframe[lframe["min_x"] > 70]  # sorted: the first partitions empty
    right = box_frame(random_boxes(rng, 400), 2)
    tiled, broadcast = both_paths(sd.box_join, lframe, right)
    assert len(broadcast) > 0
    np.testing.assert_array_equal(as_sorted(broadcast), as_sorted(tiled))
    nothing = box_frame(np.empty((0, 4)), 1)
    for out in both_paths(sd.box_join, lframe, nothing) + both_paths(sd.box_join, nothing, right):
        assert len(out) == 0 and list(out.columns) == ["left_index", "right_index"]
    points = rng.uniform(0, 100, (800, 2))
    points = points[np.argsort(points[:, 0])]
    pframe = point_frame(points, 8)
    pframe = pframe[pframe["x"] > 70]
    rpoints = point_frame(rng.uniform(0, 100, (300, 2)), 2)
    tiled, broadcast = both_paths(sd.knn_join, pframe, rpoints, 3)
    assert len(broadcast) == 3 * int((points[:, 0] > 70).sum())
    assert knn_rows(broadcast) == knn_rows(tiled)
    for out in both_paths(sd.knn_join, pframe, point_frame(np.empty((0, 2)), 1), 3):
        assert len(out) == 0 and list(out.columns) == ["left_index", "right_index", "distance", "rank"]


def test_broadcast_flags_choose_the_path(client, rng):
    """The broadcast path keeps ``left``'s 3 partitions; the tiled one has ``npartitions``
    (``knn_join`` one more: its second round)."""
    left, right = box_frame(random_boxes(rng, 300), 3), box_frame(random_boxes(rng, 200), 2)
    lpoints, rpoints = point_frame(rng.uniform(0, 100, (300, 2)), 3), point_frame(rng.uniform(0, 100, (200, 2)), 2)
    for join, args, tiled in [(sd.box_join, (left, right), 5), (sd.knn_join, (lpoints, rpoints, 2), 6)]:
        paths = {
            (): 3,  # 200 right rows, under the default limit
            (("broadcast_rows", 200),): 3,
            (("broadcast_rows", 199),): tiled,
            (("broadcast", True), ("broadcast_rows", 0)): 3,
            (("broadcast", False),): tiled,
            (("tiles", 4),): tiled,
            (("tiles", 4), ("broadcast", True)): 3,
        }
        outs = []
        for options, npartitions in paths.items():
            out = join(*args, npartitions=5, **dict(options))
            assert out.npartitions == npartitions, options
            outs.append(out.compute())
        assert len({len(o) for o in outs}) == 1
        with pytest.raises(ValueError, match="broadcast_rows must be"):
            join(*args, broadcast_rows=-1)
    assert sd.knn_join(lpoints, rpoints, 2, halo=1.0, npartitions=5).npartitions == 6


def test_broadcast_builds_once_and_checks_rows(rng, monkeypatch):
    """One index build per join, whatever the number of left partitions (counted on the
    in-process scheduler), and bad rows named as on the tiled path."""
    built = []
    for name in ("PackedIndex", "KdTree"):
        real = getattr(sd, name)
        monkeypatch.setattr(sd, name, lambda data, real=real: built.append(len(data)) or real(data))
    with dask.config.set({"scheduler": "sync"}):
        sd.box_join(box_frame(random_boxes(rng, 500), 7), box_frame(random_boxes(rng, 300), 3)).compute()
        sd.knn_join(point_frame(rng.uniform(0, 1, (500, 2)), 7), point_frame(rng.uniform(0, 1, (300, 2)), 3), 2).compute()
    assert built == [300, 300]
    boxes = random_boxes(rng, 400)
    boxes[123] = [3.0, 0.0, 1.0, 1.0]
    good = box_frame(random_boxes(rng, 50), 2)
    for left, right, side in [(box_frame(boxes, 4), good, "left"), (good, box_frame(boxes, 4), "right")]:
        with pytest.raises(ValueError, match=f"{side}: row with index 123: .*min > max"):
            sd.box_join(left, right, broadcast=True).compute()


def unaligned(values):
    """A copy of ``values`` (float64) at an odd address, as Dask may hand a worker a
    partition (a view of a message buffer)."""
    values = np.asarray(values, dtype=np.float64)
    raw = np.zeros(values.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(raw[1:].data, dtype=np.float64).reshape(values.shape)
    out[...] = values
    assert not out.flags["ALIGNED"]
    return out


def test_nearest_reads_unaligned_arrays(rng):
    """The per-partition kNN gets its arrays straight from Dask's buffers: an unaligned one
    must give the same answer as an aligned copy (the extension reads it as empty)."""
    points, queries = rng.uniform(0, 10, (200, 2)), rng.uniform(0, 10, (30, 2))
    names = np.arange(200)
    expected = sd._nearest(points, names, queries, 3, 1)
    got = sd._nearest(unaligned(points), names, unaligned(queries), 3, 1)
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)
    assert sorted(zip(got[0].tolist(), names[got[1]].tolist(), got[3].tolist())) == sorted(
        (q, r, k) for q, r, _, k in brute_knn(queries, points, 3, names)
    )


def test_tiles_cover_the_plane_once(rng):
    tiles = sd.Tiles.grid([0.0, 10.0], [-5.0])
    assert len(tiles) == 6
    edges = np.array([[x, y] for x in (-1e308, -1, 0, 5, 10, 11, 1e308) for y in (-1e308, -5, -4, 0, 1e308)])
    found = tiles.locate(edges)
    b = tiles.bounds[found]
    assert np.all((b[:, 0] <= edges[:, 0]) & (edges[:, 0] < b[:, 2]) & (b[:, 1] <= edges[:, 1]) & (edges[:, 1] < b[:, 3]))
    inside = (tiles.bounds[None, :, :2] <= edges[:, None]).all(axis=2) & (edges[:, None] < tiles.bounds[None, :, 2:]).all(axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    boxes = np.array([[0.0, -5.0, 0.0, -5.0], [-1.0, -6.0, 10.0, 0.0], [-3.0, 1.0, -2.0, 2.0]])
    row, tile = tiles.overlapping(boxes)
    assert sorted(zip(row.tolist(), tile.tolist())) == [(0, 4), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 3)]
    sample = np.vstack([rng.uniform(0, 1, (999, 2)), [[np.nan, 0.0]], np.zeros((500, 2))])
    kd = sd.Tiles.from_sample(sample, 5)
    assert 2 <= len(kd) <= 8
    spread = rng.uniform(-1, 2, (5000, 2))
    found = kd.locate(spread)
    b = kd.bounds[found]
    assert np.all((b[:, 0] <= spread[:, 0]) & (spread[:, 0] < b[:, 2]) & (b[:, 1] <= spread[:, 1]) & (spread[:, 1] < b[:, 3]))
    assert len(sd.Tiles.from_sample(np.empty((0, 2)), 16)) == 1
    for bad in ([1.0, 1.0], [np.nan], [2.0, 1.0]):
        with pytest.raises(ValueError, match="strictly increasing"):
            sd.Tiles.grid(bad, [])
    with pytest.raises(ValueError, match="tiles must be"):
        sd.box_join(box_frame(np.zeros((1, 4)), 1), box_frame(np.zeros((1, 4)), 1), tiles=0)


def test_dask_docstring_examples_run(client):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(sd, "spatix.dask", globs={})
    assert sum(len(t.examples) for t in tests) >= 15
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


def test_readme_dask_example_runs(client):
    readme = pathlib.Path(__file__).resolve().parents[3] / "README.md"
    section = readme.read_text().split("### On Dask", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
