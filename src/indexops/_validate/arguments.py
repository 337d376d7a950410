"""Arguments in, Python values out: attribute tuples, ints and 1-D index arguments."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import array_api_compat as compat
import numpy as np

from .._backends import Backend, ValuesUnknown, backend_for, is_array
from .._errors import type_error, value_error
from .._plan.cache import static_cache
from .._typing import Array

INDEX_FORMS = "a 1-D integer array, or a sequence of ints or 0-d integer arrays"


SEQUENCE_OF_INTS = (
    "a sequence of ints (a tuple, list, range or 1-D integer array; a set or a dict has no "
    "order to read, an iterator is used up by reading)"
)


def as_tuple(op: str, name: str, value: Any) -> tuple[int, ...]:
    """A sequence of Python ints (the attribute form of StableHLO's 1-D si64 constants)."""
    if type(value) is tuple and all(type(item) is int for item in value):
        return value  # the common case, kept cheap: ops are called in inner loops
    if not is_sequence(value):
        raise type_error(op, name, value, SEQUENCE_OF_INTS)
    items = tuple(value)
    for item in items:
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise type_error(op, name, value, SEQUENCE_OF_INTS)
    return tuple(int(item.__index__()) for item in items)


def is_sequence(value: Any) -> bool:
    """Whether ``value`` is an ordered sequence to read attributes from: a ``Sequence``
    other than text, or an array. Sets and dicts iterate in an order of their own, and an
    iterator is used up by one reading."""
    if isinstance(value, Sequence):
        return not isinstance(value, (str, bytes))
    return is_array(value)


def as_int(op: str, name: str, value: Any) -> int:
    """A single Python int attribute."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise type_error(op, name, value, "an int")
    return int(value.__index__())


def as_flag(op: str, name: str, value: Any) -> bool:
    """A bool attribute: Python's ``True``/``False`` or NumPy's ``bool_`` scalars.

    Arrays are refused, 0-d ones too: a flag is static, where an array's truth needs its
    value (a host read, impossible under tracing); so are ints and strings, whose truth
    is rarely what was meant (``"False"`` is true).
    """
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise type_error(op, name, value, "True or False (a Python or NumPy bool; no arrays)")


def check_integer_array(op: str, name: str, x: Array) -> None:
    """Raise unless ``x`` has a signed or unsigned integer dtype (bool is not an integer)."""
    if not backend_for(op, **{name: x}).has_kind(x.dtype, "integral"):
        raise type_error(op, f"{name}.dtype", str(x.dtype), "an integer dtype (signed or unsigned)")


def check_same_dtype(
    op: str, name: str, x: Array, target_name: str, target: Array, rule: str | None = None
) -> None:
    """Raise unless ``x`` (the argument ``name``) has the dtype of ``target`` (the argument
    ``target_name``): no promotion, and for NumPy's dtypes the same byte order, which the
    message names where it is all that differs."""
    if x.dtype == target.dtype:
        return
    allowed = f"the dtype of {target_name} ({target.dtype})"
    numpy_dtypes = isinstance(x.dtype, np.dtype) and isinstance(target.dtype, np.dtype)
    if numpy_dtypes and x.dtype.newbyteorder("=") == target.dtype.newbyteorder("="):
        orders = {True: "native", False: "non-native"}
        allowed += (
            f", byte order included ({name} is {orders[x.dtype.isnative]}, "
            f"{target_name} {orders[target.dtype.isnative]}): "
            f"{name}.astype({target_name}.dtype) converts it"
        )
    raise type_error(op, f"{name}.dtype", str(x.dtype), allowed, rule)


def index_items(op: str, name: str, value: Any) -> tuple[Any, ...] | Array:
    """A 1-D index argument checked for form: one 1-D integer array, or a tuple of Python
    ints and 0-d integer arrays."""
    if type(value) in (tuple, list) and all(type(item) is int for item in value):
        return tuple(value)  # the common case, kept cheap
    if is_array(value):
        if value.ndim != 1:
            raise value_error(op, f"{name}.shape", tuple(value.shape), INDEX_FORMS)
        check_integer_array(op, name, value)
        return value
    if not is_sequence(value):
        raise type_error(op, name, value, INDEX_FORMS)
    return tuple(_index_item(op, name, value, item) for item in value)


def _index_item(op: str, name: str, value: Any, item: Any) -> Any:
    if isinstance(item, (list, tuple)):
        raise value_error(op, name, value, f"{INDEX_FORMS} (not nested)")
    if not is_array(item):
        return as_int(op, name, item)
    if item.ndim != 0:
        raise value_error(
            op, name, f"an entry of shape {tuple(item.shape)}", f"{INDEX_FORMS} (not nested)"
        )
    check_integer_array(op, name, item)
    return item


def index_ints(op: str, name: str, value: Any) -> tuple[int, ...]:
    """A 1-D index argument as exact Python ints (slice starts, stops, steps, axes).

    Arrays are read on the host (one transfer each); a traced array, whose values are not
    known while the op is called, is an error that names the argument.
    """
    items = index_items(op, name, value)
    if is_array(items):
        return static_ints(op, name, items)
    return tuple(
        item if type(item) is int else static_ints(op, name, _one_d(item))[0] for item in items
    )


def _one_d(x: Array) -> Array:
    return compat.array_namespace(x).reshape(x, (1,))


def static_ints(op: str, name: str, x: Array) -> tuple[int, ...]:
    """The entries of the 1-D integer array ``x`` as Python ints, which the call needs now
    (they set a shape): read on the host, or a named error where they cannot be."""
    try:
        return backend_for(op, **{name: x}).host_ints(x)
    except ValuesUnknown as unknown:
        raise type_error(
            op,
            name,
            f"a {unknown} array",
            "values known when the op is called (Python ints or a concrete array): they "
            "set the shape of the result",
        ) from None


DTYPE_KINDS = ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")

# the kinds of scalar each kind of dtype holds (as Array API ``full`` allows, no bool
# into numbers or numbers into bool, no float into an integer dtype)
_HOLDS = {
    "bool": ("bool",),
    "signed integer": ("integral",),
    "unsigned integer": ("integral",),
    "real floating": ("integral", "real floating"),
    "complex floating": ("integral", "real floating", "complex floating"),
}


# NumPy's order of kinds for ``same_kind`` casts: a dtype casts to one of its own kind or
# of a later one (unsigned integers into signed ones, but not back)
_CAST_ORDER = ("bool", "unsigned integer", "signed integer", "real floating", "complex floating")


def casts_in_kind(backend: Backend, source: Any, target: Any) -> bool:
    """Whether NumPy's ``same_kind`` casting takes dtype ``source`` to ``target``: within
    a kind (narrowing included) or to a later kind, never from floats to integers, from
    complex to real, from signed to unsigned integers, or from numbers to bool. Dtypes of
    no standard kind cast only to themselves."""
    if source == target:
        return True
    given, wanted = scalar_range(backend, source).kind, scalar_range(backend, target).kind
    if given is None or wanted is None:
        return False
    return _CAST_ORDER.index(given) <= _CAST_ORDER.index(wanted)


class ScalarRange(NamedTuple):
    """The Python scalars a dtype holds."""

    kind: str | None  # an entry of DTYPE_KINDS; None for a dtype of no standard kind
    low: float  # integers: iinfo's bounds; floats (complex: per part): finfo's
    high: float
    nan: bool  # whether it has NaN


def scalar_range(backend: Backend, dtype: Any) -> ScalarRange:
    """What ``dtype`` holds, found once per backend and dtype (finfo costs microseconds)."""
    try:
        return _cached_range(backend, dtype)
    except TypeError:  # an unhashable dtype object
        return _range(backend, dtype)


def _range(backend: Backend, dtype: Any) -> ScalarRange:
    kind = next((kind for kind in DTYPE_KINDS if backend.has_kind(dtype, kind)), None)
    if kind in ("signed integer", "unsigned integer"):
        info = backend.iinfo(dtype)
        return ScalarRange(kind, int(info.min), int(info.max), False)
    if kind in ("real floating", "complex floating"):
        info = backend.finfo(dtype)
        nan = kind == "complex floating" or backend.holds(dtype, math.nan)
        return ScalarRange(kind, float(info.min), float(info.max), nan)
    return ScalarRange(kind, 0, 1, False)


_cached_range = static_cache(maxsize=256)(_range)


def check_scalar(op: str, name: str, value: Any, backend: Backend, dtype: Any) -> Any:
    """Raise unless ``dtype`` holds the scalar ``value``; return ``value``.

    Python and NumPy numbers are checked by kind and range (no float into an integer
    dtype, ints within its ``iinfo``, floats within its ``finfo``, NaN and the infinities
    only where the dtype has them) and come back as Python scalars; a 0-d array of
    another library by its dtype's kind alone, without reading its value. Dtypes of no
    standard kind are not judged.
    """
    held = scalar_range(backend, dtype)
    if held.kind is None:
        return value
    given, value = _scalar_kind(op, name, value)
    if given not in _HOLDS[held.kind] or not _in_range(backend, dtype, held, value):
        raise type_error(op, name, value, _held_values(dtype, held))
    return value


_PYTHON_KINDS = {
    bool: "bool",
    int: "integral",
    float: "real floating",
    complex: "complex floating",
}


def _scalar_kind(op: str, name: str, value: Any) -> tuple[str | None, Any]:
    """The kind of scalar ``value`` is (``"bool"``, ``"integral"``, ``"real floating"``,
    ``"complex floating"`` or None), and ``value`` as a Python scalar where it is a number
    or NumPy's (a scalar or 0-d array); other 0-d arrays, which may be traced or on a
    device, stay as they are."""
    kind = _PYTHON_KINDS.get(type(value))
    if kind is not None:  # the common case, kept cheap
        return kind, value
    if isinstance(value, numbers.Integral):
        return "integral", int(value)
    if isinstance(value, numbers.Real):
        return "real floating", float(value)
    if isinstance(value, numbers.Complex):
        return "complex floating", complex(value)
    if not is_array(value) or getattr(value, "shape", None) != ():
        return None, value
    kind = scalar_range(backend_for(op, **{name: value}), value.dtype).kind
    if kind is not None and compat.is_numpy_array(value):
        return _scalar_kind(op, name, value.item())
    return ("integral" if kind in ("signed integer", "unsigned integer") else kind), value


def _in_range(backend: Backend, dtype: Any, held: ScalarRange, value: Any) -> bool:
    """Whether a Python number fits ``dtype`` (a 0-d array is not read: True)."""
    if not isinstance(value, (int, float, complex)) or held.kind == "bool":
        return True
    parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
    return all(_part_fits(backend, dtype, held, part) for part in parts)


def _part_fits(backend: Backend, dtype: Any, held: ScalarRange, part: float) -> bool:
    if isinstance(part, int) or math.isfinite(part):  # ints exactly, not rounded first
        return held.low <= part <= held.high
    return held.nan if math.isnan(part) else backend.holds(dtype, part)


def _held_values(dtype: Any, held: ScalarRange) -> str:
    if held.kind == "bool":
        return f"True or False (the operand's dtype is {dtype})"
    if held.kind in ("signed integer", "unsigned integer"):
        return f"an int in [{held.low}, {held.high}], the range of {dtype}"
    numbers_held = "an int or real number" if held.kind == "real floating" else "a number"
    return f"{numbers_held} that {dtype} holds (in [{held.low:g}, {held.high:g}])"


def writes_in_place(
    backend: Backend, op: str, x: Array, copy: bool | None, name: str = "input"
) -> bool:
    """Resolve ``copy``: whether the op writes into ``x`` itself.

    ``copy=True`` never writes into ``x``; ``copy=False`` must, and fails for arrays that
    cannot be written, saying why (:meth:`Backend.why_not_writable`); ``copy=None`` writes
    in place where possible. Runs before anything is written.
    """
    if copy is True:
        return False
    if copy is not None and copy is not False:
        raise type_error(op, "copy", copy, "True, False or None")
    reason = backend.why_not_writable(x)
    if reason is None:
        return True
    if copy is None:
        return False
    raise value_error(
        op,
        "copy",
        False,
        f"{name} ({type(x).__module__}.{type(x).__name__}) cannot be written in place: "
        f"{reason}; pass copy=True for a new array or copy=None to copy only when needed",
    )
