"""KdTree and PackedIndex against numpy brute force."""

import numpy as np
import pytest

import spatix
from oracle import all_pairs, check_nearest, degenerate_sets, random_boxes, window_hits


@pytest.fixture
def rng():
    return np.random.default_rng(17)


def point_sets(rng):
    sets = {
        "uniform": rng.uniform(0, 100, (500, 2)),
        "duplicates": rng.integers(0, 5, (300, 2)).astype(float),
        "line": np.column_stack([np.arange(200.0), np.zeros(200)]),
        "one": np.array([[3.0, 4.0]]),
        "far": rng.uniform(-1e9, 1e9, (200, 2)),
    }
    return sets


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 3, 8])
def test_kdtree_query_matches_brute_force(rng, dtype, k):
    for name, points in point_sets(rng).items():
        points = points.astype(dtype)
        tree = spatix.KdTree(points)
        assert len(tree) == len(points) and tree.dtype == np.dtype(dtype).name
        q = np.vstack([rng.uniform(-10, 110, (50, 2)), points[:5]]).astype(dtype)
        d, i = tree.query(q, k=k)
        assert d.shape == i.shape == ((len(q),) if k == 1 else (len(q), k)), name
        assert d.dtype == dtype and i.dtype == np.int64
        check_nearest(
            np.hstack([points, points]).astype(np.float64),
            q.astype(np.float64),
            k,
            d,
            i,
            missing=len(points),
        )


@pytest.mark.parametrize("leafsize", [1, 2, 16, 100])
def test_kdtree_leafsize_changes_nothing_but_speed(rng, leafsize):
    points = rng.uniform(0, 100, (700, 2))
    q = rng.uniform(0, 100, (40, 2))
    d, i = spatix.KdTree(points, leafsize=leafsize).query(q, k=5)
    check_nearest(np.hstack([points, points]), q, 5, d, i, missing=len(points))
    scipy_spatial = pytest.importorskip("scipy.spatial")
    d0, i0 = scipy_spatial.cKDTree(points, leafsize=leafsize).query(q, k=5)
    np.testing.assert_allclose(d, d0, rtol=1e-12)


def test_kdtree_leafsize_out_of_range():
    for bad in (0, 70_000):
        with pytest.raises(ValueError, match=f"leafsize = {bad}: a leaf holds 1 to 65536 points"):
            spatix.KdTree(np.zeros((3, 2)), leafsize=bad)


def test_packed_boxes_name_positions():
    index = spatix.PackedIndex(np.array([[0.0, 0.0, 1.0, 1.0]] * 6))
    with pytest.raises(KeyError, match=r"positions\[1\] = -1 is no position of this index \(positions are 0 to 5\)"):
        index.boxes([5, -1])


def test_kdtree_query_radius_matches_brute_force(rng):
    for name, points in point_sets(rng).items():
        tree = spatix.KdTree(points)
        q = rng.uniform(-10, 110, (40, 2))
        for r in [0.0, 1.0, 7.5]:
            qi, pi = tree.query_radius(q, r)
            got = set(zip(qi.tolist(), pi.tolist()))
            want = {
                (a, int(b))
                for a, p in enumerate(q)
                for b in np.nonzero(np.hypot(*(points - p).T) <= r)[0]
            }
            assert got == want, (name, r)
            assert np.all(np.diff(qi) >= 0), "grouped by query, in query order"


def test_kdtree_matches_scipy_semantics_for_short_trees():
    tree = spatix.KdTree([[0.0, 0.0], [1.0, 0.0]])
    d, i = tree.query([[0.0, 0.1]], k=4)
    assert d.shape == (1, 4)
    assert i[0].tolist() == [0, 1, 2, 2]  # scipy pads with n and inf
    assert np.isinf(d[0, 2:]).all()


def test_float64_is_never_rounded():
    # 1 + 2^-40 and 1 are the same float32: a float32 index could not tell them apart.
    x = 1.0 + 2.0**-40
    tree = spatix.KdTree([[1.0, 0.0], [x, 0.0]])
    _, i = tree.query([[x, 0.0]])
    assert i.tolist() == [1]
    index = spatix.PackedIndex([[1.0, 0.0, 1.0, 0.0], [x, 0.0, x, 0.0]])
    _, found = index.query([[x, 0.0, 2.0, 1.0]])
    assert found.tolist() == [1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_packed_index_matches_brute_force(rng, dtype):
    sets = degenerate_sets(rng)
    sets["uniform"] = random_boxes(rng, 800)
    for name, boxes in sets.items():
        boxes = boxes.astype(dtype)
        index = spatix.PackedIndex(boxes)
        assert len(index) == len(boxes)
        as64 = boxes.astype(np.float64)
        windows = np.vstack([random_boxes(rng, 60, half=(0.0, 15.0)), as64[:5]]).astype(dtype)
        w, b = index.query(windows)
        assert w.dtype == b.dtype == np.int64
        assert set(zip(w.tolist(), b.tolist())) == window_hits(as64, windows.astype(np.float64)), name
        assert len(w) == len(set(zip(w.tolist(), b.tolist()))), "each hit once"
        pairs = index.pairs()
        assert pairs.shape[1] == 2 and pairs.dtype == np.int64
        assert np.all(pairs[:, 0] < pairs[:, 1])
        assert set(map(tuple, pairs.tolist())) == all_pairs(as64), name
        assert len(pairs) == len(all_pairs(as64)), "each pair once"
        q = rng.uniform(-20, 120, (30, 2)).astype(dtype)
        for k in (1, 4):
            d, i = index.nearest(q, k)
            check_nearest(as64, q.astype(np.float64), k, d, i, missing=len(boxes))


def test_packed_index_of_points(rng):
    points = rng.uniform(0, 50, (300, 2))
    index = spatix.PackedIndex(points)
    boxes = np.hstack([points, points])
    windows = random_boxes(rng, 30, half=(1.0, 10.0))
    assert set(zip(*[a.tolist() for a in index.query(windows)])) == window_hits(boxes, windows)


def test_workers_give_the_same_answers(rng):
    points = rng.uniform(0, 100, (3000, 2))
    q = rng.uniform(0, 100, (2000, 2))
    tree = spatix.KdTree(points)
    for k in (1, 5):
        one = tree.query(q, k=k)
        for workers in (2, 3, -1):
            many = tree.query(q, k=k, workers=workers)
            np.testing.assert_array_equal(one[0], many[0])
            np.testing.assert_array_equal(one[1], many[1])
    np.testing.assert_array_equal(
        np.column_stack(tree.query_radius(q, 2.0)), np.column_stack(tree.query_radius(q, 2.0, workers=2))
    )
    index = spatix.PackedIndex(random_boxes(rng, 3000))
    windows = random_boxes(rng, 1000, half=(0.0, 5.0))
    np.testing.assert_array_equal(
        np.column_stack(index.query(windows)), np.column_stack(index.query(windows, workers=2))
    )
    for bad in (0, -2):
        with pytest.raises(ValueError, match="workers"):
            tree.query(q, workers=bad)


def test_other_dtypes_and_layouts_are_converted(rng):
    points = rng.integers(0, 100, (400, 2))
    want = spatix.KdTree(points.astype(np.float64)).query(points[:50].astype(np.float64), k=3)
    fortran = np.asfortranarray(points)
    strided = np.repeat(points, 2, axis=1)[:, ::2]  # a view with a step
    for variant in (points, points.astype(np.int32), fortran, strided, points.tolist()):
        tree = spatix.KdTree(variant)
        assert tree.dtype == "float64"
        got = tree.query(variant[:50], k=3)
        np.testing.assert_array_equal(want[0], got[0])
        np.testing.assert_array_equal(want[1], got[1])


def unaligned(a):
    """A copy of `a` at an odd address (as `frombuffer` of a slice, or unpickled bytes, give)."""
    raw = np.zeros(a.nbytes + 1, np.uint8)
    out = np.frombuffer(raw[1:].data, a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unaligned_arrays_lose_no_row(rng, dtype):
    boxes = random_boxes(rng, 300).astype(dtype)
    packed = spatix.PackedIndex(unaligned(boxes))
    assert len(packed) == 300
    np.testing.assert_array_equal(
        np.sort(packed.pairs(), axis=0), np.sort(spatix.PackedIndex(boxes).pairs(), axis=0)
    )
    points = boxes[:, :2].copy()
    tree = spatix.KdTree(unaligned(points))
    assert len(tree) == 300
    want = spatix.KdTree(points).query(points[:20], k=4)
    got = tree.query(unaligned(points[:20]), k=4)
    np.testing.assert_array_equal(want[0], got[0])
    np.testing.assert_array_equal(want[1], got[1])
    grid = spatix.LooseGrid((0.0, 0.0, 100.0, 100.0), sample=boxes, dtype=np.dtype(dtype).name)
    ids = grid.insert(unaligned(boxes))
    assert len(grid) == 300 and len(ids) == 300


@pytest.mark.parametrize("bad", [np.zeros((5, 3)), np.zeros(6), np.zeros((2, 2, 2)), "text"])
def test_wrong_shapes_raise_value_error(bad):
    with pytest.raises(ValueError, match="shape|numbers"):
        spatix.KdTree(bad)
    with pytest.raises(ValueError, match="shape|numbers"):
        spatix.PackedIndex(bad if np.ndim(bad) != 2 or np.shape(bad)[1] != 2 else np.zeros((5, 3)))
    tree = spatix.KdTree(np.zeros((3, 2)))
    if np.shape(bad) == (2, 2, 2):  # points along the last dimension: scipy's (2, 2) results
        assert tree.query(bad)[0].shape == (2, 2)
        return
    with pytest.raises(ValueError, match="shape|numbers|last dimension"):
        tree.query(bad)


def test_invalid_rows_are_named():
    points = np.zeros((10, 2))
    points[7, 1] = np.nan
    with pytest.raises(ValueError, match="points row 7"):
        spatix.KdTree(points)
    boxes = np.tile([0.0, 0.0, 1.0, 1.0], (10, 1))
    boxes[4] = [2.0, 0.0, 1.0, 1.0]  # min > max
    with pytest.raises(ValueError, match="boxes row 4"):
        spatix.PackedIndex(boxes)
    boxes[4] = [0.0, 0.0, np.inf, 1.0]
    with pytest.raises(ValueError, match="boxes row 4"):
        spatix.PackedIndex(boxes)
    tree = spatix.KdTree(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="x row 1"):
        tree.query([[0.0, 0.0], [np.inf, 0.0]])
    with pytest.raises(ValueError, match="geometry row 0"):
        spatix.PackedIndex(np.zeros((3, 4))).query([[1.0, 1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="k must be"):
        tree.query(np.zeros((1, 2)), k=0)
    with pytest.raises(ValueError, match="r must be"):
        tree.query_radius(np.zeros((1, 2)), np.nan)


def test_empty_inputs():
    tree = spatix.KdTree(np.zeros((0, 2)))
    assert len(tree) == 0
    d, i = tree.query(np.zeros((2, 2)), k=2)
    assert np.isinf(d).all() and (i == 0).all()
    index = spatix.PackedIndex(np.zeros((0, 4)))
    assert index.pairs().shape == (0, 2)
    w, b = index.query(np.zeros((0, 4)))
    assert len(w) == len(b) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kdtree_pickles_and_loads_from_bytes(dtype):
    import copy
    import pickle

    rng = np.random.default_rng(7)
    points = rng.random((2000, 2)).astype(dtype) * 100
    queries = rng.random((300, 2)).astype(dtype) * 100
    tree = spatix.KdTree(points, leafsize=4)
    for loaded in (
        pickle.loads(pickle.dumps(tree)),
        spatix.KdTree.from_bytes(tree.to_bytes()),
        copy.deepcopy(tree),
    ):
        assert loaded.dtype == tree.dtype and len(loaded) == len(tree)
        for k in (1, 8):
            d, i = loaded.query(queries, k=k)
            d0, i0 = tree.query(queries, k=k)
            np.testing.assert_array_equal(d, d0)
            np.testing.assert_array_equal(i, i0)
        assert loaded.to_bytes() == tree.to_bytes()


def test_kdtree_from_bad_bytes_raises_value_error():
    data = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 1.0]])).to_bytes()
    for bad in (b"", data[:-1], data + b"\0", b"not spatix at all", data[:10]):
        with pytest.raises(ValueError, match="KdTree.from_bytes"):
            spatix.KdTree.from_bytes(bad)
    damaged = bytearray(data)
    damaged[-20] ^= 0xFF
    with pytest.raises(ValueError, match="KdTree.from_bytes: corrupt bytes: checksum mismatch"):
        spatix.KdTree.from_bytes(bytes(damaged))
