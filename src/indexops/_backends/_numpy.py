"""NumPy: values always on the host, fancy assignment and ``ufunc.at``."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal

import numpy as np

from .._errors import type_error
from .._plan.cache import static_cache
from .._typing import Array
from .._validate.combiners import Named
from . import _kept_memory
from ._base import repeats_elements
from ._dtypes import signed_of
from ._host import (
    KERNEL_MIN_ELEMENTS,
    UFUNCS,
    HostKernels,
    all_in_range,
    combine_in_order,
    count_distinct,
    holds_zero,
    kernels_expected,
    quiet_arithmetic,
    rows_increase,
    take_large_rows,
    takes_large_rows,
    zero_rows,
)

# combine_elements' writes: add and multiply by ufunc.at, the others in order
_UFUNC_AT_COMBINES = frozenset({Named.ADD, Named.MUL})
_IN_ORDER_COMBINES: frozenset[Named | None] = frozenset({None, Named.MIN, Named.MAX})
_AT_COMBINES = _UFUNC_AT_COMBINES | _IN_ORDER_COMBINES

# ufunc.at is much faster on flat element indices than on rows; building them for a
# cache-sized chunk of rows at a time is faster still and needs no index the size of values
_AT_CHUNK_ELEMENTS = 2**16

# ...but up to this many elements ufunc.at on the rows themselves costs less than building
# element indices or integer sums (benchmarks/HISTORY.md, "Thresholds of the host paths")
_AT_ROWS_MAX_ELEMENTS = 2**8

# Adding complex numbers adds their two float halves, each exactly as a float add would: so
# pairs of columns viewed as one complex element give bit for bit the sums of ufunc.at on
# the floats, with half the elements (ufunc.at's cost is per element)
_ADD_IN_PAIRS: dict[np.dtype, np.dtype] = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}

# Float add as a sparse-matrix product (scipy, imported when first needed): a compiled loop
# of one row add per update, where ufunc.at pays per element; it pays for scipy's call and
# its dense [n, d] result from k*d = 2**15 updated elements, with d >= 3 and no more table
# rows n than updates k (benchmarks/HISTORY.md, "Thresholds of the host paths")
_SPARSE_MIN_ELEMENTS = 2**15
_SPARSE_MIN_WIDTH = 3

# Rows proven distinct are combined by one gather, ufunc and assignment up to this many
# updated elements: 0.54-0.76x the time of the routes for any rows from 4096 to 65536
# elements; from 2**18 to 2**22 add gained nothing (0.98-1.17x) and max less (0.59-0.98x)
# (benchmarks/README.md, "Issue 35: combines of rows proven distinct, at several sizes")
_DISTINCT_MAX_ELEMENTS = 2**17

# Element gathers of more than 4 blocks take their flat element numbers in blocks of this
# many elements along the leading dim: the numbers stay in cache between their sum and the
# take (0.43-0.81x the time of one pass each from 2**22 elements; benchmarks/HISTORY.md,
# "Thresholds of the host paths")
_ELEMENT_BLOCK = 2**18

# Integer add, min and max by rows: each written row's updates are combined first (in row
# blocks of this many elements, cache-sized), then once with the table by a fancy index
_SUM_BLOCK_ELEMENTS = 2**16
# ... until fewer rows of a block than this many elements are still combining: their
# remaining updates are reduced at once (rows repeated thousands of times, skewed rows)
_RUN_TAIL_ELEMENTS = 2**12

# ...for rows of at least this many elements: narrower, ufunc.at on element indices is
# faster; for min and max also from this many updated elements (below, the sort costs
# more than it saves; benchmarks/HISTORY.md, "Thresholds of the host paths")
_SUM_MIN_WIDTH = 32
_MIN_MAX_RUNS_MIN_ELEMENTS = 2**18


class NumpyBackend(HostKernels):
    name = "numpy"
    short_keys = True
    gathers_elements = True

    def device(self, x: Array) -> str:
        return "cpu"

    def check_arrays(self, op: str, arrays: dict[str, Array]) -> None:
        """Refuse the ndarray subclasses whose operators mean something else: a masked
        array's mask would be dropped by a write and kept by a read, and ``np.matrix``
        keeps every result 2-D. Other subclasses (``np.memmap``) are plain arrays here."""
        masked = getattr(sys.modules.get("numpy.ma"), "MaskedArray", ())
        for name, x in arrays.items():
            if isinstance(x, (np.matrix, masked)):
                raise type_error(
                    op,
                    name,
                    f"a {type(x).__module__}.{type(x).__name__}",
                    "a numpy.ndarray: masks and matrix semantics are not kept, so they are "
                    "refused; pass np.asarray(x) (for a masked array, x.filled(value) or "
                    "x.data, with the mask handled apart)",
                )

    def why_not_writable(self, x: Array) -> str | None:
        if x.flags.writeable:
            return None
        if repeats_elements(x.shape, x.strides):
            return "it is a broadcast view (np.broadcast_to's results are read-only)"
        return "it is a read-only NumPy array (flags.writeable is False)"

    def shares_memory(self, a: Array, b: Array) -> bool:
        base_a, base_b = a.base, b.base
        if base_a is None and base_b is None:  # each owns its memory: no bounds to compare
            return a is b
        if base_a is b or base_b is a:  # a view of the other (a reshape's): no bounds either
            return True
        return bool(np.may_share_memory(a, b))

    def values_on_host(self, x: Array) -> bool:
        return self.host_reads

    def host_arrays(self, *arrays: Array) -> list[np.ndarray] | None:
        return list(arrays) if self.host_reads else None  # (values_on_host, asked once)

    def to_numpy(self, x: Array) -> Array:
        return x

    def host_ints(self, x: Array) -> tuple[int, ...]:
        return tuple(int(v) for v in x.tolist())

    def copy(self, x: Array) -> Array:
        return _kept_memory.copy(x)

    # NumPy's own functions: array-api-compat's wrappers cost microseconds per call

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return np.arange(n, dtype=dtype)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return np.full(shape, value, dtype=dtype)

    def ints(self, values: list[int], dtype: Any, like: Array) -> Array:
        return np.array(values, dtype=dtype)

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        if low is not None:
            x = np.maximum(x, low)
        return x if high is None else np.minimum(x, high)

    def all_in_range(self, x: Array, high: int) -> bool:
        return all_in_range(x, high)

    def holds_zero(self, x: Array) -> bool:
        return holds_zero(x)

    def zero_rows(self, x: Array) -> Array | None:
        return zero_rows(x)

    def reshape(self, x: Array, shape: tuple[int, ...]) -> Array:
        return x if x.shape == shape else x.reshape(shape)

    def take_rows(self, table: Array, rows: Array) -> Array:
        return table.take(rows, axis=0)  # guard: take raises for a row outside

    def take_rows_clipped(self, table: Array, rows: Array) -> Array:
        # take clips as it reads: as fast as take, where a clip first costs 3-24 % (and
        # 2 us of the 5 of an 8-row gather)
        return table.take(rows, axis=0, mode="clip")  # (the method: np.take wraps it)

    # A signature of large takes takes rows through take_large_rows (the compiled row
    # gather, kept memory), which tests each call's arrays: 0.2-0.6 us that small calls do
    # not pay (benchmarks/README.md, "Issue 33: large results into kept memory")

    def clipped_row_take(self, elements: int) -> Callable[[Array, Array], Array]:
        if not takes_large_rows(elements):
            return self.take_rows_clipped
        return functools.partial(take_large_rows, mode="clip")

    def row_take(self, elements: int) -> Callable[[Array, Array], Array]:
        if not takes_large_rows(elements):
            return self.take_rows
        return functools.partial(take_large_rows, mode="raise")

    def checked_row_take(self, elements: int) -> Callable[..., Array | None] | None:
        if not takes_large_rows(elements):
            return None
        return functools.partial(self.take_rows_checked, take=take_large_rows)

    def element_combines(self, count: int) -> frozenset[Named | None]:
        """Where :meth:`takes_elements`: replace, min and max (the kernels' pass gives
        IEEE-754's signed zeros; without it ``compare_at``, which signs zeros after its
        ``ufunc.at``), and add and multiply below the kernels' size: ``ufunc.at`` costs
        more from there (1.08 of them at 1,536 elements, 2.0 at 6,144), where the
        replace costs 0.43-0.84 of them up to 4,096 (benchmarks/README.md, "Issue 35:
        the idiom's replace in one pass")."""
        if not self.takes_elements(count):
            return frozenset()
        return _AT_COMBINES if count < KERNEL_MIN_ELEMENTS else _IN_ORDER_COMBINES

    def take_elements(
        self, x: Array, index: tuple[Array, ...], values_first: bool = False
    ) -> Array | None:
        # NumPy's own indexing raises for an entry outside, in one pass, at once (the
        # Ellipsis: a 0-d array in x's dtype where the arrays are 0-d, never a scalar);
        # NumPy's values are on the host but in the test hook device_paths()
        if not self.host_reads:
            return None
        key = (*index, Ellipsis)
        try:
            return x[key]
        except IndexError:
            return None

    def combine_elements(
        self, x: Array, index: tuple[Array, ...], values: Array, how: Named | None, copy: bool
    ) -> Array | None:
        # ufunc.at checks every entry before it writes (an IndexError leaves x as it was)
        # and applies repeated elements in order (add and multiply: faster than the
        # kernels' pass in small calls); the replace and min and max: _host.combine_in_order
        # (host_reads: as take_elements)
        if not self.host_reads:
            return None
        if how not in _UFUNC_AT_COMBINES:
            return combine_in_order(x, index, values, how, copy)
        out = _kept_memory.copy(x, order="C") if copy else x
        try:
            UFUNCS[how].at(out, index, values)
        except IndexError:
            return None
        return out

    def take_rows_checked(
        self,
        x: Array,
        rows: Array,
        values_first: bool = False,
        take: Callable[[Array, Array, Literal["raise"]], Array] | None = None,
    ) -> Array | None:
        # take raises for a row outside, in one pass, at once: 0.26 us for 8 rows of 16, where
        # x[rows] takes 1.0 and a list read of the rows 0.55; the raise is a branch on
        # the rows' values, taken only where they are on the host. (take: kept memory's,
        # for a signature of large reads, checked_row_take)
        if not self.values_on_host(rows):
            return None
        try:
            return x.take(rows, axis=0) if take is None else take(x, rows, "raise")
        except IndexError:
            return None

    def take_along_axis_natively(self, x: Array, indices: Array, axis: int) -> Array:
        """``take`` of the flat element numbers of a C-contiguous ``x`` (faster than
        ``np.take_along_axis``'s fancy index), block by block along the leading dim, else
        ``np.take_along_axis``. Guards: both
        raise for an element outside ``x``; an entry outside its dim (a broken promise)
        reads another element of ``x``, never past it."""
        if not x.flags.c_contiguous:
            return np.take_along_axis(x, indices, axis)
        strides = [math.prod(x.shape[d + 1 :]) for d in range(x.ndim)]
        offsets: Any = np.zeros((1,) * x.ndim, dtype=np.intp)  # of each position along the
        for d in range(x.ndim):  # other dims, broadcast: no index size
            if d != axis and x.shape[d] > 1:
                along = [1] * x.ndim
                along[d] = x.shape[d]
                step = np.arange(0, x.shape[d] * strides[d], strides[d]).reshape(along)
                offsets = offsets + step
        flat, count = x.reshape(-1), indices.shape[0]
        block = max(1, _ELEMENT_BLOCK // max(1, math.prod(indices.shape[1:])))
        if indices.size <= 4 * _ELEMENT_BLOCK or count <= block:
            return np.take(flat, _flat_numbers(indices, strides[axis], offsets))
        result = _kept_memory.empty(indices.shape, x.dtype)
        for start in range(0, count, block):
            part = slice(start, start + block)
            shift = offsets[part] if offsets.shape[0] > 1 else offsets
            result[part] = np.take(flat, _flat_numbers(indices[part], strides[axis], shift))
        return result

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        # guards: fancy assignment checks each row, and copies values that overlap table
        if table.shape[1] == 1:  # 1-D fancy assignment is faster than one of [n, 1] rows
            table[:, 0][rows] = values[:, 0]
        else:
            table[rows] = values
        return table

    def assign_window(
        self, x: Array, key: tuple[Any, ...], values: Array, *, in_place: bool
    ) -> Array:
        # NumPy's assignment reads overlapping values before it writes: no check needed
        target = x if in_place else _kept_memory.copy(x)
        target[key] = values
        return target

    def signed_view(self, x: Array) -> Array | None:
        signed = signed_of(x.dtype, self.finfo(x.dtype).bits)
        return None if signed is None else x.view(signed)

    def rows_increase(self, rows: Array) -> bool:
        return rows_increase(rows)

    def count_distinct_rows(self, rows: Array, n: int) -> int:
        return count_distinct(rows, n)

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        """Combine with ``ufunc.at``, or a faster route of the same result. Guards: each
        route reads ``rows`` and ``values`` as they were before the call (copied where
        they may share memory with ``table``: later chunks read them after earlier ones
        wrote), and hands rows to an unchecked primitive only after :func:`all_in_range`
        (``ufunc.at``, ``take`` and fancy indexing check bounds themselves). Inexact
        types without NumPy's warnings of overflow and NaN (:func:`quiet_arithmetic`)."""
        ufunc = UFUNCS[how]
        if not _has_at_loop(ufunc, table.dtype):
            return None
        if table.dtype.kind not in "iub":  # (ml_dtypes' floats too)
            with quiet_arithmetic():
                return self._combined(table, rows, values, how, ufunc)
        return self._combined(table, rows, values, how, ufunc)

    def _combined(
        self, table: Array, rows: Array, values: Array, how: Named, ufunc: np.ufunc
    ) -> Array:
        rows, values = _unshared(table, rows), _unshared(table, values)
        if _by_runs(table, rows, values, how):
            return _combine_by_runs(table, rows, values, ufunc)
        if how is Named.ADD and _sparse_product_pays(table, rows, values):
            return _add_by_sparse_product(table, rows, values)
        if not table.flags.c_contiguous or rows.shape[0] * table.shape[1] <= _AT_ROWS_MAX_ELEMENTS:
            ufunc.at(table, rows, values)
            return table
        # element indices of rows outside may wrap into the table (a value unspecified by
        # the broken promise), never past it: ufunc.at checks every index
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

    def _writes_distinct_natively(self, dtype: Any, how: Named | None, count: int) -> bool:
        """Replace, and the combiners whose ufunc has a loop for ``dtype``."""
        return how is None or _has_at_loop(UFUNCS[how], np.dtype(dtype))

    def write_distinct_rows(
        self, table: Array, rows: Array, values: Array, how: Named | None
    ) -> Array:
        """Fancy assignment, or :meth:`_combine_distinct`'s gather, ufunc and assignment."""
        if how is None:
            return self._set(table, rows, values)
        gathered = table.take(rows, axis=0)
        UFUNCS[how](gathered, values, out=gathered)
        return self._set(table, rows, gathered)

    def _combine_distinct(
        self, table: Array, rows: Array, values: Array, how: Named
    ) -> Array | None:
        """``table[rows] = ufunc(table[rows], values)``: for rows that do not repeat, the
        result of ``ufunc.at`` (the same elementwise loop, its arguments in the same
        order: NaN, signed zeros and integer wrap alike) in one gather, one ufunc and one
        assignment (1.8 against 3.3 us for 8 rows of 16 float64 maximums). The updates
        are read before the write (into the gathered rows, a new array); the rows, which
        the assignment reads, are copied where they may share memory with ``table``.
        Up to :data:`_DISTINCT_MAX_ELEMENTS` updated elements; more give ``None`` (the
        caller's routes, which combine each element in one pass). Guards: ``take`` and fancy
        assignment check each row. A repeated row (a broken ``unique_indices`` promise)
        gets one of its results, as ``set`` does."""
        ufunc = UFUNCS[how]
        if values.dtype != table.dtype or not _has_at_loop(ufunc, table.dtype):
            return None  # the caller's ways, as for ufunc.at (its casts, its passes)
        if values.size > _DISTINCT_MAX_ELEMENTS:
            return None
        return self.write_distinct_rows(table, _unshared(table, rows), values, how)


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


def _flat_numbers(indices: Array, stride: int, offsets: Array) -> Array:
    """The flat element numbers of ``indices`` along a dim of ``stride``, at ``offsets``."""
    return (indices if stride == 1 else indices * stride) + offsets


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


def _unshared(table: Array, x: Array) -> Array:
    """``x``, or a copy of it where it may share memory with ``table``."""
    return np.array(x, copy=True) if np.may_share_memory(table, x) else x


def _by_runs(table: Array, rows: Array, values: Array, how: Named) -> bool:
    """Whether :func:`_combine_by_runs` runs this combine: integer add, or min or max of
    real numbers, in wide rows, more than a small combine, every row in the table (guard:
    one reduction; its last step is a checked fancy index, but a promise broken by a row
    outside still goes to ``ufunc.at``, which raises as before)."""
    kind, count, width = table.dtype.kind, rows.shape[0], table.shape[1]
    if how is Named.ADD:
        fits = kind in "iu" and count * width > _AT_ROWS_MAX_ELEMENTS
    else:
        fits = how in (Named.MIN, Named.MAX) and kind in "iuf"
        fits = fits and count * width >= _MIN_MAX_RUNS_MIN_ELEMENTS
    return (
        fits
        and values.dtype == table.dtype
        and width >= _SUM_MIN_WIDTH
        and all_in_range(rows, table.shape[0] - 1)
    )


def _sparse_product_pays(table: Array, rows: Array, values: Array) -> bool:
    """Whether :func:`_add_by_sparse_product` can run this add, and faster than ufunc.at
    (rows outside the table go to ufunc.at, which raises or wraps as before)."""
    count, width = rows.shape[0], table.shape[1]
    return (
        table.dtype in _ADD_IN_PAIRS
        and values.dtype == table.dtype
        and table.flags.c_contiguous
        and width >= _SPARSE_MIN_WIDTH
        and count * width >= _SPARSE_MIN_ELEMENTS
        and table.shape[0] <= count
        and _scipy_sparse() is not None
        # (the kernels sum in input order: calls before their load must round as they do)
        and not kernels_expected()
        # scipy does not check: a row outside the table would write outside its memory
        and all_in_range(rows, table.shape[0] - 1)
    )


@functools.cache
def _scipy_sparse() -> ModuleType | None:
    """``scipy.sparse``, imported on first use (not with indexops); ``None`` without it."""
    try:
        import scipy.sparse
    except ImportError:
        return None
    return scipy.sparse


def _add_by_sparse_product(table: Array, rows: Array, values: Array) -> Array:
    """``np.add.at(table, rows, values)`` for floats: the updates of each row summed by a
    sparse-matrix product, then added once.

    Column ``j`` of the [n, k] matrix holds one entry, at row ``rows[j]``, so the product
    sums each row's updates in their order; adding the sums is a reassociation of the
    sequence. The entries are -1 and the negated sums are subtracted, so that a -0.0 not
    written, or written with -0.0 only, stays -0.0: scipy's sums start from +0.0, and
    ``t - (+0.0)`` is ``t`` where ``t + (+0.0)`` turns -0.0 into +0.0. One difference in
    signed zeros remains: a -0.0 whose updates sum to exactly zero, not all of them -0.0
    (a single +0.0, or x and -x), stays -0.0 where the sequence gives +0.0. Multiplying
    by -1 is exact, infinities and NaNs included; complex numbers must not come here
    (0 * inf is NaN in the imaginary part). Extra memory: the [n, d] product and 12-24
    bytes per update row.
    """
    count = rows.shape[0]
    sparse = _scipy_sparse()
    assert sparse is not None
    matrix = sparse.csc_array(
        (np.full(count, -1, dtype=table.dtype), rows, np.arange(count + 1)),
        shape=(table.shape[0], count),
    )
    table -= matrix @ values
    return table


def _combine_by_runs(table: Array, rows: Array, values: Array, ufunc: np.ufunc) -> Array:
    """``ufunc.at(table, rows, values)`` a row at a time instead of an element, for integer
    add (wrapping included), min and max.

    The updates of each written row are combined first, then once with the table: another
    order of the same operations, with the same result, because these are associative
    and commutative (a NaN propagates in any order; the sign of a zero min or max is the
    caller's to fix, as for ``ufunc.at``, which keeps one or the other by argument order).
    The combines go by occurrence: the first update of every row, with the second of rows
    written at least twice, and so on. The written rows are the runs of a stable sort of
    ``rows`` (all in ``[0, n)``: the caller checks), so the work and scratch grow with the
    updates, not the table; the runs are taken most repeated first, so that the rows
    still combining at each occurrence are a prefix, combined in place.
    """
    order = _stable_order(rows, table.shape[0])
    ordered = rows[order]
    # the runs of equal rows in sorted order, not a count per table row: the cost is in
    # the updates, not the table
    firsts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(firsts, append=ordered.shape[0])
    by_count = _descending_order(counts)
    counts, firsts = counts[by_count], firsts[by_count]
    written = ordered[firsts]
    block = max(1, _SUM_BLOCK_ELEMENTS // max(1, values.shape[1]))
    for start in range(0, written.shape[0], block):
        part = slice(start, start + block)
        part_counts, part_firsts = -counts[part], firsts[part]  # negated: ascending
        combined = np.take(values, order[part_firsts], axis=0)
        occurrence = 1
        while again := int(np.searchsorted(part_counts, -occurrence)):  # counts > occurrence
            if again * values.shape[1] < _RUN_TAIL_ELEMENTS:  # a few long runs left
                rest = _rest_of_runs(
                    values, order, part_firsts[:again], -part_counts[:again], occurrence, ufunc
                )
                ufunc(combined[:again], rest, out=combined[:again])
                break
            next_values = np.take(values, order[part_firsts[:again] + occurrence], axis=0)
            ufunc(combined[:again], next_values, out=combined[:again])
            occurrence += 1
        targets = written[part]
        table[targets] = ufunc(table[targets], combined)
    return table


def _rest_of_runs(
    values: Array, order: Array, firsts: Array, counts: Array, skip: int, ufunc: np.ufunc
) -> Array:
    """Each run's updates after its first ``skip`` (the runs start at ``firsts`` in
    ``order`` and are longer than ``skip``), combined by one ``ufunc.reduceat``: a pass
    per occurrence would cost a Python step for each update of the longest run."""
    lengths = counts - skip
    starts = np.concatenate(([0], np.cumsum(lengths[:-1])))
    positions = np.repeat(firsts + skip - starts, lengths) + np.arange(int(lengths.sum()))
    return ufunc.reduceat(np.take(values, order[positions], axis=0), starts, axis=0)


def _descending_order(counts: Array) -> Array:
    """The order that sorts the positive ``counts`` from the largest down (a radix sort of
    16-bit keys where they fit)."""
    top = int(counts.max())
    if top >= 2**16:
        return np.argsort(-counts, kind="stable")
    return np.argsort((top - counts).astype(np.uint16), kind="stable")


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
