"""CuPy: arrays on a GPU (never read on the host), fancy assignment and ``ufunc.at``."""

from __future__ import annotations

from typing import Any

from .._typing import Array
from .._validate.combiners import Named
from ._base import NativeScatter, ValuesUnknown

# cupy's ufunc.at runs on these dtypes only (float16 for add alone); others take passes
_AT_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")


class CupyBackend(NativeScatter):
    name = "cupy"

    def why_not_writable(self, x: Array) -> str | None:
        return None

    def shares_memory(self, a: Array, b: Array) -> bool:
        import cupy

        return bool(cupy.may_share_memory(a, b))

    def to_numpy(self, x: Array) -> Any:
        return x.get()

    def host_ints(self, x: Array) -> tuple[int, ...]:
        try:
            return tuple(int(v) for v in x.tolist())
        except Exception as exc:  # pragma: no cover - cupy raises its own errors
            raise ValuesUnknown("cupy") from exc

    # CuPy's own functions: array-api-compat's clip assigns through boolean masks, and each
    # of those waits for the GPU

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        import cupy

        return cupy.arange(n, dtype=dtype)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        import cupy

        return cupy.full(shape, value, dtype=dtype)

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        import cupy

        if low is not None:
            x = cupy.maximum(x, low)
        return x if high is None else cupy.minimum(x, high)

    def where(self, condition: Array, a: Any, b: Any) -> Array:
        import cupy

        return cupy.where(condition, a, b)

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        table[rows] = values
        return table

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Any:
        import cupy

        dtypes = _AT_DTYPES + (("float16",) if how is Named.ADD else ())
        ufunc = {Named.ADD: cupy.add, Named.MIN: cupy.minimum, Named.MAX: cupy.maximum}.get(how)
        if ufunc is None or table.dtype.name not in dtypes:
            return None
        ufunc.at(table, rows, values)
        return table
