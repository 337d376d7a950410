"""Out-of-bounds modes, normalised once: an enum member or its name."""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from ._errors import type_error, value_error

M = TypeVar("M", bound="Mode")


class Mode(enum.Enum):
    """Base of the mode enums; the value is the name users pass."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls: type[M], op: str, value: Any) -> M:
        """The member named ``value`` (a member passes through), or a clear error."""
        if isinstance(value, cls):
            return value
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        if member is not None:
            return member  # type: ignore[return-value]
        names = tuple(member.value for member in cls)
        error = value_error if isinstance(value, str) else type_error
        raise error(op, "mode", value, f"one of {names}")


class GatherMode(Mode):
    """What gather does with a window that would leave the operand."""

    CLIP = "clip"  # move the window back inside (StableHLO)
    FILL = "fill"  # fill the whole window with fill_value (JAX FILL_OR_DROP)
    PROMISE_IN_BOUNDS = "promise_in_bounds"  # the caller promises it never happens


class ScatterMode(Mode):
    """What scatter does with an update whose target is outside the input."""

    DROP = "drop"  # skip each element outside (the StableHLO spec)
    DROP_WINDOW = "drop_window"  # skip the whole window if any of it is outside (XLA)
    CLIP = "clip"  # move the window inside
    PROMISE_IN_BOUNDS = "promise_in_bounds"
