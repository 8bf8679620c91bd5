"""shapely's STRtree conventions on the box indexes (query with predicates, query_nearest)
against numpy brute force and, where installed, shapely.STRtree itself on the same data."""

import numpy as np
import pytest

import spatix
from oracle import intersecting, point_box_distance

PREDICATES = ["intersects", "contains", "within", "contains_properly", "covers", "covered_by", "touches", "overlaps", "crosses"]


def tree_boxes(rng, n=300):
    """Boxes on a coarse lattice, so that boxes touch, nest and coincide often."""
    lo = rng.integers(0, 40, (n, 2)).astype(float)
    size = rng.integers(1, 8, (n, 2)).astype(float)
    return np.hstack([lo, lo + size])


def query_boxes(rng, n=60):
    return tree_boxes(rng, n)


def indexes(boxes, dtype):
    """A static and a dynamic index of the same boxes; the dynamic one's ids mapped back to
    positions."""
    b = boxes.astype(dtype)
    packed = spatix.PackedIndex(b)
    grid = spatix.LooseGrid((0.0, 0.0, 50.0, 50.0), sample=b)
    ids = grid.insert(b)
    position = {int(i): p for p, i in enumerate(ids)}
    return [(packed, lambda found: found), (grid, lambda found: np.array([position[int(i)] for i in found], dtype=np.int64))]


def as_positions(result, to_position):
    return np.vstack([result[0], to_position(result[1])]) if result.size else result.reshape(2, 0)


def ordered(result):
    """Whether a (2, n) result is ordered by geometry, then tree index."""
    keys = list(zip(result[0].tolist(), result[1].tolist()))
    return keys == sorted(keys)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("workers", [1, 2])
def test_intersects_is_brute_force(dtype, workers):
    rng = np.random.default_rng(1)
    boxes, queries = tree_boxes(rng), query_boxes(rng)
    want = {(q, int(i)) for q, w in enumerate(queries) for i in np.nonzero(intersecting(boxes, w))[0]}
    for index, to_position in indexes(boxes, dtype):
        got = index.query(queries.astype(dtype), workers=workers)
        assert got.shape[0] == 2 and got.dtype == np.int64
        assert ordered(got)
        pos = as_positions(got, to_position)
        assert set(zip(pos[0].tolist(), pos[1].tolist())) == want
        assert index.query(queries.astype(dtype), predicate="intersects", workers=workers).tolist() == got.tolist()


def test_one_geometry_gives_tree_indices_alone():
    boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]], dtype=float)
    index = spatix.PackedIndex(boxes)
    np.testing.assert_array_equal(index.query([2.0, 2.0, 5.0, 5.0]), [0, 1, 2])
    np.testing.assert_array_equal(index.query([5.5, 5.5]), [2])
    np.testing.assert_array_equal(index.query(np.array([[1.5, 1.5]])), [[0, 0], [0, 1]])
    assert index.query(np.zeros((0, 4))).shape == (2, 0)


@pytest.fixture
def shapely():
    return pytest.importorskip("shapely")


def shapely_query(shapely, boxes, geoms, predicate, **kwargs):
    tree = shapely.STRtree(shapely.box(*boxes.T))
    got = tree.query(geoms, predicate=predicate, **kwargs)
    order = np.lexsort((got[1], got[0]))
    return got[:, order]


@pytest.mark.parametrize("predicate", PREDICATES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predicates_are_shapelys(shapely, predicate, dtype):
    rng = np.random.default_rng(2)
    boxes, queries = tree_boxes(rng), query_boxes(rng)
    queries[:10] = boxes[:10]  # equal boxes: contains, within, covers all hold
    points = np.vstack([boxes[:20, :2], (boxes[20:40, :2] + boxes[20:40, 2:]) / 2, rng.integers(0, 48, (20, 2))]).astype(float)
    for index, to_position in indexes(boxes, dtype):
        want = shapely_query(shapely, boxes, shapely.box(*queries.T), predicate)
        got = index.query(queries.astype(dtype), predicate=predicate)
        assert ordered(got)
        pos = as_positions(got, to_position)
        np.testing.assert_array_equal(pos[:, np.lexsort(pos[::-1])], want, err_msg=predicate)
        want = shapely_query(shapely, boxes, shapely.points(points), predicate)
        got = index.query(points.astype(dtype), predicate=predicate)
        pos = as_positions(got, to_position)
        np.testing.assert_array_equal(pos[:, np.lexsort(pos[::-1])], want, err_msg=f"{predicate} (points)")


def as_geometries(shapely, boxes):
    """Each box as the geometry it is: a point, a segment or a rectangle."""
    out = []
    for x0, y0, x1, y1 in boxes.tolist():
        if x0 == x1 and y0 == y1:
            out.append(shapely.Point(x0, y0))
        elif x0 == x1 or y0 == y1:
            out.append(shapely.LineString([(x0, y0), (x1, y1)]))
        else:
            out.append(shapely.box(x0, y0, x1, y1))
    return np.array(out, dtype=object)


def small_boxes(rng, n):
    """Boxes on a coarse integer lattice, a third of them points or segments: many touch,
    share edges, lie on each other's edges or are equal."""
    lo = rng.integers(0, 8, (n, 2))
    size = rng.integers(0, 4, (n, 2))
    size[rng.random(n) < 0.2, 0] = 0
    size[rng.random(n) < 0.2, 1] = 0
    return np.hstack([lo, lo + size]).astype(float)


@pytest.mark.parametrize("predicate", PREDICATES)
def test_predicates_on_points_segments_and_rectangles_are_shapelys(shapely, predicate):
    """Every predicate on boxes of every dimension (points, segments, rectangles), tree and
    query alike, against shapely's predicate on the geometries they are, pair by pair."""
    rng = np.random.default_rng(17)
    boxes, queries = small_boxes(rng, 80), small_boxes(rng, 80)
    tree_geoms, query_geoms = as_geometries(shapely, boxes), as_geometries(shapely, queries)
    test = getattr(shapely, predicate)
    want = {(q, t) for q in range(len(queries)) for t in range(len(boxes)) if test(query_geoms[q], tree_geoms[t])}
    for index, to_position in indexes(boxes, np.float64):
        pos = as_positions(index.query(queries, predicate=predicate), to_position)
        assert set(zip(pos[0].tolist(), pos[1].tolist())) == want, predicate


@pytest.mark.parametrize("workers", [1, 2])
def test_query_nearest_exclusive_and_all_matches_are_shapelys(shapely, workers):
    """``exclusive`` leaves out tree geometries equal to the point (here: points of the tree
    that the queries repeat), ``all_matches=False`` keeps one of the nearest (spatix: the lowest
    index; shapely: one of the same set), both against shapely's STRtree."""
    rng = np.random.default_rng(18)
    boxes = small_boxes(rng, 120)
    points = np.vstack([boxes[boxes[:, 0] == boxes[:, 2]][:, :2][:20], rng.integers(0, 11, (40, 2))]).astype(float)
    tree_geoms = as_geometries(shapely, boxes)
    tree = shapely.STRtree(tree_geoms)
    query_geoms = shapely.points(points)
    for index, to_position in indexes(boxes, np.float64):
        for exclusive in (False, True):
            got = index.query_nearest(points, exclusive=exclusive, workers=workers)
            pos = as_positions(got, to_position)
            want = tree.query_nearest(query_geoms, exclusive=exclusive)
            assert set(zip(pos[0].tolist(), pos[1].tolist())) == set(zip(want[0].tolist(), want[1].tolist()))
            one, d = index.query_nearest(points, exclusive=exclusive, all_matches=False, return_distance=True, workers=workers)
            all_of = {(int(q), int(t)) for q, t in zip(*want)}
            pos = as_positions(one, to_position)
            assert len(set(pos[0].tolist())) == pos.shape[1]  # one per point
            assert set(pos[0].tolist()) == set(want[0].tolist())
            assert {(int(q), int(t)) for q, t in zip(*pos)} <= all_of
            _, theirs_d = tree.query_nearest(query_geoms, exclusive=exclusive, all_matches=False, return_distance=True)
            np.testing.assert_allclose(np.sort(d), np.sort(theirs_d))


def test_shapely_geometries_are_read_by_their_bounds(shapely):
    rng = np.random.default_rng(3)
    boxes = tree_boxes(rng)
    index = spatix.PackedIndex(boxes)
    polygons = shapely.box(*query_boxes(rng).T)
    geoms = np.concatenate([polygons, [None, shapely.Polygon()]])
    got = index.query(geoms)
    want = shapely_query(shapely, boxes, geoms, "intersects")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(index.query(polygons[0]), index.query(shapely.bounds(polygons[0])))
    assert index.query(polygons[0]).ndim == 1


@pytest.mark.parametrize("predicate", PREDICATES + ["dwithin"])
@pytest.mark.parametrize("workers", [1, 2])
def test_empty_geometries_among_others_keep_their_places(shapely, predicate, workers):
    """Empty geometries and None between the others: those ask nothing and the others keep
    their input indices, under every predicate (each filters the answers in place)."""
    rng = np.random.default_rng(7)
    boxes = tree_boxes(rng)
    if predicate == "dwithin":
        geoms = shapely.points(rng.uniform(-5, 55, (40, 2)))
        empties, kwargs = [None, shapely.Point()], {"distance": 2.0}
    else:
        geoms = shapely.box(*query_boxes(rng, 40).T)
        empties, kwargs = [None, shapely.Polygon()], {}
    geoms = geoms.astype(object)
    geoms[[0, 7, 8, 21, 39]] = [empties[0], empties[1], empties[0], empties[1], empties[0]]
    want = shapely_query(shapely, boxes, geoms, predicate, **kwargs)
    for index, to_position in indexes(boxes, np.float64):
        got = index.query(geoms, predicate=predicate, workers=workers, **kwargs)
        assert ordered(got)
        pos = as_positions(got, to_position)
        np.testing.assert_array_equal(pos[:, np.lexsort(pos[::-1])], want, err_msg=predicate)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_query_nearest_is_shapelys(shapely, dtype):
    rng = np.random.default_rng(4)
    boxes = tree_boxes(rng)
    points = np.vstack([rng.integers(-5, 55, (80, 2)), boxes[:10, :2]]).astype(float)  # ties on the lattice
    tree = shapely.STRtree(shapely.box(*boxes.T))
    for max_distance in [None, 1.5]:
        want, want_d = tree.query_nearest(shapely.points(points), max_distance=max_distance, return_distance=True)
        order = np.lexsort((want[1], want[0]))
        for index, to_position in indexes(boxes, dtype):
            got, d = index.query_nearest(points.astype(dtype), max_distance=max_distance, return_distance=True)
            assert ordered(got) and d.dtype == np.float64
            pos = as_positions(got, to_position)
            resort = np.lexsort((pos[1], pos[0]))
            np.testing.assert_array_equal(pos[:, resort], want[:, order])
            np.testing.assert_allclose(d[resort], want_d[order], rtol=1e-6)
            # The distances are the brute-force least distances.
            for q, i in zip(*pos):
                assert point_box_distance(boxes, points[q]).min() == pytest.approx(point_box_distance(boxes[i : i + 1], points[q])[0])
            np.testing.assert_array_equal(index.query_nearest(points.astype(dtype), max_distance=max_distance), got)
            both, d2 = index.query_nearest(points.astype(dtype), max_distance=max_distance, return_distance=True, workers=2)
            np.testing.assert_array_equal(both, got)
            np.testing.assert_array_equal(d2, d)


def test_query_nearest_of_one_point_gives_tree_indices_alone(shapely):
    rng = np.random.default_rng(7)
    boxes = tree_boxes(rng)
    tree = shapely.STRtree(shapely.box(*boxes.T))
    for point in [(5000.0, 5000.0), (3.0, 3.0), tuple(boxes[4, :2])]:
        want, want_d = tree.query_nearest(shapely.Point(*point), return_distance=True)
        for index, to_position in indexes(boxes, np.float64):
            for geometry in [point, shapely.Point(*point)]:
                got = index.query_nearest(geometry)
                assert got.ndim == 1 and want.ndim == 1
                np.testing.assert_array_equal(np.sort(to_position(got)), np.sort(want))
                got, d = index.query_nearest(geometry, return_distance=True)
                np.testing.assert_allclose(d, want_d)
    # An array of one point is an array: the (2, n) result, as shapely's.
    index = spatix.PackedIndex(boxes)
    assert index.query_nearest(np.array([[3.0, 3.0]])).shape[0] == 2
    assert tree.query_nearest(shapely.points([[3.0, 3.0]])).shape[0] == 2


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda i: i.query([[0.0, 0.0, 1.0, 1.0], [np.nan, 0.0, 1.0, 1.0]]), "geometry row 1"),
        (lambda i: i.query([[2.0, 0.0, 1.0, 1.0]]), "geometry row 0"),
        (lambda i: i.query([[0.0, np.inf]]), "geometry row 0"),
        (lambda i: i.query(np.zeros((3, 3))), "shape"),
        (lambda i: i.query([[0.0, 0.0, 1.0, 1.0]], predicate="equals"), "predicate must be one of"),
        (lambda i: i.query([["a", "b", "c", "d"]]), "geometry"),
        (lambda i: i.query_nearest([[0.0, 0.0, 1.0, 1.0]]), "not a point"),
        (lambda i: i.query_nearest([[0.0, 0.0]], max_distance=-1.0), "max_distance"),
        (lambda i: i.query_nearest([[0.0, 0.0]], max_distance=float("nan")), "max_distance"),
        (lambda i: i.query([[0.0, 0.0, 1.0, 1.0]], workers=0), "workers"),
    ],
)
def test_bad_input_is_a_value_error(call, message):
    boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], dtype=float)
    for index, _ in indexes(boxes, np.float64):
        with pytest.raises(ValueError, match=message):
            call(index)


def test_nearest_takes_one_point_and_checks_k():
    boxes = np.array([[0, 0, 1, 1], [3, 0, 4, 1]], dtype=float)
    for index, to_position in indexes(boxes, np.float64):
        d, i = index.nearest([2.5, 0.5])
        assert np.ndim(d) == 0 and np.ndim(i) == 0 and d == 0.5 and to_position(np.array([i]))[0] == 1
        d, i = index.nearest([2.5, 0.5], k=2)
        assert d.shape == (2,) and d.tolist() == [0.5, 1.5]
        for k in [0, -1]:
            with pytest.raises(ValueError, match="k must be at least 1"):
                index.nearest([[0.0, 0.0]], k=k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("workers", [1, 2])
def test_dwithin_is_brute_force(dtype, workers):
    rng = np.random.default_rng(5)
    boxes = tree_boxes(rng)
    points = rng.integers(-5, 55, (70, 2)).astype(float)
    r = 2.5
    want = {(q, int(i)) for q, p in enumerate(points) for i in np.nonzero(point_box_distance(boxes, p) <= r)[0]}
    for index, to_position in indexes(boxes, dtype):
        got = index.query(points.astype(dtype), predicate="dwithin", distance=r, workers=workers)
        assert ordered(got)
        pos = as_positions(got, to_position)
        assert set(zip(pos[0].tolist(), pos[1].tolist())) == want


def test_dwithin_is_shapelys(shapely):
    rng = np.random.default_rng(6)
    boxes = tree_boxes(rng)
    points = rng.uniform(-5, 55, (70, 2))
    index = spatix.PackedIndex(boxes)
    want = shapely_query(shapely, boxes, shapely.points(points), "dwithin", distance=3.0)
    np.testing.assert_array_equal(index.query(points, predicate="dwithin", distance=3.0), want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("workers", [1, 2])
def test_dwithin_takes_a_distance_per_point_as_shapely(shapely, dtype, workers):
    """One distance per point (negative and NaN ones finding nothing), as shapely's
    ``STRtree.query(points, predicate="dwithin", distance=array)`` and as brute force;
    empty geometries keep their positions."""
    rng = np.random.default_rng(16)
    boxes = tree_boxes(rng)
    points = rng.integers(-5, 55, (70, 2)).astype(float)
    distances = rng.integers(-2, 12, 70) / 2.0
    distances[3] = np.nan
    want = {
        (q, int(i))
        for q, p in enumerate(points)
        for i in np.nonzero(point_box_distance(boxes, p) <= distances[q])[0]
    }
    geoms = shapely.points(points)
    theirs = shapely_query(shapely, boxes, geoms, "dwithin", distance=distances)
    assert set(zip(theirs[0].tolist(), theirs[1].tolist())) == want
    geoms[5] = shapely.Point()  # empty: matches nothing, keeps its position
    for index, to_position in indexes(boxes, dtype):
        for given in (points.astype(dtype), geoms):
            got = index.query(given, predicate="dwithin", distance=distances, workers=workers)
            assert ordered(got)
            pos = as_positions(got, to_position)
            skip = 5 if given is geoms else None
            assert set(zip(pos[0].tolist(), pos[1].tolist())) == {(q, i) for q, i in want if q != skip}
    # A negative or NaN distance for all finds nothing, as shapely's.
    for d in (-1.0, np.nan):
        assert spatix.PackedIndex(boxes).query(points, predicate="dwithin", distance=d).shape == (2, 0)
        assert shapely_query(shapely, boxes, shapely.points(points), "dwithin", distance=d).shape == (2, 0)


def slab_hits(boxes, origin, direction, max_t):
    """Brute force: the entry parameter of the ray into each box, NaN where it misses."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = (boxes[:, :2] - origin) / direction
        hi = (boxes[:, 2:] - origin) / direction
    near = np.where(direction == 0, np.where((boxes[:, :2] <= origin) & (origin <= boxes[:, 2:]), -np.inf, np.inf), np.minimum(lo, hi))
    far = np.where(direction == 0, np.where((boxes[:, :2] <= origin) & (origin <= boxes[:, 2:]), np.inf, -np.inf), np.maximum(lo, hi))
    enter = np.maximum(near.max(axis=1), 0.0)
    leave = np.minimum(far.min(axis=1), max_t)
    return np.where(enter <= leave, enter, np.nan)


@pytest.mark.parametrize("workers", [1, 2])
def test_raycasts_are_brute_force(workers):
    rng = np.random.default_rng(7)
    boxes = tree_boxes(rng).astype(float) + rng.uniform(0, 0.5, (300, 1))
    origins = rng.uniform(-5, 55, (50, 2))
    directions = rng.normal(size=(50, 2))
    directions[:5] = [[1.0, 0.0], [0.0, -1.0], [-2.0, 0.0], [0.0, 3.0], [1.0, 1.0]]
    for max_t in [np.inf, 7.0]:
        want = [slab_hits(boxes, o, d, max_t) for o, d in zip(origins, directions)]
        for index, to_position in indexes(boxes, np.float64):
            missing = len(index) if isinstance(index, spatix.PackedIndex) else -1
            t, i = index.raycast(origins, directions, max_t=max_t, workers=workers)
            for q, w in enumerate(want):
                if np.isnan(w).all():
                    assert t[q] == np.inf and i[q] == missing
                else:
                    assert t[q] == pytest.approx(np.nanmin(w), rel=1e-9, abs=1e-9)
                    assert w[to_position(np.array([i[q]]))[0]] == pytest.approx(t[q], rel=1e-9, abs=1e-9)
            hits, ts = index.raycast_all(origins, directions, max_t=max_t)
            pos = as_positions(hits, to_position)
            assert set(zip(pos[0].tolist(), pos[1].tolist())) == {(q, int(b)) for q, w in enumerate(want) for b in np.nonzero(~np.isnan(w))[0]}
            keys = list(zip(hits[0].tolist(), ts.tolist(), hits[1].tolist()))
            assert keys == sorted(keys)
            np.testing.assert_allclose(ts, [want[q][b] for q, b in zip(*pos)], rtol=1e-9, atol=1e-9)
    t, i = spatix.PackedIndex(boxes).raycast(origins[0], directions[0])
    assert np.ndim(t) == 0 and np.ndim(i) == 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda i: i.raycast([[0.0, 0.0]], [[0.0, 0.0]]), "directions row 0 is zero"),
        (lambda i: i.raycast([[0.0, np.nan]], [[1.0, 0.0]]), "origins row 0"),
        (lambda i: i.raycast([[0.0, 0.0], [1.0, 1.0]], [[1.0, 0.0]]), "as many rows"),
        (lambda i: i.raycast([[0.0, 0.0]], [[1.0, 0.0]], max_t=-1.0), "max_t"),
        (lambda i: i.raycast_all([[0.0, 0.0]], [[np.inf, 0.0]]), "directions row 0"),
        (lambda i: i.query([[0.0, 0.0]], predicate="dwithin"), "needs a distance"),
        (lambda i: i.query([[0.0, 0.0]] * 3, predicate="dwithin", distance=[1.0, 2.0]), "Could not broadcast"),
        (lambda i: i.query([[0.0, 0.0]], predicate="dwithin", distance="far"), "distance must be a number"),
        (lambda i: i.query([[0.0, 0.0]], distance=1.0), "only with"),
        (lambda i: i.query([[0.0, 0.0, 1.0, 1.0]], predicate="dwithin", distance=1.0), "not a point"),
    ],
)
def test_bad_rays_and_radii_are_value_errors(call, message):
    boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], dtype=float)
    for index, _ in indexes(boxes, np.float64):
        with pytest.raises(ValueError, match=message):
            call(index)
