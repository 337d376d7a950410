"""Host threads for the compiled kernels: how many a call may use, and the pool that runs
the parts of a split call.

A parallel kernel splits its *targets* (the table's rows, the gather's output) into ranges,
one per thread; each thread scans every index in input order and applies only the updates
whose target lies in its range, so the result is bit-identical to one thread's whatever
the combiner (float sums with duplicates included). The kernels release the GIL, so the
parts run at once on plain Python threads: the caller runs the first range itself and
hands the others to a few worker threads, started on first use and never stopped. No
numba threading layer is involved, so calls from many Python threads at once only queue
their parts; workers never wait for anything, so no call can deadlock another.

The count comes from one setting, :func:`set_host_threads`: the most threads one call may
use. Where it is not set, its default is the environment variable :data:`ENVIRONMENT`
(read once, on first use) or else every core this process may run on. A call uses one
thread per :data:`THREAD_MIN_ELEMENTS` elements of work, up to that count: below, handing
a range to another thread costs more than it saves. Only the kinds of kernel in
:data:`SPLIT_BY_DEFAULT` (measured faster on two threads) split at the cores' count; the
others (row writes) split only where the count is set, by :func:`set_host_threads` or
the environment variable.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable
from typing import Generic, Literal, TypeVar, cast

from .._errors import type_error, value_error

T = TypeVar("T")

# the environment variable that sets the default count
ENVIRONMENT = "INDEXOPS_HOST_THREADS"
# Elements of work (updates' elements written, elements gathered) per thread: a call of
# fewer keeps one thread. Handing a range to a worker and waiting for it costs tens of
# microseconds (more on a loaded machine), about what one thread takes for 2**17
# elements; from 2**18 per thread a second one saves more than it costs
# (benchmarks/README.md, "Compiled kernels on several threads").
THREAD_MIN_ELEMENTS = 2**18

# the kinds of split kernel: the element gather (ranges of its output), row writes (ranges
# of the table's rows, every combiner)
KernelKind = Literal["gather", "row write"]
# The kinds that split where the count is not set (every core): those measured faster on
# two threads than on one on a quiet 2-core machine. A row write was not, at any size
# (0.3-1.0x): each thread reads every index and, with them, most update rows
# (benchmarks/README.md, "Compiled kernels on several threads").
SPLIT_BY_DEFAULT: frozenset[KernelKind] = frozenset({"gather"})

_setting: int | None = None  # set_host_threads' count; None: the default
# the default count, read once: the environment's (True: it is set) or the cores' (False)
_default: tuple[int, bool] | None = None


def set_host_threads(count: int | None) -> None:
    """Set how many threads the compiled host kernels may use per call.

    Parameters
    ----------
    count : int or None
        The most threads one call may use, at least 1 (1: every kernel runs on the
        calling thread alone); ``None`` restores the default: the environment variable
        ``INDEXOPS_HOST_THREADS`` where it is set (read once, on first use), else every
        core this process may run on.

    Notes
    -----
    Results do not depend on the count: each thread owns a range of the rows written or
    read and applies its updates in input order, so every combiner gives the bits one
    thread gives. A call uses one thread per 2**18 elements of work, up to the count.
    Row writes (scatters of rows, every combiner) measured no faster on two threads than
    on one, so they split only where the count is set, here or by
    ``INDEXOPS_HOST_THREADS``; by default they run on the calling thread and only the
    element gather uses every core.
    The setting is global to the process (the kernels are NumPy's and torch's CPU paths
    where numba is installed; without numba it changes nothing).

    Examples
    --------
    >>> import indexops
    >>> indexops.set_host_threads(2)
    >>> indexops.host_threads()
    2
    >>> indexops.set_host_threads(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    indexops.IndexOpsValueError: set_host_threads: count=0 is not allowed: a whole number ...
    >>> indexops.set_host_threads(None)
    """
    global _setting
    _setting = None if count is None else _valid_count("set_host_threads", "count", count)


def host_threads() -> int:
    """The most threads one call of the compiled host kernels may use.

    Returns
    -------
    int
        The count :func:`set_host_threads` set, else ``INDEXOPS_HOST_THREADS``, else the
        cores this process may run on. A row write uses more than one thread only where a
        count is set.

    Examples
    --------
    >>> import indexops
    >>> indexops.host_threads() >= 1
    True
    """
    return _setting if _setting is not None else _default_count()[0]


def threads_for(elements: int, kind: KernelKind) -> int:
    """The threads a kernel call of ``kind`` and ``elements`` elements of work runs on:
    one per :data:`THREAD_MIN_ELEMENTS`, at least one, at most :func:`host_threads`
    (at most the count that is set, else one, for a kind not in
    :data:`SPLIT_BY_DEFAULT`)."""
    share = elements // max(1, THREAD_MIN_ELEMENTS)
    if share <= 1:  # (the common small call: no setting to read)
        return 1
    most = host_threads() if kind in SPLIT_BY_DEFAULT else _count_set()
    return max(1, min(most, share))


def _count_set() -> int:
    """The count set by :func:`set_host_threads` or the environment variable; else 1."""
    if _setting is not None:
        return _setting
    count, is_set = _default_count()
    return count if is_set else 1


def _valid_count(op: str, arg: str, count: object) -> int:
    allowed = "a whole number of threads, at least 1, or None for the default"
    if isinstance(count, bool) or not isinstance(count, int):
        raise type_error(op, arg, count, allowed)
    if count < 1:
        raise value_error(op, arg, count, allowed)
    return count


def _default_count() -> tuple[int, bool]:
    """The default count and whether the environment variable set it (read once)."""
    global _default
    if _default is None:
        text = os.environ.get(ENVIRONMENT, "").strip()
        _default = (_environment_count(text), True) if text else (_cores(), False)
    return _default


def _environment_count(text: str) -> int:
    """The count the environment variable gives (a named error for anything else)."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise value_error(
            "indexops", ENVIRONMENT, text, "a whole number of threads, at least 1, or unset"
        )
    return count


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


# -- the pool --------------------------------------------------------------------------------

_tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_workers: list[threading.Thread] = []
_start_lock = threading.Lock()


def split(count: int, parts: int) -> list[tuple[int, int]]:
    """``range(count)`` cut into ``parts`` ranges ``(lo, hi)`` of sizes that differ by at
    most one, in order (empty ones left out)."""
    bounds = [count * part // parts for part in range(parts + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def run_parts(task: Callable[[int, int], T], count: int, parts: int) -> list[T]:
    """``task(lo, hi)`` for each range of :func:`split` ``(count, parts)``, at once: the
    first on the calling thread, the others offered to the pool's workers; their results
    in the ranges' order. Once its own range is done, the caller runs each offered range
    that no worker has taken yet, so a call never waits for a worker that is busy with
    other calls' ranges. Where the caller's range raises (an interrupt), no range runs
    after the call: those not taken are dropped, those taken are waited for. ``task``
    must release the GIL (a ``nogil`` kernel) to gain anything."""
    if parts <= 1:  # (the common call: no ranges to make)
        return [task(0, count)]
    ranges = split(count, parts)
    if len(ranges) <= 1:
        return [task(0, count)]
    _ensure_workers(len(ranges) - 1)
    offered = [_Part(task, lo, hi) for lo, hi in ranges[1:]]
    for part in offered:
        _tasks.put(part.run)
    try:
        first = task(*ranges[0])
    except BaseException:
        for part in offered:
            part.drop()
        raise
    for part in offered:
        part.run()  # a range no worker has taken yet; else nothing
    return [first, *(part.result() for part in offered)]


class _Part(Generic[T]):
    """One range of a split call, run once, by whichever thread takes it first."""

    def __init__(self, task: Callable[[int, int], T], lo: int, hi: int) -> None:
        self._task: Callable[[int, int], T] | None = task
        self._lo, self._hi = lo, hi
        self._taken = threading.Lock()
        self._running = threading.Lock()  # held until the range is done (cheaper than an Event)
        self._running.acquire()
        self._value: T | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        """Run the range, unless another thread has taken it."""
        if not self._taken.acquire(blocking=False):
            return
        task, self._task = self._task, None  # the queue may hold this part a while yet
        try:
            self._value = cast(Callable[[int, int], T], task)(self._lo, self._hi)
        except BaseException as error:  # handed to the caller, who raises it
            self._error = error
        finally:
            self._running.release()

    def drop(self) -> None:
        """Never run the range; if a thread has taken it, wait until it is done."""
        if self._taken.acquire(blocking=False):
            self._task = None
            self._running.release()
            return
        with self._running:
            pass

    def result(self) -> T:
        """The range's result, once run (its error raised)."""
        with self._running:
            pass
        if self._error is not None:
            raise self._error
        return cast(T, self._value)


def _ensure_workers(count: int) -> None:
    """At least ``count`` workers running (started under a lock; never stopped)."""
    if len(_workers) >= count:
        return
    with _start_lock:
        while len(_workers) < count:
            worker = threading.Thread(
                target=_work, args=(_tasks,), name="indexops-host", daemon=True
            )
            worker.start()
            _workers.append(worker)


def _work(tasks: queue.SimpleQueue[Callable[[], None]]) -> None:
    while True:
        tasks.get()()


def _forget_pool() -> None:
    """In a child made by ``fork``: the parent's workers do not exist there, and its queue
    and lock may have been taken mid-operation; the child starts its own on first use."""
    global _tasks, _workers, _start_lock
    _tasks, _workers, _start_lock = queue.SimpleQueue(), [], threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
