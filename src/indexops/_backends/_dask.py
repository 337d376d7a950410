"""Dask: lazy, chunked arrays that cannot be written; every op builds a graph and computes
nothing. Gathers and window reads use Dask's own chunked indexing; row scatters are chains
of per-chunk tasks (see :mod:`indexops._execute.chunked`); value checks raise when the graph
runs."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import array_api_compat as compat
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._errors import type_error, value_error
from .._typing import Array
from ._base import Backend, ValuesUnknown
from ._dtypes import in_byte_order


class _Namespace(ModuleType):
    """Dask's Array API namespace with a ``reshape`` that also takes empty arrays (Dask's
    fails on some of them); everything else is the namespace's own."""

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(xp.__name__)
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        return getattr(self._xp, name)

    def take(self, x: Array, indices: Any, **kwargs: Any) -> Array:
        """Dask's ``take``, each block in ``x``'s dtype: a block gathered from several
        chunks is NumPy's ``concatenate`` of their pieces, which gives the native byte
        order, while the graph keeps ``x``'s."""
        taken = self._xp.take(x, indices, **kwargs)
        if x.dtype.isnative or not isinstance(taken, da.Array):
            return taken
        name = f"indexops-in-dtype-{tokenize(taken.name, x.dtype.str, x.dtype.name)}"
        return da.map_blocks(_in_dtype, taken, x.dtype, dtype=x.dtype, name=name)

    def reshape(self, x: Array, shape: tuple[int, ...], **kwargs: Any) -> Array:
        if math.prod(x.shape) != 0:
            return self._xp.reshape(x, shape, **kwargs)
        known = math.prod(n for n in shape if n != -1)
        if known == 0 and -1 in shape:  # -1 next to another 0 could be anything
            raise ValueError(f"cannot reshape an empty array to {shape}")
        empty = tuple(0 if n == -1 else n for n in shape)
        return da.empty(
            empty,
            dtype=x.dtype,
            chunks=chunks_of(empty),
            name=created_name("empty", empty, x.dtype),
        )


def _in_dtype(block: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``block`` in ``dtype``, the same values in ``dtype``'s byte order."""
    return block.astype(dtype, copy=False)


def chunks_of(shape: tuple[int, ...]) -> Any:
    """The chunks of an array the backend creates: Dask's automatic ones, but one chunk
    for an empty array (Dask's automatic chunking divides by zero for some empty shapes of
    10 dims or more)."""
    return shape if math.prod(shape) == 0 else "auto"


def created_name(kind: str, shape: tuple[int, ...], dtype: Any, *values: Any) -> str:
    """The graph name of a creation function's array (its chunks follow from the shape
    and dtype): Dask's own name tokenizes the function it wraps by pickling it, which cost
    most of a small op's time to build its graph."""
    dtype = np.dtype(dtype)  # (its code and its name: ml_dtypes' 1-byte types share "<V1")
    return f"indexops-{kind}-{tokenize(tuple(shape), dtype.str, dtype.name, *values)}"


# the arguments that may be NumPy arrays next to Dask ones (their values are read while
# the graph is built); "start_indices[0]", "idx (array 1)" and the like count too
INDEX_ARGUMENTS = ("scatter_indices", "start_indices", "index", "idx", "indices")


class DaskBackend(Backend):
    name = "dask"
    chunked = True

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        name = created_name("full", shape, dtype, value)
        return da.full(shape, value, dtype=dtype, chunks=chunks_of(shape), name=name)

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

    def check_pair(self, op: str, x: Array, y: Array) -> None:
        self.check_arrays(op, {"x": x, "y": y})  # unknown chunk sizes too, whatever the device

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
        return in_byte_order(da.where(condition, a, b), a, b)

    def copy(self, x: Array) -> Array:
        return x.copy()  # a new Array of the same (immutable) graph

    def raise_lazily(
        self,
        result: Array,
        bad: Array,
        culprit: Array,
        error: Callable[[int, int], Exception],
    ) -> Array:
        return _raise_lazily(result, bad, culprit, error)

    def host_ints(self, x: Array) -> tuple[int, ...]:
        raise ValuesUnknown("lazy dask")


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


def _first_bad(bad: Array, culprit: Array, start: int) -> tuple[int, int] | None:
    """The first position (counted from ``start``) where ``bad``, with its culprit."""
    hits = np.flatnonzero(np.asarray(bad))
    if hits.size == 0:
        return None
    return start + int(hits[0]), int(np.asarray(culprit)[hits[0]])


def _raise_first(error: Callable[[int, int], Exception], *firsts: Any) -> bool:
    for found in firsts:
        if found is not None:
            raise error(*found)
    return True


def _after(block: Array, passed: bool) -> Array:
    return block


def _raise_lazily(
    result: da.Array, bad: da.Array, culprit: da.Array, error: Callable[[int, int], Exception]
) -> da.Array:
    """``result``, made to raise ``error(position, culprit[position])`` for the first
    ``position`` where the 1-D ``bad`` is True, when it is computed (nothing is read now).

    One task per block of ``bad`` finds its first hit, one task raises for the earliest,
    and every block of ``result`` waits for that task.
    """
    culprit = culprit.rechunk(bad.chunks)
    name = f"check-{tokenize(bad, culprit, error)}"
    starts = _offsets(bad.chunks[0])
    layer: dict[Any, Any] = {
        (f"{name}-block", u): (_first_bad, (bad.name, u), (culprit.name, u), start)
        for u, start in enumerate(starts)
    }
    verdict = (f"{name}-verdict",)
    layer[verdict] = (_raise_first, error, *(key for key in layer))
    out = f"{name}-checked"
    for index in itertools.product(*(range(len(c)) for c in result.chunks)):
        out_key = (out, *index)
        layer[out_key] = (_after, (result.name, *index), verdict)
    dependencies: list[Any] = [result, bad, culprit]
    graph = HighLevelGraph.from_collections(out, layer, dependencies=dependencies)
    return da.Array(graph, out, chunks=result.chunks, dtype=result.dtype, meta=result._meta)


def _offsets(chunks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(itertools.accumulate((0, *chunks[:-1])))
