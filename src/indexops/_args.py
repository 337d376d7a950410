"""Arguments in, Python values out: attribute tuples, ints and 1-D index arguments."""

from __future__ import annotations

from typing import Any

import array_api_compat as compat

from ._backends import ValuesUnknown, backend_for, is_array
from ._errors import type_error, value_error
from ._typing import Array

INDEX_FORMS = "a 1-D integer array, or a sequence of ints or 0-d integer arrays"


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


def check_integer_array(op: str, name: str, x: Array) -> None:
    """Raise unless ``x`` has a signed or unsigned integer dtype (bool is not an integer)."""
    if not backend_for(op, **{name: x}).has_kind(x.dtype, "integral"):
        raise type_error(op, f"{name}.dtype", str(x.dtype), "an integer dtype (signed or unsigned)")


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
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
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
        return host_ints(op, name, items)
    return tuple(
        item if type(item) is int else host_ints(op, name, _one_d(item))[0] for item in items
    )


def _one_d(x: Array) -> Array:
    return compat.array_namespace(x).reshape(x, (1,))


def host_ints(op: str, name: str, x: Array) -> tuple[int, ...]:
    """The entries of the 1-D integer array ``x`` as Python ints, read on the host."""
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
