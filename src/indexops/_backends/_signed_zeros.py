"""The signed zeros of StableHLO's min and max: IEEE-754 ``minimum`` and ``maximum``.

``min(-0.0, +0.0)`` is -0.0 and ``max(-0.0, +0.0)`` is +0.0 whatever the order of the
arguments; ``xp.minimum``/``xp.maximum`` and native min/max scatters keep one or the other
zero by argument order.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .._typing import Array
from .._validate.combiners import Named

MIN_MAX = (Named.MIN, Named.MAX)


def has_signed_zeros(backend: Any, dtype: object) -> bool:
    """Whether ``dtype`` is a real float type with a negative zero."""
    return backend.has_kind(dtype, "real floating") and backend.holds(dtype, -0.0)


def wins(xp: ModuleType, how: Named, x: Array) -> Array:
    """Where ``x`` has the sign that IEEE-754 ``minimum`` (-) or ``maximum`` (+) gives a
    zero result when any of its arguments has it."""
    negative = xp.signbit(x)
    return negative if how is Named.MIN else xp.logical_not(negative)


def with_ieee_zeros(xp: ModuleType, how: Named, old: Array, new: Array, result: Array) -> Array:
    """``result`` of ``how(old, new)`` with each zero given the sign IEEE-754 gives it."""
    zero = result == 0  # minimum/maximum return one of the two: a zero of either sign
    winner = wins(xp, how, old) | wins(xp, how, new)
    positive = xp.abs(result)
    winning_zero = xp.negative(positive) if how is Named.MIN else positive
    return xp.where(zero & winner, winning_zero, result)
