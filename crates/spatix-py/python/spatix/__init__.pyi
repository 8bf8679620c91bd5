"""Type stubs for spatix: 2D spatial indexes, numpy in and out.

Points are ``(n, 2)`` arrays; boxes ``(n, 4)`` arrays of ``min_x, min_y, max_x, max_y``
(closed: touching boxes intersect). ``float32`` input is indexed in float32, any other in
float64. Boxes and points may also be Arrow data (pyarrow or polars tables, record batches,
arrays, chunked or not: four or two float columns, or a struct column ``xmin, ymin, xmax,
ymax`` / ``x, y``), read through the Arrow PyCapsule interface in one copy from columns to
rows, and indexed in float64. The full docstrings are on the classes themselves (``help(spatix.KdTree)``).

Every class pickles (and ``copy.deepcopy``s) through its byte form: ``to_bytes()``, and
``Class.from_bytes(data)``, which loads it in the precision it was saved in, its ids or
positions unchanged, and raises ``ValueError`` for bytes that are not that class's.
"""

from typing import Any, Callable, Iterator, Literal, Optional, Protocol, Sequence, SupportsIndex, Union, final

from typing_extensions import Buffer, Self, disjoint_base

import numpy as np
import numpy.typing as npt

_ArrayLike = npt.ArrayLike


class _ArrowArrayExportable(Protocol):
    """An Arrow array or record batch (the Arrow PyCapsule interface)."""

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...


class _ArrowStreamExportable(Protocol):
    """An Arrow table, chunked array or stream (the Arrow PyCapsule interface)."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...


# Boxes or points: an array-like of shape (n, 4) / (n, 2), or Arrow columns (four or two
# float32/float64 columns of a pyarrow/polars table or record batch, or a struct column
# `xmin, ymin, xmax, ymax` / `x, y`), copied once from columns into rows.
_Coords = Union[npt.ArrayLike, _ArrowArrayExportable, _ArrowStreamExportable]
_Floats = npt.NDArray[Union[np.float32, np.float64]]
_Ids = npt.NDArray[np.int64]
_World = Union[Sequence[float], npt.NDArray[np.floating]]
_DType = Union[str, type, np.dtype, None]
_Predicate = Optional[
    Literal[
        "intersects",
        "contains",
        "within",
        "contains_properly",
        "covers",
        "covered_by",
        "touches",
        "overlaps",
        "crosses",
        "dwithin",
    ]
]

__version__: str
"""The package's version (that of the Rust workspace it was built from)."""

__all__ = [
    "DynamicIndex",
    "HierarchicalGrid",
    "KdTree",
    "Layered",
    "LooseGrid",
    "LooseQuadtree",
    "MxCifQuadtree",
    "PackedIndex",
    "PointGrid",
    "Quadtree",
    "UniformGrid",
    "SweepGrid",
    "pairs",
]

@final
class KdTree:
    """A static kd-tree over 2D points: k-nearest neighbours like ``cKDTree.query``."""

    def __new__(cls, points: _Coords, leafsize: int = 16) -> Self: ...
    def query(
        self,
        x: _Coords,
        k: Union[int, Sequence[int]] = 1,
        eps: float = 0.0,
        p: float = 2,
        distance_upper_bound: float = float("inf"),
        workers: int = 1,
    ) -> tuple[Union[float, _Floats], Union[int, _Ids]]:
        """scipy's ``cKDTree.query``: ``(d, i)``, padded with ``inf`` and ``len(tree)``;
        scalars for one point and ``k = 1``. Only ``p=2``, ``eps=0``."""
    def query_ball_point(
        self,
        x: _Coords,
        r: Union[float, _ArrayLike],
        p: float = 2.0,
        eps: float = 0.0,
        workers: int = 1,
        return_sorted: Union[bool, None] = None,
        return_length: bool = False,
    ) -> Union[list[int], npt.NDArray[np.object_], np.intp, _Ids]:
        """scipy's ``cKDTree.query_ball_point``: a list (one point) or an object array of
        lists of rows within ``r``; counts with ``return_length``."""
    def query_pairs(
        self,
        r: float,
        p: float = 2.0,
        eps: float = 0.0,
        output_type: Literal["set", "ndarray"] = "set",
        workers: int = 1,
    ) -> Union[set[tuple[int, int]], _Ids]:
        """scipy's ``cKDTree.query_pairs``: pairs ``i < j`` within ``r``."""
    def sparse_distance_matrix(
        self,
        other: KdTree,
        max_distance: float,
        p: float = 2.0,
        output_type: Literal["dok_matrix", "coo_matrix", "dict", "ndarray"] = "dok_matrix",
        workers: int = 1,
    ) -> Any:
        """scipy's ``cKDTree.sparse_distance_matrix``; the sparse types need scipy."""
    def count_neighbors(
        self,
        other: KdTree,
        r: Union[float, _ArrayLike],
        p: float = 2.0,
        weights: None = None,
        cumulative: bool = True,
        workers: int = 1,
    ) -> Union[int, npt.NDArray[np.int64]]:
        """scipy's ``cKDTree.count_neighbors``: pairs of a point here and one of ``other`` at
        most ``r`` apart (one count per radius for an array)."""
    def query_ball_tree(
        self, other: KdTree, r: float, p: float = 2.0, eps: float = 0.0, workers: int = 1
    ) -> list[list[int]]:
        """scipy's ``cKDTree.query_ball_tree``: for each point, the indices of ``other``'s
        points within ``r``, ascending."""
    def query_radius(self, x: _Coords, r: float, workers: int = 1) -> tuple[_Ids, _Ids]:
        """``(query_index, point_index)`` of every point within ``r`` of each query."""
    def to_bytes(self) -> bytes:
        """The tree's byte form (``from_bytes`` loads it; ``pickle`` uses it)."""
    @staticmethod
    def from_bytes(data: bytes) -> KdTree:
        """The tree saved in ``data``, loaded without rebuilding; ``ValueError`` if damaged."""
    @staticmethod
    def from_buffer(data: Buffer) -> KdTree:
        """The tree saved in ``data``'s buffer (``bytes``, a read-only ``memoryview``, an
        ``mmap`` opened with ``ACCESS_READ``, a ``numpy.memmap`` with ``mode="r"``), read in
        place: nothing copied (unless it does not start at a multiple of 64) or built; the buffer
        is kept while the tree lives. ``ValueError`` if writable or damaged."""
    @staticmethod
    def _unpickle(data: Buffer) -> KdTree: ...
    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Callable[[Buffer], KdTree], tuple[Any]]:
        """Pickling through the byte form; with protocol 5 handed out of band
        (``pickle.PickleBuffer``)."""
    def __len__(self) -> int: ...
    @property
    def dtype(self) -> Literal["float32", "float64"]: ...
    @property
    def data(self) -> npt.NDArray[np.float64]:
        """The points, ``(n, 2)`` float64 in input order (scipy's ``cKDTree.data``)."""
    @property
    def n(self) -> int:
        """The number of points."""
    @property
    def m(self) -> int:
        """The dimension, 2."""
    @property
    def mins(self) -> npt.NDArray[np.float64]:
        """The smallest coordinate on each axis (zeros for an empty tree)."""
    @property
    def maxes(self) -> npt.NDArray[np.float64]:
        """The largest coordinate on each axis (zeros for an empty tree)."""
    @property
    def leafsize(self) -> int:
        """The most points a leaf holds."""

@final
class PackedIndex:
    """A static packed Hilbert R-tree over boxes (or points)."""

    def __new__(cls, boxes: _Coords) -> Self: ...
    def query(
        self, geometry: Any, predicate: _Predicate = None, distance: Optional[Union[float, _ArrayLike]] = None, workers: int = 1
    ) -> _Ids:
        """shapely's ``STRtree.query``: ``(2, n)`` geometry and box indices (box indices alone
        for one geometry) of every box meeting each geometry under ``predicate``, tested on
        the boxes (no exact geometry test); ``"dwithin"`` with ``distance``: the boxes within
        that distance of each point. Geometries: ``(m, 4)`` boxes, ``(m, 2)`` points, one
        ``(4,)`` box or ``(2,)`` point, or shapely geometries (by their bounds)."""
    def query_nearest(
        self,
        geometry: Any,
        max_distance: Optional[float] = None,
        return_distance: bool = False,
        exclusive: bool = False,
        all_matches: bool = True,
        workers: int = 1,
    ) -> Union[_Ids, tuple[_Ids, npt.NDArray[np.float64]]]:
        """shapely's ``STRtree.query_nearest``: ``(2, n)`` point and box indices of every
        nearest box of each point (all ties; box indices alone for one point), and the
        distances with ``return_distance``."""
    def pairs(self, sort: bool = False) -> _Ids:
        """``(p, 2)`` positions ``i < j`` of every intersecting pair of boxes (rows sorted
        with ``sort``)."""
    def nearest(self, points: _Coords, k: int = 1, workers: int = 1) -> tuple[_Floats, _Ids]:
        """``(distances, box_index)`` of the ``k`` boxes nearest each point."""
    def raycast(
        self, origins: _Coords, directions: _Coords, max_t: float = ..., workers: int = 1
    ) -> tuple[_Floats, _Ids]:
        """``(t, box_index)`` of the first box each ray ``origins + t * directions`` hits
        (``0 <= t <= max_t``), ``inf`` and ``len(index)`` where none; scalars for one ray."""
    def raycast_all(self, origins: _Coords, directions: _Coords, max_t: float = ...) -> tuple[_Ids, _Floats]:
        """``(2, n)`` ray indices and box_index of every box each ray hits, ordered by ray, then
        ``t``; and the ``t`` of each."""
    def to_bytes(self) -> bytes:
        """The index's byte form (``from_bytes`` loads it; ``pickle`` uses it)."""
    @staticmethod
    def from_bytes(data: bytes) -> PackedIndex:
        """The index saved in ``data``, loaded without rebuilding; ``ValueError`` if damaged."""
    @staticmethod
    def from_buffer(data: Buffer) -> PackedIndex:
        """The index saved in ``data``'s buffer (``bytes``, a read-only ``memoryview``, an
        ``mmap`` opened with ``ACCESS_READ``, a ``numpy.memmap`` with ``mode="r"``), read in
        place: nothing copied (unless it does not start at a multiple of 64) or built; the buffer
        is kept while the index lives. ``ValueError`` if writable or damaged."""
    @staticmethod
    def _unpickle(data: Buffer) -> PackedIndex: ...
    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Callable[[Buffer], PackedIndex], tuple[Any]]:
        """Pickling through the byte form; with protocol 5 handed out of band
        (``pickle.PickleBuffer``)."""
    def ids(self) -> _Ids:
        """``0 .. len(index)``: a box's id is its position in the input."""
    def boxes(self, positions: Optional[_ArrayLike] = None) -> _Floats:
        """``(n, 4)`` boxes at ``positions`` (all, in input order, by default); ``KeyError``
        for a position out of range."""
    def __len__(self) -> int: ...
    @property
    def dtype(self) -> Literal["float32", "float64"]: ...

@disjoint_base
class DynamicIndex:
    """The base class of the dynamic indexes: boxes named by ``int64`` ids, the caller's own
    (``insert(boxes, ids=...)``) or made up by the index."""

    def insert(self, boxes: _Coords, ids: Optional[_ArrayLike] = None) -> _Ids:
        """Adds boxes; their ids, in order: ``ids`` (the caller's, any integer dtype, each
        new) when given, else made up. The first insert into an empty index decides which
        kind names its elements; ``ValueError`` for the other kind, or a repeated or present
        id (naming its row), before anything changes."""
    def update(self, ids: _ArrayLike, boxes: _Coords) -> None:
        """Moves element ``ids[i]`` to ``boxes[i]``."""
    def remove(self, ids: _ArrayLike) -> None:
        """Removes the elements; their ids go stale."""
    def pairs(self, workers: int = 1, sort: bool = False) -> _Ids:
        """``(p, 2)`` ids of every intersecting pair, smaller first (``workers`` threads; rows
        sorted with ``sort``)."""
    def query(
        self, geometry: Any, predicate: _Predicate = None, distance: Optional[Union[float, _ArrayLike]] = None, workers: int = 1
    ) -> _Ids:
        """shapely's ``STRtree.query``: ``(2, n)`` geometry indices and ids (ids alone for one
        geometry), as ``PackedIndex.query``."""
    def query_nearest(
        self,
        geometry: Any,
        max_distance: Optional[float] = None,
        return_distance: bool = False,
        exclusive: bool = False,
        all_matches: bool = True,
        workers: int = 1,
    ) -> Union[_Ids, tuple[_Ids, npt.NDArray[np.float64]]]:
        """shapely's ``STRtree.query_nearest``: ``(2, n)`` point indices and ids of every
        nearest element of each point (all ties; ids alone for one point), as
        ``PackedIndex.query_nearest``."""
    def nearest(self, points: _Coords, k: int = 1, workers: int = 1) -> tuple[_Floats, _Ids]:
        """``(distances, ids)`` of the ``k`` elements nearest each point (padded with -1)."""
    def maintain(self) -> None:
        """Deferred tidying; results are correct without it."""
    def clear(self) -> None:
        """Removes every element."""
    def raycast(
        self, origins: _Coords, directions: _Coords, max_t: float = ..., workers: int = 1
    ) -> tuple[_Floats, _Ids]:
        """``(t, ids)`` of the first element each ray ``origins + t * directions`` hits
        (``0 <= t <= max_t``), ``inf`` and -1 where none; scalars for one ray."""
    def raycast_all(self, origins: _Coords, directions: _Coords, max_t: float = ...) -> tuple[_Ids, _Floats]:
        """``(2, n)`` ray indices and ids of every element each ray hits, ordered by ray, then
        ``t``; and the ``t`` of each."""
    def to_bytes(self) -> bytes:
        """The index's byte form (the class's ``from_bytes`` loads it; ``pickle`` uses it)."""
    def __reduce__(self) -> tuple[Callable[[bytes], DynamicIndex], tuple[bytes]]: ...
    def ids(self) -> _Ids:
        """Every element's id, in the index's own order (that of ``boxes()`` and iteration)."""
    def boxes(self, ids: Optional[_ArrayLike] = None) -> _Floats:
        """``(n, 4)`` boxes of ``ids`` (all, in ``ids()`` order, by default); ``KeyError`` for a
        stale id."""
    def __iter__(self) -> Iterator[int]: ...
    def __contains__(self, id: int, /) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def dtype(self) -> Literal["float32", "float64"]: ...

@final
class UniformGrid(DynamicIndex):
    def __new__(
        cls, world: _World, cell_size: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> UniformGrid:
        """The index saved in ``data``, same ids; ``ValueError`` if not a UniformGrid's."""

@final
class LooseGrid(DynamicIndex):
    def __new__(
        cls, world: _World, cell_size: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> LooseGrid:
        """The index saved in ``data``, same ids; ``ValueError`` if not a LooseGrid's."""

@final
class PointGrid(DynamicIndex):
    def __new__(
        cls,
        world: _World,
        max_half_extent: float | None = None,
        *,
        sample: _Coords | None = None,
        dtype: _DType = None,
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> PointGrid:
        """The index saved in ``data``, same ids; ``ValueError`` if not a PointGrid's."""

@final
class HierarchicalGrid(DynamicIndex):
    def __new__(
        cls, world: _World, finest_cell: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> HierarchicalGrid:
        """The index saved in ``data``, same ids; ``ValueError`` if not a HierarchicalGrid's."""

@final
class Quadtree(DynamicIndex):
    def __new__(
        cls, world: _World, element_size: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> Quadtree:
        """The index saved in ``data``, same ids; ``ValueError`` if not a Quadtree's."""

@final
class LooseQuadtree(DynamicIndex):
    def __new__(
        cls, world: _World, element_size: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> LooseQuadtree:
        """The index saved in ``data``, same ids; ``ValueError`` if not a LooseQuadtree's."""

@final
class MxCifQuadtree(DynamicIndex):
    def __new__(
        cls, world: _World, element_size: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> MxCifQuadtree:
        """The index saved in ``data``, same ids; ``ValueError`` if not a MxCifQuadtree's."""

@final
class Layered(DynamicIndex):
    def __new__(
        cls, world: _World, threshold: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> Layered:
        """The index saved in ``data``, same ids; ``ValueError`` if not a Layered's."""

@final
class SweepGrid(DynamicIndex):
    """A sweep grid: boxes in horizontal bands by their bottom, sorted by their left side
    inside each band; the fastest structure for hundreds of thousands to millions of moving
    agents of similar size. ``band_height``: the bands' height (from ``sample``: three
    times its mean extent; 64 bands without either). ``insert`` and ``update`` of a large
    batch (an eighth of the elements or more) follow the grid's storage order (the rows
    inserted band by band, an update one walk of the grid): give them whole frames.

    Examples
    --------
    >>> import numpy as np, spatix
    >>> pos = np.array([[1.0, 1.0], [2.0, 1.5], [50.0, 50.0]])
    >>> boxes = np.hstack([pos - 1.0, pos + 1.0])
    >>> grid = spatix.SweepGrid((0, 0, 100, 100), sample=boxes)
    >>> ids = grid.insert(boxes)  # ids[agent]
    >>> pos += [[0.0, 0.0], [30.0, 30.0], [0.0, 0.0]]  # one frame
    >>> grid.update(ids, np.hstack([pos - 1.0, pos + 1.0]))
    >>> len(grid.pairs())
    0
    """

    def __new__(
        cls, world: _World, band_height: float | None = None, *, sample: _Coords | None = None, dtype: _DType = None
    ) -> Self: ...
    @staticmethod
    def from_bytes(data: bytes) -> SweepGrid:
        """The index saved in ``data``, same ids; ``ValueError`` if not a SweepGrid's."""

def pairs(boxes: _Coords, workers: int = 1) -> npt.NDArray[np.int64]:
    """Every intersecting pair of an ``(n, 4)`` array of boxes (``min_x, min_y, max_x,
    max_y``, closed) as an ``(m, 2)`` int64 array of row indices ``i < j``, sorted by ``i``
    then ``j``; the same on any number of ``workers`` (threads; -1: every core). float32
    input is computed in float32, any other in float64. No index is kept: for boxes that
    change every frame. ``ValueError`` for another shape, non-numbers, or a NaN, infinite
    or inverted box (naming its row).

    Examples
    --------
    >>> import numpy as np, spatix
    >>> spatix.pairs(np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6], [2, 0, 4, 1]]))
    array([[0, 1],
           [0, 3],
           [1, 3]])
    """
