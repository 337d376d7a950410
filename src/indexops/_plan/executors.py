"""Executors per call signature: the work of a call that no value decides, done once.

A call's *signature* is what its validation and planning depend on: the array types,
shapes and dtypes and the attributes as given. The first call with a signature validates
everything and builds an *executor*, a function of the arrays (and of the arguments that
stay per call, such as ``copy``) that does only the array work; later calls with the same
signature look it up and run it. Small calls (a few rows) spend most of their time in
Python, so this is what makes them cheap.

The table is bypassed while ``torch.compile`` traces (Dynamo traces the plain function
and constant-folds the planning) and within the test hooks of :mod:`indexops._testing`.

Many threads may call at once (servers do): a lookup takes no lock (one ``dict.get``,
atomic with or without the GIL), an insert and the eviction it may need take
:data:`_INSERTING`, so no thread ever iterates the table while another changes it.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Hashable
from typing import Any

from .cache import torch_is_compiling

Executor = Callable[..., Any]

MAX_SIGNATURES = 512

_EXECUTORS: dict[Hashable, Executor] = {}
_INSERTING = threading.Lock()
KEEPING: contextvars.ContextVar[bool] = contextvars.ContextVar("indexops_keeping", default=True)
"""Whether calls in this context use the table: not within the test hooks of
:mod:`indexops._testing`, whose calls take other paths."""


def executor(signature: Hashable | None, build: Callable[[], Executor]) -> Executor:
    """The executor of ``signature``, built by ``build()`` (which validates the call and
    raises its errors) the first time it is seen.

    ``signature`` must determine everything ``build`` decides. ``None`` or an unhashable
    one (an attribute given as a list) is built every time, as is every call while
    ``torch.compile`` traces or where :data:`KEEPING` is False.
    """
    if signature is None or torch_is_compiling() or not KEEPING.get():
        return build()
    try:
        found = _EXECUTORS.get(signature)
    except TypeError:
        return build()
    if found is None:
        found = build()
        with _INSERTING:
            if len(_EXECUTORS) >= MAX_SIGNATURES:  # forget the oldest signature
                del _EXECUTORS[next(iter(_EXECUTORS))]
            _EXECUTORS[signature] = found
    return found


def kept_in(
    table: dict[Hashable, Executor], key: Hashable, build: Callable[[], Executor]
) -> Executor:
    """The executor under ``key`` in ``table``, a small table its owner keeps (one per
    signature of :func:`executor`'s), built by ``build()`` the first time; built every
    time where :func:`executor` builds every time.

    ``table`` must hold few keys (the owner's options, such as a mode); two threads that
    miss together each build one, and one of the equal executors stays (an insert is
    atomic). Its owner is built anew for each call where :func:`executor` builds every
    time, so only the insert asks whether this is such a call.
    """
    found = table.get(key)
    if found is None:
        found = build()
        if not torch_is_compiling() and KEEPING.get():
            table[key] = found
    return found


def signature(static: tuple[Any, ...], *arrays: Any) -> tuple[Any, ...] | None:
    """A call's signature: its ``static`` arguments and each array's type, shape, dtype
    and device (a mix of devices is an error the validating path raises); ``None`` where
    an argument is not an array (the validating path then names it)."""
    try:
        return (*static, *[(type(x), x.shape, x.dtype, getattr(x, "device", None)) for x in arrays])
    except AttributeError:
        return None


def plain_ints(values: tuple[Any, ...]) -> bool:
    """Whether every entry of ``values`` (the call's attributes, flattened) is an int.

    Signatures compare attributes by value, and ``True == 1 == 1.0``: a call whose
    attributes are not plain ints takes the validating path every time, so its errors
    never depend on what was called before.
    """
    return _INT.issuperset(map(type, values))


_INT = frozenset({int})


def int_tuples(*sequences: Any) -> tuple[tuple[int, ...], ...] | None:
    """``sequences`` as tuples where each is a tuple or list of plain ints (the common
    form of 1-D index arguments given as constants), else None."""
    if not _SEQUENCES.issuperset(map(type, sequences)):
        return None
    tuples = tuple(map(tuple, sequences))
    return tuples if plain_ints(sum(tuples, ())) else None


_SEQUENCES = frozenset({tuple, list})
