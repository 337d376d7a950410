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
import operator
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
    ``torch.compile`` traces or where :data:`KEEPING` is False. A hot caller writes
    ``kept(signature) or executor(signature, build)``: a repeat makes no builder.
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


def kept(signature: Hashable | None) -> Any:
    """:func:`executor`'s lookup alone: the executor kept for ``signature``, or ``None``
    (none yet, or wherever :func:`executor` builds every time). Executors are true."""
    if signature is None or torch_is_compiling() or not KEEPING.get():
        return None
    try:
        return _EXECUTORS.get(signature)
    except TypeError:  # an unhashable signature
        return None


class HeldAttributes:
    """Executors found by a call's attribute sequences without reading them through the
    op's validation: a table from what else the validation decides (``static``, the
    arrays' facts) to the attribute tuples of the call that made the entry and its
    executor.

    A call's attributes match an entry's where each is that very object (the entry keeps
    it alive, so no other object has its id: None, a tuple, or a record of tuples such as
    jax.lax's ``dimension_numbers``, a named tuple, which cannot change), a tuple of plain
    ints equal to it (ints, not bools or floats: ``True == 1 == 1.0``), or a record of
    its type whose fields are such tuples or ints, equal to it. Anything else (lists,
    other types, other values) misses and takes the op's validating path, whose executor
    then replaces the entry. ``static`` is compared by value: each value
    after its type, so that an array compared with a string or an int with a bool never
    decides. Bounded as :func:`executor`'s table; safe from many threads (a lookup is one
    ``dict.get``, an insert takes the table's lock).
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[Hashable, tuple[tuple[Any, ...], Executor]] = {}

    def find(
        self, static: tuple[Any, ...], held: tuple[Any, ...], facts: tuple[Any, ...]
    ) -> Executor | None:
        """The executor of a call with these attributes, or ``None`` (also wherever
        :func:`executor` builds every time)."""
        if torch_is_compiling() or not KEEPING.get():
            return None
        try:
            found = self._table.get((*static, *facts))
        except TypeError:  # an unhashable static argument
            return None
        if found is None:
            return None
        kept = found[0]
        if all(map(operator.is_, kept, held)):  # the very tuples: the common repeat
            return found[1]
        for mine, given in zip(kept, held):
            if mine is not given and not _equal_and_frozen(mine, given):
                return None
        return found[1]

    def keep(
        self, static: tuple[Any, ...], held: tuple[Any, ...], facts: tuple[Any, ...], run: Executor
    ) -> None:
        """Keep ``run`` for calls like this one: only where every attribute in ``held``
        is None, a tuple, which the caller validated as plain ints (its :func:`executor`
        key was not None), or a record of such tuples (a list could change between
        calls)."""
        if not all(map(_unchanging, held)) or torch_is_compiling() or not KEEPING.get():
            return
        key = (*static, *facts)
        try:
            hash(key)
        except TypeError:  # (validated arguments are hashable; kept only where so)
            return
        with _INSERTING:
            if len(self._table) >= MAX_SIGNATURES:  # forget the oldest
                del self._table[next(iter(self._table))]
            self._table[key] = (held, run)


def _unchanging(value: Any) -> bool:
    """Whether ``value`` is None, a tuple or a record of ints and tuples of ints."""
    return value is None or type(value) is tuple or _record(value)


def _record(value: Any) -> bool:
    """Whether ``value`` is a named tuple (no attributes of its own, as jax.lax's
    dimension numbers) whose fields are ints or tuples of plain ints."""
    if not isinstance(value, tuple) or type(value) is tuple or hasattr(value, "__dict__"):
        return False
    for field in value:
        kind = type(field)
        if kind is not int and not (kind is tuple and _INT.issuperset(map(type, field))):
            return False
    return True


def _equal_and_frozen(kept: Any, given: Any) -> bool:
    """Whether ``given`` stands for the attribute ``kept``: a tuple of plain ints or a
    :func:`_record` of ``kept``'s type, equal to it."""
    if type(given) is tuple:
        return kept == given and _INT.issuperset(map(type, given))
    return type(given) is type(kept) and kept == given and _record(given)


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
    key = [*static]
    try:  # (a loop: a comprehension is a call of its own; an attribute read costs less
        for x in arrays:  # than getattr with a default)
            key.append((type(x), x.shape, x.dtype, x.device))
        return tuple(key)
    except AttributeError:  # an array without a device (Dask's), or not an array
        pass
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
    for sequence in sequences:  # tuples, the common form, are taken as they are
        if type(sequence) is not tuple:
            break
    else:  # (a loop: faster than a set of their types for the one or two given)
        return sequences if plain_ints(sum(sequences, ())) else None
    if not _SEQUENCES.issuperset(map(type, sequences)):
        return None
    tuples = tuple(map(tuple, sequences))
    return tuples if plain_ints(sum(tuples, ())) else None


_SEQUENCES = frozenset({tuple, list})
