"""Host memory helpers of the backends whose values can be on the host: NumPy's arrays,
and torch's CPU tensors read through NumPy views of the same memory (one NumPy
reduction costs less than a torch call on small index arrays)."""

from __future__ import annotations

import numpy as np

from .._typing import Array

# the unsigned dtype of each itemsize, made once (np.dtype of a string costs more than the
# view it is for)
_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


# Up to this many entries an index array is read as a Python list: ``tolist`` and
# Python's min, max or set cost less than the fixed cost of a NumPy reduction or bitmap
# (about 1 us), and much less than torch's (benchmarks/HISTORY.md, "Thresholds of the
# host paths").
LIST_ENTRIES = 16


def all_in_range(x: np.ndarray, high: int) -> bool:
    """Whether every entry of the integer array ``x`` lies in ``[0, high]``: one reduction,
    or Python's min and max of a small array's list."""
    if x.size <= LIST_ENTRIES:
        return list_in_range(x.reshape(-1).tolist(), high)
    if x.dtype.kind == "i":  # negatives read as unsigned are above every bound
        unsigned = _UNSIGNED[x.dtype.itemsize]
        x = x.view(unsigned if x.dtype.isnative else unsigned.newbyteorder(x.dtype.byteorder))
    return high >= 0 and int(np.maximum.reduce(x, axis=None)) <= high


def list_in_range(values: list[int], high: int) -> bool:
    """Whether every int of ``values`` lies in ``[0, high]``."""
    return not values or (min(values) >= 0 and max(values) <= high)


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


def holds_zero(x: np.ndarray) -> bool:
    """Whether some entry of ``x`` equals zero (-0.0 included): one comparison and one
    ``any``, several times faster in NumPy than in torch on the CPU."""
    return bool(np.equal(x, 0).any())


# Elements compared at a time by zero_rows: the comparisons stay in cache, and no
# temporary of the updates' size is allocated (and faulted in) on each call
ZERO_SCAN_BLOCK = 2**18


def zero_rows(x: np.ndarray) -> np.ndarray | None:
    """The positions of the rows of the 2-D ``x`` that hold a zero, ascending; ``None``
    where none does (the common case costs one comparison and a flat ``any`` per block of
    :data:`ZERO_SCAN_BLOCK` elements). Positions, not a mask per row: ``any`` along rows
    of 64 entries cost 3x the ``flatnonzero``."""
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
