"""Arrow in: pyarrow and polars arrays, record batches, tables (chunked too) and struct
columns of float32 and float64 give the same answers as the numpy array of the same values,
for the dynamic indexes' insert, PackedIndex and KdTree construction and the window and
nearest queries; nulls, a wrong column count and non-float columns are refused with the
column named, before anything changes."""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import spatix
from oracle import WORLD, random_boxes

BOX = ["xmin", "ymin", "xmax", "ymax"]
POINT = ["x", "y"]


def values(rng, n, cols, dtype):
    """``n`` rows of boxes (cols 4) or points (cols 2), exactly representable in ``dtype``."""
    rows = random_boxes(rng, n) if cols == 4 else rng.uniform(0.0, 100.0, (n, 2))
    return rows.astype(dtype)


def arrow_forms(rows):
    """The same rows in every Arrow form the readers take, by name."""
    names = BOX if rows.shape[1] == 4 else POINT
    columns = {name: rows[:, i] for i, name in enumerate(names)}
    # Positional columns with other names: read in order.
    other = {f"c{i}": rows[:, i] for i in range(rows.shape[1])}
    table = pa.table(columns)
    half = len(rows) // 2
    # Columns listed out of order: read by name.
    shuffled = pa.table({name: columns[name] for name in reversed(names)})
    struct = pa.StructArray.from_arrays([pa.array(c) for c in columns.values()], names=names)
    padded = np.vstack([np.zeros((3, rows.shape[1]), rows.dtype), rows])
    return {
        "pyarrow table": table,
        "pyarrow table, positional": pa.table(other),
        "pyarrow table, by name": shuffled,
        "pyarrow record batch": pa.record_batch(columns),
        "pyarrow chunked table": pa.concat_tables([table.slice(0, half), table.slice(half)]),
        "pyarrow sliced table": pa.table(
            {name: padded[:, i] for i, name in enumerate(names)}
        ).slice(3),
        "pyarrow struct array": struct,
        "pyarrow sliced struct array": pa.StructArray.from_arrays(
            [pa.array(padded[:, i]) for i in range(rows.shape[1])], names=names
        ).slice(3),
        "pyarrow table of a struct column": pa.table({"geometry": struct}),
        "pyarrow chunked struct column": pa.chunked_array([struct.slice(0, half), struct.slice(half)]),
        "polars frame": pl.DataFrame(columns),
        "polars chunked frame": pl.concat(
            [pl.DataFrame(columns)[:half], pl.DataFrame(columns)[half:]], rechunk=False
        ),
        "polars struct column": pl.DataFrame(columns).select(pl.struct(names).alias("g")),
        "polars struct series": pl.DataFrame(columns).select(pl.struct(names).alias("g"))["g"],
    }


def forms(rng, n, cols):
    for dtype in (np.float32, np.float64):
        rows = values(rng, n, cols, dtype)
        for name, form in arrow_forms(rows).items():
            yield f"{name}, {np.dtype(dtype).name}", rows.astype(np.float64), form


def test_every_form_reads_the_same_rows():
    rng = np.random.default_rng(1)
    for cols in (4, 2):
        for name, rows, form in forms(rng, 50, cols):
            # PackedIndex keeps the rows in its byte form's order: its answers name positions.
            arrow = spatix.PackedIndex(form)
            numpy = spatix.PackedIndex(rows)
            assert len(arrow) == len(rows), name
            windows = random_boxes(rng, 20, half=(0.0, 20.0))
            np.testing.assert_array_equal(arrow.query(windows), numpy.query(windows), err_msg=name)
            np.testing.assert_array_equal(
                arrow.query(form), numpy.query(rows), err_msg=f"{name} as geometry"
            )
            d1, i1 = arrow.nearest(rows[:, :2].copy(), k=3)
            d2, i2 = numpy.nearest(rows[:, :2].copy(), k=3)
            np.testing.assert_array_equal(d1, d2, err_msg=name)
            np.testing.assert_array_equal(i1, i2, err_msg=name)


@pytest.mark.parametrize(
    "make",
    [
        lambda: spatix.UniformGrid(WORLD, 4.0),
        lambda: spatix.Quadtree(WORLD, 4.0),
        lambda: spatix.Layered(WORLD, 2.0),
        lambda: spatix.SweepGrid(WORLD, 8.0),
    ],
)
def test_dynamic_insert_and_queries(make):
    rng = np.random.default_rng(2)
    for name, rows, form in forms(rng, 40, 4):
        arrow, numpy = make(), make()
        ids = np.arange(100, 100 + len(rows))
        arrow.insert(form, ids=ids)
        numpy.insert(rows, ids=ids)
        np.testing.assert_array_equal(np.sort(arrow.pairs(sort=True), axis=0), np.sort(numpy.pairs(sort=True), axis=0))
        windows = values(rng, 15, 4, np.float64)
        w1, f1 = arrow.query(pa.table({n: windows[:, i] for i, n in enumerate(BOX)}))
        w2, f2 = numpy.query(windows)
        assert sorted(zip(w1.tolist(), f1.tolist())) == sorted(zip(w2.tolist(), f2.tolist())), name
        points = values(rng, 10, 2, np.float64)
        d1, i1 = arrow.nearest(pl.DataFrame({"x": points[:, 0], "y": points[:, 1]}), k=2)
        d2, i2 = numpy.nearest(points, k=2)
        np.testing.assert_array_equal(d1, d2, err_msg=name)
        np.testing.assert_array_equal(np.sort(i1, axis=1), np.sort(i2, axis=1), err_msg=name)
        np.testing.assert_array_equal(arrow.boxes(ids), rows, err_msg=name)


def test_kdtree():
    rng = np.random.default_rng(3)
    for name, rows, form in forms(rng, 60, 2):
        arrow, numpy = spatix.KdTree(form), spatix.KdTree(rows)
        queries = values(rng, 20, 2, np.float64)
        q = pa.table({"x": queries[:, 0], "y": queries[:, 1]})
        for a, b in zip(arrow.query(q, k=3), numpy.query(queries, k=3)):
            np.testing.assert_array_equal(a, b, err_msg=name)
        for a, b in zip(arrow.query_radius(form, 5.0), numpy.query_radius(rows, 5.0)):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_pairs_function():
    rng = np.random.default_rng(4)
    for name, rows, form in forms(rng, 60, 4):
        np.testing.assert_array_equal(spatix.pairs(form), spatix.pairs(rows), err_msg=name)


def test_empty_table():
    empty = pa.table({n: pa.array([], pa.float64()) for n in BOX})
    index = spatix.UniformGrid(WORLD, 4.0)
    assert len(index.insert(empty)) == 0
    assert len(spatix.PackedIndex(empty)) == 0


def bad_inputs():
    good = [1.0, 2.0]
    yield "null", pa.table({"xmin": good, "ymin": [1.0, None], "xmax": [3.0, 4.0], "ymax": [3.0, 4.0]}), ValueError, "'ymin' has a null at row 1"
    yield "null in a later chunk", pa.concat_tables(
        [
            pa.table({n: good for n in BOX}),
            pa.table({"xmin": [None, 1.0], "ymin": good, "xmax": [3.0, 4.0], "ymax": [3.0, 4.0]}),
        ]
    ), ValueError, "'xmin' has a null at row 2"
    yield "polars null", pl.DataFrame({"xmin": good, "ymin": good, "xmax": [3.0, None], "ymax": [3.0, 4.0]}), ValueError, "'xmax' has a null at row 1"
    yield "null struct", pa.table(
        {"g": pa.array([{n: 1.0 for n in BOX}, None], pa.struct([(n, pa.float64()) for n in BOX]))}
    ), ValueError, "'g' has a null at row 1"
    yield "3 columns", pa.table({"a": good, "b": good, "c": good}), ValueError, "got 3: [a, b, c]"
    yield "1 column", pa.array(good), ValueError, "one column of Arrow type float64"
    yield "int column", pa.table({"xmin": good, "ymin": [1, 2], "xmax": good, "ymax": good}), TypeError, "'ymin' is of Arrow type int64"
    yield "string column", pl.DataFrame({"xmin": good, "ymin": good, "xmax": ["a", "b"], "ymax": good}), TypeError, "'xmax' is of Arrow type string"


@pytest.mark.parametrize("name, bad, error, message", list(bad_inputs()), ids=lambda v: v if isinstance(v, str) else "")
def test_bad_input_is_refused_before_anything_changes(name, bad, error, message):
    index = spatix.UniformGrid(WORLD, 4.0)
    ids = index.insert(np.array([[1.0, 1.0, 2.0, 2.0]]))
    with pytest.raises(error, match=None) as caught:
        index.insert(bad)
    assert message in str(caught.value), str(caught.value)
    with pytest.raises(error):
        index.update(ids, bad)
    with pytest.raises(error):
        spatix.PackedIndex(bad)
    assert len(index) == 1
    np.testing.assert_array_equal(index.boxes(ids), [[1.0, 1.0, 2.0, 2.0]])


def test_invalid_box_names_its_row():
    table = pa.table({"xmin": [1.0, 5.0], "ymin": [1.0, 1.0], "xmax": [2.0, 4.0], "ymax": [2.0, 2.0]})
    with pytest.raises(ValueError, match="row 1"):
        spatix.PackedIndex(table)
