"""NumPy dtypes the Array API standard does not name: ml_dtypes' ``bfloat16``,
``float8_*``, ``int4`` and the like (JAX's CPU arrays convert to them), and any other dtype
NumPy holds whose kind ``isdtype`` cannot tell; and NumPy's byte orders, which the standard
does not know either.

NumPy's ``isdtype`` raises ``TypeError`` for them (array-api-compat's, Dask's, answers
False) and NumPy's ``iinfo``/``finfo`` a ``ValueError``, so they are classified here by
``numpy.dtype.kind`` and, for the ``"V"`` kind that ml_dtypes gives most of its types, by
ml_dtypes' own ``finfo``/``iinfo``. ml_dtypes is used only when it is already imported: an
array of its dtypes cannot exist without it.

A dtype in the non-native byte order (``>f8`` on a little-endian machine: big-endian data
read from a file) is the same type: views of its bits keep its order (:func:`signed_of`),
and new arrays that NumPy and Dask make in the native order are put back in it
(:func:`in_byte_order`).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._plan.cache import static_cache

_BY_CHAR = {
    "b": "bool",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "real floating",
    "c": "complex floating",
}
_GROUPS = {
    "integral": ("signed integer", "unsigned integer"),
    "numeric": ("signed integer", "unsigned integer", "real floating", "complex floating"),
}


def has_kind(dtype: Any, kind: Any) -> bool:
    """``isdtype(dtype, kind)`` for a dtype ``isdtype`` refuses; False for every kind
    where ``dtype`` is not a NumPy dtype or has none of the standard's kinds."""
    if isinstance(kind, tuple):
        return any(has_kind(dtype, k) for k in kind)
    if not isinstance(kind, str):
        return bool(dtype == kind)
    found = kind_of(dtype)
    return found is not None and (found == kind or found in _GROUPS.get(kind, ()))


def kind_of(dtype: Any) -> str | None:
    """``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"real floating"``,
    ``"complex floating"``, or None (strings, dates, structures, not a NumPy dtype)."""
    numpy_dtype = _numpy_dtype(dtype)
    return None if numpy_dtype is None else _kind_of(numpy_dtype)


@static_cache(maxsize=64)
def _kind_of(numpy_dtype: np.dtype) -> str | None:
    if numpy_dtype.kind in _BY_CHAR:
        return _BY_CHAR[numpy_dtype.kind]
    ml_dtypes = sys.modules.get("ml_dtypes")
    if ml_dtypes is None:
        return None
    native = _native(numpy_dtype)  # ml_dtypes' infos know the native types only
    try:
        ml_dtypes.finfo(native)
        return "real floating"
    except ValueError:
        pass
    try:
        return "signed integer" if ml_dtypes.iinfo(native).min < 0 else "unsigned integer"
    except ValueError:
        return None


def info(dtype: Any, integer: bool) -> Any:
    """ml_dtypes' ``iinfo`` (``integer``) or ``finfo`` of ``dtype`` (in either byte
    order); ValueError if none."""
    ml_dtypes = sys.modules.get("ml_dtypes")
    numpy_dtype = _numpy_dtype(dtype)
    if ml_dtypes is None or numpy_dtype is None:
        raise ValueError(f"no {'iinfo' if integer else 'finfo'} for dtype {dtype}")
    native = _native(numpy_dtype)
    return ml_dtypes.iinfo(native) if integer else ml_dtypes.finfo(native)


def holds(dtype: Any, value: float) -> bool:
    """Whether the float ``value`` (NaN, infinities and -0.0 included) survives a cast to
    ``dtype`` unchanged. True for dtypes that are not NumPy's (torch's are IEEE types)."""
    numpy_dtype = _numpy_dtype(dtype)
    if numpy_dtype is None:
        return True
    return _holds(numpy_dtype, repr(value))  # repr keeps -0.0 apart from 0.0 in the cache


@static_cache(maxsize=64)
def _holds(numpy_dtype: np.dtype, value_repr: str) -> bool:
    value = float(value_repr)
    with np.errstate(all="ignore"):
        cast = np.asarray(value).astype(numpy_dtype)
        back = float((cast.real if numpy_dtype.kind == "c" else cast).astype(np.float64))
    if math.isnan(value):
        return math.isnan(back)
    return back == value and math.copysign(1.0, back) == math.copysign(1.0, value)


def in_byte_order(x: Any, a: Any, b: Any = None) -> Any:
    """``x``, a new NumPy or Dask array made from ``a`` and ``b`` (arrays or Python
    scalars), in the byte order of the first of them whose dtype is ``x``'s in the other
    byte order; else ``x`` itself.

    NumPy's and Dask's functions (``where``, ...) give every new array the native byte
    order, while results come back in the input's dtype, byte order included.
    """
    # only NumPy's dtypes have isnative (an isinstance of np.dtype costs 0.25 us)
    dtype: Any = getattr(a, "dtype", None)
    if getattr(dtype, "isnative", True):
        dtype = getattr(b, "dtype", None)
        if getattr(dtype, "isnative", True):
            return x  # the common case: four attribute lookups
    return as_array(x).astype(dtype) if x.dtype == _native(dtype) else x


def as_array(x: Any) -> Any:
    """``x``, or for a NumPy scalar (NumPy's result of an operation on 0-d arrays) a 0-d
    array, which keeps a dtype that a scalar cannot (another byte order)."""
    return np.asarray(x) if isinstance(x, np.generic) else x


@static_cache(maxsize=64)
def signed_of(dtype: np.dtype, bits: int) -> np.dtype | None:
    """The signed integer dtype of ``bits`` bits in the byte order of ``dtype`` (a view
    in another order would read the bytes backwards), or None where NumPy has none."""
    if bits not in (8, 16, 32, 64):
        return None
    return np.dtype(f"i{bits // 8}").newbyteorder(dtype.byteorder)


def _native(dtype: np.dtype) -> np.dtype:
    """``dtype`` in the native byte order (dtypes without one, strings, are native)."""
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def _numpy_dtype(dtype: Any) -> np.dtype | None:
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        return np.dtype(dtype)
    return None
