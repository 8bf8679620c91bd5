"""Real data never breaks it: ids of any dtype never act on the wrong element, distances
never overflow, errors say the real reason once, and a few stray boxes far away change no
answer."""

import decimal
import math

import numpy as np
import pytest

import spatix
from oracle import WORLD, all_pairs, check_nearest, random_boxes, window_hits
from test_dynamic import IDS, STRUCTURES


def filled(make, n=500, large=False):
    """An index of ``n`` boxes and their ids; with ``large``, one whose id 300 a float cannot
    hold (ids carry their table's salt, which differs from table to table)."""
    while True:
        index = make("float64")
        ids = index.insert(np.tile([1.0, 1.0, 2.0, 2.0], (n, 1)))
        if not large or abs(ids[300]) > 2**53:
            return index, ids


def live(index, ids):
    """Which of ``ids`` name a live element (a window over everything finds them)."""
    _, found = index.query([[-1e308, -1e308, 1e308, 1e308]])
    return np.isin(ids, found)


# Ids ---------------------------------------------------------------------------------------


def acts(method, index, ids, chosen):
    """Calls ``method`` (``remove`` or ``update``) with ``chosen`` as the ids."""
    if method == "remove":
        index.remove(chosen)
    else:
        index.update(chosen, np.tile([50.0, 50.0, 51.0, 51.0], (np.size(chosen), 1)))


def moved(index, ids):
    _, found = index.query([[50.0, 50.0, 51.0, 51.0]])
    return np.isin(ids, found)


@pytest.mark.parametrize("method", ["remove", "update"])
@pytest.mark.parametrize("name,make,max_half", STRUCTURES, ids=IDS)
def test_float_ids_that_may_be_rounded_are_refused(name, make, max_half, method):
    index, ids = filled(make, large=True)
    rounded = np.array([ids[300]], dtype=float)
    with pytest.raises(ValueError, match=r"ids\[0\].*integer"):
        acts(method, index, ids, rounded)
    with pytest.raises(ValueError, match=r"ids\[1\].*integer"):
        acts(method, index, ids, [int(ids[5]), float(ids[300])])
    assert len(index) == 500 and live(index, ids).all() and not moved(index, ids).any()


@pytest.mark.parametrize("method", ["remove", "update"])
@pytest.mark.parametrize(
    "bad,error",
    [
        (np.array([1.5]), ValueError),
        (np.array([np.nan]), ValueError),
        (np.array([np.inf]), ValueError),
        (np.array([2.0**53]), ValueError),
        (np.array([2.0**24], dtype=np.float32), ValueError),
        (np.array([2**63], dtype=np.uint64), ValueError),
        ([2**64], ValueError),
        (np.array([True]), TypeError),
        ([False], TypeError),
        (np.array(["1"]), TypeError),
        (np.array([b"1"]), TypeError),
        (np.array([1 + 0j]), TypeError),
        (np.array([None]), TypeError),
        (np.array([1.0], dtype=object), TypeError),
    ],
    ids=lambda v: repr(v) if not isinstance(v, type) else v.__name__,
)
def test_ids_of_the_wrong_kind_are_refused(bad, error, method):
    index, ids = filled(STRUCTURES[0][1])
    with pytest.raises(error, match=r"ids"):
        acts(method, index, ids, bad)
    assert len(index) == 500 and live(index, ids).all() and not moved(index, ids).any()


@pytest.mark.parametrize("method", ["remove", "update"])
def test_ids_of_every_integer_kind_name_the_right_element(method):
    kinds = [
        lambda chosen: np.array(chosen),
        lambda chosen: [int(i) for i in chosen],
        lambda chosen: np.array([], dtype=np.int64),  # none: changes nothing
        lambda chosen: np.array([int(i) for i in chosen], dtype=object),
        lambda chosen: chosen[0],  # one id, as a scalar
    ]
    for kind in kinds:
        index, ids = filled(STRUCTURES[0][1])
        variant = kind([ids[300], ids[7]])
        acts(method, index, ids, variant)
        changed = np.asarray(variant, dtype=np.int64).ravel()
        flag = ~live(index, ids) if method == "remove" else moved(index, ids)
        assert set(ids[flag].tolist()) == set(changed.tolist()), repr(variant)
    # Small integers of any integer or float dtype are read as the integers they are: not
    # ids of this index.
    for small in (np.array([3], np.int8), np.array([3], np.uint16), np.array([3.0], np.float32), [3.0]):
        with pytest.raises(KeyError, match=r"ids\[0\] = 3 "):
            acts(method, index, ids, small)


def test_ids_of_another_shape_are_refused():
    index, ids = filled(STRUCTURES[0][1])
    with pytest.raises(ValueError, match="1-D"):
        index.remove(ids[:4].reshape(2, 2))
    assert len(index) == 500


# Distances ---------------------------------------------------------------------------------


def exact(a, b, dtype):
    """The Euclidean distance of points ``a`` and ``b`` rounded once to ``dtype`` (``inf``
    beyond its range), computed in decimal."""
    decimal.getcontext().prec = 60
    dx = decimal.Decimal(float(a[0])) - decimal.Decimal(float(b[0]))
    dy = decimal.Decimal(float(a[1])) - decimal.Decimal(float(b[1]))
    d = float((dx * dx + dy * dy).sqrt())
    with np.errstate(over="ignore"):
        return np.array(d).astype(dtype)


def within(a, b, r):
    """Whether points ``a`` and ``b`` lie at most ``r`` apart, exactly (in decimal)."""
    if math.isinf(r):
        return True
    decimal.getcontext().prec = 60
    dx = decimal.Decimal(float(a[0])) - decimal.Decimal(float(b[0]))
    dy = decimal.Decimal(float(a[1])) - decimal.Decimal(float(b[1]))
    r = decimal.Decimal(float(r))
    return dx * dx + dy * dy <= r * r


def extreme_sets(dtype):
    big = float(np.finfo(dtype).max)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    return {
        "1e300": [[1e300, 1e300], [-1e300, -1e300], [0.0, 0.0]] if dtype == np.float64 else [[1e38, 1e38], [-1e38, -1e38], [0.0, 0.0]],
        "near max": [[big / 2, 0.0], [-big / 2, 0.0], [big / 4, big / 4]],
        "max": [[big, big], [-big, -big], [0.0, big]],
        "subnormal": [[3 * tiny, 4 * tiny], [0.0, 7 * tiny], [-5 * tiny, 0.0], [tiny, tiny]],
    }


def extreme_queries(points, dtype):
    p = np.asarray(points, dtype=np.float64)
    return np.vstack([p, -p[:1], [[p[0, 0], -p[0, 1]]], [[0.0, 0.0]]]).astype(dtype)


def check_exact(points, queries, dtype, distances, found, rtol):
    k = distances.shape[1]
    for q, x in enumerate(queries):
        want = sorted(exact(x, p, dtype) for p in points)[:k]
        np.testing.assert_allclose(distances[q], want, rtol=rtol, atol=0, err_msg=f"query {q}")
        got = [exact(x, points[i], dtype) for i in found[q]]
        np.testing.assert_allclose(got, distances[q], rtol=rtol, atol=0, err_msg=f"query {q}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kdtree_and_packed_distances_are_exact_at_any_magnitude(dtype):
    rtol = 4 * float(np.finfo(dtype).eps)
    tree = spatix.KdTree([[1e300, 1e300], [-1e300, -1e300], [0, 0]])
    d, i = tree.query([[1e300, -1e300]], k=3)
    np.testing.assert_allclose(d[0], [math.sqrt(2) * 1e300, 2e300, 2e300], rtol=1e-15)
    for name, points in extreme_sets(dtype).items():
        points = np.asarray(points, dtype=dtype)
        queries = extreme_queries(points, dtype)
        k = len(points)
        d, i = spatix.KdTree(points).query(queries, k=k)
        assert d.dtype == dtype
        check_exact(points, queries, dtype, d, i, rtol)
        d, i = spatix.PackedIndex(np.hstack([points, points])).nearest(queries, k=k)
        check_exact(points, queries, dtype, d, i, rtol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,make,max_half", STRUCTURES, ids=IDS)
def test_dynamic_distances_are_exact_at_any_magnitude(name, make, max_half, dtype):
    cast = np.dtype(dtype).type
    rtol = 4 * float(np.finfo(cast).eps)
    for label, points in extreme_sets(cast).items():
        points = np.asarray(points, dtype=cast)
        index = make(dtype)
        ids = index.insert(np.hstack([points, points]))
        queries = extreme_queries(points, cast)
        d, found = index.nearest(queries, k=len(points))
        assert d.dtype == cast
        position = {int(h): j for j, h in enumerate(ids)}
        check_exact(points, queries, cast, d, np.vectorize(position.get)(found), rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_radius_queries_at_any_magnitude(dtype):
    for name, points in extreme_sets(dtype).items():
        points = np.asarray(points, dtype=dtype)
        queries = extreme_queries(points, dtype)
        for r in {0.0, float(exact(points[0], points[1], dtype)), float(exact(points[0], points[2], dtype))}:
            qi, pi = spatix.KdTree(points).query_radius(queries, r)
            got = set(zip(qi.tolist(), pi.tolist()))
            # The contract: the distance as computed (within a few ulps of the true one) at
            # most r. Pairs farther than a few ulps from the radius must be decided exactly.
            # At the type's largest value its spacing overflows to inf (the answer we want).
            with np.errstate(over="ignore"):
                ulps = 4 * float(np.spacing(dtype(r))) if math.isfinite(r) else 0.0
                wide = float(np.float64(r) + ulps)
            pairs = [(q, j) for q, x in enumerate(queries) for j, _ in enumerate(points)]
            sure = {(q, j) for q, j in pairs if within(queries[q], points[j], max(r - ulps, 0.0))}
            maybe = {(q, j) for q, j in pairs if within(queries[q], points[j], wide)}
            assert sure <= got <= maybe, (name, r, sure - got, got - maybe)


def test_a_huge_k_raises_instead_of_panicking():
    tree = spatix.KdTree(np.zeros((3, 2)))
    packed = spatix.PackedIndex(np.zeros((3, 4)))
    grid = spatix.UniformGrid(WORLD, 4.0)
    grid.insert(np.zeros((3, 4)))
    for k in (2**62, 2**63 + 5, 2**40):
        for query in (tree.query, packed.nearest, grid.nearest):
            with pytest.raises((ValueError, MemoryError, OverflowError), match="k"):
                query(np.zeros((4, 2)), k=k)
    d, i = tree.query(np.zeros((2, 2)), k=5)
    assert d.shape == (2, 5) and np.isinf(d[:, 3:]).all() and (i[:, 3:] == 3).all()


def test_huge_workers_are_bounded():
    tree = spatix.KdTree(np.random.default_rng(2).uniform(0, 10, (300, 2)))
    q = np.random.default_rng(3).uniform(0, 10, (600, 2))
    want = tree.query(q, k=2)
    got = tree.query(q, k=2, workers=2**40)
    np.testing.assert_array_equal(want[0], got[0])
    np.testing.assert_array_equal(want[1], got[1])


# Errors ------------------------------------------------------------------------------------


def message(excinfo):
    text = str(excinfo.value)
    assert "Error:" not in text, f"a doubled prefix: {text}"
    return text


def test_a_box_too_large_for_a_point_grid_says_so_once():
    grid = spatix.PointGrid(WORLD, 3.0)
    ids = grid.insert([[0.0, 0.0, 1.0, 1.0]])
    boxes = [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 50.0, 50.0]]
    for call, row in ((lambda: grid.insert(boxes), 1), (lambda: grid.update(ids, boxes[1:]), 0)):
        with pytest.raises(ValueError) as excinfo:
            call()
        text = message(excinfo)
        assert f"row {row}" in text and "max_half_extent" in text and "3" in text
        assert "NaN" not in text and "min > max" not in text, text
    assert len(grid) == 1


def test_every_error_names_its_reason_once():
    grid = spatix.UniformGrid(WORLD, 4.0)
    ids = grid.insert([[0.0, 0.0, 1.0, 1.0]])
    cases = [
        (ValueError, lambda: spatix.KdTree("text"), "points"),
        (ValueError, lambda: spatix.PackedIndex([["a", "b", "c", "d"]]), "boxes"),
        (ValueError, lambda: grid.insert([[0.0, np.nan, 1.0, 1.0]]), "boxes row 0"),
        (ValueError, lambda: grid.insert([[2.0, 0.0, 1.0, 1.0]]), "min_x > max_x"),
        (ValueError, lambda: grid.insert([[0.0, 3.0, 1.0, 1.0]]), "min_y > max_y"),
        (ValueError, lambda: grid.query([[0.0, 0.0, np.inf, 1.0]]), "is infinite"),
        (ValueError, lambda: spatix.KdTree([[0.0, 0.0], [np.nan, 1.0]]), "points row 1"),
        (ValueError, lambda: spatix.UniformGrid(WORLD, 0.0), "cell_size"),
        (ValueError, lambda: spatix.UniformGrid(WORLD, 1e-300), "cells"),
        (ValueError, lambda: spatix.HierarchicalGrid(WORLD, 0.0), "finest cell"),
        (ValueError, lambda: spatix.KdTree(np.zeros((3, 2)), leafsize=0), "leafsize"),
        (ValueError, lambda: grid.update(ids, np.zeros((2, 4))), "1 ids but 2 boxes"),
        (ValueError, lambda: grid.remove([1.5]), "not an integer"),
        (ValueError, lambda: grid.remove([[1, 2]]), "1-D"),
        (TypeError, lambda: grid.remove(["a"]), "integers"),
        (KeyError, lambda: grid.remove([3]), "names no element"),
        (KeyError, lambda: grid.remove([ids[0], ids[0]]), "repeats"),
    ]
    for error, call, reason in cases:
        with pytest.raises(error) as excinfo:
            call()
        text = message(excinfo)
        assert reason in text, text
        assert text.count(reason) == 1, text


# Stray boxes -------------------------------------------------------------------------------


def strays(dtype):
    big = float(np.finfo(dtype).max)
    return {
        "1e9": [1e9, 1e9],
        "-1e12": [-1e12, 0.0],
        "1e30": [1e30, 1e30],
        "+max": [big, big],
        "-max": [-big, -big],
    }


def with_stray(rng, dtype, centre):
    boxes = random_boxes(rng, 300)
    stray = np.array([centre + centre], dtype=np.float64)
    stray[0, :2] -= 2.0
    stray[0, 2:] += 2.0
    boxes = np.vstack([boxes[:150], stray, boxes[150:]]).astype(dtype)
    return boxes, boxes.astype(np.float64)


def window_set(rng, as64):
    return np.vstack([as64[:40], random_boxes(rng, 20, half=(0.0, 30.0)), as64[150:151], [[-1e308, -1e308, 1e308, 1e308]]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_packed_index_with_a_stray_matches_brute_force(dtype):
    rng = np.random.default_rng(23)
    for label, centre in strays(dtype).items():
        boxes, as64 = with_stray(rng, dtype, centre)
        index = spatix.PackedIndex(boxes)
        assert set(map(tuple, index.pairs().tolist())) == all_pairs(as64), label
        windows = window_set(rng, as64).astype(dtype) if dtype == np.float64 else window_set(rng, as64)[:-1].astype(dtype)
        w, found = index.query(windows)
        assert set(zip(w.tolist(), found.tolist())) == window_hits(as64, windows.astype(np.float64)), label
        points = boxes[:, :2].copy()
        # From the stray (row 150) every other point lies beyond float32's range: its
        # distances are inf there, by the contract; the others' neighbours are ordinary.
        rows = np.r_[140:150, 151:160] if dtype == np.float32 else np.r_[140:160]
        d, i = spatix.KdTree(points).query(points[rows], k=3)
        with np.errstate(over="ignore"):
            check_nearest(np.hstack([points, points]).astype(np.float64), points[rows].astype(np.float64), 3, d, i, missing=len(points), atol=1e-4)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,make,max_half", STRUCTURES, ids=IDS)
def test_dynamic_index_with_a_stray_matches_brute_force(name, make, max_half, dtype):
    cast = np.dtype(dtype).type
    rng = np.random.default_rng(29)
    for label, centre in strays(cast).items():
        boxes, as64 = with_stray(rng, cast, centre)
        index = make(dtype)
        ids = index.insert(boxes)
        assert set(map(tuple, index.pairs().tolist())) == all_pairs(as64, ids), label
        windows = window_set(rng, as64)
        if cast == np.float32:
            windows = windows[:-1]
        windows = windows.astype(cast)
        w, found = index.query(windows)
        assert set(zip(w.tolist(), found.tolist())) == window_hits(as64, windows.astype(np.float64), ids), label
        index.remove(ids[150:151])
        assert set(map(tuple, index.pairs().tolist())) == all_pairs(np.delete(as64, 150, axis=0), np.delete(ids, 150))


def test_float32_indexes_clamp_finite_values_beyond_range_as_the_cli():
    """A finite value beyond float32's range, given to a float32 index, is float32's largest
    value with its sign (the command line's --f32 rule): no numpy overflow warning, no row
    refused for an infinity the caller never passed; NaN and infinities are still refused."""
    import warnings

    big = float(np.finfo(np.float32).max)
    grid = spatix.UniformGrid([0, 0, 100, 100], 10.0, dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ids = grid.insert(np.array([[1e300, -1e300, 2e300, 5.0], [1.0, 1.0, 2.0, 2.0]]))
        np.testing.assert_array_equal(grid.boxes(ids[:1]), [[big, -big, big, 5.0]])
        tree = spatix.KdTree(np.array([[0.0, 0.0], [big, big]], dtype=np.float32))
        d, i = tree.query([[1e300, 1e300]])
        assert i[0] == 1 and d[0] == 0.0
        index = spatix.PackedIndex(np.array([[0.0, 0.0, 1.0, 1.0]], dtype=np.float32))
        assert index.query([[-1e300, -1e300, 1e300, 1e300]]).shape == (2, 1)
    with pytest.raises(ValueError, match="row 0"):
        grid.insert(np.array([[np.inf, 0.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match="row 0"):
        grid.insert(np.array([[np.nan, 0.0, 1.0, 1.0]]))
