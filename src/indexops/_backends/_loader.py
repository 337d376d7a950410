"""When the compiled host kernels load: on a thread of their own, from the first call that
could use them.

Loading them costs a process about half a second once, with numba's cache on disk warm:
numba's import and its CPU target's set-up, before any cached loop can run
(benchmarks/README.md, "What a first call costs"). So the first call large enough for a
kernel starts the load on a thread and, as every call until the load ends, takes the paths
the library takes without numba; the calls after it take the kernels.
:func:`load_host_kernels` waits for them instead (a server's start-up, a benchmark's
set-up). A result never depends on whether the load had ended: where numba is installed,
the other paths round as the kernels do (NumPy's float add keeps ``ufunc.at``, which adds
in input order as the kernels do, rather than its sparse product, which sums a row's
updates before it adds them).

A ``fork`` waits for a load under way, so that no child inherits a half-imported numba, and
a child forked before the load began starts its own.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from types import ModuleType


class KernelLoader:
    """The compiled kernels of one process, loaded once: asked without waiting
    (:meth:`ready`, which starts the load), waited for (:meth:`wait`) or only looked at
    (:meth:`loaded`, which never starts it)."""

    def __init__(self) -> None:
        self._begin()

    def _begin(self) -> None:
        """No load begun."""
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._module: ModuleType | None = None

    def loaded(self) -> ModuleType | None:
        """The kernel module where its load has ended, else ``None`` (nothing started)."""
        return self._module  # (set once loaded: no question of _done on every small call)

    def expected(self) -> bool:
        """Whether the kernels run in this process now or will: loaded, or not loaded yet
        and numba installed."""
        return self._module is not None if self._done.is_set() else _numba_installed()

    def ready(self) -> ModuleType | None:
        """The kernel module where its load has ended; else ``None``, the first ask
        starting the load on a thread. ``None`` also where numba is missing or fails."""
        if self._done.is_set():
            return self._module
        self._start()
        return None

    def wait(self) -> ModuleType | None:
        """The kernel module, loaded on a thread (begun here if no call began it) and
        waited for; ``None`` where numba is missing or fails to import."""
        self._start()
        self._done.wait()
        return self._module

    def before_fork(self) -> None:
        """Wait for a load under way (at most :data:`FORK_WAIT_S`): a child must not
        inherit half of numba's import, whose module locks no thread of it would free."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(FORK_WAIT_S)  # (ended, not only done: no thread left to warn of)

    def after_fork_in_child(self) -> None:
        """Forget a load that had not begun (its lock may have been held by a thread the
        child does not have); after a load the fork did not wait out, never load."""
        if self._done.is_set():
            return
        under_way = self._thread is not None
        self._begin()
        if under_way:
            self._done.set()

    def _start(self) -> None:
        if not _numba_installed():  # (nothing to load: no thread)
            self._done.set()
            return
        with self._lock:
            if self._thread is None:
                _wait_in_forks()
                self._thread = threading.Thread(target=self._load, name="indexops-kernels")
                self._thread.start()

    def _load(self) -> None:
        module = None
        try:
            from . import _kernels

            _kernels.warm_up()
            module = _kernels
        except Exception:  # ImportError, or numba refusing this NumPy or platform its own way
            pass
        finally:  # (whatever happened, no one waits for ever)
            self._module = module
            self._done.set()


@functools.cache
def _numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


LOADER = KernelLoader()

# How long a fork waits for a load under way (one takes about half a second): past it, some
# other fork hook holds a lock the load needs, and the child goes on without the kernels.
FORK_WAIT_S = 10.0
_forks_waited = False

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: LOADER.after_fork_in_child())


def _wait_in_forks() -> None:
    """Make a fork wait for a load under way, from the first load on. Hooks before a fork
    run in the reverse order of their registration: logging's, which takes the lock
    numba's import needs, is registered first so that this one runs, and waits, before
    it."""
    global _forks_waited
    if _forks_waited or not hasattr(os, "register_at_fork"):
        return
    import logging  # noqa: F401  (registers its fork hooks on import)

    os.register_at_fork(before=lambda: LOADER.before_fork())
    _forks_waited = True


def load_host_kernels() -> bool:
    """Load the compiled host kernels now, and say whether they run in this process.

    The kernels (numba, the ``fast`` extra) run NumPy's and torch's CPU calls of at
    least 1024 elements. Loading them costs a process about half a second once, so the
    first such call starts the load on a thread and, until it ends, calls take the paths
    the library takes without numba (the same results, bit for bit, more slowly). Call
    this where that half second is better spent up front, as a server's start-up or a
    benchmark's set-up: it waits for the load (begun here if no call began it).

    Returns
    -------
    bool
        True where the kernels run; False where numba is not installed or fails to import
        (then every call takes the other paths).

    Examples
    --------
    >>> import indexops
    >>> indexops.load_host_kernels() in (True, False)
    True
    """
    return LOADER.wait() is not None


def compile_host_kernels() -> int:
    """Compile the host kernels of the common dtypes into numba's cache, ahead of calls.

    A kernel compiles on the first call of a process that needs it for a new signature
    (its dtypes and ranks), a tenth to half a second each, and is kept in numba's cache
    beside the installed package; a later process loads it from there in milliseconds.
    Call this once where that cost belongs to an install, not to the first calls: a
    container image's build, a deployment step (``python -m indexops`` calls it after
    its tour). It compiles every kernel for elements moved as bits (each element size
    of 1, 2, 4 and 8 bytes, with int64 and int32 indices for the element gathers) and for
    float32, float64, int32 and int64 arithmetic, on every core, and waits for the
    kernels to load first. Other signatures still compile on their first call.

    Returns
    -------
    int
        How many kernel signatures are now in the cache; 0 where numba is not installed
        or fails to import (the kernels then never run).

    Examples
    --------
    >>> import indexops
    >>> indexops.compile_host_kernels() in (0, 147)  # 0: numba is not installed
    True
    """
    if not load_host_kernels():
        return 0
    from . import _kernels

    return _kernels.compile_common(processes=os.cpu_count() or 1)
