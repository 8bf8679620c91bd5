"""``workers=``: more threads give exactly the answers of one, on threads started once."""

import os

import numpy as np
import pytest

import spatix
from oracle import WORLD, random_boxes
from test_dynamic import STRUCTURES

# Every thread count the tests compare with one: two, and every core.
MANY = (2, -1)


def same(one, many):
    """The two answers are the same arrays: shapes, dtypes and values."""
    for a, b in zip(one, many):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def queries(rng, dtype):
    """Windows and points all over the world and beyond it, including none at all."""
    windows = np.vstack([random_boxes(rng, 1500, half=(0.0, 6.0)), [[-50, -50, 150, 150], [200, 200, 300, 300]]])
    points = np.vstack([rng.uniform(-10, 110, (1500, 2)), [[50, 50], [1e6, -1e6]]])
    return windows.astype(dtype), points.astype(dtype)


def check_batches(rng, dtype, query=None, nearest=None, radius=None):
    """Each batch method given (a function of the queries and ``workers``) answers the same
    on every thread count, for k = 1 and k = 8, and for no queries."""
    windows, points = queries(rng, dtype)
    for workers in MANY:
        if query is not None:
            same(query(windows, 1), query(windows, workers))
            same(query(windows[:0], 1), query(windows[:0], workers))
        if nearest is not None:
            for k in (1, 8):
                same(nearest(points, k, 1), nearest(points, k, workers))
            same(nearest(points[:0], 8, 1), nearest(points[:0], 8, workers))
        if radius is not None:
            for r in (0.0, 1.5, 7.0):
                same(radius(points, r, 1), radius(points, r, workers))


@pytest.fixture
def rng():
    return np.random.default_rng(28)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kdtree(rng, dtype):
    points = np.vstack([rng.uniform(0, 100, (4000, 2)), rng.integers(0, 5, (300, 2))]).astype(dtype)
    tree = spatix.KdTree(points)
    check_batches(
        rng,
        dtype,
        nearest=lambda q, k, workers: tree.query(q, k=k, workers=workers),
        radius=lambda q, r, workers: tree.query_radius(q, r, workers=workers),
    )
    # Fewer points than k: the padding is the same too.
    small = spatix.KdTree(points[:5])
    same(small.query(points[:100], k=8), small.query(points[:100], k=8, workers=2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_packed_index(rng, dtype):
    index = spatix.PackedIndex(random_boxes(rng, 4000).astype(dtype))
    check_batches(
        rng,
        dtype,
        query=lambda w, workers: index.query(w, workers=workers),
        nearest=lambda p, k, workers: index.nearest(p, k=k, workers=workers),
    )


@pytest.mark.parametrize("name, make, max_half", STRUCTURES, ids=[s[0] for s in STRUCTURES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dynamic(rng, name, make, max_half, dtype):
    index = make(dtype)
    boxes = random_boxes(rng, 3000, half=(0.0, 3.0 if max_half is None else max_half))
    ids = index.insert(boxes)
    index.remove(ids[::7])
    check_batches(
        rng,
        dtype,
        query=lambda w, workers: index.query(w, workers=workers),
        nearest=lambda p, k, workers: index.nearest(p, k=k, workers=workers),
    )


def threads():
    """The OS threads of this process."""
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_pools_are_started_once(rng):
    tree = spatix.KdTree(rng.uniform(0, 100, (2000, 2)))
    index = spatix.UniformGrid(WORLD, 4.0)
    index.insert(random_boxes(rng, 2000))
    windows, points = queries(rng, np.float64)
    cores = len(os.sched_getaffinity(0))

    def calls():
        tree.query(points, k=4, workers=2)
        tree.query_radius(points, 2.0, workers=-1)
        index.query(windows, workers=2)
        index.nearest(points, k=2, workers=-1)
        index.pairs(workers=2)

    before = threads()
    calls()
    started = threads()
    # At most the two pools' threads (none if earlier tests started them already).
    assert 0 <= started - before <= min(2, cores) + cores
    for _ in range(50):
        calls()
        assert threads() == started


def _answer_in_child(tree, points, want, result):
    result.put(bool((tree.query(points, k=3, workers=2)[1] == want).all()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
# Python 3.12 warns that forking a process with threads may deadlock: that is what this tests.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_forked_child_starts_its_own_threads(rng):
    import multiprocessing

    tree = spatix.KdTree(rng.uniform(0, 100, (2000, 2)))
    points = rng.uniform(0, 100, (3000, 2))
    want = tree.query(points, k=3, workers=2)[1]  # the parent's pool exists before the fork
    fork = multiprocessing.get_context("fork")
    result = fork.Queue()
    child = fork.Process(target=_answer_in_child, args=(tree, points, want, result))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child's batch never finished (it waited on the parent's threads)")
    assert child.exitcode == 0 and result.get(timeout=5)
