"""Out-of-bounds modes, normalised once: an enum member or its name."""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from .._errors import type_error, value_error

M = TypeVar("M", bound="Mode")


class Mode(enum.Enum):
    """Base of the mode enums; the value is the name users pass."""

    # members are singletons compared by identity: hashed by it too (Enum's hash of the
    # name runs in Python, 50 ns more in every dict and signature that holds a member)
    __hash__ = object.__hash__

    def __str__(self) -> str:
        return self.value

    @classmethod
    def jax_names(cls) -> dict[str, str]:
        """JAX's names of members that have another name here (``.at[]``'s spelling)."""
        return {}

    @classmethod
    def lax_names(cls) -> dict[str, str]:
        """``jax.lax``'s names: its strings and its ``GatherScatterMode`` members' names,
        read as ``lax.gather`` and ``lax.scatter`` read them."""
        return {"CLIP": "clip", "PROMISE_IN_BOUNDS": "promise_in_bounds"}

    @classmethod
    def parse(
        cls: type[M], op: str, value: Any, *, jax_names: bool = False, lax_names: bool = False
    ) -> M:
        """The member named ``value`` (a member passes through), or a clear error; with
        ``jax_names``, JAX's names of the modes too (``indexops.at`` takes them); with
        ``lax_names``, ``jax.lax``'s strings and ``GatherScatterMode`` members, recognised
        by their type's name (JAX is not imported)."""
        if isinstance(value, cls):
            return value
        key = (cls, value, jax_names, lax_names)
        if type(value) is str:  # (a repeat: one lookup, no attribute of the class read)
            found = _PARSED.get(key)
            if found is not None:
                return found
        given = value
        if lax_names and _is_lax_mode(value):
            value = cls.lax_names().get(value.name, value)
        elif lax_names and isinstance(value, str):
            value = cls.lax_names().get(value, value)
        elif jax_names:
            if _is_lax_mode(value):
                value = _JAX_STRINGS.get(value.name, value)
            if isinstance(value, str):
                value = cls.jax_names().get(value, value)
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        if member is not None:
            if type(key[1]) is str:
                _PARSED[key] = member  # (an atomic insert; valid names are few)
            return member  # type: ignore[return-value]
        names = tuple(member.value for member in cls)
        others = (*(cls.jax_names() if jax_names else ()), *(cls.lax_names() if lax_names else ()))
        names += tuple(dict.fromkeys(n for n in others if n.islower() and n not in names))
        lax = " or a jax.lax.GatherScatterMode" if jax_names or lax_names else ""
        error = value_error if isinstance(given, str) else type_error
        raise error(op, "mode", given, f"one of {names}{lax}")


# jax.lax.GatherScatterMode's members as JAX's .at reads them: its strings
_JAX_STRINGS = {"CLIP": "clip", "FILL_OR_DROP": "fill", "PROMISE_IN_BOUNDS": "promise_in_bounds"}

# (mode class, the name given, jax_names, lax_names) -> the member: a member read through
# its Enum class costs 75 ns on Python 3.11 (EnumType's __getattr__ slows every attribute
# of the class), and parse reads two; only names that parsed are kept
_PARSED: dict[tuple[Any, ...], Any] = {}


class GatherMode(Mode):
    """What gather does with a window that would leave the operand."""

    CLIP = "clip"  # move the window back inside (StableHLO)
    FILL = "fill"  # fill the whole window with fill_value (JAX FILL_OR_DROP)
    PROMISE_IN_BOUNDS = "promise_in_bounds"  # the caller promises it never happens

    @classmethod
    def jax_names(cls) -> dict[str, str]:
        return {"drop": "fill"}  # JAX reads out of bounds as FILL_OR_DROP: a fill

    @classmethod
    def lax_names(cls) -> dict[str, str]:
        return {**super().lax_names(), "FILL_OR_DROP": "fill", "drop": "fill"}


class ScatterMode(Mode):
    """What scatter does with an update whose target is outside the input."""

    DROP = "drop"  # skip each element outside (the StableHLO spec)
    DROP_WINDOW = "drop_window"  # skip the whole window if any of it is outside (XLA)
    CLIP = "clip"  # move the window inside
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @property
    def outside(self) -> str:
        """What a write that places each index as it goes (the compiled kernels) does
        with one outside: ``"clip"``, ``"drop"`` (a window of one element, or a whole
        row, drops alike) or ``"stop"`` (a broken promise, reported)."""
        return _OUTSIDE[self]

    @classmethod
    def jax_names(cls) -> dict[str, str]:
        return {"fill": "drop"}  # JAX writes out of bounds as FILL_OR_DROP: a drop

    @classmethod
    def lax_names(cls) -> dict[str, str]:
        # lax.scatter's FILL_OR_DROP skips a window with any element outside (XLA); "drop"
        # stays indexops' own per-element mode
        return {**super().lax_names(), "FILL_OR_DROP": "drop_window", "fill": "drop_window"}


_OUTSIDE = {
    ScatterMode.CLIP: "clip",
    ScatterMode.PROMISE_IN_BOUNDS: "stop",
    ScatterMode.DROP: "drop",
    ScatterMode.DROP_WINDOW: "drop",
}


def _is_lax_mode(value: Any) -> bool:
    """Whether ``value`` is a member of ``jax.lax.GatherScatterMode``, without importing JAX."""
    return isinstance(value, enum.Enum) and type(value).__name__ == "GatherScatterMode"
