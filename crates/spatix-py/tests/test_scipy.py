"""KdTree's scipy conventions (query, query_ball_point, query_pairs, sparse_distance_matrix)
against numpy brute force and scipy.spatial.cKDTree on the same data."""

import sys

import numpy as np
import pytest

import spatix

scipy_spatial = pytest.importorskip("scipy.spatial")
cKDTree = scipy_spatial.cKDTree


@pytest.fixture
def data():
    rng = np.random.default_rng(26)
    points = rng.uniform(0, 100, (600, 2))
    points[-20:] = points[:20]  # duplicates: ties at distance 0
    queries = np.vstack([rng.uniform(-10, 110, (80, 2)), points[:5]])
    return points, queries


def brute(points, q):
    return np.hypot(*(points - q).T)


def same_neighbours(d, i, want_d, want_i, points, queries):
    """Same shapes, dtypes and fill values; ties compared by distance."""
    assert d.shape == want_d.shape and i.shape == want_i.shape
    assert d.dtype == want_d.dtype and i.dtype == want_i.dtype == np.intp
    np.testing.assert_allclose(d, want_d, rtol=1e-12)
    np.testing.assert_array_equal(i == len(points), want_i == len(points))
    found = i != len(points)
    q = np.broadcast_to(np.atleast_2d(queries)[:, None, :] if d.ndim == 2 else np.atleast_2d(queries), (*i.shape, 2))
    np.testing.assert_allclose(brute_rows(points, q, i, found), np.where(found, d, 0.0), rtol=1e-12)


def brute_rows(points, q, i, found):
    got = np.where(found[..., None], points[np.where(found, i, 0)], q)
    return np.hypot(*(got - q).transpose(-1, *range(got.ndim - 1)))


@pytest.mark.parametrize("k", [1, 3, [1], [2, 5], [4, 1], 700])
@pytest.mark.parametrize("bound", [np.inf, 3.0])
def test_query_matches_scipy_and_brute_force(data, k, bound):
    points, queries = data
    tree, theirs = spatix.KdTree(points), cKDTree(points)
    d, i = tree.query(queries, k=k, distance_upper_bound=bound)
    want_d, want_i = theirs.query(queries, k=k, distance_upper_bound=bound)
    same_neighbours(d, i, want_d, want_i, points, queries)
    # brute force: the distances of the ranks asked for, below the bound
    ranks = np.arange(1, k + 1) if np.isscalar(k) else np.asarray(k)
    for row, q in enumerate(queries):
        all_d = np.sort(brute(points, q))
        all_d = np.concatenate([all_d, np.full(max(ranks), np.inf)])[ranks - 1]
        all_d[all_d >= bound] = np.inf
        np.testing.assert_allclose(np.reshape(d[row], -1), all_d, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2, [1, 3]])
def test_query_one_point_gives_scipy_shapes(data, k):
    points, queries = data
    d, i = spatix.KdTree(points).query(queries[0], k=k)
    want_d, want_i = cKDTree(points).query(queries[0], k=k)
    assert type(d) is type(want_d) and type(i) is type(want_i)
    assert np.shape(d) == np.shape(want_d) and np.shape(i) == np.shape(want_i)
    np.testing.assert_allclose(d, want_d, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2, [1, 3]])
@pytest.mark.parametrize("shape", [(3, 2, 2), (2, 1, 3, 2), (0, 4, 2)])
def test_query_of_many_dimensions_gives_scipy_shapes(data, k, shape):
    points, queries = data
    n = int(np.prod(shape[:-1]))
    x = queries[:n].reshape(shape)
    d, i = spatix.KdTree(points).query(x, k=k)
    want_d, want_i = cKDTree(points).query(x, k=k)
    assert d.shape == want_d.shape and i.shape == want_i.shape
    assert d.dtype == want_d.dtype and i.dtype == want_i.dtype
    np.testing.assert_allclose(d, want_d, rtol=1e-12)
    d32, _ = spatix.KdTree(points.astype(np.float32)).query(x.astype(np.float32), k=k)
    assert d32.shape == want_d.shape
    with pytest.raises(ValueError, match="last dimension"):
        spatix.KdTree(points).query(np.zeros((2, 2, 3)), k=k)


def test_query_fills_missing_neighbours_as_scipy():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    for q, k, bound in [([2.0, 0.0], 2, 1.0), ([0.0, 0.5], 5, np.inf), ([0.0, 0.5], [1, 4], 0.6)]:
        got = spatix.KdTree(points).query(q, k=k, distance_upper_bound=bound)
        want = cKDTree(points).query(q, k=k, distance_upper_bound=bound)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    d, i = spatix.KdTree(points).query(np.empty((0, 2)), k=2)
    assert d.shape == i.shape == (0, 2)
    d, i = spatix.KdTree(points).query([[0.0, 0.0], [3.0, 0.0]], k=1, distance_upper_bound=1.0)
    np.testing.assert_array_equal(i, cKDTree(points).query([[0.0, 0.0], [3.0, 0.0]], distance_upper_bound=1.0)[1])


def test_query_accepts_lists_and_float32(data):
    points, queries = data
    d, i = spatix.KdTree(points.tolist()).query(queries.tolist(), k=2)
    want_d, want_i = cKDTree(points).query(queries, k=2)
    same_neighbours(d, i, want_d, want_i, points, queries)
    d32, _ = spatix.KdTree(points.astype(np.float32)).query(queries.astype(np.float32), k=2)
    assert d32.dtype == np.float32
    np.testing.assert_allclose(d32, want_d, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("workers", [1, 2, -1])
def test_query_ball_point_matches_scipy_and_brute_force(data, workers):
    points, queries = data
    tree, theirs = spatix.KdTree(points), cKDTree(points)
    rng = np.random.default_rng(3)
    for r in [0.0, 4.0, rng.uniform(0, 10, len(queries))]:
        got = tree.query_ball_point(queries, r, workers=workers)
        want = theirs.query_ball_point(queries, r, workers=workers)
        assert got.dtype == want.dtype == object and got.shape == want.shape
        radii = np.broadcast_to(r, len(queries))
        for row, q in enumerate(queries):
            assert got[row] == sorted(want[row])
            assert got[row] == np.nonzero(brute(points, q) <= radii[row])[0].tolist()
        lengths = tree.query_ball_point(queries, r, return_length=True, workers=workers)
        want_lengths = theirs.query_ball_point(queries, r, return_length=True)
        assert lengths.dtype == want_lengths.dtype == np.intp
        np.testing.assert_array_equal(lengths, want_lengths)
        unsorted = tree.query_ball_point(queries, r, return_sorted=False, workers=workers)
        assert [sorted(u) for u in unsorted] == list(got)


def test_query_ball_point_one_point_and_empty(data):
    points, queries = data
    tree, theirs = spatix.KdTree(points), cKDTree(points)
    got = tree.query_ball_point(queries[-1], 6.0)
    assert type(got) is list and got == sorted(theirs.query_ball_point(queries[-1], 6.0))
    count = tree.query_ball_point(queries[-1], 6.0, return_length=True)
    want = theirs.query_ball_point(queries[-1], 6.0, return_length=True)
    assert type(count) is type(want) and count == want
    empty = tree.query_ball_point(np.empty((0, 2)), 1.0)
    assert empty.dtype == object and empty.shape == (0,)


@pytest.mark.parametrize("r", [0.0, 2.5, 9.0])
def test_query_pairs_matches_scipy_and_brute_force(data, r):
    points, _ = data
    tree, theirs = spatix.KdTree(points), cKDTree(points)
    got = tree.query_pairs(r)
    assert got == theirs.query_pairs(r)
    want = {(i, j) for i in range(len(points)) for j in np.nonzero(brute(points, points[i]) <= r)[0].tolist() if i < j}
    assert got == want
    array = tree.query_pairs(r, output_type="ndarray", workers=2)
    want_array = theirs.query_pairs(r, output_type="ndarray")
    assert array.shape == want_array.shape and array.dtype == want_array.dtype == np.intp
    # scipy's rows come in no particular order; spatix's are sorted
    np.testing.assert_array_equal(array, want_array[np.lexsort((want_array[:, 1], want_array[:, 0]))])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_query_pairs_at_any_magnitude(dtype):
    """The pair pass widens its boxes by the coordinates' rounding; boxes that do not fit the
    type (an infinite radius, coordinates near the largest value) take one radius search per
    point instead. Both give brute force's pairs."""
    big = float(np.finfo(dtype).max) / 4
    cases = [
        (np.array([[1e6, 0.0], [1e6 + 0.0625, 0.0], [1e6, 0.0625], [5.0, 5.0]]), 0.0625),
        (np.array([[-big, 0.0], [big, 0.0], [big, big / 2], [0.0, 0.0]]), big * 1.01),
        (np.array([[0.0, 0.0], [3.0, 4.0], [-1e30, 1e30]]), np.inf),
        (np.array([[0.0, 0.0], [1e-30, 0.0], [0.0, 2e-30]]), 1e-30),
    ]
    for points, r in cases:
        points = points.astype(dtype)
        got = spatix.KdTree(points).query_pairs(r, output_type="ndarray")
        d = np.hypot(*(points[:, None, :].astype(float) - points[None, :, :].astype(float)).transpose(2, 0, 1))
        want = np.argwhere(np.triu(d <= float(dtype(r)), 1))
        np.testing.assert_array_equal(got.reshape(-1, 2), want, err_msg=f"{points}, r={r}")


@pytest.mark.parametrize("output_type", ["dok_matrix", "coo_matrix", "dict", "ndarray"])
def test_sparse_distance_matrix_matches_scipy_and_brute_force(data, output_type):
    points, queries = data
    mine, theirs = spatix.KdTree(points), spatix.KdTree(queries)
    got = mine.sparse_distance_matrix(theirs, 5.0, output_type=output_type, workers=2)
    want = cKDTree(points).sparse_distance_matrix(cKDTree(queries), 5.0, output_type=output_type)
    assert type(got) is type(want)
    if output_type == "ndarray":
        assert got.dtype == want.dtype
        order = np.lexsort((want["j"], want["i"]))
        np.testing.assert_array_equal(got[["i", "j"]], want[order][["i", "j"]])
        np.testing.assert_allclose(got["v"], want[order]["v"], rtol=1e-12)
        return
    if output_type.endswith("matrix"):
        assert got.shape == want.shape == (len(points), len(queries)) and got.nnz == want.nnz
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-12)
        got = dict(got.todok().items())
    brute_pairs = {
        (i, j): d for i, p in enumerate(points) for j, d in enumerate(brute(queries, p)) if d <= 5.0
    }
    assert set(got) == set(brute_pairs)
    for key, d in brute_pairs.items():
        assert got[key] == pytest.approx(d, rel=1e-12)


def test_sparse_distance_matrix_keeps_zeros_as_scipy():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    got = spatix.KdTree(points).sparse_distance_matrix(spatix.KdTree(points), 1.0)
    want = cKDTree(points).sparse_distance_matrix(cKDTree(points), 1.0)
    assert got.nnz == want.nnz == 9
    np.testing.assert_array_equal(got.toarray(), want.toarray())


def test_sparse_types_need_scipy_dict_and_ndarray_do_not(monkeypatch):
    tree = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0]]))
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    for output_type in ("dok_matrix", "coo_matrix"):
        with pytest.raises(ImportError, match="needs scipy"):
            tree.sparse_distance_matrix(tree, 1.0, output_type=output_type)
    assert tree.sparse_distance_matrix(tree, 1.0, output_type="dict") == {(0, 0): 0.0, (0, 1): 1.0, (1, 0): 1.0, (1, 1): 0.0}
    assert len(tree.sparse_distance_matrix(tree, 1.0, output_type="ndarray")) == 4


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda t: t.query([[0.0, 0.0], [np.nan, 1.0]]), "x row 1"),
        (lambda t: t.query([0.0, np.inf]), "x row 0"),
        (lambda t: t.query(np.zeros((3, 3))), r"x must be an array of shape \(2,\) or \(n, 2\)"),
        (lambda t: t.query(np.zeros(3)), "shape"),
        (lambda t: t.query(np.array([["a", "b"]])), "x must be an array"),
        (lambda t: t.query([[0.0, 0.0]], k=0), "k must be at least 1"),
        (lambda t: t.query([[0.0, 0.0]], k=[2, 0]), "k must be at least 1"),
        (lambda t: t.query([[0.0, 0.0]], k=[]), "k must not be an empty"),
        (lambda t: t.query([[0.0, 0.0]], p=1), "only p=2"),
        (lambda t: t.query([[0.0, 0.0]], eps=0.1), "eps=0"),
        (lambda t: t.query([[0.0, 0.0]], distance_upper_bound=np.nan), "distance_upper_bound"),
        (lambda t: t.query_ball_point([[0.0, 0.0], [np.nan, 0.0]], 1.0), "x row 1"),
        (lambda t: t.query_ball_point(np.zeros((2, 3)), 1.0), "shape"),
        (lambda t: t.query_ball_point([[0.0, 0.0]] * 3, [1.0, 2.0]), "one per query point"),
        (lambda t: t.query_ball_point([[0.0, 0.0]] * 3, [1.0, np.nan, 1.0]), r"r\[1\] = NaN"),
        (lambda t: t.query_ball_point([0.0, 0.0], 1.0, p=1), "only p=2"),
        (lambda t: t.query_ball_point([0.0, 0.0], 1.0, eps=0.1), "eps=0"),
        (lambda t: t.query_pairs(np.nan), "r must be"),
        (lambda t: t.query_pairs(1.0, p=3), "only p=2"),
        (lambda t: t.query_pairs(1.0, output_type="list"), "output_type"),
        (lambda t: t.sparse_distance_matrix(t, np.nan), "max_distance"),
        (lambda t: t.sparse_distance_matrix(t, 1.0, p=1), "only p=2"),
        (lambda t: t.sparse_distance_matrix(t, 1.0, output_type="csr_matrix"), "output_type"),
    ],
)
def test_bad_input_raises_value_error_naming_it(call, match):
    with pytest.raises(ValueError, match=match):
        call(spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0]])))


def test_bad_k_types():
    tree = spatix.KdTree(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="k must be an int or a sequence"):
        tree.query([0.0, 0.0], k=1.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_attributes_are_scipys(dtype):
    rng = np.random.default_rng(21)
    for points in (rng.uniform(-50, 50, (500, 2)).astype(dtype), np.empty((0, 2), dtype)):
        tree, theirs = spatix.KdTree(points, leafsize=8), cKDTree(points, leafsize=8)
        assert (tree.n, tree.m, tree.leafsize) == (theirs.n, theirs.m, theirs.leafsize)
        np.testing.assert_array_equal(tree.data, theirs.data)
        assert tree.data.dtype == theirs.data.dtype
        np.testing.assert_array_equal(tree.mins, theirs.mins)
        np.testing.assert_array_equal(tree.maxes, theirs.maxes)


def test_a_negative_radius_finds_nothing():
    """A negative radius finds nothing (scipy's query_ball_point and query_pairs square it:
    r = -1 finds what r = 1 does, which spatix does not copy)."""
    rng = np.random.default_rng(22)
    points = rng.uniform(0, 10, (200, 2))
    tree, theirs = spatix.KdTree(points), cKDTree(points)
    q = rng.uniform(0, 10, (5, 2))
    assert tree.query_ball_point(q[0], -1.0) == []
    radii = [-1.0, 2.0, -0.0, 1.5, -np.inf]
    got = tree.query_ball_point(q, radii)
    want = theirs.query_ball_point(q, np.maximum(radii, 0.0))
    assert [sorted(g) for g in got] == [sorted(w) if r >= 0 else [] for w, r in zip(want, radii)]
    assert tree.query_pairs(-1.0) == set() and theirs.query_pairs(-1.0) == theirs.query_pairs(1.0)
    assert tree.query_ball_point(q, -1.0, return_length=True).tolist() == [0] * 5
    i, j = tree.query_radius(q, -1.0)
    assert len(i) == len(j) == 0


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("workers", [1, 2])
def test_count_neighbors_and_query_ball_tree_are_scipys(dtypes, workers):
    rng = np.random.default_rng(23)
    a = rng.uniform(0, 100, (700, 2))
    b = np.vstack([rng.uniform(0, 100, (600, 2)), [[1e30, -1e30], [50.0, 50.0]]])  # a far stray
    a[:5] = b[:5]  # coincident points: distance 0
    mine, theirs = spatix.KdTree(a.astype(dtypes[0])), spatix.KdTree(b.astype(dtypes[1]))
    # scipy's trees of the same values (spatix converts the first tree's points to the
    # second's dtype).
    ta, tb = cKDTree(a.astype(dtypes[0]).astype(dtypes[1]).astype(float)), cKDTree(b.astype(dtypes[1]).astype(float))
    for r in (0.0, 0.5, 2.0, 7.5):
        assert mine.count_neighbors(theirs, r, workers=workers) == ta.count_neighbors(tb, r)
        got = mine.query_ball_tree(theirs, r, workers=workers)
        assert got == [sorted(x) for x in ta.query_ball_tree(tb, r)]
    radii = [7.5, 0.0, 2.0, -1.0, np.inf, 0.5]
    want = ta.count_neighbors(tb, np.maximum(radii, 0.0))
    want[3] = 0  # a negative radius counts nothing (scipy squares it)
    np.testing.assert_array_equal(mine.count_neighbors(theirs, radii, workers=workers), want)
    edges = [0.0, 0.5, 2.0, 7.5, np.inf]
    np.testing.assert_array_equal(
        mine.count_neighbors(theirs, edges, cumulative=False, workers=workers),
        ta.count_neighbors(tb, edges, cumulative=False),
    )
    assert mine.count_neighbors(mine, 1.0) == cKDTree(a.astype(dtypes[0]).astype(float)).count_neighbors(
        cKDTree(a.astype(dtypes[0]).astype(float)), 1.0
    )


def test_count_neighbors_edge_cases():
    empty, tree = spatix.KdTree(np.empty((0, 2))), spatix.KdTree([[0.0, 0.0], [3.0, 4.0]])
    assert empty.count_neighbors(tree, 10.0) == tree.count_neighbors(empty, 10.0) == 0
    assert tree.query_ball_tree(empty, 1.0) == [[], []] and empty.query_ball_tree(tree, 1.0) == []
    assert tree.count_neighbors(tree, 5.0) == 4 and tree.count_neighbors(tree, 4.999) == 2
    # Coordinates whose spread overflows a grid's arithmetic: radius searches instead.
    far = spatix.KdTree([[-1e300, -1e300], [1e300, 1e300], [0.0, 0.0]])
    assert far.count_neighbors(far, 1.0) == 3 and far.count_neighbors(far, np.inf) == 9
    assert far.query_ball_tree(far, 1.5e300) == [[0, 2], [1, 2], [0, 1, 2]]
    for call, match in [
        (lambda: tree.count_neighbors(tree, 1.0, p=1), "only p=2"),
        (lambda: tree.count_neighbors(tree, 1.0, weights=np.ones(2)), "weights"),
        (lambda: tree.count_neighbors(tree, [1.0, np.nan]), r"r\[1\] = NaN"),
        (lambda: tree.count_neighbors(tree, [[1.0]]), "1-D"),
        (lambda: tree.count_neighbors(tree, [2.0, 1.0], cumulative=False), "non-decreasing"),
        (lambda: tree.query_ball_tree(tree, np.nan), "r must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
