"""NumPy: values always on the host, fancy assignment and ``ufunc.at``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._cache import static_cache
from .._combiners import Named
from .._typing import Array
from ._base import NativeScatter

_UFUNCS = {Named.ADD: np.add, Named.MUL: np.multiply, Named.MIN: np.minimum, Named.MAX: np.maximum}

# ufunc.at is much faster on flat element indices than on rows; building them for a
# cache-sized chunk of rows at a time is faster still and needs no index the size of values
_AT_CHUNK_ELEMENTS = 2**16

# Adding complex numbers adds their two float halves, each exactly as a float add would: so
# pairs of columns viewed as one complex element give bit for bit the sums of ufunc.at on
# the floats, with half the elements (ufunc.at's cost is per element): 1.05-1.35x faster
# than ufunc.at on the floats in workload 2's shapes at 1/16, 1/4 and full size (two runs)
_ADD_IN_PAIRS: dict[np.dtype, np.dtype] = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}

# Integer add by rows: each written row's updates are summed (in row blocks of this many
# elements, cache-sized), then every sum is added once with a fancy-index add
_SUM_BLOCK_ELEMENTS = 2**16


class NumpyBackend(NativeScatter):
    name = "numpy"

    def device(self, x: Array) -> str:
        return "cpu"

    def writable(self, x: Array) -> bool:
        return bool(x.flags.writeable)

    def shares_memory(self, a: Array, b: Array) -> bool:
        return bool(np.may_share_memory(a, b))

    def _values_on_host(self, x: Array) -> bool:
        return True

    def to_numpy(self, x: Array) -> Array:
        return x

    def host_ints(self, x: Array) -> tuple[int, ...]:
        return tuple(int(v) for v in x.tolist())

    def copy(self, x: Array) -> Array:
        return np.array(x, copy=True)

    # NumPy's own functions: array-api-compat's wrappers cost microseconds per call

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return np.arange(n, dtype=dtype)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return np.full(shape, value, dtype=dtype)

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        if low is not None:
            x = np.maximum(x, low)
        return x if high is None else np.minimum(x, high)

    def take_rows(self, table: Array, rows: Array) -> Array:
        return np.take(table, rows, axis=0)

    def take_rows_clipped(self, table: Array, rows: Array) -> Array:
        # take clips as it reads: as fast as take, where a clip first costs 3-24 % (and
        # 2 us of the 5 of an 8-row gather)
        return np.take(table, rows, axis=0, mode="clip")

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        if table.shape[1] == 1:  # 1-D fancy assignment is faster than one of [n, 1] rows
            table[:, 0][rows] = values[:, 0]
        else:
            table[rows] = values
        return table

    def count_distinct_rows(self, rows: Array, n: int) -> int:
        return count_distinct(rows, n)

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        ufunc = _UFUNCS[how]
        if not _has_at_loop(ufunc, table.dtype):
            return None
        if how is Named.ADD and table.dtype.kind in "iu" and values.dtype == table.dtype:
            return _add_integer_rows(table, rows, values)
        if not table.flags.c_contiguous:
            ufunc.at(table, rows, values)
            return table
        flat, width, pair = table.reshape(-1), table.shape[1], _pair_dtype(table, values, how)
        if pair is not None:
            flat, width = flat.view(pair), width // 2
        if width == 1:
            ufunc.at(flat, rows, _as_elements(values, pair))
            return table
        columns = np.arange(width)
        chunk = max(1, _AT_CHUNK_ELEMENTS // width)
        for start in range(0, rows.shape[0], chunk):
            elements = rows[start : start + chunk, None] * width + columns
            ufunc.at(flat, elements.reshape(-1), _as_elements(values[start : start + chunk], pair))
        return table


def count_distinct(rows: Array, n: int) -> int:
    """How many different values the 1-D ``rows`` (all in ``[0, n)``) hold: a 1-D bitmap,
    set by fancy assignment and counted. Against the [n, 1] table written as rows of True
    (m = n / 4 random rows, n = 1M, 4M, 16M): 0.52 / 1.9-3.2 / 18-24 ms against 0.91 /
    4.4 / 39 ms; a bitmap kept between calls and ``np.put`` were slower."""
    bitmap = np.zeros(n, dtype=np.bool_)
    bitmap[rows] = True
    return int(np.count_nonzero(bitmap))


@static_cache(maxsize=64)
def _has_at_loop(ufunc: np.ufunc, dtype: np.dtype) -> bool:
    """Whether ``ufunc.at`` runs on ``dtype`` (tried once on a scratch element). Where it
    does not, the caller applies the combiner pass by pass, one occurrence of each row per
    pass, rounding to ``dtype`` after each: the result of one update at a time."""
    scratch = np.zeros(1, dtype=dtype)
    try:
        ufunc.at(scratch, np.zeros(1, dtype=np.intp), scratch)
    except TypeError:  # NumPy's UFuncTypeError: no loop for this dtype
        return False
    return True


def _pair_dtype(table: Array, values: Array, how: Named) -> np.dtype | None:
    """The complex dtype to add ``table``'s columns two at a time in, if it can."""
    if how is not Named.ADD or table.shape[1] % 2 or values.dtype != table.dtype:
        return None
    return _ADD_IN_PAIRS.get(table.dtype)


def _as_elements(values: Array, pair: np.dtype | None) -> Array:
    """``values`` flat, their column pairs as complex elements where ``pair`` is given."""
    if pair is None:
        return values.reshape(-1)
    return np.ascontiguousarray(values).view(pair).reshape(-1)


def _add_integer_rows(table: Array, rows: Array, values: Array) -> Array:
    """``np.add.at(table, rows, values)`` for integers, a row at a time instead of an element.

    The updates of each written row are summed first, then added once: a different order
    of the additions, with the same result, because integer addition (wrapping included)
    is associative. The sums are built by occurrence: the first update of every row, plus
    the second of rows written at least twice, and so on. Against ufunc.at on workload 2's
    shapes in int32 (4 runs at 1/16, 1/4 and full size, a busy machine): 1.2-3.5x faster
    in 11 of the 12, 0.8x once (at 1/4); 4.2 MiB extra at full size.
    """
    order = _stable_order(rows, table.shape[0])
    counts = np.bincount(rows, minlength=table.shape[0])
    written = np.flatnonzero(counts)
    counts = counts[written]
    firsts = np.cumsum(counts) - counts  # where each written row's updates start in order
    block = max(1, _SUM_BLOCK_ELEMENTS // max(1, values.shape[1]))
    for start in range(0, written.shape[0], block):
        part = slice(start, start + block)
        part_counts, part_firsts = counts[part], firsts[part]
        sums = np.take(values, order[part_firsts], axis=0)
        again, occurrence = np.flatnonzero(part_counts > 1), 1
        while again.shape[0]:
            sums[again] += np.take(values, order[part_firsts[again] + occurrence], axis=0)
            occurrence += 1
            again = again[part_counts[again] > occurrence]
        table[written[part]] += sums
    return table


def _stable_order(rows: Array, n: int) -> Array:
    """``np.argsort(rows, kind="stable")`` for rows in ``[0, n)``: radix sorts of 16-bit
    digits where they fit (NumPy sorts 16-bit integers by radix, several times faster)."""
    if n > 2**32:
        return np.argsort(rows, kind="stable")
    order = np.argsort((rows & 0xFFFF).astype(np.uint16), kind="stable")
    if n > 2**16:
        high = (rows[order] >> 16).astype(np.uint16)
        order = order[np.argsort(high, kind="stable")]
    return order
