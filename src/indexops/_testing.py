"""Test hooks: run the ops through other paths of the same library.

The tests compare each native path with the generic one (the Array API standard alone) and
run the sync-free device algorithms on host arrays, where every host read can be caught.
Both are context managers that set a :class:`~contextvars.ContextVar`: they hold in the
thread (or task) that enters them and nowhere else, so calls in other threads keep their
own paths. Within them every call is validated and planned again (no executor is reused
from outside, none is kept).

Examples
--------
>>> import numpy as np
>>> import indexops
>>> from indexops._testing import generic_only
>>> with generic_only():
...     indexops.dynamic_slice(np.arange(6), (4,), (3,))
array([3, 4, 5])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _backends
from ._plan import executors

__all__ = ["active_variant", "device_paths", "generic_only"]


@contextlib.contextmanager
def _variant(name: str) -> Iterator[None]:
    backends = _backends.VARIANT.set(name)
    keeping = executors.KEEPING.set(False)
    try:
        yield
    finally:
        executors.KEEPING.reset(keeping)
        _backends.VARIANT.reset(backends)


def generic_only() -> contextlib.AbstractContextManager[None]:
    """Within this block every array gets the generic backend of its library (the
    standard alone: sorts, ``searchsorted`` and ``where`` instead of native scatters)."""
    return _variant("generic")


def device_paths() -> contextlib.AbstractContextManager[None]:
    """Within this block no backend reads index values on the host, as for arrays on a
    GPU or under tracing, so the device algorithms run on host arrays."""
    return _variant("device")


def active_variant() -> str | None:
    """``"generic"`` or ``"device"`` within those blocks, else ``None``."""
    return _backends.VARIANT.get()
