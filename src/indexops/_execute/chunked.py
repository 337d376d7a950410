"""Scatters chunk by chunk: the row writes of :mod:`.writes` as a Dask task graph.

A row scatter meets a chunked operand as a grid. Which rows are dropped, clamped or kept
was decided before, on the whole operand's coordinates. Then one task per update block
sorts its kept rows to the operand chunks they land in (a stable sort: row-major order
stays within each chunk) with the row numbers shifted to the chunk, and every operand
chunk is a chain that applies its piece of each block, in block order: one task per
(chunk, block) pair (and one that hands it its piece), fewer where the row numbers are
known on the host and a block provably misses a chunk. Each chunk thus sees exactly the
sequence of writes the whole operand would see, so the result is the sequential one:
duplicates inside a block are resolved by the chunk's own backend in row-major order,
and blocks apply one after another.

Each task runs indexops' own row writer on the chunk's arrays (NumPy chunks get the NumPy
backend), so every combiner, callables included, means the same as everywhere else.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import Any

import array_api_compat as compat
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._backends import Backend, backend_for
from .._typing import Array
from .._validate.combiners import Combiner, resolve
from .rows import table_with_rows


def tail_start(shape: tuple[int, ...], rows_shape: tuple[int, int]) -> int:
    """The first dim of the trailing dims that make up one row of the 2-D view
    ``rows_shape`` of an array of ``shape`` (the last such dim where sizes of 1 leave a
    choice: every choice describes the same rows)."""
    for k in range(len(shape), -1, -1):
        if math.prod(shape[k:]) == rows_shape[1] and math.prod(shape[:k]) == rows_shape[0]:
            return k
    raise ValueError(f"{rows_shape} is no row view of {shape}")


class RowGrid:
    """An operand's chunks seen as rows: the head dims (rows) and tail dims (one row).

    Head chunks are numbered in row-major order of their chunk indices.
    """

    def __init__(self, x: da.Array, rows_shape: tuple[int, int]) -> None:
        self.k = tail_start(tuple(x.shape), rows_shape)
        self.head_shape = tuple(x.shape[: self.k])
        self.head_strides = tuple(math.prod(self.head_shape[d + 1 :]) for d in range(self.k))
        self.chunks = x.chunks
        self.head_chunks = x.chunks[: self.k]
        self.head_count = math.prod(len(c) for c in self.head_chunks)

    def chunk_indices(self) -> Any:
        return itertools.product(*(range(len(c)) for c in self.chunks))

    def head_number(self, index: tuple[int, ...]) -> int:
        """The number of the head chunk of chunk ``index``."""
        number = 0
        for d in range(self.k):
            number = number * len(self.head_chunks[d]) + index[d]
        return number


def sort_to_chunks(
    xp: Any, rows: Array, keep: Array | None, grid: RowGrid
) -> tuple[Array, Array, Array]:
    """For each row of the whole operand's head: the head chunk it lies in (``head_count``
    for rows not kept), its row within that chunk, and the stable order that groups the
    rows by chunk (row-major order kept within each chunk)."""
    chunk = xp.zeros(rows.shape, dtype=rows.dtype)
    local = xp.zeros(rows.shape, dtype=rows.dtype)
    for d in range(grid.k):
        coordinate = rows if grid.k == 1 else (rows // grid.head_strides[d]) % grid.head_shape[d]
        sizes = xp.asarray(grid.head_chunks[d], dtype=rows.dtype)
        ends = xp.asarray(list(itertools.accumulate(grid.head_chunks[d])), dtype=rows.dtype)
        along = xp.searchsorted(ends, coordinate, side="right")
        starts = xp.take(ends, along) - xp.take(sizes, along)
        local = local * xp.take(sizes, along) + (coordinate - starts)
        chunk = chunk * len(grid.head_chunks[d]) + along
    if keep is not None:
        chunk = xp.where(keep, chunk, grid.head_count)
    return chunk, local, xp.argsort(chunk, stable=True)


def _is_aligned(x: Any) -> bool:
    return not isinstance(x, np.ndarray) or bool(x.flags.aligned)


def aligned(x: Any) -> Any:
    """``x``, copied where it is a NumPy array whose memory is not aligned for its dtype.

    ``distributed`` can hand a task an array that came from another worker at any byte
    offset; ``ufunc.at`` and ``take`` run several times slower on such memory than a copy
    costs (measured: a 16 MB chunk's ``add`` of 8 MB of rows, 0.06 s unaligned against
    0.01 s, the copy 0.01 s).
    """
    return x if _is_aligned(x) else x.copy()


def _split_block(
    rows: Array, keep: Array | None, values: Array, *, grid: RowGrid
) -> list[tuple[Array, Array]]:
    """One update block cut into one piece per head chunk: the kept rows that land there
    (as rows of the chunk, in row-major order) and their values."""
    rows, keep, values = (aligned(a) for a in (rows, keep, values))
    xp = compat.array_namespace(values)
    chunk, local, order = sort_to_chunks(xp, rows, keep, grid)
    ordered = xp.take(chunk, order)
    numbers = xp.arange(grid.head_count + 1, dtype=ordered.dtype)
    cuts = [int(c) for c in xp.searchsorted(ordered, numbers)]
    return [
        (xp.take(local, order[a:b]), xp.take(values, order[a:b], axis=0))
        for a, b in itertools.pairwise(cuts)
    ]


def _apply_piece(
    chunk: Array,
    piece: tuple[Array, Array],
    *,
    first: bool,
    combiner: Combiner,
    generic: bool,
) -> Array:
    """The piece of one update block that lands in one operand chunk, written into a copy
    of the chunk (first block of the chain, or a chain's result that arrived unaligned from
    another worker) or else into the chain's own intermediate result."""
    rows, values = (aligned(a) for a in piece)
    if rows.shape[0] == 0 and not first:
        return chunk
    if isinstance(chunk, np.generic):  # Dask's chunk of a 0-d array may be a NumPy scalar
        chunk = np.asarray(chunk)
    xp = compat.array_namespace(chunk)
    backend = Backend(xp) if generic else backend_for("scatter", chunk=chunk)
    table = backend.copy(chunk) if first or not _is_aligned(chunk) else chunk
    width = math.prod(values.shape[1:])  # values are [rows, *the chunk's tail dims]
    head = math.prod(chunk.shape[: chunk.ndim - (values.ndim - 1)])
    table2d = xp.reshape(table, (head, width))
    values2d = xp.reshape(values, (values.shape[0], width))
    on_chunk = combiner if combiner.named is None else resolve("scatter", xp, combiner.named)
    written = table_with_rows(backend, table2d, rows, values2d, on_chunk)
    return xp.reshape(written, chunk.shape)


# Dask's rechunk builds NumPy object arrays of the array's rank and walks them by `.flat`,
# which NumPy limits to 32 dims
_RECHUNK_MAX_RANK = 32


def _laid_out(
    values: da.Array, tail_shape: tuple[int, ...], tail_chunks: tuple[tuple[int, ...], ...]
) -> da.Array:
    """The update rows ``values`` as ``[rows, *tail_shape]``, chunked as the operand's
    tail dims. Beyond the rank Dask's rechunk takes, the dims of size 1 (one chunk whatever
    the operand's chunks) join after the rechunk, as ``None`` in an index."""
    if 1 + len(tail_shape) <= _RECHUNK_MAX_RANK:
        values = da.reshape(values, (values.shape[0], *tail_shape))
        return values.rechunk((values.chunks[0], *tail_chunks))
    kept = [d for d, n in enumerate(tail_shape) if n != 1]
    values = da.reshape(values, (values.shape[0], *(tail_shape[d] for d in kept)))
    values = values.rechunk((values.chunks[0], *(tail_chunks[d] for d in kept)))
    ones_again = (slice(None), *(slice(None) if n != 1 else None for n in tail_shape))
    return values[ones_again]


def scatter_rows(
    x: da.Array,
    rows_shape: tuple[int, int],
    rows: Array,
    values: da.Array,
    combiner: Combiner,
    keep: Array | None,
    generic: bool,
) -> da.Array:
    """``x`` (seen as ``rows_shape``) with ``values[k]`` combined into row ``rows[k]``
    where ``keep[k]``, in order.

    Per update block one task sorts its rows to the operand's chunks; per operand chunk a
    chain applies the blocks' pieces in order. ``rows`` and ``keep`` are Dask arrays, or
    NumPy arrays (values known on the host: links of a block and a chunk that no kept row
    joins are left out).
    """
    grid = RowGrid(x, rows_shape)
    tail_shape = tuple(x.shape[grid.k :])
    values = _laid_out(values, tail_shape, x.chunks[grid.k :])
    blocks = values.chunks[0]
    host = isinstance(rows, np.ndarray)
    if not host:
        rows = rows.rechunk((blocks,))
        keep = None if keep is None else keep.rechunk((blocks,))
    rows_by_block, keep_by_block = _row_blocks(rows, keep, blocks)
    name = f"scatter-rows-{tokenize(x, rows, keep, values, combiner, generic)}"
    split = functools.partial(_split_block, grid=grid)
    layer: dict[Any, Any] = {}
    for u in range(len(blocks)):
        for tail in itertools.product(*(range(len(c)) for c in x.chunks[grid.k :])):
            split_key = (f"{name}-split", u, *tail)
            values_key = (values.name, u, *tail)
            layer[split_key] = (split, rows_by_block[u], keep_by_block[u], values_key)
    hits = _hits_on_host(rows_by_block, keep_by_block, grid) if host else None
    for index in grid.chunk_indices():
        head = grid.head_number(index)
        previous: Any = (x.name, *index)
        for u in range(len(blocks)):
            if hits is not None and head not in hits[u]:
                continue
            # a task of its own, so that only the piece moves to the chunk's worker
            piece_key = (f"{name}-piece{u}", *index)
            layer[piece_key] = (operator.getitem, (f"{name}-split", u, *index[grid.k :]), head)
            key = (f"{name}-step{u}", *index)
            apply = functools.partial(
                _apply_piece, first=previous[0] == x.name, combiner=combiner, generic=generic
            )
            layer[key] = (apply, previous, piece_key)
            previous = key
        out_key = (name, *index)
        layer[out_key] = previous  # an alias where no block met the chunk
    dependencies: list[Any] = [x, values, *(a for a in (rows, keep) if isinstance(a, da.Array))]
    graph = HighLevelGraph.from_collections(name, layer, dependencies=dependencies)
    return da.Array(graph, name, chunks=x.chunks, dtype=x.dtype, meta=x._meta)


def _row_blocks(
    rows: Array, keep: Array | None, blocks: tuple[int, ...]
) -> tuple[list[Any], list[Any]]:
    """Per update block: its rows and keep mask, as graph keys (Dask arrays chunked as the
    blocks) or arrays (NumPy)."""
    if isinstance(rows, np.ndarray):
        bounds = list(itertools.accumulate((0, *blocks)))
        pieces = [slice(a, b) for a, b in itertools.pairwise(bounds)]
        return [rows[p] for p in pieces], [None if keep is None else keep[p] for p in pieces]
    row_keys = [(rows.name, u) for u in range(len(blocks))]
    if keep is None:
        return row_keys, [None] * len(blocks)
    return row_keys, [(keep.name, u) for u in range(len(blocks))]


def _hits_on_host(rows_by_block: list[Any], keep_by_block: list[Any], grid: RowGrid) -> list[set]:
    """Per update block (NumPy rows): the head chunks that a kept row lands in."""
    hits = []
    for rows, keep in zip(rows_by_block, keep_by_block):
        chunk, _, _ = sort_to_chunks(np, rows, keep, grid)
        hits.append({int(c) for c in np.unique(chunk)} - {grid.head_count})
    return hits
