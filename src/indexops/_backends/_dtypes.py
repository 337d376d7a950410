"""NumPy dtypes the Array API standard does not name: ml_dtypes' ``bfloat16``,
``float8_*``, ``int4`` and the like (JAX's CPU arrays convert to them), and any other dtype
NumPy holds whose kind ``isdtype`` cannot tell.

``isdtype`` raises ``TypeError`` for them and NumPy's ``iinfo``/``finfo`` a ``ValueError``,
so they are classified here by ``numpy.dtype.kind`` and, for the ``"V"`` kind that
ml_dtypes gives most of its types, by ml_dtypes' own ``finfo``/``iinfo``. ml_dtypes is
used only when it is already imported: an array of its dtypes cannot exist without it.
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
    try:
        ml_dtypes.finfo(numpy_dtype)
        return "real floating"
    except ValueError:
        pass
    try:
        return "signed integer" if ml_dtypes.iinfo(numpy_dtype).min < 0 else "unsigned integer"
    except ValueError:
        return None


def info(dtype: Any, integer: bool) -> Any:
    """ml_dtypes' ``iinfo`` (``integer``) or ``finfo`` of ``dtype``; ValueError if none."""
    ml_dtypes = sys.modules.get("ml_dtypes")
    if ml_dtypes is None or _numpy_dtype(dtype) is None:
        raise ValueError(f"no {'iinfo' if integer else 'finfo'} for dtype {dtype}")
    return ml_dtypes.iinfo(dtype) if integer else ml_dtypes.finfo(dtype)


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


def _numpy_dtype(dtype: Any) -> np.dtype | None:
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        return np.dtype(dtype)
    return None
