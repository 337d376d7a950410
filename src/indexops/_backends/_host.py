"""Host memory helpers of the backends whose values can be on the host: NumPy's arrays,
and torch's CPU tensors read through NumPy views of the same memory (one NumPy
reduction costs less than a torch call on small index arrays)."""

from __future__ import annotations

import contextvars
import math
from types import ModuleType
from typing import Any, Literal

import numpy as np

from .._errors import index_out_of_bounds
from .._typing import Array
from .._validate.combiners import Named
from . import _kept_memory, _loader
from ._base import NativeScatter
from ._signed_zeros import MIN_MAX, wins

# NumPy's ufunc of each named combiner
UFUNCS = {Named.ADD: np.add, Named.MUL: np.multiply, Named.MIN: np.minimum, Named.MAX: np.maximum}

# the unsigned dtype of each itemsize, made once (np.dtype of a string costs more than the
# view it is for)
_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


# Up to this many entries an index array is read as a Python list: ``tolist`` and
# Python's min, max or set cost less than the fixed cost of a NumPy reduction or bitmap
# (about 1 us), and much less than torch's (benchmarks/HISTORY.md, "Thresholds of the
# host paths").
LIST_ENTRIES = 16

# put_in_order finds the last writers by a scatter into one entry per element of the
# array written where it has at most this many per write, else by a sort (measured:
# benchmarks/README.md, "The last writes")
OWNERS_PER_WRITE = 64


# at's index tuples up to this many elements go to the library's own element steps
# (take_elements, combine_elements) rather than the element plans and their kernels:
# reads 0.44-0.81 of the kernels' path at 1,536-4,096 elements, 0.88-1.06 at 6,144, 1.4-1.9
# from 16,384; torch's add 0.71-0.92, 1.04 at 6,144 (NumPy's add by ufunc.at stops at
# KERNEL_MIN_ELEMENTS: 1.08 at 1,536; benchmarks/README.md, "Issue 35: at's index tuples
# of few elements")
ELEMENT_STEPS_MAX_ELEMENTS = 2**12


def all_in_range(x: np.ndarray, high: int) -> bool:
    """Whether every entry of the integer array ``x`` lies in ``[0, high]``: Python's min
    and max of a small array's list; one compiled pass where a call has loaded the
    kernels already (this check never imports numba); else one reduction."""
    if x.size <= LIST_ENTRIES:
        return list_in_range(x.reshape(-1).tolist(), high)
    compiled = loaded_kernels()
    found = None if compiled is None else compiled.all_in_range(x, high)
    if found is not None:
        return found
    if x.dtype.kind == "i":  # negatives read as unsigned are above every bound
        unsigned = _UNSIGNED[x.dtype.itemsize]
        x = x.view(unsigned if x.dtype.isnative else unsigned.newbyteorder(x.dtype.byteorder))
    return high >= 0 and int(np.maximum.reduce(x, axis=None)) <= high


def list_in_range(values: list[int], high: int) -> bool:
    """Whether every int of ``values`` lies in ``[0, high]``."""
    return not values or (min(values) >= 0 and max(values) <= high)


def _listed_distinct_in_range(values: list[int], high: int) -> bool | None:
    """Whether the ints ``values`` are distinct, where they all lie in ``[0, high]``;
    else ``None``."""
    if values and (min(values) < 0 or max(values) > high):  # (list_in_range, one call less)
        return None
    return len(set(values)) == len(values)


def counts_up(x: np.ndarray) -> bool:
    """Whether the entries of the integer array ``x``, flat, are ``0, 1, 2, ...``: its
    ends first (most other arrays fail there), then one comparison with ``arange``."""
    x = x.reshape(-1)
    n = x.shape[0]
    if n == 0 or x[0] != 0 or x[-1] != n - 1:
        return False
    return bool(np.equal(x, np.arange(n, dtype=x.dtype)).all())


# Entries looked at first by rows_increase: most unsorted arrays fail there, before the
# pass over all of them
INCREASE_HEAD = 64
# Rows from which rows_increase looks: on fewer, the distinct count it could spare costs
# less than the look (1.4-2.4 us for 256-1024 rows against 1.7 us turned away at the head,
# 3.5 us through sorted rows)
INCREASE_MIN_ROWS = 2**10


def rows_increase(rows: np.ndarray) -> bool:
    """Whether each entry of the 1-D ``rows`` is above the one before, so that none
    repeats (a mask's positions, sorted distinct rows): one comparison of neighbours, after
    a look at the first :data:`INCREASE_HEAD`. False without looking for arrays of fewer
    than :data:`INCREASE_MIN_ROWS`, whose distinct count costs as little."""
    if rows.shape[0] < INCREASE_MIN_ROWS:
        return False
    head = rows[:INCREASE_HEAD]
    if not (head[1:] > head[:-1]).all():
        return False
    return bool((rows[1:] > rows[:-1]).all())


def count_distinct(rows: Array, n: int) -> int:
    """How many different values the 1-D ``rows`` (all in ``[0, n)``) hold: a 1-D bitmap,
    set by fancy assignment and counted (faster than a bitmap kept between calls and than
    ``np.put``), or the set of a small array's list.

    Guards: the fancy assignment checks each row; the bitmap has ``n`` entries, so
    callers use it only where ``n`` is at most 64 times the rows (``_execute/rows.py``)."""
    if rows.shape[0] <= LIST_ENTRIES:
        return len(set(rows.tolist()))
    bitmap = np.zeros(n, dtype=np.bool_)
    bitmap[rows] = True
    return int(np.count_nonzero(bitmap))


def element_numbers(views: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray | None:
    """The flat element numbers (C order) that index arrays, one per dim of an array of
    ``shape``, select, in the shape they broadcast to; ``None`` where an entry lies outside
    ``[0, n)`` of its dim (negative ones too)."""
    try:  # (an array for 0-d index arrays too, whose number NumPy gives as a scalar)
        return np.asarray(np.ravel_multi_index(tuple(views), shape))
    except ValueError:
        return None


def pairs_pass(x: Array, index: tuple[Array, ...]) -> ModuleType | None:
    """The kernels, where they have loaded and ``index`` is two index arrays into a 2-D
    ``x`` (their pass's arrays, ``_kernels.combine_pairs``); else ``None``."""
    return loaded_kernels() if len(index) == 2 and x.ndim == 2 else None


def combine_in_order(
    x: np.ndarray,
    index: tuple[np.ndarray, ...],
    values: np.ndarray,
    how: Named | None,
    copy: bool,
) -> np.ndarray | None:
    """``x`` (in place) or a copy with ``values`` combined into ``x[index]`` by ``how``
    (``None``: replace), repeated elements in order, where every entry of the index
    arrays (one per dim of ``x``, broadcast to ``values``' shape) lies in range: the
    kernels' pass for two arrays into a 2-D ``x`` where they have loaded (which counts
    negative entries from the end; ``_kernels.combine_pairs``), else, for a replace,
    :func:`put_in_order` at the element numbers, and for min and max of integers and
    real floats :func:`compare_at`. ``None``, nothing written, where an entry lies
    outside (negative ones too, but in the pass and :func:`compare_at`), and for a
    combiner none of them takes."""
    compiled = pairs_pass(x, index)
    compared = how in MIN_MAX and x.dtype.kind in "iuf"
    if compiled is None and how is not None and not compared:
        return None
    out = _kept_memory.copy(x, order="C") if copy else x
    if compiled is not None and compiled.combine_pairs(out, *index, values, how):
        return out
    if compared and how is not None:  # (how: min or max)
        return out if compare_at(out, index, values, how) else None
    if how is not None:
        return None
    numbers = element_numbers(list(index), tuple(x.shape))
    if numbers is None:
        return None
    put_in_order(out, numbers.reshape(-1), values.reshape(-1))
    return out


def quiet_arithmetic() -> np.errstate:
    """NumPy's error state for writes of floats in several steps (``ufunc.at`` chunk by
    chunk, or one row at a time) and for min and max by ``ufunc.at``, which (unlike the
    ufunc itself) flags each NaN it meets as an invalid value: no warning of overflow or
    NaN, whose IEEE-754 values are the results (as the compiled kernels, torch and JAX give
    them), and none made an error to stop a write midway."""
    return np.errstate(all="ignore")


def compare_at(
    out: np.ndarray, index: tuple[np.ndarray, ...], values: np.ndarray, how: Named
) -> bool:
    """``out[index] = how(out[index], values)`` one element at a time in order, by
    ``np.minimum.at`` or ``np.maximum.at`` (on the flat element numbers where every entry
    lies in range and ``out`` is C-contiguous: 1.6 us for 192 elements against 4.8 on
    the index arrays, whose negative entries NumPy counts from the end), then each zero
    of a result given IEEE-754's sign where a zero of that sign took part (``minimum``
    and ``maximum`` keep one zero or the other by argument order). False, nothing
    written, where an entry lies outside: NumPy's indexing checks them all before the
    write. For integers and real floats, whose NaN propagates through either."""
    numbers = element_numbers(list(index), tuple(out.shape)) if out.flags.c_contiguous else None
    target: np.ndarray = out if numbers is None else out.reshape(-1)
    at: Any = index if numbers is None else numbers.reshape(-1)
    if numbers is not None:
        values = values.reshape(-1)
    try:
        old = target[at]
    except IndexError:
        return False
    if out.dtype.kind != "f":
        UFUNCS[how].at(target, at, values)
        return True
    with quiet_arithmetic():
        UFUNCS[how].at(target, at, values)
    old_zeros, new_zeros = old == 0, values == 0
    if not (old_zeros.any() or new_zeros.any()):
        return True
    took_part = (new_zeros & wins(np, how, values)) | (old_zeros & wins(np, how, old))
    signed = took_part & (target[at] == 0)
    if signed.any():
        where = (
            at[signed]
            if numbers is not None
            else tuple(np.broadcast_to(entries, signed.shape)[signed] for entries in index)
        )
        target[where] = -0.0 if how is Named.MIN else 0.0
    return True


def put_in_order(out: np.ndarray, numbers: np.ndarray, values: np.ndarray) -> None:
    """``out.flat[numbers[k]] = values[k]`` for each ``k`` in order, the last write of
    a repeated number winning: by the kernels' one pass where they have loaded (none
    is loaded for this; :func:`~indexops._backends._kernels.put_in_order`), else by
    ``put`` of each element's last writer's value, found without relying on the order
    ``put`` applies repeats in. The last writers: for an ``out`` of at most
    :data:`OWNERS_PER_WRITE` elements per number, the maximum position of each
    element's writes, scattered by ``np.maximum.at`` (2.3-3.6 us for 8-192 numbers,
    0.33-0.72 of the sort below up to that size, 1.5-3.1 from 8 times more); else one
    stable sort, whose runs end at each number's last occurrence.

    ``numbers`` and ``values`` are 1-D and in ``[0, out.size)`` (the caller's check)."""
    compiled = loaded_kernels()
    if compiled is not None and compiled.put_in_order(out, numbers, values):
        return
    if out.size <= OWNERS_PER_WRITE * numbers.size:
        owners = np.zeros(out.size, dtype=np.intp)
        np.maximum.at(owners, numbers, np.arange(numbers.size))
        out.put(numbers, values.take(owners.take(numbers)))
        return
    order = numbers.argsort(kind="stable")
    ordered = numbers.take(order)
    last = np.empty(ordered.size, dtype=bool)
    last[-1:] = True
    np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
    if np.count_nonzero(last) == last.size:  # none repeats
        out.put(numbers, values)
        return
    kept = order.compress(last)
    out.put(numbers.take(kept), values.take(kept))


def holds_zero(x: np.ndarray) -> bool:
    """Whether some entry of ``x`` equals zero (-0.0 included, NaN not): one
    ``count_nonzero``, several times faster in NumPy than in torch on the CPU (and than a
    comparison and ``any``, which allocate)."""
    return not _none_zero(x)


def _none_zero(x: np.ndarray) -> bool:
    """Whether no entry of ``x`` equals zero: ``count_nonzero``, but for an extension
    type (kind ``V``, ml_dtypes' bfloat16) in non-native byte order, whose own nonzero
    test reads the bytes as native (a -0.0 stored big-endian reads as a tiny number
    there): a comparison, which NumPy makes on a native copy."""
    if x.dtype.isnative or x.dtype.kind != "V":
        return bool(np.count_nonzero(x) == x.size)
    return not bool(np.any(x == 0))


# Elements compared at a time by zero_rows: the comparisons stay in cache, and no
# temporary of the updates' size is allocated (and faulted in) on each call
ZERO_SCAN_BLOCK = 2**18


def zero_rows(x: np.ndarray) -> np.ndarray | None:
    """The positions of the rows of the 2-D ``x`` that hold a zero, ascending; ``None``
    where none does. The common case costs one ``count_nonzero`` (no temporary: 0.3 us
    for 128 float64, against 1.8 for a comparison and ``any``; -0.0 counts as zero, NaN
    does not, as with ``== 0``); where some entry is zero, one comparison per block of
    :data:`ZERO_SCAN_BLOCK` elements finds the rows. Positions, not a mask per row: ``any``
    along rows of 64 entries cost 3x the ``flatnonzero``."""
    if _none_zero(x):
        return None
    width = x.shape[1]
    step = max(1, ZERO_SCAN_BLOCK // max(1, width))
    blocks = None if x.shape[0] <= step else np.empty((step, width), dtype=np.bool_)
    found = []
    for start in range(0, x.shape[0], step):
        part = x[start : start + step]
        zero = np.equal(part, 0, out=None if blocks is None else blocks[: part.shape[0]])
        if zero.any():
            found.append(start + np.unique(np.flatnonzero(zero) // width))
    return np.concatenate(found) if found else None


# -- compiled kernels ------------------------------------------------------------------------

# True within indexops._testing.without_kernels(): the backends take their other paths
KERNELS_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "indexops_kernels_off", default=False
)

# The kernels run element gathers and row writes of at least this many elements (read, or
# updated). They cost less than NumPy's and torch's own calls from a few dozen elements
# on (benchmarks/README.md, "Compiled kernels"), but a process loads numba once (0.3-0.5 s,
# on a thread: ``_loader.py``) and each loop on its first call: small calls keep the
# library's own calls and never start that load.
KERNEL_MIN_ELEMENTS = 2**10


# Row takes of a signature of this many elements or more go through
# :func:`take_large_rows`, which tests each call's arrays (0.2-0.6 us that small calls do
# not pay): the fewest elements of a result of the compiled row gather's least size
# (``_kernels.ROW_GATHER_MIN_RESULT_BYTES``, 8 MiB, of elements of 16 bytes), which
# declines the tables, rows and results too small for it to pay.
LARGE_ROW_TAKE_MIN_ELEMENTS = 2**19


def takes_large_rows(elements: int) -> bool:
    """Whether a signature's row takes of ``elements`` elements go through
    :func:`take_large_rows`: the compiled row gather's size, or kept memory's."""
    return elements >= LARGE_ROW_TAKE_MIN_ELEMENTS or _kept_memory.may_keep(elements)


def take_large_rows(table: Array, rows: Array, mode: Literal["raise", "clip"]) -> Array:
    """``table.take(rows, axis=0, mode=mode)`` of NumPy arrays, for a large read: by the
    compiled row gather where it takes them (``_kernels.take_rows``: large reads of large
    tables), else by NumPy's ``take``, into kept memory where the result is large
    (:func:`_kept_memory.take_rows`). A row outside raises NumPy's :class:`IndexError`
    where ``mode`` is ``"raise"``."""
    loaded = kernels()
    taken = None if loaded is None else loaded.take_rows(table, rows, mode)
    return _kept_memory.take_rows(table, rows, mode) if taken is None else taken


def kernels() -> ModuleType | None:
    """The compiled host kernels (``_backends/_kernels.py``) where they have loaded, else
    ``None``: the first ask starts their load on a thread (``_loader.py``), and until it
    ends, as where numba is not installed or fails to import and within the test hook
    ``without_kernels()``, every call takes the paths it takes without them."""
    return None if KERNELS_OFF.get() else _loader.LOADER.ready()


def loaded_kernels() -> ModuleType | None:
    """:func:`kernels` where they have loaded already, else ``None`` (no load begun): for
    checks too small to be worth numba's import."""
    return None if KERNELS_OFF.get() else _loader.LOADER.loaded()


def kernels_expected() -> bool:
    """Whether the kernels run in this process now or will (numba installed, a load not
    failed): calls that might run before them must round as they do (``_loader.py``)."""
    return not KERNELS_OFF.get() and _loader.LOADER.expected()


def load_kernels() -> ModuleType | None:
    """:func:`kernels`, loaded now and waited for (``None`` without numba)."""
    return None if KERNELS_OFF.get() else _loader.LOADER.wait()


class HostKernels(NativeScatter):
    """A backend whose values can be on the host (NumPy; torch's CPU tensors), with the
    compiled kernels where they run: the element gather in one pass
    (:meth:`take_along_axis` and its clipped, filled and wrapped forms) and rows written
    in order (:meth:`apply_rows_in_order`). Elsewhere (numba missing, small work, arrays
    the kernels do not take or :meth:`host_arrays` refuses) the library's own element
    gather (:meth:`take_along_axis_natively`) and the base classes' ways run."""

    few_entries = LIST_ENTRIES

    def writes_distinct_rows(self, dtype: Any, how: Named | None, count: int, width: int) -> bool:
        """Writes the compiled kernels would not take (fewer than
        :data:`KERNEL_MIN_ELEMENTS` elements), where the library has one native step for
        them (:meth:`_writes_distinct_natively`)."""
        return count * width < KERNEL_MIN_ELEMENTS and self._writes_distinct_natively(
            dtype, how, count
        )

    def _writes_distinct_natively(self, dtype: Any, how: Named | None, count: int) -> bool:
        """Whether :meth:`write_distinct_rows` writes ``count`` rows of ``dtype`` with
        ``how`` in one native step, as fast as the backend's other ways or faster."""
        raise NotImplementedError

    def host_arrays(self, *arrays: Array) -> list[np.ndarray] | None:
        """NumPy arrays of the memory of ``arrays`` that the kernels may read and write,
        or ``None`` where they may not. Here: the arrays themselves (NumPy's), where
        their values may be read on the host (not in the test hook ``device_paths()``)."""
        return list(arrays) if all(self.values_on_host(a) for a in arrays) else None

    def from_host(self, x: np.ndarray) -> Array:
        """A kernel's result, a NumPy array, as an array of the library (no copy)."""
        return x

    def written_on_host(self, x: Array) -> None:
        """Tell the library that a kernel wrote into ``x`` in place. Here: nothing."""

    def distinct_in_range(self, rows: Array, high: int) -> bool | None:
        """:meth:`Backend.distinct_in_range`: up to :data:`LIST_ENTRIES` rows are read
        as one list, which answers both questions (distinct rows spare the writer its
        search for repeats); more, their range alone."""
        values = self.few_on_host(rows)
        if values is None:
            return super().distinct_in_range(rows, high)
        return _listed_distinct_in_range(values, high)

    def few_rows_in_range(self, index: Array, high: int) -> tuple[Array, bool] | None:
        """:meth:`Backend.few_rows_in_range`: up to :data:`LIST_ENTRIES` entries, sorted
        as one list (its ends are the range; 0.15 us less than ``min`` and ``max``)."""
        if not self.values_on_host(index):
            return None
        rows = self.reshape(index, (-1,))
        if rows.shape[0] > LIST_ENTRIES:
            return None
        values = sorted(rows.tolist())
        if not values or values[0] < 0 or values[-1] > high:
            return None
        wide = self.index_dtype()
        rows = rows if rows.dtype == wide else self.astype(rows, wide)  # (values in range)
        return rows, len(set(values)) == len(values)

    def few_rows_from_end(self, rows: Array, n: int) -> tuple[Array, bool] | None:
        """:meth:`Backend.few_rows_from_end`: up to :data:`LIST_ENTRIES` entries, counted
        from the end in the list and made an array again (``rows`` itself where none is
        negative)."""
        values = self.few_on_host(rows)
        if not values:
            return None
        low, high = min(values), max(values)
        if low < -n or high >= n:
            return None
        if low < 0:
            values = [k + n if k < 0 else k for k in values]
            counted = self.ints(values, rows.dtype, rows)
            rows = counted if rows.ndim == 1 else self.reshape(counted, tuple(rows.shape))
        return rows, len(set(values)) == len(values)

    def few_in_range(self, rows: Array, high: int) -> bool:
        """:meth:`Backend.few_in_range`: up to :data:`LIST_ENTRIES` rows on the host,
        read as one list."""
        values = self.few_on_host(rows)
        return values is not None and list_in_range(values, high)

    def few_on_host(self, x: Array) -> list[int] | None:
        """:meth:`Backend.few_on_host`: up to :data:`LIST_ENTRIES` entries."""
        if math.prod(x.shape) > LIST_ENTRIES or not self.values_on_host(x):
            return None
        values: list[int] = (x if x.ndim == 1 else x.reshape(-1)).tolist()
        return values

    def counts_up(self, x: Array, elements: int) -> bool:
        """Whether the values of the integer array ``x``, flat, are ``0, 1, 2, ...``,
        read where the kernels would take work of ``elements`` elements and
        :meth:`host_arrays` allows (else False: nothing is read)."""
        found = self._kernels_on(elements, x)
        if found is None:
            return False
        compiled, (values,) = found
        answer = compiled.counts_up(values)  # (one compiled pass where it takes values)
        return counts_up(values) if answer is None else answer

    def take_along_axis_natively(self, x: Array, indices: Array, axis: int) -> Array:
        """:meth:`take_along_axis` by the library's own calls."""
        raise NotImplementedError

    def take_along_axis(self, x: Array, indices: Array, axis: int) -> Array:
        """The compiled kernel where it runs, every index checked in the loop (one
        outside its dim, a broken promise, raises :class:`IndexError`), else
        :meth:`take_along_axis_natively`."""
        taken = self._compiled_take(x, indices, axis, wrap=False, outside="stop")
        if taken is None:
            return self.take_along_axis_natively(x, indices, axis)
        return self._inside(taken, x, indices, axis)

    def take_along_axis_from_end(
        self, x: Array, indices: Array, axis: int, outside: str, fill: Any = None
    ) -> Array | None:
        """The compiled kernel, which counts negative indices from the end as it reads,
        where it runs."""
        taken = self._compiled_take(x, indices, axis, wrap=True, outside=outside, fill=fill)
        return None if taken is None else self._inside(taken, x, indices, axis)

    def _inside(self, taken: tuple[Array, int], x: Array, indices: Array, axis: int) -> Array:
        """The result of a compiled element gather, or NumPy's :class:`IndexError` for
        the first index it found outside its dim."""
        result, bad = taken
        if bad >= 0:
            value = self.to_numpy(indices).reshape(-1)[bad]
            raise index_out_of_bounds(value, axis, x.shape[axis])
        return result

    def take_along_axis_clipped(self, x: Array, indices: Array, axis: int) -> Array:
        """The compiled kernel, which clips as it reads, where it runs."""
        taken = self._compiled_take(x, indices, axis, wrap=False, outside="clip")
        return super().take_along_axis_clipped(x, indices, axis) if taken is None else taken[0]

    def take_along_axis_filled(self, x: Array, indices: Array, axis: int, fill: Any) -> Array:
        """The compiled kernel, which reads ``fill`` for an index outside, where it runs."""
        taken = self._compiled_take(x, indices, axis, wrap=False, outside="fill", fill=fill)
        if taken is None:
            return super().take_along_axis_filled(x, indices, axis, fill)
        return taken[0]

    def take_along_axis_wrapped(
        self, x: Array, indices: Array, axis: int
    ) -> tuple[Array, int] | None:
        return self._compiled_take(x, indices, axis, wrap=True, outside="stop")

    scatters_elements_in_order = True

    def may_compile(self, x: Array, elements: int) -> bool:
        """Whether the work is large enough for the kernels, ``x``'s values are on the host
        and numba imports (the size first: no import for small work)."""
        return elements >= KERNEL_MIN_ELEMENTS and self.values_on_host(x) and kernels() is not None

    def scatter_along_axis_in_order(
        self,
        x: Array,
        axis: int,
        indices: Array,
        values: Array,
        how: Named | None,
        *,
        wrap: bool,
        outside: str,
        copy: bool,
    ) -> tuple[Array, int] | None:
        """The compiled kernel, where it runs."""
        found = self._kernels_on(math.prod(values.shape), x, indices, values)
        if found is None:
            return None
        compiled, arrays = found
        done = compiled.scatter_along_axis(
            *arrays, axis, how, wrap=wrap, outside=outside, copy=copy
        )
        if done is None:
            return None
        if not copy:
            self.written_on_host(x)
            return x, done[1]
        return self.from_host(done[0]), done[1]

    def scatter_tuples_from_end(
        self, data: Array, indices: Array, updates: Array, how: Named | None
    ) -> tuple[Array, int] | None:
        """The compiled kernel, which writes a copy of ``data`` and counts negative
        indices from the end and checks them as it writes, where it runs."""
        found = self._kernels_on(math.prod(updates.shape), data, indices, updates)
        done = None if found is None else found[0].scatter_tuples(*found[1], how)
        return None if done is None else (self.from_host(done[0]), done[1])

    def takes_elements(self, count: int) -> bool:
        """Index tuples of up to :data:`ELEMENT_STEPS_MAX_ELEMENTS` elements: more go
        to the element plans, whose compiled kernels take them in one pass."""
        return 0 < count <= ELEMENT_STEPS_MAX_ELEMENTS

    def applies_rows_in_order(self, elements: int) -> bool:
        """Writes of :data:`KERNEL_MIN_ELEMENTS` elements or more: the kernels' size."""
        return elements >= KERNEL_MIN_ELEMENTS

    def apply_rows_in_order(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named | None,
        *,
        wrap: bool = False,
        outside: str = "stop",
        copy: bool = False,
    ) -> Array | None:
        """The compiled kernel, where it runs: :meth:`row_pass` for one call."""
        if rows.shape[0] * table.shape[1] < KERNEL_MIN_ELEMENTS:
            return None
        return RowPass(self, how)(table, rows, values, wrap=wrap, outside=outside, copy=copy)

    def row_pass(self, how: Named | None, elements: int) -> RowPass | None:
        """:meth:`apply_rows_in_order` prepared for one combiner and writes of
        ``elements`` elements (:class:`RowPass`), where the kernels would take them."""
        return RowPass(self, how) if self.applies_rows_in_order(elements) else None

    def _compiled_take(
        self, x: Array, indices: Array, axis: int, **options: Any
    ) -> tuple[Array, int] | None:
        """The compiled element gather (``_kernels.take_along_axis``) where it runs."""
        found = self._kernels_on(math.prod(indices.shape), x, indices)
        taken = None if found is None else found[0].take_along_axis(*found[1], axis, **options)
        return None if taken is None else (self.from_host(taken[0]), taken[1])

    def _kernels_on(
        self, elements: int, *arrays: Array
    ) -> tuple[ModuleType, list[np.ndarray]] | None:
        """The kernels and the host views of ``arrays`` for work of ``elements`` elements,
        or ``None``: small work first (no views made, numba not imported), then arrays
        whose values the kernels may not touch (traced ones: no kernel lookup)."""
        if elements < KERNEL_MIN_ELEMENTS:
            return None
        views = self.host_arrays(*arrays)
        compiled = None if views is None else kernels()
        return None if compiled is None or views is None else (compiled, views)


class RowPass:
    """:meth:`HostKernels.apply_rows_in_order` prepared for one combiner (a row writer
    keeps one per signature): the kernels' :class:`~indexops._backends._kernels.RowPlan`
    of the write, made by the first call that finds the kernels loaded, for its table's
    dtype and shape (those of a writer's signature), and kept. Each call asks
    whether the kernels run (not within ``without_kernels()``) and whether the arrays'
    memory may be handed to them (:meth:`HostKernels.host_arrays`). Safe from many
    threads: a plan is immutable, and two threads that make one make the same."""

    __slots__ = ("_plan", "backend", "how")

    def __init__(self, backend: HostKernels, how: Named | None) -> None:
        self.backend, self.how = backend, how
        self._plan: Any = None

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
        """:meth:`HostKernels.apply_rows_in_order` of these arrays."""
        compiled = kernels()
        if compiled is None:
            return None
        backend = self.backend
        arrays = backend.host_arrays(table, rows, values)
        if arrays is None:
            return None
        plan = self._plan
        if plan is None:
            plan = compiled.row_plan(arrays[0].dtype, self.how, arrays[0].shape)
            if plan is None:  # (no kernel combines this dtype so)
                return None
            self._plan = plan
        written = plan(*arrays, wrap=wrap, outside=outside, copy=copy)  # (None: another dtype)
        if written is None:
            return None
        if copy:
            return backend.from_host(written)
        backend.written_on_host(table)
        return table
