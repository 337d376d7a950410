"""Test hooks: run the ops through other paths of the same library.

The tests compare each native path with the generic one (the Array API standard alone),
run the sync-free device algorithms on host arrays, where every host read can be caught,
and run the host paths that the compiled kernels (numba) take over where they run. Each
hook is a context manager that sets a :class:`~contextvars.ContextVar`: it holds in the
thread (or task) that enters it and nowhere else, so calls in other threads keep their
own paths. Within ``generic_only()`` and ``device_paths()`` every call is validated and
planned again (no executor is reused from outside, none is kept); ``without_kernels()``
is read by the backends on every call.

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
from ._backends import _host
from ._plan import executors

__all__ = ["active_variant", "device_paths", "generic_only", "without_kernels"]


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


@contextlib.contextmanager
def without_kernels() -> Iterator[None]:
    """Within this block no compiled kernel runs: the host backends take the paths they
    take where numba is not installed."""
    token = _host.KERNELS_OFF.set(True)
    try:
        yield
    finally:
        _host.KERNELS_OFF.reset(token)


def active_variant() -> str | None:
    """``"generic"`` or ``"device"`` within those blocks, else ``None``."""
    return _backends.VARIANT.get()
