"""Row primitives: every op moves data as rows of a 2-D view.

``take_rows`` reads rows; ``put_rows`` writes rows with a :class:`Combiner`. Both have one
generic implementation built only from the Array API standard (which has no scatter) and
native fast paths per backend. Duplicate rows resolve as if the updates were applied one
by one in order, on every backend: replace keeps the last, named combiners accumulate,
a callable is applied once per occurrence, in order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import array_api_compat as compat

from ._backend import Backend, backend_of, shares_memory
from ._combiners import Combiner

Array = Any

_generic_only = False


@contextlib.contextmanager
def generic_only() -> Iterator[None]:
    """Within this block, use the pure Array API paths (tests compare them with native ones)."""
    global _generic_only
    previous, _generic_only = _generic_only, True
    try:
        yield
    finally:
        _generic_only = previous


def _backend(x: Array) -> Backend:
    return Backend.GENERIC if _generic_only else backend_of(x)


def take_rows(xp: ModuleType, table: Array, rows: Array) -> Array:
    """``table[rows]`` for a 2-D ``table`` and 1-D integer ``rows`` (all in range)."""
    backend = _backend(table)
    if backend is Backend.TORCH:
        return _torch_take_rows(table, rows)
    if backend is Backend.JAX:
        return table.at[rows].get(mode="promise_in_bounds", unique_indices=False)
    return xp.take(table, rows, axis=0)


def _torch_take_rows(table: Array, rows: Array) -> Array:
    """``index_select``; on the CPU, NumPy's ``take`` on shared memory when it can.

    NumPy's row take is about 1.4x faster than torch's ``index_select`` on the CPU. It needs
    a tensor NumPy can view: no autograd, no bfloat16, no conjugate or negative bit.
    """
    if table.device.type == "cpu" and not table.requires_grad:
        try:
            import numpy as np
            import torch

            return torch.from_numpy(np.take(table.numpy(), rows.numpy(), axis=0))
        except (TypeError, RuntimeError):  # a dtype or view NumPy cannot share
            pass
    return table.index_select(0, rows)


def put_rows(
    xp: ModuleType,
    target: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    *,
    unique: bool = False,
) -> Array:
    """Write ``values[k]`` into row ``rows[k]`` of the 2-D ``target`` with ``combiner``.

    ``rows`` is 1-D (index dtype) with every entry in range. On backends whose arrays can be
    written, ``target`` itself is updated and returned; otherwise (JAX, generic) a new
    array is returned. ``unique=True`` promises no row repeats.
    """
    if rows.shape[0] == 0:
        return target
    backend = _backend(target)
    writer = _WRITERS.get(backend, _GenericWriter)
    if combiner.name == "replace":
        keep = None if unique else last_occurrences(xp, writer, rows, target.shape[0])
        if keep is not None:  # only duplicates cost a copy of values
            rows, values = xp.take(rows, keep), xp.take(values, keep, axis=0)
        return writer.set_unique(xp, target, rows, values)
    if combiner.name is not None:
        result = writer.combine(xp, target, rows, values, combiner.name)
        if result is not None:
            return result
    return _apply_in_passes(xp, writer, target, rows, values, combiner, unique)


# Up to this many target rows per written row, duplicates are found with scratch arrays of
# one entry per target row (a few passes over memory) instead of sorting the rows.
_SCRATCH_ROWS_PER_UPDATE = 64


def last_occurrences(
    xp: ModuleType, writer: type[_GenericWriter], rows: Array, n: int
) -> Array | None:
    """Positions in ``rows`` (entries in ``[0, n)``) of the last occurrence of each value.

    ``None`` when no value repeats, so callers skip the selection.
    """
    m = rows.shape[0]
    device = compat.device(rows)
    if writer.writes_scratch and n <= _SCRATCH_ROWS_PER_UPDATE * m:
        seen = writer.mark(xp, xp.zeros(n, dtype=xp.bool, device=device), rows)
        if int(xp.count_nonzero(seen)) == m:
            return None
        position_type = xp.int32 if m < 2**31 else xp.int64
        positions = xp.arange(m, dtype=position_type, device=device)
        latest = xp.full((n, 1), -1, dtype=position_type, device=device)
        latest = writer.combine(xp, latest, rows, positions[:, None], "max")
        is_last = xp.take(latest[:, 0], rows) == positions
        return xp.nonzero(is_last)[0]
    order = xp.argsort(rows, stable=True)
    ordered = xp.take(rows, order)
    ends = xp.searchsorted(ordered, ordered, side="right") - 1
    is_last = ends == xp.arange(m, dtype=ends.dtype, device=device)
    return None if bool(xp.all(is_last)) else order[is_last]


def _apply_in_passes(
    xp: ModuleType,
    writer: type[_GenericWriter],
    target: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    unique: bool,
) -> Array:
    """Apply a combiner as many times as the largest duplicate count, in order."""
    if unique:
        passes = [None]
    else:
        order = xp.argsort(rows, stable=True)
        ordered = xp.take(rows, order)
        firsts = xp.searchsorted(ordered, ordered, side="left")
        rank = xp.arange(ordered.shape[0], dtype=firsts.dtype, device=compat.device(rows))
        rank = rank - firsts
        passes = [order[rank == p] for p in range(int(xp.max(rank)) + 1)]
    for selection in passes:
        pass_rows = rows if selection is None else xp.take(rows, selection)
        pass_values = values if selection is None else xp.take(values, selection, axis=0)
        old = take_rows(xp, target, pass_rows)
        new = combiner.fn(old, pass_values)
        target = writer.set_unique(xp, target, pass_rows, xp.astype(new, target.dtype))
    return target


class _GenericWriter:
    """Pure Array API writes: build the result with searchsorted and where."""

    writes_scratch = False  # whether ``mark`` can write into a scratch array

    @staticmethod
    def mark(xp: ModuleType, seen: Array, rows: Array) -> Array:
        """Set ``seen[rows]`` to True in place."""
        seen[rows] = True
        return seen

    @staticmethod
    def set_unique(xp: ModuleType, target: Array, rows: Array, values: Array) -> Array:
        n, m = target.shape[0], rows.shape[0]
        device = compat.device(target)
        order = xp.argsort(rows)
        ordered = xp.take(rows, order)
        every_row = xp.arange(n, dtype=rows.dtype, device=device)
        position = xp.searchsorted(ordered, every_row)
        position = xp.minimum(position, xp.asarray(m - 1, dtype=position.dtype, device=device))
        hit = xp.take(ordered, position) == every_row
        source = xp.take(values, xp.take(order, position), axis=0)
        return xp.where(hit[:, None], source, target)

    @staticmethod
    def combine(xp: ModuleType, target: Array, rows: Array, values: Array, name: str) -> Any:
        return None


class _NumpyWriter(_GenericWriter):
    writes_scratch = True

    @staticmethod
    def set_unique(xp: ModuleType, target: Array, rows: Array, values: Array) -> Array:
        if target.shape[1] == 1:  # 1-D fancy assignment is faster than one of [n, 1] rows
            target[:, 0][rows] = values[:, 0]
        else:
            target[rows] = values
        return target

    @staticmethod
    def combine(xp: ModuleType, target: Array, rows: Array, values: Array, name: str) -> Any:
        import numpy as np

        ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[name]
        width = target.shape[1]
        if not target.flags.c_contiguous:
            ufunc.at(target, rows, values)
        elif width == 1:
            ufunc.at(target.reshape(-1), rows, values.reshape(-1))
        else:
            # ufunc.at is much faster on flat element indices than on rows; building them
            # for a cache-sized chunk of rows at a time is faster still and needs no big index
            flat, columns = target.reshape(-1), np.arange(width)
            chunk = max(1, _AT_CHUNK_ELEMENTS // max(width, 1))
            for start in range(0, rows.shape[0], chunk):
                elements = rows[start : start + chunk, None] * width + columns
                ufunc.at(flat, elements.reshape(-1), values[start : start + chunk].reshape(-1))
        return target


_AT_CHUNK_ELEMENTS = 2**16

_TORCH_REDUCE = {"mul": "prod", "min": "amin", "max": "amax"}


class _TorchWriter(_GenericWriter):
    writes_scratch = True

    @staticmethod
    def mark(xp: ModuleType, seen: Array, rows: Array) -> Array:
        # a Python True in seen[rows] = True becomes a tensor copied to the device
        return seen.index_fill_(0, rows, True)

    @staticmethod
    def set_unique(xp: ModuleType, target: Array, rows: Array, values: Array) -> Array:
        target.index_copy_(0, rows, values)
        return target

    @staticmethod
    def combine(xp: ModuleType, target: Array, rows: Array, values: Array, name: str) -> Any:
        if target.dtype == xp.bool:
            return None
        if name == "add":
            return target.index_add_(0, rows, values)
        index = rows[:, None].expand_as(values)
        reduce = _TORCH_REDUCE[name]
        return target.scatter_reduce_(0, index, values, reduce=reduce, include_self=True)


class _JaxWriter(_GenericWriter):
    @staticmethod
    def set_unique(xp: ModuleType, target: Array, rows: Array, values: Array) -> Array:
        return target.at[rows].set(values, unique_indices=True, mode="promise_in_bounds")

    @staticmethod
    def combine(xp: ModuleType, target: Array, rows: Array, values: Array, name: str) -> Any:
        method = {"add": "add", "mul": "multiply", "min": "min", "max": "max"}[name]
        return getattr(target.at[rows], method)(values, mode="promise_in_bounds")


class _CupyWriter(_NumpyWriter):
    # cupy's ufunc.at runs on these dtypes only (float16 for add alone); others take passes
    _AT_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")

    @staticmethod
    def combine(xp: ModuleType, target: Array, rows: Array, values: Array, name: str) -> Any:
        import cupy

        dtypes = _CupyWriter._AT_DTYPES + (("float16",) if name == "add" else ())
        ufunc = {"add": cupy.add, "min": cupy.minimum, "max": cupy.maximum}.get(name)
        if ufunc is None or target.dtype.name not in dtypes:
            return None
        ufunc.at(target, rows, values)
        return target


_WRITERS: dict[Backend, type[_GenericWriter]] = {
    Backend.NUMPY: _NumpyWriter,
    Backend.TORCH: _TorchWriter,
    Backend.JAX: _JaxWriter,
    Backend.CUPY: _CupyWriter,
}


def write_rows(
    xp: ModuleType,
    x: Array,
    rows_shape: tuple[int, int],
    rows: Array,
    values: Array,
    combiner: Combiner,
    *,
    in_place: bool,
    unique: bool = False,
) -> Array:
    """Put rows into ``x`` seen as a 2-D array of ``rows_shape``; the result has x's shape.

    With ``in_place=True`` the result is ``x`` itself, written even where the 2-D view had
    to be a copy (non-contiguous arrays) or the backend only builds new arrays (generic);
    otherwise ``x`` is left untouched.
    """
    work = x if in_place else copy_array(xp, x)
    view = xp.reshape(work, rows_shape)
    written = put_rows(xp, view, rows, values, combiner, unique=unique)
    if not in_place:
        return xp.reshape(written, x.shape)
    if not shares_memory(written, x):
        x[...] = xp.reshape(written, x.shape)
    return x


def copy_array(xp: ModuleType, x: Array) -> Array:
    """A new array with the values of ``x`` (writable where the backend allows)."""
    return xp.asarray(x, copy=True)


def assign_window(
    xp: ModuleType, x: Array, key: tuple[slice, ...], values: Array, *, in_place: bool
) -> Array:
    """``x[key] = values`` for a basic (slice) ``key``, into ``x`` itself or into a copy.

    JAX arrays cannot be written; they get a new array through ``.at[key].set``.
    """
    if backend_of(x) is Backend.JAX:
        return x.at[key].set(values)
    target = x if in_place else copy_array(xp, x)
    target[key] = values
    return target
