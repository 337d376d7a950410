"""Compiled host kernels: one loop per op, with numba (the ``fast`` extra).

Imported only by the loader's thread (``_loader.py``); callers ask
:func:`indexops._backends._host.kernels`, which returns ``None`` until the load has ended
and where numba is missing or fails to import: they then take their other paths.

Each kernel is a loop template and a combiner (numpy_groupies' ``aggregate_numba``
design): the template walks the updates once, in their order, and checks every index
against its dim inside the loop, so that no promise of the caller (``promise_in_bounds``,
``unique_indices``) can make it read or write outside an array; the combiner says how an
update meets the value there. One entry point per template and combiner is compiled per
dtype on its first call and kept in numba's cache on disk (``__pycache__`` beside this
file), so a process pays for the signatures it uses only.

The entry points return the position of the first index outside its dim (the loop stops
there; what it wrote before stays written) or -1; the wrappers below turn that into the
caller's answer. A row write into the caller's array checks every row before its first
write where a row may stop it, so that a stop leaves the array as it was, and writes
nothing where its rows or updates share memory with the table (:data:`SHARED`: the
wrapper copies them and runs it again), so that updates are read before the write.

Each entry point also takes the range ``[lo, hi)`` of the targets it owns (table rows;
for the element gather, rows of the dims before its axis): large calls run one range per
thread (``_threads.run_parts``; a row write only where the count is set:
``_threads.threads_for``), each thread applying the updates of its own targets in input
order, so the result is bit-identical to one thread's. A row write checks every
row against the whole table before it looks at its owner, so every thread stops at the
same first row outside. The element gather writes a large result by non-temporal stores
(:data:`STREAM_MIN_BYTES`), which each share fences before it returns.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import platform
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core import types as numba_types
from numba.extending import intrinsic

from .._errors import index_out_of_bounds
from .._typing import Array
from .._validate.combiners import Named
from . import _kept_memory
from ._threads import run_parts, threads_for

_inline = numba.njit(inline="always")
_kernel = numba.njit(cache=True, nogil=True)

# -- combiners: how an update meets the value there -------------------------------------------


@_inline
def _replace(old: Any, new: Any) -> Any:
    return new


@_inline
def _add(old: Any, new: Any) -> Any:
    return old + new


@_inline
def _multiply(old: Any, new: Any) -> Any:
    return old * new


# IEEE-754 minimum and maximum (StableHLO's min and max): NaN propagates, and of two zeros
# the negative one is the minimum; written as selects, which the compiler keeps branch-free


@_inline
def _minimum(old: Any, new: Any) -> Any:
    tie = new if math.copysign(1.0, old) > 0 else old  # equal values: only zeros differ
    result = new if new < old else old
    result = tie if new == old else result
    return new if new != new else result  # a NaN update (a NaN old stays: no order holds)


@_inline
def _maximum(old: Any, new: Any) -> Any:
    tie = new if math.copysign(1.0, old) < 0 else old
    result = new if new > old else old
    result = tie if new == old else result
    return new if new != new else result


# what a kernel does with an index outside its dim (after counting it from the end)
CLIP, FILL, STOP, PAD = 0, 1, 2, 3
_OUTSIDE = {"clip": CLIP, "fill": FILL, "stop": STOP, "drop": FILL, "padding": PAD}
# (a write skips a FILL index.) Added to the code of a write into the caller's array
# that may stop (STOP, PAD): every index is checked before the first write, so that a stop
# leaves the array as it was
CHECK_FIRST = 4


@_inline
def _position(k: Any, n: int, shift: int, outside: int) -> int:
    """Where a kernel reads or writes index ``k`` of a dim of size ``n``: in ``[0, n)``,
    or, for an index outside, -1 (a gather reads the fill value, a write skips it) or -2
    (stop). (``PAD``, a row write's alone, is :func:`_rows_loop`'s: a branch for it
    here slowed the element scatter's loop by a sixth.)

    Branch-free in the common case: ``shift`` (``n`` or 0) is added by a mask of the sign
    bit and the bounds are one unsigned comparison (a branch on the sign of random
    indices cost 5x the loop)."""
    k = np.int64(k)
    k += shift & (k >> 63)
    if np.uint64(k) < np.uint64(n):  # negative k too: above every n
        return k
    if outside == FILL:
        return -1
    if outside == STOP or n == 0:
        return -2
    return 0 if k < 0 else n - 1


@_kernel  # (not inlined in the row loop: there, it slowed the loop after it)
def _refused(table: Array, rows: Array, values: Array, shift: int, outside: int) -> int:
    """What a row write must not start, or -1: :data:`SHARED` where ``rows`` or
    ``values`` may share memory with ``table``; with :data:`CHECK_FIRST` added to
    ``outside``, the position of the first row that stops it (:func:`_first_stop`)."""
    if _overlaps(table, values) or _overlaps(table, rows):
        return SHARED
    mode = outside % CHECK_FIRST
    return -1 if outside == mode else _first_stop(rows, table.shape[0], shift, mode)


@_kernel  # (not inlined in the row loop: there, it slowed the loop after it by half)
def _first_stop(indices: Array, n: int, shift: int, outside: int) -> int:
    """The position in the 1-D ``indices`` of the first that stops a loop over a dim of
    size ``n`` (:func:`_position`), or -1: one pass without an early exit, which
    vectorizes, finds whether any index is outside (after ``shift``), and only then a
    second one looks for the first that stops."""
    largest = np.uint64(0)
    for at in range(indices.shape[0]):
        k = np.int64(indices[at])
        k += shift & (k >> 63)
        largest = max(largest, np.uint64(k))
    if largest < np.uint64(n):
        return -1
    for at in range(indices.shape[0]):
        k = indices[at]
        if (k >= n) if outside == PAD else (_position(k, n, shift, outside) == -2):
            return at
    return -1


# A replace copies each row whole with the C library's memcpy (_copy_rows) where rows have
# this many bytes or more and the table this many, as large as a last-level cache or
# larger: there memcpy took 0.89-0.96 of the element loop's time (4 and 8 KiB rows, tables
# of 32-512 MiB; it writes lines out of cache without reading them first), while into
# tables of 8-16 MiB, in the cache, it took up to a third longer, and for rows under 4 KiB
# up to 1.2x (benchmarks/README.md, "Issue 33: wide rows by memcpy" and "row writes
# prepared per signature, checked before they write").
COPY_ROW_MIN_BYTES = 4096
COPY_TABLE_MIN_BYTES = 2**25


@intrinsic
def _copy_row(typingctx: Any, table: Any, row: Any, values: Any, k: Any) -> Any:
    """Row ``row`` of the 2-D C-contiguous ``table`` set to row ``k`` of ``values`` (C
    order, the same width and dtype), by ``memcpy`` (the two never overlap: the callers
    copy updates that share memory with the table first)."""
    signature = numba_types.void(table, row, values, k)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        table_type, row_type, values_type, k_type = sig.args
        target = context.make_array(table_type)(context, builder, args[0])
        source = context.make_array(values_type)(context, builder, args[2])
        width = builder.extract_value(target.shape, 1)
        row = context.cast(builder, args[1], row_type, numba_types.intp)
        k = context.cast(builder, args[3], k_type, numba_types.intp)
        itemsize = context.get_abi_sizeof(context.get_data_type(table_type.dtype))
        to = builder.gep(target.data, [builder.mul(row, width)])
        start = builder.gep(source.data, [builder.mul(k, width)])
        cgutils.raw_memcpy(builder, to, start, width, itemsize)
        return context.get_dummy_value()

    return signature, codegen


# A gather writes a result of this many bytes or more by non-temporal stores
# (:func:`_stream`): each line goes to memory without the read of it into the cache that
# a store makes first. Results this large are kept memory's blocks (_kept_memory), whose
# pages were written before and are long out of the cache: streamed, the gathers took
# 0.83-0.94 of their time at 32 and 64 MiB (0.86-0.95 with a read of the result after
# them). Smaller results gained in interleaved runs too, but they come from malloc, whose
# new pages the kernel zeroes through the cache: in runs of one form per process,
# streaming into those cost 1.22x at 4 MiB and 1.03-1.04x at 16 MiB (benchmarks/README.md,
# "Issue 33: large gathers streamed past the cache").
STREAM_MIN_BYTES = 2**25


@intrinsic
def _stream(typingctx: Any, out: Any, at: Any, value: Any) -> Any:
    """``out[at] = value`` (``at``: a tuple of indices, in range) by a non-temporal store
    (x86's ``movnti`` for elements of 4 and 8 bytes; other sizes, and targets without one,
    get a plain store). Other threads see such stores in order only after
    :func:`_fence`."""
    signature = numba_types.void(out, at, value)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        out_type, at_type, value_type = sig.args
        array = context.make_array(out_type)(context, builder, args[0])
        indices = [
            context.cast(builder, k, k_type, numba_types.intp)
            for k, k_type in zip(cgutils.unpack_tuple(builder, args[1]), at_type, strict=True)
        ]
        place = cgutils.get_item_pointer(
            context, builder, out_type, array, indices, wraparound=False
        )
        element = context.cast(builder, args[2], value_type, out_type.dtype)
        stored = builder.store(context.get_value_as_data(builder, out_type.dtype, element), place)
        once = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        stored.set_metadata("nontemporal", once)
        return context.get_dummy_value()

    return signature, codegen


# x86's store fence, which orders non-temporal stores before every later store: LLVM's
# own fence compiles to a locked instruction there, which orders them on some processors
# only (elsewhere the fence's barrier orders every store)
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


@intrinsic
def _fence(typingctx: Any) -> Any:
    """A memory fence: every store before it, non-temporal ones too, is seen by every
    thread before any store after it (x86's ``sfence`` where the machine is one, then
    LLVM's sequentially consistent fence)."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        if _X86:
            store_fence = ir.FunctionType(ir.VoidType(), [])
            builder.call(
                cgutils.get_or_insert_function(builder.module, store_fence, "llvm.x86.sse.sfence"),
                [],
            )
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return numba_types.void(), codegen


@_inline
def _write(out: Array, at: Any, value: Any, streaming: bool) -> None:
    """``out[at] = value``, streamed past the cache where ``streaming``."""
    if streaming:
        _stream(out, at, value)  # type: ignore[call-arg]  # (numba passes typingctx)
    else:
        out[at] = value


@_inline
def _ended(found: int, streaming: bool) -> int:
    """What a loop that may have streamed its stores returns: ``found``, after
    :func:`_fence` where it streamed."""
    if streaming:
        _fence()  # type: ignore[call-arg]
    return found


# A row write into a table of this many bytes or more, of rows of more than one element,
# asks for the rows of the updates PREFETCH_AHEAD positions ahead before it reaches them
# (:func:`_prefetch_row`): its loop waits on random rows from memory, a few at a time,
# and the hint lets those reads overlap. Into tables of 16-64 MiB the loops took
# 0.53-0.96 of their time for rows of 8 bytes to 1 KiB; at 8 MiB rows of 8 bytes took
# 1.15-1.31x, and into a table in the cache (2 MiB) narrow rows up to 1.8x. Single
# elements, whose short loop overlaps its reads by itself, took 1.09-1.32x
# (benchmarks/README.md, "Issue 33: rows asked for ahead").
PREFETCH_MIN_BYTES = 2**24
PREFETCH_AHEAD = 16
# the most cache lines of a row asked for: wider rows stream in by the hardware's own
# prefetch once their first lines are read
PREFETCH_LINES = 4


def _prefetch_intrinsic(write: int) -> Any:
    """An intrinsic ``(table, at)``: a hint that ``table[at]`` (``at``: a tuple of
    indices, in range) will be read, or written where ``write``, soon: its cache line is
    read ahead (LLVM's prefetch, into every level of the cache). It changes no value and
    cannot fault."""

    @intrinsic
    def prefetch(typingctx: Any, table: Any, at: Any) -> Any:
        signature = numba_types.void(table, at)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            table_type, at_type = sig.args
            array = context.make_array(table_type)(context, builder, args[0])
            indices = [
                context.cast(builder, k, k_type, numba_types.intp)
                for k, k_type in zip(cgutils.unpack_tuple(builder, args[1]), at_type, strict=True)
            ]
            place = cgutils.get_item_pointer(
                context, builder, table_type, array, indices, wraparound=False
            )
            byte, int32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            prefetch = cgutils.get_or_insert_function(
                builder.module,
                ir.FunctionType(ir.VoidType(), [byte, int32, int32, int32]),
                "llvm.prefetch.p0i8",
            )
            flags = (ir.Constant(int32, flag) for flag in (write, 3, 1))  # every level, data
            builder.call(prefetch, [builder.bitcast(place, byte), *flags])
            return context.get_dummy_value()

        return signature, codegen

    return prefetch


_prefetch_for_write, _prefetch_for_read = _prefetch_intrinsic(1), _prefetch_intrinsic(0)


def _prefetch_ahead(table: Array) -> int:
    """How many updates ahead a row write into the 2-D ``table`` asks for a row: 0
    (none) for a table under :data:`PREFETCH_MIN_BYTES` or of single elements."""
    return PREFETCH_AHEAD if table.nbytes >= PREFETCH_MIN_BYTES and table.shape[1] > 1 else 0


@_inline
def _prefetch_row(table: Array, row: Any, write: bool) -> None:
    """The first :data:`PREFETCH_LINES` cache lines of ``table``'s row ``row`` (unsigned,
    in range) read ahead, to be written where ``write`` (a constant), else read."""
    step = max(1, 64 // table.itemsize)
    for column in range(0, min(table.shape[1], PREFETCH_LINES * step), step):
        if write:
            _prefetch_for_write(table, (row, np.uint64(column)))
        else:
            _prefetch_for_read(table, (row, np.uint64(column)))


# -- loop templates --------------------------------------------------------------------------
# Each template's entry points, one per combiner, are written out at module level: numba's
# disk cache files a function under its qualified name and source line, which entry points
# made by one factory would share.


# What a row write returns where its rows or values share memory with the table: nothing
# written (the caller copies them and runs it again)
SHARED = -3


@_inline
def _extent(a: Array) -> tuple[int, int]:
    """The first byte address of the elements of ``a`` and one past its last (any
    strides); ``(0, 0)`` where it has none."""
    if a.size == 0:
        return 0, 0
    low = high = np.int64(a.ctypes.data)
    for axis in range(a.ndim):
        step = a.strides[axis] * (a.shape[axis] - 1)
        if step < 0:
            low += step
        else:
            high += step
    return low, high + a.itemsize


@_inline
def _overlaps(a: Array, b: Array) -> bool:
    """Whether the memory of ``a`` and of ``b`` may overlap (their extents do)."""
    a_low, a_high = _extent(a)
    b_low, b_high = _extent(b)
    return a_low < b_high and b_low < a_high


@_inline
def _rows_loop(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
    combine: Any,
    copies: bool = False,
) -> int:
    """``table[rows[k]] = combine(table[rows[k]], values[k])`` for each ``k`` in order
    whose row lies in ``[lo, hi)`` (one thread's share of the table); a negative row
    counts from the end where ``wrap``, and a row still outside is clipped, skipped
    (``outside`` is ``FILL``: the update is dropped) or stops the loop
    (:func:`_position`); with :data:`CHECK_FIRST` added to ``outside``, a row that stops
    it does so before the first write. Every row is placed in the whole table before its
    owner is looked at, so each share stops at the same ``k``. ``copies`` (a replace
    only): each row copied whole by :func:`_copy_row`. Where ``ahead`` is positive, the
    row ``ahead`` positions on is prefetched (:func:`_prefetch_row`; a row in range and
    in the share only). Where ``rows`` or ``values`` may share memory with ``table``,
    nothing is written: :data:`SHARED`."""
    n, width = table.shape
    count = rows.shape[0]
    shift = n if wrap else 0
    low, span = np.uint64(lo), np.uint64(hi - lo)
    mode = outside % CHECK_FIRST
    refused = _refused(table, rows, values, shift, outside)
    if refused != -1:
        return refused
    for k in range(count):
        if ahead > 0 and k + ahead < count:
            coming = np.uint64(rows[k + ahead])
            if coming < np.uint64(n) and coming - low < span:
                _prefetch_row(table, coming, True)
        row = np.uint64(rows[k])  # a negative row is above every n; no wraparound either
        if row >= np.uint64(n):  # (rows in range, the common case, pass one comparison)
            if mode == PAD:  # a negative row is padding, one past the end stops
                if rows[k] < 0:
                    continue
                return k
            at = _position(rows[k], n, shift, mode)
            if at < 0:
                if at == -2:
                    return k
                continue
            row = np.uint64(at)
        if row - low >= span:  # another thread's row (below lo: wraps above every span)
            continue
        if copies:
            _copy_row(table, row, values, k)  # type: ignore[call-arg]  # (numba passes typingctx)
            continue
        if width == 1:  # its own loop: half the time of the general one on one column
            table[row, 0] = combine(table[row, 0], values[k, 0])
            continue
        for j in range(width):
            table[row, j] = combine(table[row, j], values[k, j])
    return -1


@_kernel
def _replace_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _replace)


@_kernel
def _copy_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _replace, True)


@_kernel
def _add_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _add)


@_kernel
def _multiply_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _multiply)


@_kernel
def _minimum_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _minimum)


@_kernel
def _maximum_rows(
    table: Array,
    rows: Array,
    values: Array,
    lo: int,
    hi: int,
    wrap: bool,
    outside: int,
    ahead: int,
) -> int:
    return _rows_loop(table, rows, values, lo, hi, wrap, outside, ahead, _maximum)


_ROW_KERNELS = {
    None: _replace_rows,
    Named.ADD: _add_rows,
    Named.MUL: _multiply_rows,
    Named.MIN: _minimum_rows,
    Named.MAX: _maximum_rows,
}


@_inline
def _tuple_row(indices: Array, dims: Array, k: int) -> int:
    """The row-major number of the index tuple ``indices[k]`` into ``dims``, each
    component counted from the end where negative; ``-1 - c`` where component ``c`` is
    the first still outside its dim."""
    row = 0
    for c in range(indices.shape[1]):
        n = dims[c]
        i = np.int64(indices[k, c])
        i += n & (i >> 63)  # branch-free: n where the sign bit is set (see _position)
        if np.uint64(i) >= np.uint64(n):
            return -1 - c
        row = row * n + i
    return row


@_inline
def _tuples_loop(
    table: Array, indices: Array, dims: Array, values: Array, ahead: int, combine: Any
) -> int:
    """``table[row] = combine(table[row], values[k])`` for each ``k`` in order, ``row``
    the row-major number of the index tuple ``indices[k]`` into ``dims``, each component
    counted from the end where negative (ONNX's ScatterND); the flat position in
    ``indices`` of the first component still outside its dim stops the loop. Where
    ``ahead`` is positive, the row ``ahead`` tuples on is prefetched
    (:func:`_prefetch_row`)."""
    count, depth = indices.shape
    width = table.shape[1]
    for k in range(count):
        if ahead > 0 and k + ahead < count:
            coming = _tuple_row(indices, dims, k + ahead)
            if coming >= 0:
                _prefetch_row(table, np.uint64(coming), True)
        row = _tuple_row(indices, dims, k)
        if row < 0:
            return k * depth - 1 - row
        at = np.uint64(row)  # an unsigned index: no test for a negative one in the loop
        if width == 1:
            table[at, 0] = combine(table[at, 0], values[k, 0])
            continue
        for j in range(width):
            table[at, j] = combine(table[at, j], values[k, j])
    return -1


@_kernel
def _replace_tuples(table: Array, indices: Array, dims: Array, values: Array, ahead: int) -> int:
    return _tuples_loop(table, indices, dims, values, ahead, _replace)


@_kernel
def _add_tuples(table: Array, indices: Array, dims: Array, values: Array, ahead: int) -> int:
    return _tuples_loop(table, indices, dims, values, ahead, _add)


@_kernel
def _multiply_tuples(table: Array, indices: Array, dims: Array, values: Array, ahead: int) -> int:
    return _tuples_loop(table, indices, dims, values, ahead, _multiply)


@_kernel
def _minimum_tuples(table: Array, indices: Array, dims: Array, values: Array, ahead: int) -> int:
    return _tuples_loop(table, indices, dims, values, ahead, _minimum)


@_kernel
def _maximum_tuples(table: Array, indices: Array, dims: Array, values: Array, ahead: int) -> int:
    return _tuples_loop(table, indices, dims, values, ahead, _maximum)


_TUPLE_KERNELS = {
    None: _replace_tuples,
    Named.ADD: _add_tuples,
    Named.MUL: _multiply_tuples,
    Named.MIN: _minimum_tuples,
    Named.MAX: _maximum_tuples,
}


@_inline
def _pairs_loop(table: Array, rows: Array, columns: Array, values: Array, combine: Any) -> int:
    """``table[r, c] = combine(table[r, c], values[i, j])`` with ``r, c = rows[i, j],
    columns[i, j]`` for each ``(i, j)`` of ``values`` in row-major order (repeated elements
    in order: the last write of a replace wins), ``rows`` and ``columns`` broadcast to its
    shape (a dim of one repeats) and counted from the end where negative: NumPy's
    ``table[rows, columns] = values`` and ``ufunc.at(table, (rows, columns), values)``.
    Every pair is placed before the first write: the flat position in ``values`` of the
    first outside ``table``, with nothing written, or -1 once written; :data:`SHARED`,
    nothing written, where ``rows``, ``columns`` or ``values`` may share memory with
    ``table``."""
    n, m = table.shape
    p, q = values.shape
    if _pairs_shared(table, rows, columns, values):
        return SHARED
    row_i, row_j = int(rows.shape[0] != 1), int(rows.shape[1] != 1)
    column_i, column_j = int(columns.shape[0] != 1), int(columns.shape[1] != 1)
    for i in range(p):
        for j in range(q):
            r = _from_end(rows[i * row_i, j * row_j], n)
            c = _from_end(columns[i * column_i, j * column_j], m)
            if r >= np.uint64(n) or c >= np.uint64(m):  # (negative ones: above every n)
                return i * q + j
    for i in range(p):
        for j in range(q):
            r = _from_end(rows[i * row_i, j * row_j], n)
            c = _from_end(columns[i * column_i, j * column_j], m)
            table[r, c] = combine(table[r, c], values[i, j])
    return -1


@_kernel  # (not inlined: compiled once per table and values type, for every combiner)
def _pairs_shared(table: Array, rows: Array, columns: Array, values: Array) -> bool:
    """Whether ``rows``, ``columns`` or ``values`` may share memory with ``table``."""
    return _overlaps(table, values) or _overlaps(table, rows) or _overlaps(table, columns)


@_inline
def _from_end(k: Any, n: int) -> Any:
    """``k`` counted from the end where negative, as an unsigned index (still negative:
    above every ``n``), branch-free (see :func:`_position`)."""
    k = np.int64(k)
    return np.uint64(k + (n & (k >> 63)))


@_kernel
def _replace_pairs(table: Array, rows: Array, columns: Array, values: Array) -> int:
    return _pairs_loop(table, rows, columns, values, _replace)


@_kernel
def _add_pairs(table: Array, rows: Array, columns: Array, values: Array) -> int:
    return _pairs_loop(table, rows, columns, values, _add)


@_kernel
def _multiply_pairs(table: Array, rows: Array, columns: Array, values: Array) -> int:
    return _pairs_loop(table, rows, columns, values, _multiply)


@_kernel
def _minimum_pairs(table: Array, rows: Array, columns: Array, values: Array) -> int:
    return _pairs_loop(table, rows, columns, values, _minimum)


@_kernel
def _maximum_pairs(table: Array, rows: Array, columns: Array, values: Array) -> int:
    return _pairs_loop(table, rows, columns, values, _maximum)


_PAIR_KERNELS = {
    None: _replace_pairs,
    Named.ADD: _add_pairs,
    Named.MUL: _multiply_pairs,
    Named.MIN: _minimum_pairs,
    Named.MAX: _maximum_pairs,
}


@_inline
def _taken_row(k: Any, n: int, clip: bool) -> Any:
    """Row ``k`` of ``n`` (``n`` > 0) as NumPy's ``take`` reads it, unsigned: counted
    from the end where negative; with ``clip``, clipped into ``[0, n)`` (a negative row
    to 0, as ``take``'s ``mode="clip"`` does), else ``n`` or more where outside."""
    k = np.int64(k)
    if clip:
        return np.uint64(min(max(k, 0), n - 1))
    return np.uint64(k + (n & (k >> 63)))


@_kernel
def _take_rows(
    table: Array, rows: Array, out: Array, clip: bool, ahead: int, lo: int, hi: int
) -> int:
    """``out[k] = table[rows[k]]`` for each ``k`` in ``[lo, hi)`` (one thread's share
    of the output), in order (:func:`_taken_row`), the row ``ahead`` positions on read
    ahead (:func:`_prefetch_row`); the position of the first row outside stops the loop
    (never where ``clip``), else -1."""
    n, width = table.shape
    count = min(hi, rows.shape[0])
    for k in range(lo, count):
        if ahead > 0 and k + ahead < count:
            coming = _taken_row(rows[k + ahead], n, clip)
            if coming < np.uint64(n):
                _prefetch_row(table, coming, False)
        row = _taken_row(rows[k], n, clip)
        if row >= np.uint64(n):
            return k
        for j in range(width):
            out[k, j] = table[row, j]
    return -1


@_kernel
def _take_along(
    x: Array,
    indices: Array,
    out: Array,
    wrap: bool,
    outside: int,
    fill: Array,
    lo: int,
    hi: int,
    streaming: bool,
) -> int:
    """``out[a, j, b] = x[a, indices[a, j, b], b]`` for ``a`` in ``[lo, hi)`` (one
    thread's share of the output: whole rows, whose loops stay as fast as one thread's);
    a negative index counts from the end where ``wrap``; an index still outside
    ``[0, n)`` is clipped, read as ``fill[0]`` or stops the loop, as ``outside`` says
    (clipping into an empty dim stops it too); ``out`` written past the cache where
    ``streaming`` (:func:`_write`). The gather along the last axis (``b`` always 0) has
    its own loop: 0.6x the time."""
    _, n, inner = x.shape
    count = indices.shape[1]
    shift = n if wrap else 0
    if inner == 1:
        for a in range(lo, hi):
            for j in range(count):
                k = _position(indices[a, j, 0], n, shift, outside)
                if k >= 0:
                    _write(out, (a, j, 0), x[a, np.uint64(k), 0], streaming)
                elif k == -1:
                    _write(out, (a, j, 0), fill[0], streaming)
                else:
                    return _ended(a * count + j, streaming)
        return _ended(-1, streaming)
    for a in range(lo, hi):
        for j in range(count):
            for b in range(inner):
                k = _position(indices[a, j, b], n, shift, outside)
                if k >= 0:
                    _write(out, (a, j, b), x[a, np.uint64(k), b], streaming)
                elif k == -1:
                    _write(out, (a, j, b), fill[0], streaming)
                else:
                    return _ended((a * count + j) * inner + b, streaming)
    return _ended(-1, streaming)


# The gather along the last axis, each mode a loop of its own on 2-D arrays: 0.55-0.75x
# the time of the general loop's own case for the last axis (filled: 0.5-0.8x; 3-D
# indexing, and one loop's code for every mode, cost the rest; benchmarks/README.md,
# "Issue 33: rows placed in one pass"). Counting from the end is not a parameter: a shift
# of 0 added to every index cost the loops that do not count 20-30 %. Each reads
# ``out[a, j] = x[a, indices[a, j]]`` for ``a`` in ``[lo, hi)``, written past the cache
# where ``streaming``, and returns the flat position of the first index outside, or -1,
# as :func:`_take_along`.


@_kernel
def _take_last_in_range(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool
) -> int:
    """Indices in ``[0, n)``; the first outside stops the loop."""
    count, top = indices.shape[1], np.uint64(x.shape[1])
    for a in range(lo, hi):
        for j in range(count):
            at = np.uint64(np.int64(indices[a, j]))  # a negative index: above every n
            if at >= top:
                return _ended(a * count + j, streaming)
            _write(out, (a, j), x[a, at], streaming)
    return _ended(-1, streaming)


@_kernel
def _take_last_from_end(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool
) -> int:
    """Indices in ``[-n, n)``, negative ones counted from the end; the first outside
    stops the loop."""
    n = x.shape[1]
    count, top = indices.shape[1], np.uint64(n)
    for a in range(lo, hi):
        for j in range(count):
            k = np.int64(indices[a, j])
            k += n & (k >> 63)  # (see _position)
            if np.uint64(k) >= top:
                return _ended(a * count + j, streaming)
            _write(out, (a, j), x[a, np.uint64(k)], streaming)
    return _ended(-1, streaming)


@_kernel
def _take_last_clipped(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool
) -> int:
    """Indices clipped into ``[0, n)`` (``n`` > 0)."""
    n = x.shape[1]
    count, top = indices.shape[1], np.uint64(n)
    for a in range(lo, hi):
        for j in range(count):
            k = np.int64(indices[a, j])
            if np.uint64(k) >= top:  # (a branch the indices in range never take: their
                k = 0 if k < 0 else n - 1  # reads wait for no select)
            _write(out, (a, j), x[a, np.uint64(k)], streaming)
    return _ended(-1, streaming)


@_kernel
def _take_last_from_end_clipped(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool
) -> int:
    """Negative indices counted from the end, then clipped into ``[0, n)`` (``n`` > 0)."""
    n = x.shape[1]
    count, top = indices.shape[1], np.uint64(n)
    for a in range(lo, hi):
        for j in range(count):
            k = np.int64(indices[a, j])
            k += n & (k >> 63)
            if np.uint64(k) >= top:
                k = 0 if k < 0 else n - 1
            _write(out, (a, j), x[a, np.uint64(k)], streaming)
    return _ended(-1, streaming)


@_kernel
def _take_last_filled(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool, fill: Array
) -> int:
    """Indices outside ``[0, n)`` read ``fill[0]``."""
    count, top, value = indices.shape[1], np.uint64(x.shape[1]), fill[0]
    for a in range(lo, hi):
        for j in range(count):
            at = np.uint64(np.int64(indices[a, j]))
            if at < top:
                _write(out, (a, j), x[a, at], streaming)
            else:
                _write(out, (a, j), value, streaming)
    return _ended(-1, streaming)


@_kernel
def _take_last_from_end_filled(
    x: Array, indices: Array, out: Array, lo: int, hi: int, streaming: bool, fill: Array
) -> int:
    """Negative indices counted from the end, then those outside ``[0, n)`` read
    ``fill[0]``."""
    n = x.shape[1]
    count, top, value = indices.shape[1], np.uint64(n), fill[0]
    for a in range(lo, hi):
        for j in range(count):
            k = np.int64(indices[a, j])
            k += n & (k >> 63)
            if np.uint64(k) < top:
                _write(out, (a, j), x[a, np.uint64(k)], streaming)
            else:
                _write(out, (a, j), value, streaming)
    return _ended(-1, streaming)


# (wrap, outside) -> the loop of its own for the last axis (the filled ones also take the
# fill value, as a 1-element array of the elements' bits)
_TAKE_LAST: dict[tuple[bool, int], Any] = {
    (False, STOP): _take_last_in_range,
    (True, STOP): _take_last_from_end,
    (False, CLIP): _take_last_clipped,
    (True, CLIP): _take_last_from_end_clipped,
    (False, FILL): _take_last_filled,
    (True, FILL): _take_last_from_end_filled,
}


@_inline
def _along_loop(
    x: Array, indices: Array, values: Array, wrap: bool, outside: int, combine: Any
) -> int:
    """``x[a, indices[a, j, b], b] = combine(that, values[a, j, b])`` for each ``(a, j,
    b)`` in row-major order (so repeated targets, which differ in ``j`` only, apply in
    the updates' order); a negative index counts from the end where ``wrap``; an index
    still outside is clipped, skipped (``outside`` is ``FILL``: nothing to fill, the
    update is dropped) or stops the loop, as in :func:`_take_along` (in place, the
    caller looks for an index that stops it first: :func:`_first_stop`)."""
    outer, n, inner = x.shape
    count = indices.shape[1]
    shift = n if wrap else 0
    if inner == 1:
        for a in range(outer):
            for j in range(count):
                k = _position(indices[a, j, 0], n, shift, outside)
                if k >= 0:
                    at = np.uint64(k)
                    x[a, at, 0] = combine(x[a, at, 0], values[a, j, 0])
                elif k == -2:
                    return a * count + j
        return -1
    for a in range(outer):
        for j in range(count):
            for b in range(inner):
                k = _position(indices[a, j, b], n, shift, outside)
                if k >= 0:
                    at = np.uint64(k)
                    x[a, at, b] = combine(x[a, at, b], values[a, j, b])
                elif k == -2:
                    return (a * count + j) * inner + b
    return -1


@_kernel
def _replace_along(x: Array, indices: Array, values: Array, wrap: bool, outside: int) -> int:
    return _along_loop(x, indices, values, wrap, outside, _replace)


@_kernel
def _add_along(x: Array, indices: Array, values: Array, wrap: bool, outside: int) -> int:
    return _along_loop(x, indices, values, wrap, outside, _add)


@_kernel
def _multiply_along(x: Array, indices: Array, values: Array, wrap: bool, outside: int) -> int:
    return _along_loop(x, indices, values, wrap, outside, _multiply)


@_kernel
def _minimum_along(x: Array, indices: Array, values: Array, wrap: bool, outside: int) -> int:
    return _along_loop(x, indices, values, wrap, outside, _minimum)


@_kernel
def _maximum_along(x: Array, indices: Array, values: Array, wrap: bool, outside: int) -> int:
    return _along_loop(x, indices, values, wrap, outside, _maximum)


_ALONG_KERNELS = {
    None: _replace_along,
    Named.ADD: _add_along,
    Named.MUL: _multiply_along,
    Named.MIN: _minimum_along,
    Named.MAX: _maximum_along,
}


@_kernel
def _largest_unsigned(x: Array) -> int:
    """The largest entry of the 1-D integer ``x`` read as unsigned 64-bit (a negative
    entry is above every non-negative one); 0 for no entries. No early exit: the loop
    vectorizes."""
    largest = np.uint64(0)
    for k in range(x.shape[0]):
        largest = max(largest, np.uint64(x[k]))
    return largest


def all_in_range(x: Array, high: int) -> bool | None:
    """Whether every entry of the integer array ``x`` lies in ``[0, high]``, by one
    compiled pass: as fast as NumPy's reduction warm from 300 to 2**20 entries, and much
    faster where that reduction's machinery runs cold after a large write (12-17 us
    against 0-3 for 256-1024 rows); ``None`` where no kernel takes ``x`` (not int64 or
    int32, or not C-contiguous)."""
    if x.dtype not in _INDEX_TYPES or not x.flags.c_contiguous:
        return None
    if high < 0:
        return x.size == 0
    return int(_largest_unsigned(x.reshape(-1))) <= high


# -- what the kernels run on: dtypes seen as the types numba computes in -----------------------

_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}
_INDEX_TYPES = (np.dtype(np.int64), np.dtype(np.int32))
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEX_PARTS: dict[np.dtype, np.dtype] = {
    np.dtype(np.complex64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.float64),
}


def _bits(dtype: np.dtype) -> np.dtype | None:
    """The widest unsigned type whose size divides ``dtype``'s: moving elements is moving
    their bits (any byte order, extension types such as ml_dtypes' bfloat16, strings);
    ``None`` for dtypes that hold Python objects, whose references a copy of their bits
    would not count."""
    if dtype.hasobject:
        return None
    return next((_UNSIGNED[size] for size in (8, 4, 2, 1) if dtype.itemsize % size == 0), None)


@functools.cache  # (a fact of the two; asked by every kernel call)
def _arithmetic_type(dtype: np.dtype, how: Named | None) -> np.dtype | None:
    """The type a row kernel combines ``dtype``'s elements in (its columns split into
    equal parts where the type is narrower), or ``None`` where no kernel gives the
    generic path's result: integers add and multiply modulo ``2**bits`` as unsigned
    numbers, complex numbers add as pairs of floats; half floats, extension types and
    non-native byte orders have no kernel arithmetic."""
    if how is None:
        return _bits(dtype)
    if not dtype.isnative:
        return None
    if dtype.kind in "iu":
        return _UNSIGNED[dtype.itemsize] if how in (Named.ADD, Named.MUL) else dtype
    if dtype in _FLOATS:
        return dtype
    return _COMPLEX_PARTS.get(dtype) if how is Named.ADD else None


def _int64(indices: Array) -> Array | None:
    """Integer ``indices`` as int64 (one signature of each kernel for every index
    dtype: a copy of narrower ones), or ``None`` for uint64, whose values above int64's
    range the library saturates instead."""
    kind, size = indices.dtype.kind, indices.dtype.itemsize
    if kind not in "iu" or (kind, size) == ("u", 8):
        return None
    return indices if indices.dtype == _INDEX_TYPES[0] else indices.astype(np.int64)


def _read_first(written: Array | None, *arrays: Array) -> list[Array]:
    """``arrays`` as they are before a kernel writes ``written``: copied where they may
    share memory with it, and where they are read-only (another type to numba, each
    compiled again)."""
    return [
        a
        if a.flags.writeable and (written is None or not np.may_share_memory(written, a))
        else np.array(a, copy=True)
        for a in arrays
    ]


def apply_rows(
    table: Array,
    rows: Array,
    values: Array,
    how: Named | None,
    *,
    wrap: bool = False,
    outside: str = "stop",
    copy: bool = False,
) -> Array | None:
    """Apply ``values[k]`` to row ``rows[k]`` of the 2-D ``table`` in the order of ``k``
    (replace where ``how`` is ``None``: the last write wins), in place, or into a copy
    where ``copy`` (``table`` is then never written), and return the array written;
    ``None`` where no kernel takes these arrays (a dtype without kernel arithmetic or of
    Python objects, a table that is not C-contiguous in place, rows not int64).

    ``wrap``: a negative row counts from the end first; then a row outside is clipped
    (``outside`` is ``"clip"``), its update dropped (``"drop"``), skipped where negative
    and else an error (``"padding"``), or, for ``"stop"``, :class:`IndexError` raised:
    in place before anything is written (every row is checked first), into a copy where
    the loop meets it (the caller drops the copy). ``rows`` and ``values`` are read as
    they were before the call (copied where they may share memory with ``table``;
    read-only ones too, which would be other types to numba, each compiled again).
    :func:`row_plan` for one call.
    """
    plan = row_plan(table.dtype, how, table.shape)
    return (
        None if plan is None else plan(table, rows, values, wrap=wrap, outside=outside, copy=copy)
    )


def put_in_order(out: Array, numbers: Array, values: Array) -> bool:
    """``out.flat[numbers[k]] = values[k]`` for each ``k`` in order (the last write of a
    repeated number wins), by the row replace's loop on ``out`` as one column of bits:
    1.9 us for 192 numbers, where NumPy's way takes 3.7 (``_host.put_in_order``). Every
    number is checked against ``out`` before the first write (:class:`IndexError` for one
    outside, ``out`` as it was), and ``values`` that share memory with ``out`` are read
    before it is written. False, nothing written, where no kernel takes them: ``out``
    not C-contiguous or of an element size no unsigned type has, ``values`` of another
    dtype, ``numbers`` not int64; their thread is the caller's (few elements)."""
    dtype = out.dtype
    kind = _arithmetic_type(dtype, None)  # (its bits: cached)
    if (
        kind is None
        or kind.itemsize != dtype.itemsize
        or not out.flags.c_contiguous
        or values.dtype != dtype
        or numbers.dtype != _INDEX_TYPES[0]
    ):
        return False
    table = out.reshape(-1, 1).view(kind)
    rows, column = numbers, np.ascontiguousarray(values).reshape(-1, 1).view(kind)
    if not (rows.flags.writeable and column.flags.writeable):  # (another type to numba)
        rows, column = _read_first(None, rows, column)
    # (single elements: none asked for ahead, see PREFETCH_MIN_BYTES)
    bad = _replace_rows(table, rows, column, 0, len(table), False, _CHECKED_STOP, 0)
    if bad == SHARED:  # (a copy of each: read before the write)
        rows, column = np.array(rows, copy=True), np.array(column, copy=True)
        bad = _replace_rows(table, rows, column, 0, len(table), False, _CHECKED_STOP, 0)
    if bad >= 0:
        raise index_out_of_bounds(rows[bad], 0, len(table))
    return True


_CHECKED_STOP = STOP + CHECK_FIRST


def combine_pairs(
    out: Array, rows: Array, columns: Array, values: Array, how: Named | None
) -> bool:
    """``values`` combined into ``out[rows, columns]`` by ``how`` (``None``: replace)
    for a 2-D ``out`` and index arrays of up to two dims, as NumPy indexes (entries
    counted from the end where negative, the arrays broadcast), repeated elements in
    order (a replace's last write wins; min and max with IEEE-754's signed zeros and
    NaN), by one compiled pass: :func:`_pairs_loop`, a replace on ``out``'s bits. True
    once written; False, nothing written, where an entry lies outside its dim or no
    kernel takes these arrays: ``out`` not C-contiguous, of an element size no unsigned
    type has, or, for a combiner, of a type whose kernel is not compiled ahead
    (:data:`_PAIR_TYPES`: a small call pays no compile); ``values`` of another dtype or
    not of the arrays' broadcast shape; indices of more dims or not of int64 or a
    narrower integer type. Index arrays and values that may share memory with ``out``
    are read before it is written."""
    dtype = out.dtype
    kind = _arithmetic_type(dtype, how)  # (cached)
    if (
        kind not in _PAIR_TYPES[how]
        or kind.itemsize != dtype.itemsize
        or not out.flags.c_contiguous
        or values.dtype != dtype
    ):
        return False
    rows, columns = _pair_indices(rows), _pair_indices(columns)
    if rows is None or columns is None:
        return False
    (p, q), (r, t) = rows.shape, columns.shape
    shape = (p if p != 1 else r, q if q != 1 else t)
    if values.shape != shape[2 - values.ndim :] or values.size != shape[0] * shape[1]:
        return False
    column = values if values.shape == shape else values.reshape(shape)  # (0.12 us)
    flags = column.flags
    if not (flags.c_contiguous and flags.writeable):  # (else another type to numba)
        column = np.array(column, order="C", copy=True)
    column = column.view(kind)
    table, kernel = out.view(kind), _PAIR_KERNELS[how]
    bad = kernel(table, rows, columns, column)
    if bad == SHARED:  # (a copy of each: read before the write)
        bad = kernel(table, rows.copy(), columns.copy(), column.copy())
    return bool(bad == -1)


def _pair_indices(indices: Array) -> Array | None:
    """``indices`` as :func:`_pairs_loop` takes them: int64, two dims (leading dims
    of one added), C-contiguous and writeable (copies where they are not); ``None`` for
    more dims or another dtype than :func:`_int64` takes."""
    if indices.ndim > 2:
        return None
    if indices.dtype != _INDEX_TYPES[0]:
        indices = _int64(indices)
        if indices is None:
            return None
    if indices.ndim < 2:
        indices = indices.reshape((1,) * (2 - indices.ndim) + indices.shape)
    flags = indices.flags
    if not (flags.c_contiguous and flags.writeable):
        indices = np.array(indices, order="C", copy=True)
    return indices


def row_plan(dtype: np.dtype, how: Named | None, shape: tuple[int, ...]) -> RowPlan | None:
    """:func:`apply_rows` decided for tables of ``dtype`` and 2-D ``shape`` and the
    combiner ``how``; ``None`` where no kernel combines ``dtype`` so."""
    kind = _arithmetic_type(dtype, how)
    if kind is None:
        return None
    whole = how is None and _copied_whole(dtype, shape)
    return RowPlan(dtype, kind, _copy_rows if whole else _ROW_KERNELS[how])


class RowPlan:
    """:func:`apply_rows` for one table dtype and combiner, decided once (a row writer
    keeps one per signature): the type the kernel combines elements in and the kernel
    (each row copied whole, or element by element). A call checks what its arrays decide:
    their dtypes and shapes, the table's layout and the memory the rows and values share
    with it."""

    __slots__ = ("dtype", "kernel", "kind")

    def __init__(self, dtype: np.dtype, kind: np.dtype, kernel: Any) -> None:
        self.dtype, self.kind, self.kernel = dtype, kind, kernel

    def __call__(
        self,
        table: Array,
        rows: Array,
        values: Array,
        *,
        wrap: bool = False,
        outside: str = "stop",
        copy: bool = False,
    ) -> Array | None:
        """:func:`apply_rows` of these arrays (``None``: no kernel takes them)."""
        dtype = self.dtype
        if table.dtype != dtype or values.dtype != dtype or rows.dtype != _INDEX_TYPES[0]:
            return None
        if values.shape != (rows.shape[0], table.shape[1]):  # (the loop reads them unchecked)
            return None
        if copy:
            table = _kept_memory.copy(table, order="C")
            code = _OUTSIDE[outside]  # (a stop drops the copy)
        elif table.flags.c_contiguous:
            code = _IN_PLACE[outside]
        else:
            return None
        if not (rows.flags.writeable and values.flags.writeable):
            rows, values = _read_first(None, rows, values)
        target = table.view(self.kind)
        values = np.ascontiguousarray(values).view(self.kind)
        bad = self._run(target, rows, values, wrap, code)
        if bad == SHARED:  # read them before the write: copies
            rows, values = np.array(rows, copy=True), np.array(values, copy=True)
            bad = self._run(target, rows, values, wrap, code)
        if bad >= 0:
            raise index_out_of_bounds(rows[bad], 0, table.shape[0])
        return table

    def _run(self, table: Array, rows: Array, values: Array, wrap: bool, code: int) -> int:
        """The kernel on one thread or on each share of the table's rows: where it
        stopped (every share stops at the same first row outside, and returns it)."""
        kernel = self.kernel
        ahead = _prefetch_ahead(table)
        threads = threads_for(values.size, "row write")
        if threads == 1:  # (the common call: no ranges to make)
            return int(kernel(table, rows, values, 0, len(table), wrap, code, ahead))

        def share(lo: int, hi: int) -> int:
            return int(kernel(table, rows, values, lo, hi, wrap, code, ahead))

        return run_parts(share, len(table), threads)[0]


# the codes of a write into the caller's array: one that may stop checks every row first
_IN_PLACE = {
    name: code + CHECK_FIRST if code in (STOP, PAD) else code for name, code in _OUTSIDE.items()
}


def _copied_whole(dtype: np.dtype, shape: tuple[int, ...]) -> bool:
    """Whether a replace copies the rows of a 2-D table of ``dtype`` and ``shape`` whole
    (:data:`COPY_ROW_MIN_BYTES`, :data:`COPY_TABLE_MIN_BYTES`)."""
    row_bytes = shape[1] * dtype.itemsize
    return row_bytes >= COPY_ROW_MIN_BYTES and shape[0] * row_bytes >= COPY_TABLE_MIN_BYTES


def scatter_tuples(
    data: Array, indices: Array, values: Array, how: Named | None
) -> tuple[Array, int] | None:
    """ONNX's ScatterND in one pass: a copy of ``data`` with ``values`` applied at the
    index tuples of ``indices``' last dim (into ``data``'s leading dims, a negative
    component counting from the end) in their order (replace where ``how`` is ``None``:
    the last write wins), and the flat position in ``indices`` of the first component
    outside ``[-n, n)``, or -1. The loop stops there, with the copy half written: the
    caller drops it (``data`` is never written). ``None`` where no kernel takes these
    arrays (as :func:`apply_rows`; uint64 indices)."""
    kind = _arithmetic_type(data.dtype, how)
    indices = _int64(indices)
    if kind is None or values.dtype != data.dtype or indices is None:
        return None
    depth = indices.shape[-1]
    count = math.prod(indices.shape[:-1])
    rows, width = math.prod(data.shape[:depth]), math.prod(data.shape[depth:])
    out = _kept_memory.copy(data, order="C")
    indices, values = _read_first(None, indices, values)  # (out is new: nothing shared)
    table = out.reshape(rows, width).view(kind)
    bad = _TUPLE_KERNELS[how](
        table,
        np.ascontiguousarray(indices).reshape(count, depth),
        np.array(data.shape[:depth], dtype=np.int64),
        np.ascontiguousarray(values).reshape(count, width).view(kind),
        _prefetch_ahead(table),
    )
    return out, int(bad)


def scatter_along_axis(
    x: Array,
    indices: Array,
    values: Array,
    axis: int,
    how: Named | None,
    *,
    wrap: bool,
    outside: str,
    copy: bool,
) -> tuple[Array, int] | None:
    """The element scatter (ScatterElements, ``scatter_reduce_``'s form) in one pass:
    ``values`` combined into ``x`` (a copy where ``copy``, else ``x`` in place) at
    ``indices`` along ``axis`` (both have ``x``'s other dims), in their row-major order
    (replace where ``how`` is ``None``: the last write wins); and the flat position of
    the first index outside its dim, or -1. ``wrap``: negative indices count from the
    end first; then an index outside is clipped (``outside`` is ``"clip"``), dropped
    (``"drop"``) or stops the loop (``"stop"``: in place before the first write, every
    index checked first; into a copy where the loop meets it).
    ``None`` where no kernel takes these arrays (as :func:`apply_rows`, and complex
    numbers, uint64 indices, ``x`` not C-contiguous in place)."""
    kind = _arithmetic_type(x.dtype, how)
    if kind is None or kind.itemsize != x.dtype.itemsize or values.dtype != x.dtype:
        return None  # (complex numbers as pairs of floats: no element of their own)
    indices = _int64(indices)
    if indices is None or not (copy or x.flags.c_contiguous):
        return None
    out = _kept_memory.copy(x, order="C") if copy else x
    indices, values = _read_first(out, indices, values)
    outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1 :])
    shape = (outer, indices.shape[axis], inner)
    indices, code, n = np.ascontiguousarray(indices), _OUTSIDE[outside], x.shape[axis]
    if not copy and code == STOP:  # (a check in the loop's kernel slowed it by a sixth)
        first = int(_first_stop(indices.reshape(-1), n, n if wrap else 0, code))
        if first >= 0:
            return out, first
    bad = _ALONG_KERNELS[how](
        out.view(kind).reshape(outer, n, inner),
        indices.reshape(shape),
        np.ascontiguousarray(values).view(kind).reshape(shape),
        wrap,
        code,
    )
    return out, int(bad)


def take_along_axis(
    x: Array, indices: Array, axis: int, *, wrap: bool, outside: str, fill: object = None
) -> tuple[Array, int] | None:
    """``x`` read at ``indices`` along ``axis`` (``indices`` has ``x``'s other dims), and
    the flat position of the first index outside its dim, or -1. ``wrap``: negative
    indices count from the end first; then an index outside is clipped (``outside`` is
    ``"clip"``), read as ``fill`` (``"fill"``) or stops the loop (``"stop"``; the result
    is then unspecified). ``None`` where no kernel takes these arrays (``x`` not
    C-contiguous, indices neither int64 nor int32, elements of more than 8 bytes or of
    Python objects)."""
    bits = _bits(x.dtype)
    if bits is None or bits.itemsize != x.dtype.itemsize or not x.flags.c_contiguous:
        return None
    if indices.dtype not in _INDEX_TYPES:
        return None
    n = x.shape[axis]
    outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1 :])
    out = _kept_memory.empty(indices.shape, x.dtype)
    fill_bits = np.zeros(1, dtype=bits)
    if outside == "fill":
        fill_bits = np.full(1, fill, dtype=x.dtype).view(bits)
    (indices,) = _read_first(None, indices)  # (out is new: nothing shared)
    count = indices.shape[axis]
    how = _OUTSIDE[outside]
    last = _TAKE_LAST.get((wrap, how)) if inner == 1 and n > 0 else None
    shape = (outer, n) if last is not None else (outer, n, inner)
    source = x.view(bits).reshape(shape)
    where = np.ascontiguousarray(indices).reshape(shape[0], count, *shape[2:])
    written = out.view(bits).reshape(where.shape)

    filled = (fill_bits,) if how == FILL else ()
    # Faster loops first, each stopping at the first index it does not take, the next
    # resuming from that row: indices in [0, n) (where negative ones would count from the
    # end), then in range (where the loop asked for clips) take the loops that stop, the
    # second fastest loops (benchmarks/README.md, "Issue 33: large results into kept memory")
    first = []
    if last is not None and wrap:
        first.append(_TAKE_LAST[False, STOP])
    if last is not None and how == CLIP:
        first.append(_TAKE_LAST[wrap, STOP])

    streaming = out.nbytes >= STREAM_MIN_BYTES

    def share(lo: int, hi: int) -> int:
        for loop in first:
            stopped = int(loop(source, where, written, lo, hi, streaming))
            if stopped < 0:
                return -1
            lo = stopped // count
        if last is not None:
            return int(last(source, where, written, lo, hi, streaming, *filled))
        return int(_take_along(source, where, written, wrap, how, fill_bits, lo, hi, streaming))

    # the shares are in the output's order: the first that stopped holds the first index;
    # a gather along the first axis (one outer row) runs on one thread
    threads = max(1, min(threads_for(out.size, "gather"), outer))
    stops = [bad for bad in run_parts(share, outer, threads) if bad >= 0]
    return out, stops[0] if stops else -1


# Reads from tables of PREFETCH_MIN_BYTES or more into results of
# ROW_GATHER_MIN_RESULT_BYTES or more are the compiled row gather's, which asks for each
# row 16 ahead, where they split among threads or their rows have ROW_GATHER_MIN_BYTES or
# more: 0.72-0.94 of NumPy's take on one thread for rows of 256 bytes to 1 KiB from
# tables of 32-128 MiB, and 0.50-0.73 on two threads for rows of 4 bytes to 1 KiB. On one
# thread NumPy's take reads narrower rows faster (1.0-1.4x), and smaller results, whose
# reads wait less on memory (1.0-1.5x for results of 1-4 MiB) (benchmarks/README.md,
# "Issue 33: rows asked for ahead").
ROW_GATHER_MIN_BYTES = 256
ROW_GATHER_MIN_RESULT_BYTES = 2**23


def take_rows(table: Array, rows: Array, mode: str) -> Array | None:
    """``table.take(rows, axis=0, mode=mode)`` (``mode``: ``"raise"`` or ``"clip"``)
    by one compiled pass (:func:`_take_rows`), into kept memory where large: NumPy's
    :class:`IndexError` for a row outside where ``mode`` is ``"raise"``, once the pass
    has stopped there (the result is dropped). ``None`` where the pass does not pay or
    take these arrays: a table of no rows or empty ones, not C-contiguous, of Python
    objects or under :data:`PREFETCH_MIN_BYTES`; a result under
    :data:`ROW_GATHER_MIN_RESULT_BYTES`, or empty; rows under :data:`ROW_GATHER_MIN_BYTES`
    read on one thread; a 0-d row; rows of uint64 or not integers."""
    n = table.shape[0] if table.ndim else 0
    if n == 0 or table.nbytes < PREFETCH_MIN_BYTES or table.dtype.hasobject or rows.ndim == 0:
        return None  # (a 0-d row reads NumPy's scalar)
    row_bytes = table.nbytes // n
    if rows.size * row_bytes < ROW_GATHER_MIN_RESULT_BYTES or not table.flags.c_contiguous:
        return None
    if rows.size == 0 or row_bytes == 0:  # (nothing to read: NumPy's empty result)
        return None
    threads = threads_for(rows.size * (row_bytes // table.itemsize), "gather")
    if row_bytes < ROW_GATHER_MIN_BYTES and threads == 1:
        return None
    numbers = _int64(rows)
    if numbers is None:
        return None
    # rows as unsigned words (by way of bytes: any element size), aligned: numba's one type
    word = _UNSIGNED[math.gcd(row_bytes, table.ctypes.data, 8)]
    source = table.reshape(n, -1).view(np.uint8).view(word)
    out = _kept_memory.empty((*rows.shape, *table.shape[1:]), table.dtype)
    (numbers,) = _read_first(None, np.ascontiguousarray(numbers).reshape(-1))
    written = out.reshape(numbers.shape[0], -1).view(np.uint8).view(word)
    clip, count = mode == "clip", numbers.shape[0]

    def share(lo: int, hi: int) -> int:
        return int(_take_rows(source, numbers, written, clip, PREFETCH_AHEAD, lo, hi))

    # the shares are in the output's order: the first that stopped holds the first row
    stops = [bad for bad in run_parts(share, count, threads) if bad >= 0]
    if stops:
        raise index_out_of_bounds(numbers[stops[0]], 0, n)
    return out


@_kernel
def _counting_up(x: Array) -> bool:
    """Whether the 1-D ``x`` holds ``0, 1, 2, ...``: one pass that stops at the first
    entry that does not, with nothing allocated."""
    for k in range(x.shape[0]):  # noqa: SIM110  (a loop numba compiles; no generator)
        if x[k] != k:
            return False
    return True


def counts_up(x: Array) -> bool | None:
    """Whether the entries of the integer array ``x``, flat, are ``0, 1, 2, ...``, by
    one compiled pass: in a call, 3-7x faster than NumPy's comparison with ``arange``
    (its allocations and second pass; benchmarks/README.md, "The at idiom's counting
    rows, compiled"); False for no entries, as ``_host.counts_up``; ``None`` where no
    kernel takes ``x`` (not int64 or int32, or not C-contiguous)."""
    if x.dtype not in _INDEX_TYPES or not x.flags.c_contiguous:
        return None
    return x.size > 0 and bool(_counting_up(x.reshape(-1)))  # (none: no rows to batch)


def warm_up() -> None:
    """Run one small kernel: what a process's first kernel call pays once (numba's CPU
    target set up, a loop loaded from the cache or compiled), paid by the loader's thread
    (``_loader.py``) instead."""
    all_in_range(np.zeros(1, np.int64), 0)


# -- ahead of first calls: the common signatures into numba's cache ---------------------------

_MOVED = ("u1", "u2", "u4", "u8")  # elements moved as bits: every dtype of 1, 2, 4, 8 bytes
_ADDED = ("f4", "f8", "u4", "u8")  # float32/64; int32/64 add and multiply as unsigned
_COMPARED = ("f4", "f8", "i4", "i8")  # min and max of float32/64 and int32/64
# the types combine_pairs combines in, by combiner: those compiled ahead
_PAIR_TYPES = {
    how: frozenset(np.dtype(kind) for kind in kinds)
    for how, kinds in ((None, _MOVED), (Named.ADD, _ADDED), (Named.MUL, _ADDED),
                       (Named.MIN, _COMPARED), (Named.MAX, _COMPARED))
}  # fmt: skip


def _array(dtype: str, ndim: int) -> Any:
    return numba.types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")


def common_signatures() -> list[tuple[Any, tuple[Any, ...]]]:
    """Each kernel with the argument types most calls give it: every element size moved
    as bits (replace, element gathers, with int64 and int32 indices), and float32/64 and
    int32/64 arithmetic, on C-contiguous arrays."""
    i64, flag = numba.types.int64, numba.types.boolean
    found: list[tuple[Any, tuple[Any, ...]]] = []
    for bits in _MOVED:
        for index in ("i8", "i4"):
            table, where, fill = _array(bits, 2), _array(index, 2), _array(bits, 1)
            for (_, how), loop in _TAKE_LAST.items():
                filled = (fill,) if how == FILL else ()
                found.append((loop, (table, where, table, i64, i64, flag, *filled)))
            cube, along = _array(bits, 3), (flag, i64, fill, i64, i64, flag)
            found.append((_take_along, (cube, _array(index, 3), cube, *along)))
    for combiner, types in ((None, _MOVED), (Named.ADD, _ADDED), (Named.MUL, _ADDED),
                            (Named.MIN, _COMPARED), (Named.MAX, _COMPARED)):  # fmt: skip
        for kind in types:
            table, cube = _array(kind, 2), _array(kind, 3)
            rows, tuples = _array("i8", 1), _array("i8", 2)
            written = (table, rows, table, i64, i64, flag, i64, i64)
            found.append((_ROW_KERNELS[combiner], written))
            if combiner is None:
                found.append((_copy_rows, written))
            found.append((_PAIR_KERNELS[combiner], (table, tuples, tuples, table)))
            found.append((_TUPLE_KERNELS[combiner], (table, tuples, rows, table, i64)))
            found.append((_ALONG_KERNELS[combiner], (cube, _array("i8", 3), cube, flag, i64)))
    for word in ("u8", "u4"):  # (rows of a multiple of 8 bytes; of 4: float32 vectors)
        words = _array(word, 2)
        found.append((_take_rows, (words, _array("i8", 1), words, flag, i64, i64, i64)))
    for index in ("i8", "i4"):
        found += [(_counting_up, (_array(index, 1),)), (_largest_unsigned, (_array(index, 1),))]
    found.append((_first_stop, (_array("i8", 1), i64, i64, i64)))  # (the element scatter's)
    return found


def compile_common(processes: int = 1) -> int:
    """Compile every kernel of :func:`common_signatures` into numba's cache on disk (or
    load it from there) on up to ``processes`` processes, and return how many signatures
    that is. Each kernel's signatures compile in one process: numba keeps one index file
    per kernel, which two processes writing at once could leave without one's entries."""
    signatures = common_signatures()
    shares = max(1, min(processes, len(dict.fromkeys(kernel for kernel, _ in signatures))))
    if shares == 1:
        _compile_share(0, 1)
    else:
        spawn = multiprocessing.get_context("spawn")  # (no fork of a threaded process)
        with ProcessPoolExecutor(shares, mp_context=spawn) as pool:
            list(pool.map(_compile_share, range(shares), [shares] * shares))
    return len(signatures)


def _compile_share(share: int, shares: int) -> None:
    """Compile the signatures of every ``shares``-th kernel from the ``share``-th."""
    signatures = common_signatures()
    kernels = list(dict.fromkeys(kernel for kernel, _ in signatures))[share::shares]
    for kernel, types in signatures:
        if kernel in kernels:
            kernel.compile(types)
