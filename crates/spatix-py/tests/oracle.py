"""Brute-force answers in numpy, and seeded data sets, shared by the tests."""

import numpy as np

WORLD = (0.0, 0.0, 100.0, 100.0)


def point_box_distance(boxes, p):
    """Euclidean distance from point ``p`` to each box (0 inside); boxes ``(n, 4)``."""
    dx = np.maximum(np.maximum(boxes[:, 0] - p[0], 0.0), p[0] - boxes[:, 2])
    dy = np.maximum(np.maximum(boxes[:, 1] - p[1], 0.0), p[1] - boxes[:, 3])
    return np.sqrt(dx * dx + dy * dy)


def intersecting(boxes, w):
    """Mask of the boxes that intersect window ``w`` (closed boxes: touching counts)."""
    return (boxes[:, 0] <= w[2]) & (w[0] <= boxes[:, 2]) & (boxes[:, 1] <= w[3]) & (w[1] <= boxes[:, 3])


def window_hits(boxes, windows, names=None):
    """Every (window index, box name) pair, as a set; names default to positions."""
    names = np.arange(len(boxes)) if names is None else np.asarray(names)
    return {(q, int(names[i])) for q, w in enumerate(windows) for i in np.nonzero(intersecting(boxes, w))[0]}


def all_pairs(boxes, names=None):
    """Every intersecting pair of distinct boxes as a set of (smaller name, larger name)."""
    names = np.arange(len(boxes)) if names is None else np.asarray(names)
    found = set()
    for i in range(len(boxes)):
        hits = np.nonzero(intersecting(boxes[i + 1 :], boxes[i]))[0] + i + 1
        for j in hits:
            a, b = int(names[i]), int(names[j])
            found.add((min(a, b), max(a, b)))
    return found


def check_nearest(boxes, queries, k, distances, found, names=None, missing=None, atol=1e-9):
    """``(distances, found)`` are the k nearest boxes of each query, ascending, with the
    right distances (any order among equal distances), padded with ``inf`` and ``missing``.
    ``atol`` allows for float32 arithmetic."""
    names = np.arange(len(boxes)) if names is None else np.asarray(names)
    position = {int(n): i for i, n in enumerate(names)}
    distances = np.asarray(distances).reshape(len(queries), k)
    found = np.asarray(found).reshape(len(queries), k)
    for q, p in enumerate(queries):
        truth = point_box_distance(boxes, p)
        expected = np.sort(truth)[:k]
        got = distances[q, : len(expected)]
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=atol, err_msg=f"query {q}")
        named = found[q, : len(expected)]
        assert len(set(named.tolist())) == len(named), f"query {q} repeats an element"
        for d, n in zip(got, named):
            np.testing.assert_allclose(truth[position[int(n)]], d, rtol=1e-6, atol=atol)
        assert np.all(np.isinf(distances[q, len(expected) :]))
        assert np.all(found[q, len(expected) :] == missing)


def random_boxes(rng, n, half=(0.0, 3.0), spread=WORLD):
    """``n`` boxes with centres uniform in ``spread`` and half-sizes in ``half``."""
    centres = rng.uniform(spread[:2], spread[2:], (n, 2))
    h = rng.uniform(half[0], half[1], (n, 2))
    return np.hstack([centres - h, centres + h])


def degenerate_sets(rng):
    """Named data sets of boxes that break careless indexes."""
    touching = np.array([[i, 0.0, i + 1.0, 1.0] for i in range(40)])  # share edges
    corners = np.array([[i, i, i + 1.0, i + 1.0] for i in range(40)])  # share corners only
    same = np.tile([[5.0, 5.0, 7.0, 7.0]], (60, 1))  # all coincident
    points = rng.integers(0, 10, (200, 2)).astype(float)  # zero-size, many duplicates
    outside = random_boxes(rng, 100, spread=(-300.0, -300.0, 400.0, 400.0))  # beyond the world
    mixed = np.vstack([random_boxes(rng, 150), random_boxes(rng, 5, half=(20.0, 60.0))])
    return {
        "touching": touching,
        "corners": corners,
        "coincident": same,
        "points": np.hstack([points, points]),
        "outside": outside,
        "mixed": mixed,
    }
