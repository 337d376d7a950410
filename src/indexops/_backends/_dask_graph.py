"""Task graphs of the Dask backend: scatters chunk by chunk, value checks at compute time.

A row scatter meets a chunked operand as a grid: every operand chunk applies every block
of updates, in order, keeping only the rows that land in that chunk (per element, with
the indices shifted to the chunk). Which rows are dropped, clamped or kept was decided
before, on the whole operand's coordinates, so the chunks together give exactly the
sequential result: duplicates inside a block are resolved by the chunk's own backend in
row-major order, and the blocks are applied one after another. Each operand chunk is a
chain of one task per update block (chunks x blocks tasks in all, fewer where the row
numbers are known on the host and a block provably misses a chunk).

Each task runs indexops' own row writer on the chunk's arrays (NumPy chunks get the NumPy
backend), so every combiner, callables included, means the same as everywhere else.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import array_api_compat as compat
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._combiners import Combiner, resolve
from .._typing import Array


def tail_start(shape: tuple[int, ...], rows_shape: tuple[int, int]) -> int:
    """The first dim of the trailing dims that make up one row of the 2-D view
    ``rows_shape`` of an array of ``shape`` (the last such dim where sizes of 1 leave a
    choice: every choice describes the same rows)."""
    for k in range(len(shape), -1, -1):
        if math.prod(shape[k:]) == rows_shape[1] and math.prod(shape[:k]) == rows_shape[0]:
            return k
    raise ValueError(f"{rows_shape} is no row view of {shape}")


def _offsets(chunks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(itertools.accumulate((0, *chunks[:-1])))


class RowGrid:
    """An operand's chunks seen as rows: the head dims (rows) and tail dims (one row)."""

    def __init__(self, x: da.Array, rows_shape: tuple[int, int]) -> None:
        self.k = tail_start(tuple(x.shape), rows_shape)
        self.head_shape = tuple(x.shape[: self.k])
        self.head_strides = tuple(math.prod(self.head_shape[d + 1 :]) for d in range(self.k))
        self.chunks = x.chunks
        self.offsets = tuple(_offsets(c) for c in x.chunks)

    def chunk_indices(self) -> Any:
        return itertools.product(*(range(len(c)) for c in self.chunks))

    def head_box(self, index: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Offsets and sizes along the head dims of chunk ``index``."""
        head = range(self.k)
        return (
            tuple(self.offsets[d][index[d]] for d in head),
            tuple(self.chunks[d][index[d]] for d in head),
        )


def local_rows(
    xp: Any,
    rows: Array,
    keep: Array | None,
    grid_strides: tuple[int, ...],
    head_shape: tuple[int, ...],
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
) -> tuple[Array, Array]:
    """Row numbers of the whole operand's head as rows of one chunk, and which of them
    lie in the chunk (and are kept); rows outside point at row 0 of the chunk."""
    if len(sizes) == 1:  # the common case: one head dim, no division
        local = rows - offsets[0]
        inside = (local >= 0) & (local < sizes[0])
    else:
        local = xp.zeros_like(rows)
        inside = xp.ones(rows.shape, dtype=xp.bool)
        for stride, dim, offset, size in zip(grid_strides, head_shape, offsets, sizes):
            coordinate = (rows // stride) % dim - offset
            inside = inside & (coordinate >= 0) & (coordinate < size)
            local = local * size + coordinate
    if keep is not None:
        inside = inside & keep
    return xp.where(inside, local, 0), inside


def _apply_block(
    chunk: Array,
    rows: Array,
    keep: Array | None,
    values: Array,
    *,
    first: bool,
    grid: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]],
    combiner: Combiner,
    generic: bool,
) -> Array:
    """One update block into one operand chunk (a copy of it for the first block of the
    chain; later blocks write into the chain's own intermediate result)."""
    from .._rows import put_rows
    from . import Backend, backend_for

    xp = compat.array_namespace(chunk)
    backend = Backend(xp) if generic else backend_for("scatter", chunk=chunk)
    strides, head_shape, offsets, sizes = grid
    local, inside = local_rows(xp, rows, keep, strides, head_shape, offsets, sizes)
    table = backend.copy(chunk) if first else chunk
    width = math.prod(chunk.shape[len(sizes) :])
    table2d = xp.reshape(table, (math.prod(sizes), width))
    values2d = xp.reshape(values, (values.shape[0], width))
    on_chunk = combiner if combiner.named is None else resolve("scatter", xp, combiner.named)
    written = put_rows(backend, table2d, local, values2d, on_chunk, keep=inside)
    return xp.reshape(written, chunk.shape)


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
    where ``keep[k]``, in order: a chain of update blocks per chunk of ``x``.

    ``rows`` and ``keep`` are Dask arrays, or NumPy arrays (their values known on the host:
    pairs of a block and a chunk that no kept row joins are left out).
    """
    grid = RowGrid(x, rows_shape)
    tail_shape = tuple(x.shape[grid.k :])
    values = da.reshape(values, (values.shape[0], *tail_shape))
    values = values.rechunk((values.chunks[0], *x.chunks[grid.k :]))
    blocks = values.chunks[0]
    host = isinstance(rows, np.ndarray)
    if not host:
        rows = rows.rechunk((blocks,))
        keep = None if keep is None else keep.rechunk((blocks,))
    rows_by_block, keep_by_block = _row_blocks(rows, keep, blocks)
    name = f"scatter-rows-{tokenize(x, rows, keep, values, combiner, generic)}"
    layer: dict[Any, Any] = {}
    for index in grid.chunk_indices():
        offsets, sizes = grid.head_box(index)
        box = (grid.head_strides, grid.head_shape, offsets, sizes)
        previous: Any = (x.name, *index)
        for u in range(len(blocks)):
            if host and not _meets(rows_by_block[u], keep_by_block[u], grid, offsets, sizes):
                continue
            key = (f"{name}-step{u}", *index)
            apply = functools.partial(
                _apply_block,
                first=previous[0] == x.name,
                grid=box,
                combiner=combiner,
                generic=generic,
            )
            values_key = (values.name, u, *index[grid.k :])
            layer[key] = (apply, previous, rows_by_block[u], keep_by_block[u], values_key)
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


def _meets(
    rows: np.ndarray,
    keep: np.ndarray | None,
    grid: RowGrid,
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
) -> bool:
    """Whether a kept row of this block lands in the chunk (values on the host)."""
    _, inside = local_rows(np, rows, keep, grid.head_strides, grid.head_shape, offsets, sizes)
    return bool(inside.any())


# -- value checks at compute time -----------------------------------------------------------


def _first_bad(bad: Array, culprit: Array, start: int) -> tuple[int, int] | None:
    """The first position (counted from ``start``) where ``bad``, with its culprit."""
    hits = np.flatnonzero(np.asarray(bad))
    if hits.size == 0:
        return None
    return start + int(hits[0]), int(np.asarray(culprit)[hits[0]])


def _raise_first(error: Callable[[int, int], Exception], *firsts: Any) -> bool:
    for found in firsts:
        if found is not None:
            raise error(*found)
    return True


def _after(block: Array, passed: bool) -> Array:
    return block


def raise_lazily(
    result: da.Array, bad: da.Array, culprit: da.Array, error: Callable[[int, int], Exception]
) -> da.Array:
    """``result``, made to raise ``error(position, culprit[position])`` for the first
    ``position`` where the 1-D ``bad`` is True, when it is computed (nothing is read now).

    One task per block of ``bad`` finds its first hit, one task raises for the earliest,
    and every block of ``result`` waits for that task.
    """
    culprit = culprit.rechunk(bad.chunks)
    name = f"check-{tokenize(bad, culprit, error)}"
    starts = _offsets(bad.chunks[0])
    layer: dict[Any, Any] = {
        (f"{name}-block", u): (_first_bad, (bad.name, u), (culprit.name, u), start)
        for u, start in enumerate(starts)
    }
    verdict = (f"{name}-verdict",)
    layer[verdict] = (_raise_first, error, *(key for key in layer))
    out = f"{name}-checked"
    for index in itertools.product(*(range(len(c)) for c in result.chunks)):
        out_key = (out, *index)
        layer[out_key] = (_after, (result.name, *index), verdict)
    dependencies: list[Any] = [result, bad, culprit]
    graph = HighLevelGraph.from_collections(out, layer, dependencies=dependencies)
    return da.Array(graph, out, chunks=result.chunks, dtype=result.dtype, meta=result._meta)
