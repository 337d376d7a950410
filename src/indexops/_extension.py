"""The internal interface for packages built on indexops (today: ``indexops_npu``).

Not public API: it changes together with those packages. It gives them what they need
without reaching into indexops' private modules: the error factory (one message style),
attribute parsing, scatter_update's shape rule, and row reads and writes into an array of
any backend, with row numbers given on the host as NumPy integers.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import array_api_compat as compat
import numpy as np

from ._backend import as_int, as_tuple, namespace, writes_in_place
from ._combiners import resolve
from ._errors import type_error, value_error
from ._rows import take_rows as _take_rows
from ._rows import write_rows
from ._scatter_update import expected_src_shape as scatter_update_src_shape

Array = Any

__all__ = [
    "Array",
    "as_int",
    "as_tuple",
    "host_ints",
    "namespace",
    "put_rows",
    "require_in_place",
    "scatter_update_src_shape",
    "take_rows",
    "type_error",
    "value_error",
]


def require_in_place(op: str, x: Array, name: str = "input") -> None:
    """Raise the ``copy=False`` error unless ``x`` can be written in place."""
    writes_in_place(op, x, False, name=name)


def host_ints(x: Array) -> np.ndarray:
    """An integer array of any backend as an int64 NumPy array on the host."""
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy().astype(np.int64)
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return np.asarray(x.get(), dtype=np.int64)
    try:
        return np.asarray(x, dtype=np.int64)
    except (TypeError, ValueError):
        return np.from_dlpack(x).astype(np.int64)


def _device_rows(xp: ModuleType, like: Array, rows: np.ndarray) -> Array:
    return xp.asarray(rows.astype(np.int64), device=compat.device(like))


def take_rows(x: Array, rows_shape: tuple[int, int], rows: np.ndarray) -> Array:
    """Rows ``rows`` (in range) of ``x`` seen as a 2-D array of ``rows_shape``."""
    xp = namespace("take_rows", x=x)
    return _take_rows(xp, xp.reshape(x, rows_shape), _device_rows(xp, x, rows))


def put_rows(x: Array, rows_shape: tuple[int, int], rows: np.ndarray, values: Array) -> None:
    """Write ``values[k]`` into row ``rows[k]`` of ``x`` (seen as ``rows_shape``), in place.

    ``rows`` are distinct and in range; ``values`` is ``[len(rows), rows_shape[1]]``.
    """
    xp = namespace("put_rows", x=x, values=values)
    replace = resolve("put_rows", xp, None)
    device_rows = _device_rows(xp, x, rows)
    write_rows(xp, x, rows_shape, device_rows, values, replace, in_place=True, unique=True)
