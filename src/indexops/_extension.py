"""The internal interface for packages built on indexops (today: ``indexops_npu``).

Not public API: it changes together with those packages. It gives them what they need
without reaching into indexops' private modules: the error factory (one message style),
attribute parsing, scatter_update's shape rule, and row reads and writes into an array of
any backend, with row numbers given on the host as NumPy integers.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._backends import Backend, backend_for
from ._errors import type_error, value_error
from ._execute.writes import write_rows
from ._ops.scatter_update import HEADS as scatter_update_heads
from ._ops.scatter_update import expected_src_shape as scatter_update_src_shape
from ._typing import Array
from ._validate.arguments import as_int, as_tuple
from ._validate.combiners import REPLACE

__all__ = [
    "Array",
    "as_int",
    "as_tuple",
    "host_int64",
    "namespace",
    "put_rows",
    "require_in_place",
    "scatter_update_heads",
    "scatter_update_src_shape",
    "take_rows",
    "type_error",
    "value_error",
]


def namespace(op: str, **arrays: Array) -> ModuleType:
    """The Array API namespace shared by ``arrays``, with indexops' error if there is none."""
    return backend_for(op, **arrays).xp


def require_in_place(op: str, x: Array, name: str = "input") -> None:
    """Raise, naming the argument ``name``, unless ``x`` can be written in place (an op
    that always writes in place: it has no ``copy`` to pass)."""
    reason = backend_for(op, **{name: x}).why_not_writable(x)
    if reason is not None:
        raise value_error(
            op,
            name,
            f"a {type(x).__module__}.{type(x).__name__} that cannot be written in place",
            f"an array {op} can write in place, as the device writes its cache ({reason}); "
            "pass a writable copy",
        )


def host_int64(x: Array) -> np.ndarray:
    """An integer array of any backend as an int64 NumPy array on the host (a copy where
    it lives elsewhere)."""
    return np.asarray(backend_for("host_int64", x=x).to_numpy(x), dtype=np.int64)


def _device_rows(backend: Backend, like: Array, rows: np.ndarray) -> Array:
    return backend.xp.asarray(rows.astype(np.int64), device=backend.device(like))


def take_rows(x: Array, rows_shape: tuple[int, int], rows: np.ndarray) -> Array:
    """Rows ``rows`` (in range) of ``x`` seen as a 2-D array of ``rows_shape``."""
    backend = backend_for("take_rows", x=x)
    table = backend.xp.reshape(x, rows_shape)
    return backend.take_rows(table, _device_rows(backend, x, rows))


def put_rows(x: Array, rows_shape: tuple[int, int], rows: np.ndarray, values: Array) -> None:
    """Write ``values[k]`` into row ``rows[k]`` of ``x`` (seen as ``rows_shape``), in place.

    ``rows`` are distinct and in range; ``values`` is ``[len(rows), rows_shape[1]]``.
    """
    backend = backend_for("put_rows", x=x, values=values)
    device_rows = _device_rows(backend, x, rows)
    write_rows(backend, x, rows_shape, device_rows, values, REPLACE, in_place=True, unique=True)
