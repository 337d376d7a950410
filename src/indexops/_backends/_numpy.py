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

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        if table.shape[1] == 1:  # 1-D fancy assignment is faster than one of [n, 1] rows
            table[:, 0][rows] = values[:, 0]
        else:
            table[rows] = values
        return table

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        ufunc = _UFUNCS[how]
        if not _has_at_loop(ufunc, table.dtype):
            return None
        width = table.shape[1]
        if not table.flags.c_contiguous:
            ufunc.at(table, rows, values)
        elif width == 1:
            ufunc.at(table.reshape(-1), rows, values.reshape(-1))
        else:
            flat, columns = table.reshape(-1), np.arange(width)
            chunk = max(1, _AT_CHUNK_ELEMENTS // width)
            for start in range(0, rows.shape[0], chunk):
                elements = rows[start : start + chunk, None] * width + columns
                ufunc.at(flat, elements.reshape(-1), values[start : start + chunk].reshape(-1))
        return table


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
