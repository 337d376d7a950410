"""Memory of large host results, kept once every array using it is gone, for the next
result of its size.

A new page costs more than the work written into it: the kernel maps it and zeroes it on
first touch. A gather of a [262144, 64] float32 table along its rows takes 9.8 ms into
memory already touched and 15.7 ms into a new ``np.empty`` (one thread; onnxruntime, whose
arena keeps its memory, 11.6). glibc's ``malloc`` keeps freed blocks of up to 32 MiB (its
mmap threshold's ceiling) and hands larger ones back to the kernel at once, so only results
of :data:`KEPT_MIN_BYTES` or more are taken from here (benchmarks/README.md, "Issue 33:
large results into kept memory").

A kept result is a view of a *block*: a 1-D uint8 array this module holds. NumPy gives
every view of an array (and every view of a view) the owner of the memory as its base, and
a torch tensor made by ``torch.from_numpy`` holds the array it shares, so each array that
can reach a block's memory holds a reference to the block. A block is free exactly when
this module's references are its only ones: counted (``sys.getrefcount``), not guessed,
under one lock, so two threads never take the same block, and nothing runs when an array
dies.

The most memory kept is one setting, :func:`set_kept_memory`: the blocks held, in use or
free, never total more. Where it is not set, the environment variable :data:`ENVIRONMENT`
(read once, on first use) or else :data:`DEFAULT_KEPT_BYTES` gives it.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from collections.abc import Iterator
from typing import Literal

import numpy as np

from .._errors import type_error, value_error

# the environment variable that sets the default
ENVIRONMENT = "INDEXOPS_KEPT_MEMORY"
# the most bytes kept where nothing sets it: two results of the benchmarks' 64 MB gather
# (a loop that rebinds its result makes the next one while the last is alive) and more
DEFAULT_KEPT_BYTES = 2**28
# Results of fewer bytes are NumPy's: glibc keeps those (see above), and a block is held
# while its result lives, however small the result.
KEPT_MIN_BYTES = 2**25
# blocks are made in multiples of this (the huge page NumPy asks the kernel for), so
# results of nearly equal sizes share them
_BLOCK_BYTES = 2**21

_lock = threading.Lock()
_owner: int | None = None  # the thread that holds the lock
_blocks: list[np.ndarray] = []  # every block held, oldest first
_setting: int | None = None  # set_kept_memory's bytes; None: the default
_default: int | None = None  # the default, read once


def _counts(blocks: list[np.ndarray]) -> list[int]:
    """The references to each block; a free one has :data:`_FREE`."""
    return [sys.getrefcount(block) for block in blocks]


# the count of a block only a list holds, by the same code that counts the blocks held (so
# whatever references the interpreter itself makes or leaves out are the same)
_FREE = _counts([np.empty(0, dtype=np.uint8)])[0]


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A new uninitialised C-contiguous array, as ``np.empty``: of :data:`KEPT_MIN_BYTES`
    or more, in a kept block where one is free or the setting allows a new one."""
    nbytes = math.prod(shape) * dtype.itemsize
    block = _block(nbytes) if nbytes >= KEPT_MIN_BYTES and not dtype.hasobject else None
    if block is None:
        return np.empty(shape, dtype=dtype)
    return block[:nbytes].view(dtype).reshape(shape)


def copy(x: np.ndarray, order: Literal["K", "C"] = "K") -> np.ndarray:
    """``np.array(x, order=order, copy=True)``, into kept memory as :func:`empty` where
    the copy is C-contiguous (``x`` is, or ``order`` is ``"C"``)."""
    if x.nbytes < KEPT_MIN_BYTES or not (order == "C" or x.flags.c_contiguous):
        return np.array(x, order=order, copy=True)
    out = empty(x.shape, x.dtype)
    np.copyto(out, x)
    return out


def may_keep(elements: int) -> bool:
    """Whether a result of ``elements`` elements may be of :data:`KEPT_MIN_BYTES` or more
    (elements of up to 16 bytes): what a signature's takes ask once, so that small calls
    pay no test of their size."""
    return elements >= KEPT_MIN_BYTES // 16


def take_rows(table: np.ndarray, rows: np.ndarray, mode: Literal["raise", "clip"]) -> np.ndarray:
    """``table.take(rows, axis=0, mode=mode)``, a result of :data:`KEPT_MIN_BYTES` or
    more into kept memory. NumPy buffers an ``out`` where a row outside would raise (a
    second copy), so there the rows are first found in ``[-n, n)`` (one pass over them)
    and taken with ``mode="wrap"``, which reads the same rows; a row outside raises, as
    NumPy's own take does."""
    n = table.shape[0]
    shape = (*rows.shape, *table.shape[1:])
    small = math.prod(shape) * table.dtype.itemsize < KEPT_MIN_BYTES
    if small or n == 0 or table.dtype.hasobject:
        return table.take(rows, axis=0, mode=mode)
    if mode == "raise":
        if rows.size and not (-n <= rows.min() and rows.max() < n):
            return table.take(rows, axis=0)  # (raises)
        return table.take(rows, axis=0, mode="wrap", out=empty(shape, table.dtype))
    return table.take(rows, axis=0, mode=mode, out=empty(shape, table.dtype))


def _block(nbytes: int) -> np.ndarray | None:
    """A free block of ``nbytes`` rounded up to :data:`_BLOCK_BYTES`, else a new one
    where the blocks held stay within the setting (free blocks of other sizes, oldest
    first, are let go to make room), else None. The setting is read under the lock, and
    free blocks beyond it are let go first (a lower setting made while this thread held
    the lock let go of none)."""
    size = -(-nbytes // _BLOCK_BYTES) * _BLOCK_BYTES
    with _held() as held_here:
        if not held_here:
            return None
        limit = kept_memory()
        _, free = _within(limit)
        if size > limit:
            return None
        for block, is_free in zip(_blocks, free, strict=True):
            if is_free and block.nbytes == size:
                return block  # (this reference makes it busy before the lock is let go)
        held, _ = _within(limit - size)
        if held + size > limit:
            return None
        block = np.empty(size, dtype=np.uint8)
        _blocks.append(block)
        return block


def _within(room: int) -> tuple[int, list[bool]]:
    """Let go of free blocks, oldest first, until the blocks held total at most ``room``
    (or none is free); the total then, and which of the blocks left are free. Called
    under the lock."""
    free = [count == _FREE for count in _counts(_blocks)]
    held = sum(block.nbytes for block in _blocks)
    kept, kept_free = [], []
    for block, is_free in zip(_blocks, free, strict=True):
        if is_free and held > room:
            held -= block.nbytes
        else:
            kept.append(block)
            kept_free.append(is_free)
    _blocks[:] = kept
    return held, kept_free


def set_kept_memory(max_bytes: int | None) -> None:
    """Set how much memory of large host results is kept for later results.

    Parameters
    ----------
    max_bytes : int or None
        The most bytes kept, at least 0 (0: none; every result is NumPy's own memory);
        ``None`` restores the default: the environment variable ``INDEXOPS_KEPT_MEMORY``
        where it is set (read once, on first use), else 256 MiB.

    Notes
    -----
    A result of 32 MiB or more that the NumPy backend or torch's CPU paths make (a
    gather's, a scatter's copy of its operand) is written into memory this library keeps:
    a new page costs the kernel's fault and zeroing, which can take a third of a large
    gather's time, and glibc hands such blocks back to the kernel when they are freed.
    Once every array that views a result's memory is gone (the result, its views, torch
    tensors over it), the memory goes to the next result of its size; no result ever shares
    memory with another live one. The memory held, in use or free, never totals more than
    ``max_bytes``: a result that would go beyond it gets memory of its own, and a lower
    setting lets go of free memory at once. Such a result's ``base`` is the kept block
    (``result.flags.owndata`` is False; ``resize`` refuses it). The setting is global to
    the process.

    Examples
    --------
    >>> import indexops
    >>> indexops.set_kept_memory(2**30)
    >>> indexops.kept_memory()
    1073741824
    >>> indexops.set_kept_memory(-1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    indexops.IndexOpsValueError: set_kept_memory: max_bytes=-1 is not allowed: a whole ...
    >>> indexops.set_kept_memory(None)
    """
    global _setting
    allowed = "a whole number of bytes, at least 0, or None for the default"
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise type_error("set_kept_memory", "max_bytes", max_bytes, allowed)
        if max_bytes < 0:
            raise value_error("set_kept_memory", "max_bytes", max_bytes, allowed)
    _setting = max_bytes
    _let_go(kept_memory())


def kept_memory() -> int:
    """The most bytes of large host results' memory kept for later results.

    Returns
    -------
    int
        The bytes :func:`set_kept_memory` set, else ``INDEXOPS_KEPT_MEMORY``, else
        256 MiB.

    Examples
    --------
    >>> import indexops
    >>> indexops.kept_memory() >= 0
    True
    """
    return _setting if _setting is not None else _default_bytes()


def held_bytes() -> tuple[int, int]:
    """The bytes of the blocks held, and of those free."""
    with _held():  # (re-entered: a count that may be under way)
        free = [count == _FREE for count in _counts(_blocks)]
        sizes = [block.nbytes for block in _blocks]
    return sum(sizes), sum(size for size, is_free in zip(sizes, free, strict=True) if is_free)


def _let_go(limit: int) -> None:
    """Let go of free blocks, oldest first, then of those in use (they are their arrays'
    until those die), newest first, until the blocks held total at most ``limit``. On
    the thread that holds the lock (a finalizer), nothing: the next result lets go of the
    free ones."""
    with _held() as held_here:
        if not held_here:
            return
        held, _ = _within(limit)
        while _blocks and held > limit:
            held -= _blocks.pop().nbytes


def _default_bytes() -> int:
    """The default (read once): the environment variable's, else :data:`DEFAULT_KEPT_BYTES`."""
    global _default
    if _default is None:
        text = os.environ.get(ENVIRONMENT, "").strip()
        _default = _environment_bytes(text) if text else DEFAULT_KEPT_BYTES
    return _default


def _environment_bytes(text: str) -> int:
    """The bytes the environment variable gives (a named error for anything else)."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise value_error(
            "indexops", ENVIRONMENT, text, "a whole number of bytes, at least 0, or unset"
        )
    return count


@contextlib.contextmanager
def _held() -> Iterator[bool]:
    """The lock, held while the block runs (True); False, not waited for, where this
    thread holds it already: a finalizer that the garbage collector runs while this
    module allocates (a list, a block) and that makes a large result itself gets memory
    of its own, neither a block the interrupted count saw free nor a wait for ever."""
    global _owner
    me = threading.get_ident()
    if _owner == me:
        yield False
        return
    with _lock:
        _owner = me
        try:
            yield True
        finally:
            _owner = None


def _new_lock() -> None:
    """A child made by ``fork`` while another thread held the lock would wait for it for
    ever: it starts with a lock of its own (the blocks are its copies)."""
    global _lock, _owner
    _lock = threading.Lock()
    _owner = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)
