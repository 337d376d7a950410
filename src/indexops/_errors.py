"""The one error family of indexops.

Every error a user can cause is an :class:`IndexOpsError`. Shape and attribute problems
also subclass :class:`ValueError`, dtype problems :class:`TypeError`, so callers can catch
whichever they prefer. Messages follow one pattern: the argument, the value received,
what is allowed, and (for StableHLO rules) the constraint label, e.g. ``(gather C7)``.

The classes are public names of :mod:`indexops` and say so (their ``__module__``), so a
traceback prints ``indexops.IndexOpsValueError``, the name to catch.
"""

from __future__ import annotations

from typing import Any


class IndexOpsError(Exception):
    """Base class of every error raised by indexops for bad input.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> try:
    ...     indexops.dynamic_slice(np.zeros(3), (0, 0), (1,))
    ... except indexops.IndexOpsError as error:
    ...     print(error)
    dynamic_slice: start_indices=(0, 0) is not allowed: ... (dynamic_slice C2)
    """

    __module__ = "indexops"


class IndexOpsValueError(IndexOpsError, ValueError):
    """A shape, attribute or index value that the op does not allow.

    Also a ``ValueError``, so code that catches those keeps working.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> try:
    ...     indexops.slice_scatter(np.zeros(4), np.ones(4), [0], [4], [0])
    ... except ValueError as error:
    ...     print(type(error).__name__, isinstance(error, indexops.IndexOpsError))
    IndexOpsValueError True
    """

    __module__ = "indexops"


class IndexOpsTypeError(IndexOpsError, TypeError):
    """An argument of the wrong type or dtype.

    Also a ``TypeError``; dtypes are never promoted, so this is what a mismatch gives.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> try:
    ...     indexops.dynamic_update_slice(np.zeros(3), np.ones(2, dtype=np.int64), (0,))
    ... except TypeError as error:
    ...     print(error)
    dynamic_update_slice: update.dtype='int64' is not allowed: the dtype of operand (float64) ...
    """

    __module__ = "indexops"


def _message(op: str, arg: str, value: Any, allowed: str, rule: str | None) -> str:
    label = f" ({op} {rule})" if rule else ""
    return f"{op}: {arg}={value!r} is not allowed: {allowed}{label}"


def value_error(
    op: str, arg: str, value: Any, allowed: str, rule: str | None = None
) -> IndexOpsValueError:
    """Build the error for a bad shape, attribute or index value.

    Examples
    --------
    >>> from indexops._errors import value_error
    >>> str(value_error("gather", "offset_dims", (1, 0), "must be sorted", "C4"))
    'gather: offset_dims=(1, 0) is not allowed: must be sorted (gather C4)'
    """
    return IndexOpsValueError(_message(op, arg, value, allowed, rule))


def type_error(
    op: str, arg: str, value: Any, allowed: str, rule: str | None = None
) -> IndexOpsTypeError:
    """Build the error for an argument of the wrong type or dtype."""
    return IndexOpsTypeError(_message(op, arg, value, allowed, rule))


def index_out_of_bounds(index: Any, axis: int, size: int) -> IndexError:
    """Build NumPy's :class:`IndexError` for an index a loop found outside its dim (only
    a broken promise gets one: the checks before a call take every other).

    Examples
    --------
    >>> from indexops._errors import index_out_of_bounds
    >>> str(index_out_of_bounds(9, 0, 4))
    'index 9 is out of bounds for axis 0 with size 4'
    """
    return IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
