"""``update_computation``: the named combiners and user callables of scatter."""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import array_api_compat as compat

from .._errors import type_error, value_error
from .._typing import Array


class Named(enum.Enum):
    """The combiners with native fast paths; the value is the name users pass."""

    # members are singletons compared by identity: hashed by it too (Enum's hash of the
    # name runs in Python, 50 ns more in every dict and signature that holds a member)
    __hash__ = object.__hash__

    ADD = "add"
    MUL = "mul"
    MIN = "min"
    MAX = "max"

    def __str__(self) -> str:
        return self.value


_XP_FUNCTIONS = {
    Named.ADD: "add",
    Named.MUL: "multiply",
    Named.MIN: "minimum",
    Named.MAX: "maximum",
}
_OPERATORS = {operator.add: Named.ADD, operator.mul: Named.MUL, min: Named.MIN, max: Named.MAX}
_ALLOWED = f"None (replace), one of {tuple(n.value for n in Named)}, or a callable f(old, new)"


@dataclass(frozen=True)
class Combiner:
    """How an update meets the value already there.

    ``named`` is a :class:`Named` combiner, or ``None`` for replace (``fn is None``) and
    for a user callable ``fn(old, new)`` that works elementwise on arrays.
    """

    named: Named | None
    fn: Callable[[Array, Array], Array] | None

    @property
    def replaces(self) -> bool:
        return self.fn is None


REPLACE = Combiner(None, None)


def resolve(
    op: str, xp: ModuleType, update_computation: Any, name: str = "update_computation"
) -> Combiner:
    """Turn the user's ``update_computation`` (argument ``name`` of ``op``) into a
    :class:`Combiner`; a callable that is no named combiner is checked on each call
    (:class:`Elementwise`)."""
    if update_computation is None or update_computation == "replace":
        return REPLACE
    if isinstance(update_computation, str):
        try:
            update_computation = Named(update_computation)
        except ValueError:
            raise value_error(op, name, update_computation, _ALLOWED) from None
    if isinstance(update_computation, Named):
        return Combiner(update_computation, named_function(xp, update_computation))
    if isinstance(update_computation, Elementwise):
        return Combiner(None, update_computation)
    if not callable(update_computation):
        raise type_error(op, name, update_computation, _ALLOWED)
    named = _recognised(xp, update_computation)
    if named in (Named.MIN, Named.MAX):  # builtins min/max are not elementwise
        return Combiner(named, named_function(xp, named))
    if named is not None:
        return Combiner(named, update_computation)
    return Combiner(None, Elementwise(op, name, update_computation))


class Elementwise:
    """A user's ``fn(old, new)``, whose result must be an array of the shape of ``old``
    (``new`` has that shape too): anything else is a named error raised before the
    result is written, instead of the library's own error (or a silent broadcast) where
    the result is written."""

    __slots__ = ("fn", "name", "op")

    def __init__(self, op: str, name: str, fn: Callable[[Array, Array], Array]) -> None:
        self.op, self.name, self.fn = op, name, fn

    def __call__(self, old: Array, new: Array) -> Array:
        result = self.fn(old, new)
        shape = getattr(result, "shape", None)
        if shape is None or not hasattr(result, "dtype") or not _of_one_library(old, result):
            kind = type(result)
            raise type_error(
                self.op,
                self.name,
                self.fn,
                f"a function f(old, new) that returns an array (of old's library, "
                f"{type(old).__module__}.{type(old).__name__}, and shape {tuple(old.shape)}); "
                f"it returned a {kind.__module__}.{kind.__name__}",
            )
        if tuple(shape) != tuple(old.shape):
            raise value_error(
                self.op,
                self.name,
                self.fn,
                "a function f(old, new) that works elementwise: its result must have the "
                f"shape of old, {tuple(old.shape)}; it returned one of shape {tuple(shape)}",
            )
        return result


def _of_one_library(old: Array, result: Array) -> bool:
    """Whether ``result`` is an array of ``old``'s library (another type of it too: a
    NumPy scalar of a 0-d array, a tensor of a ``Parameter``, a tracer), or NumPy's
    where ``old`` is Dask's, which Dask computes with."""
    if type(result) is type(old):  # (the common case, kept cheap)
        return True
    try:
        compat.array_namespace(old, result)
    except TypeError:
        return compat.is_dask_array(old) and compat.is_numpy_array(result)
    return True


def named_function(xp: ModuleType, how: Named) -> Callable[[Array, Array], Array]:
    """The library's elementwise function of ``how`` (``xp.add``, ``xp.minimum``, ...)."""
    return getattr(xp, _XP_FUNCTIONS[how])


def _recognised(xp: ModuleType, fn: Callable[..., Any]) -> Named | None:
    """The named combiner a callable is (``operator.add``, ``xp.maximum``, ...), if any."""
    for named, xp_name in _XP_FUNCTIONS.items():
        if fn is getattr(xp, xp_name, None):
            return named
    try:
        return _OPERATORS.get(fn)
    except TypeError:  # an unhashable callable object
        return None
