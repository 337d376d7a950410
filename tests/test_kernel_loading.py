"""When the compiled kernels load (``_backends/_loader.py``): on a thread from the first call
large enough for them, calls meanwhile taking the other paths with the same results;
:func:`indexops.load_host_kernels` waits; a ``fork`` never leaves a child half of numba.

The suite itself loads them up front (conftest.py), so the load on a thread is tested
here, in fresh processes where it matters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from helpers import ROW_SCATTER, map_in_threads
from test_host_fast_paths import assert_bits_equal

import indexops
from indexops import onnx
from indexops._backends import _host, _loader

pytestmark = pytest.mark.skipif(
    _host.load_kernels() is None, reason="numba is not installed (the fast extra)"
)


def run_child(code: str) -> str:
    """Run ``code`` in a fresh interpreter that imports this checkout's indexops; its
    standard output (it must end well and print nothing on standard error: an error on
    the loader's thread would)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0 and not done.stderr, done.stderr[-3000:]
    return done.stdout


class SlowLoads:
    """A loader's loads, counted, each held until ``release`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.release = threading.Event()
        load = _loader.KernelLoader._load

        def counted(loader: _loader.KernelLoader) -> None:
            self.count += 1
            self.release.wait(60)
            load(loader)

        monkeypatch.setattr(_loader.KernelLoader, "_load", counted)


@pytest.fixture
def slow_loads(monkeypatch):
    loads = SlowLoads(monkeypatch)
    yield loads
    loads.release.set()  # (a failed test leaves no load waiting)


def test_the_first_ask_starts_one_load_and_later_asks_get_the_kernels(slow_loads):
    loader = _loader.KernelLoader()
    assert loader.loaded() is None and slow_loads.count == 0  # looking starts nothing
    asked = map_in_threads(lambda _: loader.ready(), range(64), threads=8)
    assert asked == [None] * 64  # every ask while it loads: the other paths
    assert loader.loaded() is None and slow_loads.count == 1  # 64 asks, 8 threads, 1 load
    slow_loads.release.set()
    compiled = loader.wait()
    assert compiled is not None and compiled is _host.load_kernels()
    assert loader.ready() is compiled and loader.loaded() is compiled
    assert slow_loads.count == 1


def test_a_wait_without_an_ask_starts_the_load():
    assert _loader.KernelLoader().wait() is _host.load_kernels()


def test_without_numba_no_thread_starts(monkeypatch):
    monkeypatch.setattr(_loader, "_numba_installed", lambda: False)
    loader = _loader.KernelLoader()
    assert not loader.expected() and loader.ready() is None
    assert loader._thread is None and loader.wait() is None and loader.loaded() is None


def test_calls_while_the_kernels_load_take_the_other_paths(slow_loads, monkeypatch):
    """A call large enough for the kernels, made while they load, gives their result by
    the paths taken without numba; once loaded, the kernels run."""
    compiled = _host.load_kernels()
    taken: list[bool] = []
    take = compiled.take_along_axis
    monkeypatch.setattr(
        compiled, "take_along_axis", lambda *a, **k: taken.append(True) or take(*a, **k)
    )
    monkeypatch.setattr(_loader, "LOADER", _loader.KernelLoader())  # this process, fresh
    rng = np.random.default_rng(0)
    data, indices = rng.random((256, 16)), rng.integers(-16, 16, (256, 16))
    while_loading = indexops.onnx.gather_elements(data, indices, axis=1)
    assert taken == [] and slow_loads.count == 1
    slow_loads.release.set()
    assert indexops.load_host_kernels()
    loaded = indexops.onnx.gather_elements(data, indices, axis=1)
    assert taken == [True]
    np.testing.assert_array_equal(while_loading, loaded)
    np.testing.assert_array_equal(loaded, np.take_along_axis(data, indices % 16, axis=1))


FORK_CHILD = r"""
import os, sys
import numpy as np
import indexops
from indexops._backends import _host, _loader

def forked(check):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            check()
        except BaseException as error:
            print(repr(error), file=sys.stderr)
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child failed"

# forked before any load: the child loads its own
forked(lambda: indexops.load_host_kernels() or sys.exit(1))
assert _loader.LOADER.loaded() is None

# the first large call starts the load on a thread and returns at once (the other paths)
rng = np.random.default_rng(0)
data, indices = rng.random((256, 16)), rng.integers(-16, 16, (256, 16))
first = indexops.onnx.gather_elements(data, indices, axis=1)
assert _loader.LOADER._thread is not None
assert _loader.LOADER.loaded() is None  # (under way: numba's import alone takes 0.1 s)

# forked while it loads: the fork waits for the load, and the child has the kernels
forked(lambda: _loader.LOADER.loaded() is not None or sys.exit(1))
assert _loader.LOADER.loaded() is not None
np.testing.assert_array_equal(first, indexops.onnx.gather_elements(data, indices, axis=1))
print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_never_leaves_a_child_half_a_load():
    assert run_child(FORK_CHILD).strip() == "ok"


def _calls(convert):
    """Calls of every entry point that reaches a kernel, large enough for one (and for
    NumPy's float add by a sparse product, where no kernel runs), with repeated targets,
    signed zeros and NaNs among the updates: name -> call."""
    rng = np.random.default_rng(5)
    calls = {}
    for dtype in ("float32", "float64", "complex64", "int64"):
        values = rng.integers(-4, 4, (5000, 8)) if dtype == "int64" else rng.random((5000, 8)) - 0.5
        values = values.astype(dtype)
        if dtype.startswith("float"):
            values[:7, 0] = [-0.0, 0.0, np.nan, -0.0, 1e30, -1e30, np.inf]
        table, rows = values[-64:].copy(), rng.integers(0, 64, (5000, 1))  # (not zeros: sums)
        elements = rng.integers(-8, 8, (64, 8))
        for how in (None, "add", "mul", "min", "max"):
            if dtype.startswith("complex") and how in ("min", "max"):
                continue
            calls[f"scatter {how} {dtype}"] = lambda how=how, t=table, r=rows, v=values: (
                indexops.scatter(convert(t), convert(r), convert(v), update_computation=how,
                                 **ROW_SCATTER)
            )  # fmt: skip
            reduction = how or "none"
            calls[f"onnx.scatter_elements {reduction} {dtype}"] = (
                lambda reduction=reduction, t=table, e=elements, v=values: (
                    indexops.onnx.scatter_elements(
                        convert(t), convert(e), convert(v[:64]), axis=1, reduction=reduction
                    )
                )
            )
            calls[f"onnx.scatter_nd {reduction} {dtype}"] = (
                lambda reduction=reduction, t=table, r=rows, v=values: indexops.onnx.scatter_nd(
                    convert(t), convert(r), convert(v), reduction=reduction
                )
            )
        calls[f"at add {dtype}"] = lambda t=table, r=rows, v=values: indexops.at(convert(t))[
            convert(r[:, 0])
        ].add(convert(v))
        calls[f"onnx.gather_elements {dtype}"] = lambda v=values, e=elements: (
            indexops.onnx.gather_elements(convert(v[:64]), convert(e), axis=1)
        )
    return calls


@pytest.mark.parametrize(
    "library", ["numpy", pytest.param("torch", marks=pytest.mark.backends("torch"))]
)
def test_calls_before_and_after_the_load_give_the_same_bits(slow_loads, monkeypatch, library):
    """Whether the load had ended changes no bit of any result: float sums and products
    of repeated targets included (NumPy's other float add, a sparse product, reassociates:
    where numba is installed it is not taken)."""
    if library == "torch":
        torch = pytest.importorskip("torch")
        calls = _calls(torch.from_numpy)
    else:
        calls = _calls(lambda x: x)
    monkeypatch.setattr(_loader, "LOADER", _loader.KernelLoader())  # this process, fresh
    results = map_in_threads(lambda call: np.asarray(call()), calls.values(), threads=8)
    while_loading = dict(zip(calls, results))  # (from 8 threads at once)
    assert _loader.LOADER.loaded() is None and slow_loads.count == 1
    slow_loads.release.set()
    assert indexops.load_host_kernels()
    for name, call in calls.items():
        after = np.asarray(call())
        try:
            assert_bits_equal(after, while_loading[name])
        except AssertionError as error:
            raise AssertionError(name) from error


def test_a_process_that_ends_while_the_kernels_load_ends_cleanly():
    out = run_child(
        "import numpy as np, indexops\n"
        "x = indexops.onnx.gather_elements(np.ones((64, 64)), np.zeros((64, 64), int), 0)\n"
        "print(float(x.sum()))\n"
    )
    assert out.strip() == "4096.0"


def common_calls() -> None:
    """Calls of kernel size of the common dtypes: row writes of float32, int64 and
    bfloat16 (moved as bits), element gathers clipped, filled and counted from the end
    with int64 and int32 indices, and an element scatter; and the replace of a few
    elements (two index arrays and three) of those moved as bits, and their max."""
    import ml_dtypes

    rows = np.arange(2048)[:, None] % 1024
    for dtype, how in ((np.float32, "add"), (np.int64, "max"), (ml_dtypes.bfloat16, None)):
        table, updates = np.zeros((1024, 8), dtype), np.ones((2048, 8), dtype)
        indexops.scatter(table, rows, updates, **ROW_SCATTER, update_computation=how)
    x = np.ones((256, 16), np.float32)
    for index in (np.int64, np.int32):
        idx = (np.arange(256 * 16).reshape(256, 16) % 19 - 2).astype(index)
        onnx.gather_elements(x, idx % 16, axis=1)
        for mode in ("clip", "fill"):
            indexops.at(x)[np.arange(256)[:, None], idx].get(mode=mode)
    ones = np.ones((256, 16))
    onnx.scatter_elements(ones, ones.astype(np.int64), ones, axis=1, reduction="add")
    columns = np.arange(64 * 3).reshape(64, 3) % 16  # a few elements replaced
    for dtype in (np.float64, np.int32, ml_dtypes.bfloat16):
        table = np.zeros((64, 16), dtype)
        indexops.at(table)[np.arange(64)[:, None], columns].set(np.ones((64, 3), dtype))
        if dtype is not ml_dtypes.bfloat16:
            indexops.at(table)[np.arange(64)[:, None], columns].max(np.ones((64, 3), dtype))
        indexops.at(table.reshape(4, 16, 16))[
            np.arange(4)[:, None, None], np.array(2), columns[:4]
        ].set(np.ones((4, 1, 3), dtype))


def test_common_calls_use_the_signatures_compiled_ahead(monkeypatch):
    """Every kernel signature the common calls use is one that
    :func:`indexops.compile_host_kernels` compiles ahead (each kernel's argument types
    recorded as it is called)."""
    import numba

    from indexops._backends import _kernels

    ahead = set(_kernels.common_signatures())
    used: set[tuple[object, tuple[object, ...]]] = set()

    def recorded(kernel: object) -> object:
        def call(*args: object) -> object:
            used.add((kernel, tuple(numba.typeof(a) for a in args)))
            return kernel(*args)  # type: ignore[operator]

        return call

    for table in (_kernels._ROW_KERNELS, _kernels._TUPLE_KERNELS, _kernels._ALONG_KERNELS,
                  _kernels._TAKE_LAST, _kernels._PAIR_KERNELS):  # fmt: skip
        for key, kernel in list(table.items()):
            monkeypatch.setitem(table, key, recorded(kernel))
    for name in ("_take_along", "_counting_up", "_largest_unsigned", "_replace_rows"):
        monkeypatch.setattr(_kernels, name, recorded(getattr(_kernels, name)))
    common_calls()
    assert used - ahead == set()
    assert len({kernel for kernel, _ in used}) >= 8, used


def test_compile_host_kernels_compiles_the_common_signatures_on_every_core(monkeypatch):
    """:func:`indexops.compile_host_kernels` waits for the kernels and compiles the
    common signatures on as many processes as the machine has cores, giving their
    count; without the kernels, nothing and 0."""
    from indexops._backends import _kernels

    asked: list[int] = []
    monkeypatch.setattr(_kernels, "compile_common", lambda processes: asked.append(processes) or 7)
    assert indexops.compile_host_kernels() == 7 and asked == [os.cpu_count() or 1]
    monkeypatch.setattr(_loader, "load_host_kernels", lambda: False)
    assert indexops.compile_host_kernels() == 0 and asked == [os.cpu_count() or 1]
