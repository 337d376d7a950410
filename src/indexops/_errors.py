"""The one error family of indexops.

Every error a user can cause is an :class:`IndexOpsError`. Shape and attribute problems
also subclass :class:`ValueError`, dtype problems :class:`TypeError`, so callers can catch
whichever they prefer. Messages follow one pattern: the argument, the value received,
what is allowed, and (for StableHLO rules) the constraint label, e.g. ``(gather C7)``.
"""

from __future__ import annotations

from typing import Any


class IndexOpsError(Exception):
    """Base class of every error raised by indexops for bad input."""


class IndexOpsValueError(IndexOpsError, ValueError):
    """A shape, attribute or index value that the op does not allow."""


class IndexOpsTypeError(IndexOpsError, TypeError):
    """An argument of the wrong type or dtype."""


def _message(op: str, arg: str, value: Any, allowed: str, rule: str | None) -> str:
    label = f" ({op} {rule})" if rule else ""
    return f"{op}: {arg}={value!r} is not allowed: {allowed}{label}"


def value_error(
    op: str, arg: str, value: Any, allowed: str, rule: str | None = None
) -> IndexOpsValueError:
    """Build the error for a bad shape, attribute or index value.

    Examples
    --------
    >>> str(value_error("gather", "offset_dims", (1, 0), "must be sorted", "C4"))
    'gather: offset_dims=(1, 0) is not allowed: must be sorted (gather C4)'
    """
    return IndexOpsValueError(_message(op, arg, value, allowed, rule))


def type_error(
    op: str, arg: str, value: Any, allowed: str, rule: str | None = None
) -> IndexOpsTypeError:
    """Build the error for an argument of the wrong type or dtype."""
    return IndexOpsTypeError(_message(op, arg, value, allowed, rule))
