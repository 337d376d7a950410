"""Dask: lazy, chunked arrays that cannot be written; every op builds a graph and computes
nothing. Gathers and window reads use Dask's own chunked indexing; row scatters are chains
of per-chunk tasks (see :mod:`._dask_graph`); value checks raise when the graph runs."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import array_api_compat as compat
import dask.array as da
import numpy as np

from .._combiners import Combiner
from .._errors import type_error, value_error
from .._typing import Array
from . import _dask_graph
from ._base import Backend, ValuesUnknown


class _Namespace(ModuleType):
    """Dask's Array API namespace with a ``reshape`` that also takes empty arrays (Dask's
    fails on some of them); everything else is the namespace's own."""

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(xp.__name__)
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        return getattr(self._xp, name)

    def reshape(self, x: Array, shape: tuple[int, ...], **kwargs: Any) -> Array:
        if math.prod(x.shape) != 0:
            return self._xp.reshape(x, shape, **kwargs)
        known = math.prod(n for n in shape if n != -1)
        if known == 0 and -1 in shape:  # -1 next to another 0 could be anything
            raise ValueError(f"cannot reshape an empty array to {shape}")
        return da.empty(tuple(0 if n == -1 else n for n in shape), dtype=x.dtype)


# the arguments that may be NumPy arrays next to Dask ones (their values are read while
# the graph is built); "start_indices[0]", "idx (array 1)" and the like count too
INDEX_ARGUMENTS = ("scatter_indices", "start_indices", "index", "idx")


class DaskBackend(Backend):
    name = "dask"
    chunks_generic = False  # True in the "generic" variant: chunks get the generic backend

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(_Namespace(xp))

    def check_arrays(self, op: str, arrays: dict[str, Array]) -> None:
        """Beyond the base checks: NumPy arrays only as index arrays, and only Dask arrays
        whose chunk sizes are known (a graph is built from them)."""
        _check_numpy_roles(op, arrays)
        for name, x in arrays.items():
            if any(math.isnan(n) for n in x.shape):
                raise value_error(
                    op,
                    f"{name}.shape",
                    tuple(x.shape),
                    "a shape Dask knows; this array's chunk sizes are unknown (as after "
                    f"boolean indexing): call {name.split()[0]}.compute_chunk_sizes() first, "
                    "which computes them",
                )
        super().check_arrays(op, arrays)

    def why_not_writable(self, x: Array) -> str | None:
        return "Dask arrays are lazy graphs, and each op returns a new one"

    def _make_variant(self, name: str) -> Backend:
        variant = copy.copy(self)
        variant._variants = {}
        if name == "generic":
            variant.chunks_generic = True
        else:
            variant.host_reads = False
        return variant

    # Dask's own functions with Python scalars: array-api-compat's make arrays of the
    # scalars, chunked differently, that Dask then rechunks (hundreds of tasks)

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        if low is not None:
            x = da.maximum(x, low)
        return x if high is None else da.minimum(x, high)

    def where(self, condition: Array, a: Any, b: Any) -> Array:
        return da.where(condition, a, b)

    def copy(self, x: Array) -> Array:
        return x.copy()  # a new Array of the same (immutable) graph

    def write_rows_by_blocks(
        self,
        x: Array,
        rows_shape: tuple[int, int],
        rows: Array,
        values: Array,
        combiner: Combiner,
        keep: Array | None,
    ) -> Array | None:
        if 0 in (rows.shape[0], *x.shape):
            return self.copy(x)
        return _dask_graph.scatter_rows(
            x, rows_shape, rows, values, combiner, keep, self.chunks_generic
        )

    def raise_lazily(
        self,
        result: Array,
        bad: Array,
        culprit: Array,
        error: Callable[[int, int], Exception],
    ) -> Array:
        return _dask_graph.raise_lazily(result, bad, culprit, error)

    def host_ints(self, x: Array) -> tuple[int, ...]:
        raise ValuesUnknown("lazy dask")

    def for_indices(self, indices: Array) -> Backend:
        if isinstance(indices, np.ndarray):  # known on the host: rows are found now
            from . import backend_for

            return backend_for("indices", indices=indices)
        return self


def _check_numpy_roles(op: str, arrays: dict[str, Array]) -> None:
    """Raise a named error for NumPy arrays next to Dask ones other than index arrays
    (docs/beyond_one_machine.md: a Dask operand takes NumPy indices)."""
    misplaced = [
        name
        for name, x in arrays.items()
        if compat.is_numpy_array(x) and not name.startswith(INDEX_ARGUMENTS)
    ]
    if misplaced:
        found = {name: f"{type(x).__module__}.{type(x).__name__}" for name, x in arrays.items()}
        raise type_error(
            op,
            ", ".join(misplaced),
            found,
            "Dask arrays, where NumPy arrays may stand only for index arrays "
            f"({', '.join(INDEX_ARGUMENTS)}) next to Dask ones; wrap the others with "
            "dask.array.from_array, or compute the Dask ones",
        )
