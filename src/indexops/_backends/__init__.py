"""One backend object per array library, chosen once per array type and cached.

:class:`~indexops._backends._base.Backend` does everything with the Array API standard
alone (any compliant library, lazy or traced ones included); the subclasses for NumPy,
torch, JAX, CuPy and Dask own what their library does differently or better. A library's
module is imported only when one of its arrays is seen.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import array_api_compat as compat

from .._errors import type_error
from .._plan.cache import torch_is_compiling
from .._typing import Array
from ._base import Backend, ValuesUnknown

__all__ = ["Backend", "ValuesUnknown", "backend_for", "for_indices", "is_array"]

_BY_TYPE: dict[type, Backend] = {}
_NOT_ARRAYS = (int, float, complex, bool, str, bytes, tuple, list, dict, type(None))
VARIANT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "indexops_backend_variant", default=None
)  # set by the test hooks of indexops._testing


def backend_for(op: str, **arrays: Array) -> Backend:
    """The backend of ``arrays`` (keyword names are used in errors), which must share one
    Array API library."""
    kinds = {type(x) for x in arrays.values()}
    kind = kinds.pop() if len(kinds) == 1 else None
    backend = _BY_TYPE.get(kind) if kind is not None else None
    if backend is None and torch_is_compiling():
        backend = _compiled_torch(arrays)
    if backend is None and kind is None:
        backend = _dask_with_numpy(op, arrays)
    if backend is None:
        backend = _make(_namespace(op, arrays), next(iter(arrays.values())))
        if kind is not None:
            _BY_TYPE[kind] = backend
    backend.check_arrays(op, arrays)
    variant = None if torch_is_compiling() else VARIANT.get()  # Dynamo cannot trace get
    return backend if variant is None else backend.variant(variant)


def _compiled_torch(arrays: dict[str, Array]) -> Backend | None:
    """The torch backend while torch.compile traces tensors (array-api-compat's lookups
    are cached functions that Dynamo warns about); None for anything else."""
    import torch

    if not all(isinstance(x, torch.Tensor) for x in arrays.values()):
        return None
    from ._torch import TorchBackend

    return TorchBackend()


def _dask_with_numpy(op: str, arrays: dict[str, Array]) -> Backend | None:
    """The Dask backend for Dask arrays mixed with NumPy arrays; None for any other mix.

    Its ``check_arrays`` then refuses NumPy arrays other than index arrays (whose values
    are read on the host while the graph is built).
    """
    lazy = [x for x in arrays.values() if compat.is_dask_array(x)]
    if lazy and all(compat.is_dask_array(x) or compat.is_numpy_array(x) for x in arrays.values()):
        return _BY_TYPE.get(type(lazy[0])) or _make(_namespace(op, {"a": lazy[0]}), lazy[0])
    return None


def for_indices(backend: Backend, indices: Array) -> Backend:
    """The backend that computes target rows from ``indices``: ``backend``, except where a
    chunked library (Dask) takes index arrays whose values are on the host (NumPy), whose
    rows are then found at once."""
    if backend.chunked and not compat.is_dask_array(indices):
        return backend_for("indices", indices=indices)
    return backend


def is_array(x: Any) -> bool:
    """Whether ``x`` is an array of some Array API library (Python scalars are not)."""
    if type(x) in _BY_TYPE:
        return True
    if isinstance(x, _NOT_ARRAYS):
        return False
    if torch_is_compiling():  # array-api-compat's checks are cached functions Dynamo warns of
        return isinstance(x, sys.modules["torch"].Tensor)
    return compat.is_array_api_obj(x) and not isinstance(x, (int, float, complex, bool))


def _namespace(op: str, arrays: dict[str, Array]) -> ModuleType:
    libraries = [_asarray_call(x) for x in arrays.values() if is_array(x)]
    convert = libraries[0] if libraries else "numpy.asarray"
    for name, x in arrays.items():
        if not is_array(x):
            raise type_error(
                op,
                name,
                _short(x),
                "an array of an Array API library (numpy, torch, jax, ...); "
                f"make one first, e.g. {convert}({name})",
            )
    own = _numpy_itself(arrays.values())
    if own is not None:
        return own
    try:
        return compat.array_namespace(*arrays.values())
    except TypeError as exc:
        found = {name: f"{type(x).__module__}.{type(x).__name__}" for name, x in arrays.items()}
        first = next(iter(arrays))
        others = [f"{convert}({name})" for name, x in arrays.items() if _asarray_call(x) != convert]
        raise type_error(
            op,
            ", ".join(arrays),
            found,
            f"arrays of one library; convert the others to the library of {first}, "
            f"e.g. {', '.join(others)}",
        ) from exc


# The version of the standard from which NumPy's own namespace serves NumPy arrays (NumPy
# 2.3 on declares it): array-api-compat's wrapper of NumPy, the namespace of older NumPys,
# imports numpy.f2py, numpy.testing and more when first asked for, 70-100 ms of a process's
# first call (benchmarks/README.md, "What a first call costs").
NUMPY_OWN_STANDARD = "2024.12"


def _numpy_itself(arrays: Iterable[Array]) -> ModuleType | None:
    """NumPy, for arrays that are all NumPy's where it declares the standard of
    :data:`NUMPY_OWN_STANDARD` or a later one; else ``None``."""
    if not all(compat.is_numpy_array(x) for x in arrays):
        return None
    numpy = sys.modules["numpy"]
    return numpy if getattr(numpy, "__array_api_version__", "") >= NUMPY_OWN_STANDARD else None


def _asarray_call(x: Array) -> str:
    """The call that makes an array of ``x``'s library, as a user would write it."""
    if compat.is_jax_array(x):
        return "jax.numpy.asarray"
    if compat.is_dask_array(x):
        return "dask.array.asarray"
    return f"{type(x).__module__.split('.')[0]}.asarray"


def _short(x: Any) -> str:
    text = repr(x)
    return f"{type(x).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def _make(xp: ModuleType, x: Array) -> Backend:
    if compat.is_numpy_array(x):
        from ._numpy import NumpyBackend

        return NumpyBackend(xp)
    if compat.is_torch_array(x):
        from ._torch import TorchBackend

        return TorchBackend(xp)
    if compat.is_jax_array(x):
        from ._jax import JaxBackend

        return JaxBackend(xp)
    if compat.is_cupy_array(x):
        from ._cupy import CupyBackend

        return CupyBackend(xp)
    if compat.is_dask_array(x):
        from ._dask import DaskBackend

        return DaskBackend(xp)
    return Backend(xp)
