"""``update_computation``: the named combiners and user callables of scatter."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ._errors import type_error

Array = Any
NAMES = ("add", "mul", "min", "max")

_XP_FUNCTIONS = {"add": "add", "mul": "multiply", "min": "minimum", "max": "maximum"}
_OPERATORS = {operator.add: "add", operator.mul: "mul", min: "min", max: "max"}


@dataclass(frozen=True)
class Combiner:
    """How an update meets the value already there.

    ``name`` is ``"replace"``, one of :data:`NAMES` (those have native fast paths), or
    ``None`` for a user callable; ``fn(old, new)`` works elementwise on arrays.
    """

    name: str | None
    fn: Callable[[Array, Array], Array]


def _replace(old: Array, new: Array) -> Array:
    return new


def resolve(op: str, xp: ModuleType, update_computation: Any) -> Combiner:
    """Turn the user's ``update_computation`` into a :class:`Combiner`."""
    if update_computation is None or update_computation == "replace":
        return Combiner("replace", _replace)
    if isinstance(update_computation, str):
        if update_computation not in NAMES:
            raise type_error(
                op,
                "update_computation",
                update_computation,
                f"None (replace), one of {NAMES}, or a callable f(old, new)",
            )
        return Combiner(update_computation, getattr(xp, _XP_FUNCTIONS[update_computation]))
    if not callable(update_computation):
        raise type_error(
            op, "update_computation", update_computation, "None, a name or a callable f(old, new)"
        )
    name: str | None = _OPERATORS.get(update_computation)
    if name is None:
        for candidate, xp_name in _XP_FUNCTIONS.items():
            if update_computation is getattr(xp, xp_name, None):
                name = candidate
    if name in ("min", "max"):
        # builtins min/max are not elementwise; use the namespace's
        return Combiner(name, getattr(xp, _XP_FUNCTIONS[name]))
    return Combiner(name, update_computation)
