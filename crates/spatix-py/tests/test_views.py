"""``PackedIndex.from_buffer`` and ``KdTree.from_buffer``: a saved index read in place from
``bytes``, a ``memoryview``, an ``mmap`` or a ``numpy.memmap``, answering as the built one;
the buffer kept alive, writable, misaligned and damaged buffers refused; pickling with
protocol 5 hands the byte form out of band and unpickles into a view without a copy."""

import gc
import mmap
import pickle

import numpy as np
import pytest

import spatix
from oracle import random_boxes

DTYPES = ["float64", "float32"]
SOURCES = ["bytes", "memoryview", "mmap", "numpy.memmap"]


def built(cls, dtype, seed=11):
    rng = np.random.default_rng(seed)
    boxes = np.vstack([random_boxes(rng, 3000), random_boxes(rng, 30, half=(10.0, 40.0))]).astype(dtype)
    return cls(boxes[:, :2]) if cls is spatix.KdTree else cls(boxes)


def buffer_of(data, source, tmp_path):
    """``data`` as the buffer ``source`` names (files written under ``tmp_path``)."""
    if source == "bytes":
        return data
    if source == "memoryview":
        return memoryview(data)
    path = tmp_path / "index.spatix"
    path.write_bytes(data)
    if source == "mmap":
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return np.memmap(path, dtype=np.uint8, mode="r")


def address(buffer):
    return np.frombuffer(buffer, dtype=np.uint8).ctypes.data


def same_answers(a, b):
    """Every query form of the two (``PackedIndex`` or ``KdTree``) gives the same answer."""
    rng = np.random.default_rng(12)
    points = rng.uniform(-20, 120, (60, 2)).astype(a.dtype)
    assert len(a) == len(b) and a.dtype == b.dtype
    for k in (1, 4):
        for x, y in zip(a.nearest(points, k) if isinstance(a, spatix.PackedIndex) else a.query(points, k),
                        b.nearest(points, k) if isinstance(b, spatix.PackedIndex) else b.query(points, k)):
            np.testing.assert_array_equal(x, y)
    if isinstance(a, spatix.PackedIndex):
        windows = random_boxes(rng, 60, half=(0.0, 15.0)).astype(a.dtype)
        np.testing.assert_array_equal(a.query(windows), b.query(windows))
        np.testing.assert_array_equal(a.query(windows, workers=2), b.query(windows))
        np.testing.assert_array_equal(a.pairs(sort=True), b.pairs(sort=True))
        np.testing.assert_array_equal(a.boxes(), b.boxes())
        np.testing.assert_array_equal(a.query_nearest(points), b.query_nearest(points))
    else:
        for x, y in zip(a.query_radius(points, 5.0), b.query_radius(points, 5.0)):
            np.testing.assert_array_equal(x, y)
        assert a.query_pairs(2.0) == b.query_pairs(2.0)
    assert a.to_bytes() == b.to_bytes()


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls", [spatix.PackedIndex, spatix.KdTree], ids=["PackedIndex", "KdTree"])
def test_view_answers_as_the_built_index(cls, dtype, source, tmp_path):
    index = built(cls, dtype)
    buffer = buffer_of(index.to_bytes(), source, tmp_path)
    view = cls.from_buffer(buffer)
    # A memory map starts at a multiple of 64, as a view needs; a bytes object may not, and
    # is then copied to memory that does.
    assert ("in place" in repr(view)) == (source in ("mmap", "numpy.memmap") or address(buffer) % 64 == 0)
    assert "in place" in repr(view) or "aligned copy" in repr(view)
    assert "in place" not in repr(index)
    same_answers(view, index)
    del view
    gc.collect()
    if source == "mmap":
        buffer.close()  # allowed once the view, the buffer's last user, is gone


def test_view_keeps_its_buffer_alive(tmp_path):
    index = built(spatix.PackedIndex, "float64")
    view = spatix.PackedIndex.from_buffer(index.to_bytes())  # the bytes' only reference
    gc.collect()
    same_answers(view, index)
    path = tmp_path / "index.spatix"
    path.write_bytes(index.to_bytes())
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = spatix.PackedIndex.from_buffer(mapped)
    with pytest.raises(BufferError):
        mapped.close()  # the view holds the buffer
    same_answers(view, index)
    del view
    gc.collect()
    mapped.close()


@pytest.mark.parametrize("cls", [spatix.PackedIndex, spatix.KdTree], ids=["PackedIndex", "KdTree"])
def test_bad_buffers_are_refused(cls, tmp_path):
    data = built(cls, "float32").to_bytes()
    message = f"{cls.__name__}.from_buffer"
    with pytest.raises(ValueError, match=f"{message}: the buffer of bytearray is writable"):
        cls.from_buffer(bytearray(data))
    path = tmp_path / "index.spatix"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"{message}: the buffer of memmap is writable"):
        cls.from_buffer(np.memmap(path, dtype=np.uint8, mode="r+"))
    with pytest.raises(ValueError, match=f"{message}: int has no buffer"):
        cls.from_buffer(3)
    with pytest.raises(ValueError, match=f"{message}: the buffer is not contiguous"):
        cls.from_buffer(memoryview(data)[::2])
    shifted = memoryview(b"\0" + data)[1:]
    assert "aligned copy" in repr(cls.from_buffer(shifted))  # misaligned: copied
    for cut in (b"", data[:20], data[:-1]):
        with pytest.raises(ValueError, match=f"{message}: corrupt bytes"):
            cls.from_buffer(cut)
    rng = np.random.default_rng(13)
    for bit in rng.integers(64, len(data) * 8, 50).tolist():
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ValueError, match=f"{message}: corrupt bytes: checksum mismatch"):
            cls.from_buffer(bytes(flipped))
    other = spatix.KdTree if cls is spatix.PackedIndex else spatix.PackedIndex
    with pytest.raises(ValueError, match=f"{message}: corrupt bytes"):
        cls.from_buffer(built(other, "float32").to_bytes())
    grid = spatix.UniformGrid([0, 0, 100, 100], 4.0)
    grid.insert([[1, 1, 2, 2]])
    with pytest.raises(ValueError, match=f"{message}: corrupt bytes"):
        cls.from_buffer(grid.to_bytes())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls", [spatix.PackedIndex, spatix.KdTree], ids=["PackedIndex", "KdTree"])
def test_protocol_5_pickles_out_of_band(cls, dtype, tmp_path):
    index = built(cls, dtype)
    buffers = []
    small = pickle.dumps(index, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(small) < 200
    assert bytes(buffers[0]) == index.to_bytes()
    loaded = pickle.loads(small, buffers=buffers)
    assert "in place" in repr(loaded) or "aligned copy" in repr(loaded)
    same_answers(loaded, index)
    # A view pickles the buffer it reads, uncopied, and unpickles into a view over it.
    path = tmp_path / "index.spatix"
    path.write_bytes(index.to_bytes())
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    view = cls.from_buffer(mapped)
    buffers = []
    small = pickle.dumps(view, protocol=5, buffer_callback=buffers.append)
    assert address(buffers[0]) == address(mapped)
    again = pickle.loads(small, buffers=buffers)
    assert "in place" in repr(again)
    same_answers(again, index)
    # In band (no callback) and older protocols: the bytes in the pickle.
    for protocol in (2, 4, 5):
        same_answers(pickle.loads(pickle.dumps(view, protocol=protocol)), index)
        same_answers(pickle.loads(pickle.dumps(index, protocol=protocol)), index)
    # A bytearray handed back (as a network layer may; pickle gives it back read-only).
    received = pickle.loads(pickle.dumps(index, protocol=5, buffer_callback=(b := []).append),
                            buffers=[bytearray(b[0])])
    same_answers(received, index)
