"""What indexops needs to know about the array library it was handed.

Everything backend-specific that is not a fast path lives here: recognising arrays,
naming the backend, integer index checks, and whether an array can be written in place.
"""

from __future__ import annotations

import enum
import functools
from types import ModuleType
from typing import Any

import array_api_compat as compat

from ._errors import type_error, value_error

Array = Any


class Backend(enum.Enum):
    """The array libraries that have native fast paths; everything else is GENERIC."""

    NUMPY = "numpy"
    TORCH = "torch"
    JAX = "jax"
    CUPY = "cupy"
    DASK = "dask"
    GENERIC = "generic"


_DETECTORS = (
    (compat.is_numpy_array, Backend.NUMPY),
    (compat.is_torch_array, Backend.TORCH),
    (compat.is_jax_array, Backend.JAX),
    (compat.is_cupy_array, Backend.CUPY),
    (compat.is_dask_array, Backend.DASK),
)


def backend_of(x: Array) -> Backend:
    """The :class:`Backend` of array ``x``."""
    for is_backend, backend in _DETECTORS:
        if is_backend(x):
            return backend
    return Backend.GENERIC


def namespace(op: str, **arrays: Array) -> ModuleType:
    """The Array API namespace shared by ``arrays``, with a clear error if there is none."""
    kinds = {type(x) for x in arrays.values()}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind in _NAMESPACE_OF_TYPE:
        return _NAMESPACE_OF_TYPE[kind]  # one array type seen before: its namespace is fixed
    for name, x in arrays.items():
        if not compat.is_array_api_obj(x) or isinstance(x, (int, float, complex, bool)):
            raise type_error(
                op, name, _short(x), "an array of an Array API library (numpy, torch, jax, ...)"
            )
    try:
        xp = compat.array_namespace(*arrays.values())
    except TypeError as exc:
        found = {name: f"{type(x).__module__}.{type(x).__name__}" for name, x in arrays.items()}
        raise type_error(op, ", ".join(arrays), found, "arrays of one library") from exc
    if kind is not None:
        _NAMESPACE_OF_TYPE[kind] = xp
    return xp


_NAMESPACE_OF_TYPE: dict[type | None, ModuleType] = {}


def has_kind(xp: ModuleType, dtype: Any, kind: str) -> bool:
    """``xp.isdtype(dtype, kind)``, remembered per dtype (isdtype costs microseconds)."""
    try:
        return _cached_kind(xp, dtype, kind)
    except TypeError:  # an unhashable dtype object
        return bool(xp.isdtype(dtype, kind))


@functools.lru_cache(maxsize=256)
def _cached_kind(xp: ModuleType, dtype: Any, kind: str) -> bool:
    return bool(xp.isdtype(dtype, kind))


def _short(x: Any) -> str:
    text = repr(x)
    kind = type(x).__name__
    return f"{kind} {text[:60]}{'...' if len(text) > 60 else ''}"


def check_integer_array(op: str, name: str, x: Array, xp: ModuleType) -> None:
    """Raise unless ``x`` has a signed or unsigned integer dtype (bool is not an integer)."""
    if not has_kind(xp, x.dtype, "integral"):
        raise type_error(op, f"{name}.dtype", str(x.dtype), "an integer dtype (signed or unsigned)")


def index_dtype(xp: ModuleType) -> Any:
    """The dtype of positions and start indices: int64, or int32 where the namespace has no
    64-bit integers (JAX without ``jax_enable_x64``, where asking for int64 warns)."""
    if compat.is_jax_namespace(xp):
        import jax

        if not getattr(jax.config, "jax_enable_x64", True):
            return xp.int32
    return xp.int64


def index_constant(xp: ModuleType, values: int | tuple[int, ...], like: Array) -> Array:
    """An array of ``values`` in :func:`index_dtype` on the device of ``like``, made once.

    Copying a small host value to a GPU waits for the device's queue, so constants that
    every call needs (clamp bounds) are kept; they are never written to.
    """
    device, dtype = compat.device(like), index_dtype(xp)
    try:
        return _cached_constant(xp, device, dtype, values)
    except TypeError:  # an unhashable device object
        return xp.asarray(values, dtype=dtype, device=device)


@functools.lru_cache(maxsize=256)
def _cached_constant(xp: ModuleType, device: Any, dtype: Any, values: Any) -> Array:
    return xp.asarray(values, dtype=dtype, device=device)


def to_index(xp: ModuleType, x: Array) -> Array:
    """Integer ``x`` in :func:`index_dtype`; unsigned values above its range saturate at its
    maximum instead of wrapping to negatives."""
    dtype = index_dtype(xp)
    if x.dtype == dtype:
        return x
    wide = xp.astype(x, dtype)
    top = xp.iinfo(dtype).max
    if has_kind(xp, x.dtype, "unsigned integer") and xp.iinfo(x.dtype).max > top:
        wide = xp.where(wide < 0, index_constant(xp, top, x), wide)
    return wide


def is_writable(x: Array) -> bool:
    """Whether ``x`` can be written in place."""
    backend = backend_of(x)
    if backend in (Backend.JAX, Backend.DASK):
        return False
    if backend is Backend.NUMPY:
        return bool(x.flags.writeable)
    if backend is Backend.TORCH:
        return not (x.requires_grad and x.is_leaf) and not x.is_inference()
    return hasattr(type(x), "__setitem__")


def writes_in_place(op: str, x: Array, copy: bool | None, name: str = "input") -> bool:
    """Resolve the ``copy`` argument: whether the op writes into ``x`` itself.

    ``copy=True`` never writes into ``x``; ``copy=False`` must, and fails for arrays that
    cannot be written; ``copy=None`` writes in place where possible.
    """
    if copy is None:
        return is_writable(x)
    if copy is True:
        return False
    if copy is not False:
        raise type_error(op, "copy", copy, "True, False or None")
    if not is_writable(x):
        raise value_error(
            op,
            "copy",
            False,
            f"{name} ({type(x).__module__}.{type(x).__name__}) cannot be written in place; "
            "pass copy=True for a new array or copy=None to copy only when needed",
        )
    return True


def shares_memory(a: Array, b: Array) -> bool:
    """Whether writes into ``a`` are seen by ``b`` (conservatively False when unknown)."""
    backend = backend_of(a)
    if backend is Backend.NUMPY:
        import numpy as np

        return bool(np.may_share_memory(a, b))
    if backend is Backend.TORCH:
        return bool(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
    if backend is Backend.CUPY:
        import cupy

        return bool(cupy.may_share_memory(a, b))
    return False


def as_tuple(op: str, name: str, value: Any) -> tuple[int, ...]:
    """A sequence of Python ints (the attribute form of StableHLO's 1-D si64 constants)."""
    if type(value) is tuple and all(type(item) is int for item in value):
        return value  # the common case, kept cheap: ops are called in inner loops
    try:
        items = tuple(value)
    except TypeError:
        raise type_error(op, name, value, "a sequence of ints") from None
    for item in items:
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise type_error(op, name, value, "a sequence of ints")
    return tuple(int(item.__index__()) for item in items)


def as_int(op: str, name: str, value: Any) -> int:
    """A single Python int attribute."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise type_error(op, name, value, "an int")
    return int(value.__index__())


INDEX_FORMS = "a 1-D integer array, or a sequence of ints or 0-d integer arrays"


def _is_array(x: Any) -> bool:
    return compat.is_array_api_obj(x) and not isinstance(x, (int, float, complex, bool))


def index_ints(op: str, name: str, value: Any) -> tuple[int, ...]:
    """A 1-D index argument as exact Python ints (starts, stops, steps, axes).

    Accepts a 1-D integer array of any namespace and any integer dtype (read in one
    transfer), or a sequence of Python ints and 0-d integer arrays.
    """
    if type(value) in (tuple, list) and all(type(item) is int for item in value):
        return tuple(value)  # the common case, kept cheap
    if _is_array(value):
        if value.ndim != 1:
            raise value_error(op, f"{name}.shape", tuple(value.shape), INDEX_FORMS)
        return _array_ints(op, name, value)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise type_error(op, name, value, INDEX_FORMS)
    return tuple(_index_int(op, name, value, item) for item in value)


def _index_int(op: str, name: str, value: Any, item: Any) -> int:
    if isinstance(item, (list, tuple)):
        raise value_error(op, name, value, f"{INDEX_FORMS} (not nested)")
    if not _is_array(item):
        return as_int(op, name, item)
    if item.ndim != 0:
        raise value_error(
            op, name, f"an entry of shape {tuple(item.shape)}", f"{INDEX_FORMS} (not nested)"
        )
    return _array_ints(op, name, compat.array_namespace(item).reshape(item, (1,)))[0]


def _array_ints(op: str, name: str, x: Array) -> tuple[int, ...]:
    """The entries of a 1-D integer array as Python ints."""
    xp = compat.array_namespace(x)
    check_integer_array(op, name, x, xp)
    if backend_of(x) in (Backend.NUMPY, Backend.TORCH, Backend.JAX, Backend.CUPY):
        return tuple(int(v) for v in x.tolist())
    wide = to_index(xp, x)  # standard-only libraries; uint64 saturates
    return tuple(int(wide[i]) for i in range(wide.shape[0]))
