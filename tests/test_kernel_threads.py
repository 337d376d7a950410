"""The compiled host kernels on several threads (``_backends/_threads.py``): bit for bit
one thread's results, every combiner; calls from many Python threads at once; rows
outside the table; aliased inputs; the setting.

Each thread owns a range of the targets (table rows, output rows) and applies the
updates of its own targets in input order, so float sums with duplicates come out as on
one thread. The tests lower the size from which a call splits to one element, so small
arrays are cut into ranges (mid-row too), and use the dtypes the rest of the suite
compiles the kernels for (float64, int64): a second thread compiles nothing new.
"""

from __future__ import annotations

import math
import os
import signal
import time

import ml_dtypes
import numpy as np
import pytest
from helpers import ROW_SCATTER, map_in_threads
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import scatter as reference
from test_host_fast_paths import assert_bits_equal

import indexops
from indexops._backends import _host, _threads
from indexops._testing import generic_only
from indexops._validate.combiners import Named

kernels = _host.load_kernels()
pytestmark = pytest.mark.skipif(kernels is None, reason="numba is not installed (the fast extra)")

COMBINERS = (None, Named.ADD, Named.MUL, Named.MIN, Named.MAX)
NAMES = {None: None, Named.ADD: "add", Named.MUL: "mul", Named.MIN: "min", Named.MAX: "max"}


@pytest.fixture
def splits(monkeypatch):
    """Kernels and splits from the first element on; the number of ranges of each split
    call (1: it ran on the calling thread alone; a row write on one thread makes no
    split)."""
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_host, "ELEMENT_STEPS_MAX_ELEMENTS", 0)
    monkeypatch.setattr(_threads, "THREAD_MIN_ELEMENTS", 1)
    monkeypatch.setattr(_threads, "_setting", None)
    seen: list[int] = []
    run = kernels.run_parts

    def spy(task, count, parts):
        seen.append(len(_threads.split(count, parts)))
        return run(task, count, parts)

    monkeypatch.setattr(kernels, "run_parts", spy)
    return seen


def spread_values(rng, shape, dtype):
    """Values whose sums and products depend on their order: floats of magnitudes from
    1e-12 to 1e12 of both signs (zeros of both signs and NaN among them), integers that
    wrap."""
    if dtype == "int64":
        return rng.integers(-(2**62), 2**62, size=shape)
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 13, size=shape)
    values.flat[::17] = -0.0
    values.flat[5::23] = 0.0
    values.flat[11::97] = np.nan
    return values


def on_threads(count, call):
    indexops.set_host_threads(count)
    try:
        return call()
    finally:
        indexops.set_host_threads(None)


@settings(max_examples=25, deadline=None)
@given(
    dtype=st.sampled_from(["float64", "int64"]),
    how=st.sampled_from(COMBINERS),
    threads=st.sampled_from([2, 3, 5]),
    width=st.sampled_from([1, 4]),
    seed=st.integers(0, 2**16),
)
def test_rows_on_threads_are_bit_identical_to_one_thread(
    splits, prefetched, dtype, how, threads, width, seed
):
    """Every combiner, duplicates (a table of 9 rows, 300 updates), float sums whose
    value depends on their order: the bits of one thread, and the generic path's."""
    splits.clear()
    rng = np.random.default_rng(seed)
    table = spread_values(rng, (9, width), dtype)
    rows = rng.integers(0, 9, size=300)
    values = spread_values(rng, (300, width), dtype)
    with np.errstate(all="ignore"):
        one = on_threads(1, lambda: kernels.apply_rows(table.copy(), rows, values, how))
        many = on_threads(threads, lambda: kernels.apply_rows(table.copy(), rows, values, how))
        scattered = on_threads(
            threads,
            lambda: indexops.scatter(
                table, rows[:, None], values, update_computation=NAMES[how], **ROW_SCATTER
            ),
        )
        with generic_only():
            expected = indexops.scatter(
                table, rows[:, None], values, update_computation=NAMES[how], **ROW_SCATTER
            )
    assert splits == [threads, threads]  # (one thread: no split made)
    assert_bits_equal(many, one)
    assert_bits_equal(scattered, expected)


@pytest.mark.backends("torch")
@pytest.mark.parametrize("how", ["add", "max"])
def test_torch_rows_on_threads(splits, how):
    """torch's CPU tensors reach the same split kernels through NumPy views."""
    import torch

    rng = np.random.default_rng(4)
    table, rows = spread_values(rng, (9, 4), "float64"), rng.integers(0, 9, size=(300, 1))
    values = spread_values(rng, (300, 4), "float64")
    tensors = [torch.from_numpy(a) for a in (table, rows, values)]
    result = on_threads(
        3, lambda: indexops.scatter(*tensors, update_computation=how, **ROW_SCATTER)
    )
    with np.errstate(all="ignore"):
        one = on_threads(
            1, lambda: kernels.apply_rows(table.copy(), rows[:, 0], values, Named(how))
        )
    assert splits[0] == 3 and type(result) is torch.Tensor
    assert_bits_equal(result.numpy(), one)


def test_float_sums_differ_by_order_so_the_test_above_can_fail():
    """The sums the tests compare are not the same in another order: a split of the
    updates (not the targets) would give other bits."""
    rng = np.random.default_rng(0)
    values = spread_values(rng, (300, 1), "float64")[:, 0]
    values = values[~np.isnan(values)]
    in_order = np.cumsum(values)[-1]
    halves = np.sum(values[: len(values) // 2]) + np.sum(values[len(values) // 2 :])
    assert in_order != halves


@pytest.mark.parametrize("outside", ["clip", "fill", "stop"])
@pytest.mark.parametrize(("shape", "axis"), [((5, 7), 1), ((7, 5), 0), ((3, 4, 6), 1)])
def test_element_gather_on_threads(splits, outside, shape, axis):
    """The output cut into ranges of the rows before the axis (a gather along the first
    axis keeps one thread): one thread's values, and the same first index outside (the
    one that stops the loop, found by a later range than the first)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    size = shape[axis]
    idx_shape = (*shape[:axis], 5, *shape[axis + 1 :])
    indices = rng.integers(
        0 if outside == "stop" else -3, size + (0 if outside == "stop" else 3), idx_shape
    )
    if outside == "stop":
        indices.flat[[13, 20]] = [size, -1]

    def take():
        return kernels.take_along_axis(x, indices, axis, wrap=False, outside=outside, fill=-9.0)

    one, bad_one = on_threads(1, take)
    many, bad_many = on_threads(4, take)
    assert splits == [1, min(4, math.prod(shape[:axis]))] and bad_many == bad_one
    if outside == "stop":
        assert bad_one == 13
        return
    np.testing.assert_array_equal(many, one)
    clipped = np.take_along_axis(x, np.clip(indices, 0, size - 1), axis)
    inside = (indices >= 0) & (indices < size)
    np.testing.assert_array_equal(
        many, clipped if outside == "clip" else np.where(inside, clipped, -9.0)
    )


def test_rows_outside_stop_every_thread_before_any_write(splits):
    """A row outside the table (a broken promise) stops a write in place before anything
    is written, on one thread and on three: the first row outside is named and the table
    keeps its bits. Into a copy, the loop stops where it meets it (the copy is dropped)."""
    rng = np.random.default_rng(2)
    table = rng.standard_normal((8, 3))
    rows = rng.integers(0, 8, size=40)
    rows[[25, 31]] = [-1, 99]
    values = rng.standard_normal((40, 3))
    for threads in (1, 3):
        for copy in (False, True):
            written = table.copy()
            with pytest.raises(
                IndexError, match="index -1 is out of bounds for axis 0 with size 8"
            ):
                on_threads(
                    threads,
                    lambda w=written, c=copy: kernels.apply_rows(
                        w, rows, values, Named.ADD, copy=c
                    ),
                )
            assert_bits_equal(written, table)
    assert splits == [3, 3]


def test_aliased_updates_and_rows_on_threads(splits):
    """Rows and updates that view the table are read as they were before the call."""
    table = np.arange(60, dtype=np.int64).reshape(15, 4) % 7
    rows, values = table[3:13, 0], table[2:12]
    expected = reference.scatter(
        table, rows[:, None].copy(), values.copy(), update_computation="add", **ROW_SCATTER
    )
    on_threads(3, lambda: kernels.apply_rows(table, rows, values, Named.ADD))
    np.testing.assert_array_equal(table, expected)
    assert splits == [3, 3]  # (the first finds them shared and writes nothing; then copies)


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<f4", "bfloat16", "int16"])
@pytest.mark.parametrize("width_bytes", [4096 - 8, 4096, 8192])
@pytest.mark.parametrize("large_table", [False, True])
def test_wide_rows_replaced_whole_keep_every_promise(
    splits, monkeypatch, dtype, width_bytes, large_table
):
    """A replace of rows of ``COPY_ROW_MIN_BYTES`` or more in a table of
    ``COPY_TABLE_MIN_BYTES`` or more (here: the table counted as large) copies each row
    whole (C's memcpy), and others element by element: either way the reference's bits,
    in the table's dtype and byte order, the last write of a repeated row winning, rows
    from the end counted, rows outside dropped, clipped or, in place, stopping the write
    before anything is written, updates viewing the table read first, on one thread and
    on three, and through ``scatter_update`` in place."""
    monkeypatch.setattr(kernels, "COPY_TABLE_MIN_BYTES", 0 if large_table else 2**62)
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    width = width_bytes // dtype.itemsize
    rng = np.random.default_rng(width_bytes)
    table = rng.standard_normal((24, width)).astype(dtype)
    original = table.copy()
    assert kernels._copied_whole(table.dtype, table.shape) == (large_table and width_bytes >= 4096)
    rows = rng.integers(-24, 24, size=60)
    rows[[7, 40]] = [24, -30]  # outside on either side
    values = rng.standard_normal((60, width)).astype(dtype)

    def replace(target, rows, values, **options):
        return kernels.apply_rows(target, rows, values, None, **options)

    for threads in (1, 3):
        for outside, wrap in (("drop", True), ("clip", False)):
            options = {"wrap": wrap, "outside": outside, "copy": True}
            got = on_threads(threads, lambda o=options: replace(table, rows, values, **o))
            expected = table.copy()
            for row, value in zip(rows, values):
                row = row + 24 if wrap and row < 0 else row
                if outside == "clip":
                    row = min(max(row, 0), 23)
                if 0 <= row < 24:
                    expected[row] = value
            assert got.dtype == dtype and got.tobytes() == expected.tobytes()
        stopped = table.copy()
        with pytest.raises(IndexError, match="index 24 is out of bounds"):
            on_threads(threads, lambda s=stopped: replace(s, rows, values, wrap=True))
        assert stopped.tobytes() == table.tobytes()  # (rows 0-6 are inside: checked first)
        cache = table.copy()  # vLLM's block copies: updates that view the table
        inside = np.abs(rows[:20]) % 24
        expected = cache.copy()
        for row, value in zip(inside, cache[2:22].copy()):
            expected[row] = value
        on_threads(threads, lambda c=cache, i=inside: replace(c, i, c[2:22]))
        assert cache.tobytes() == expected.tobytes()
    # one thread: no split made; the updates viewing the table on three: two, the first
    # finding them shared (nothing written), the second on their copies
    assert splits == [3, 3, 3, 3, 3]
    cache = table.reshape(4, 6, 1, width)  # scatter_update of a paged cache, in place
    slots = (rows % 24).reshape(3, 20)
    tokens = values.reshape(3, 20, 1, width)
    written = on_threads(3, lambda: indexops.scatter_update(cache, -2, slots, tokens))
    assert written is cache and splits == [3, 3, 3, 3, 3, 3]  # (the kernel's)
    with generic_only():
        expected = indexops.scatter_update(
            original.reshape(4, 6, 1, width), -2, slots, tokens, copy=True
        )
    assert original.tobytes() != table.tobytes() == expected.tobytes()


def test_many_python_threads_calling_threaded_kernels(splits):
    """Eight Python threads, each call split into three ranges: no deadlock, each result
    the serial one, and the pool never holds more workers than one call needs."""
    rng = np.random.default_rng(3)
    table, rows = rng.standard_normal((64, 8)), rng.integers(0, 64, 500)
    values, indices = spread_values(rng, (500, 8), "float64"), rng.integers(-8, 8, (64, 8))

    def call(how):
        if how == "gather":
            return indexops.onnx.gather_elements(table, indices, axis=1)
        with np.errstate(all="ignore"):
            return kernels.apply_rows(table.copy(), rows, values, how)

    work = [*COMBINERS, "gather"] * 6
    serial = on_threads(1, lambda: [call(how) for how in work])
    results = on_threads(3, lambda: map_in_threads(call, work, threads=8))
    for got, expected in zip(results, serial):
        assert_bits_equal(got, expected)
    assert splits.count(3) == len(work) and len(_threads._workers) <= 4


def test_a_range_that_raises_raises_in_the_caller():
    """An error in any range is raised by the caller; when the caller's own range raises,
    the others are dropped or waited for."""

    def task(lo, hi):
        if lo > 0:
            raise ZeroDivisionError(f"range {lo}")
        return hi

    with pytest.raises(ZeroDivisionError, match="range"):
        _threads.run_parts(task, 9, 3)
    assert _threads.run_parts(lambda lo, hi: (lo, hi), 9, 3) == [(0, 3), (3, 6), (6, 9)]

    ran = []

    def first_raises(lo, hi):
        if lo == 0:
            raise KeyboardInterrupt
        time.sleep(0.01)
        ran.append(lo)

    with pytest.raises(KeyboardInterrupt):
        _threads.run_parts(first_raises, 9, 3)
    after = list(ran)  # no range runs once the call has raised
    time.sleep(0.05)
    assert ran == after
    assert _threads.run_parts(lambda lo, hi: (lo, hi), 2, 4) == [(0, 1), (1, 2)]


def exit_code(pid, seconds):
    """The exit code of the child ``pid``; killed (and -9) if it runs for ``seconds``."""
    for _ in range(int(seconds * 100)):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return -9


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
# JAX, where the same process imported it, warns of any fork: its threads' locks may be held
# in the child. The child here runs only the pool and numba's kernels, then _exit()s.
@pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")
def test_split_calls_run_in_a_child_made_by_fork(splits):
    """The parent's workers do not exist in a forked child, and its start lock may be
    held at the fork: the child starts its own and its split calls finish."""
    indexops.set_host_threads(3)
    try:
        table, rows = np.zeros((6, 2)), np.arange(12) % 6
        kernels.apply_rows(np.zeros((6, 2)), rows, np.ones((12, 2)), Named.ADD)  # workers up
        with _threads._start_lock:  # another thread starting one when the fork comes
            pid = os.fork()
        if pid == 0:  # the child: exit 0 only with the right sums, from fresh workers
            ok = False
            try:
                kernels.apply_rows(table, rows, np.ones((12, 2)), Named.ADD)
                fresh = all(worker.is_alive() for worker in _threads._workers)
                ok = fresh and bool((table == 2.0).all())
            finally:
                os._exit(0 if ok else 1)
        assert exit_code(pid, seconds=60) == 0
    finally:
        indexops.set_host_threads(None)


# -- the setting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "error"),
    [
        (0, indexops.IndexOpsValueError),
        (-2, indexops.IndexOpsValueError),
        (2.0, indexops.IndexOpsTypeError),
        (True, indexops.IndexOpsTypeError),
        ("4", indexops.IndexOpsTypeError),
    ],
)
def test_set_host_threads_names_a_bad_count(count, error, monkeypatch):
    monkeypatch.setattr(_threads, "_setting", 3)
    with pytest.raises(error, match=rf"set_host_threads: count={count!r} is not allowed: "):
        indexops.set_host_threads(count)
    assert indexops.host_threads() == 3  # unchanged


@pytest.mark.parametrize(("text", "count"), [("3", 3), (" 1 ", 1), ("", None)])
def test_the_environment_sets_the_default_once(text, count, monkeypatch):
    monkeypatch.setattr(_threads, "_setting", None)
    monkeypatch.setattr(_threads, "_default", None)
    monkeypatch.setenv(_threads.ENVIRONMENT, text)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert indexops.host_threads() == (count or cores)
    monkeypatch.setenv(_threads.ENVIRONMENT, "7")  # read once
    assert indexops.host_threads() == (count or cores)
    indexops.set_host_threads(2)
    assert indexops.host_threads() == 2
    indexops.set_host_threads(None)
    assert indexops.host_threads() == (count or cores)


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5"])
def test_a_bad_environment_count_is_named(text, monkeypatch):
    monkeypatch.setattr(_threads, "_setting", None)
    monkeypatch.setattr(_threads, "_default", None)
    monkeypatch.setenv(_threads.ENVIRONMENT, text)
    with pytest.raises(indexops.IndexOpsValueError, match=rf"INDEXOPS_HOST_THREADS={text!r}"):
        indexops.host_threads()


@pytest.mark.parametrize("kind", ["gather", "row write"])
def test_small_calls_keep_one_thread(kind, monkeypatch):
    monkeypatch.setattr(_threads, "_setting", 4)
    least = _threads.THREAD_MIN_ELEMENTS
    sizes = (0, least - 1, least, 3 * least, 99 * least)
    assert [_threads.threads_for(n, kind) for n in sizes] == [1, 1, 1, 3, 4]


@pytest.mark.parametrize(("set_by", "row_ranges"), [(None, 1), ("call", 3), ("environment", 3)])
def test_row_writes_split_only_where_the_count_is_set(splits, set_by, row_ranges, monkeypatch):
    """Where the count is not set (every core, here 3), the element gather splits and a
    row write keeps the calling thread (it measured no faster on two threads than on
    one); a count set by set_host_threads or INDEXOPS_HOST_THREADS splits both."""
    monkeypatch.setattr(_threads, "_default", None)
    monkeypatch.setattr(_threads, "_cores", lambda: 3)
    monkeypatch.delenv(_threads.ENVIRONMENT, raising=False)
    if set_by == "environment":
        monkeypatch.setenv(_threads.ENVIRONMENT, "3")
    if set_by == "call":
        indexops.set_host_threads(3)
    table, rows = np.zeros((9, 2)), np.arange(18) % 9
    kernels.apply_rows(table, rows, np.ones((18, 2)), Named.ADD)
    x, indices = np.arange(24.0).reshape(6, 4), np.arange(24).reshape(6, 4) % 4
    taken, _ = kernels.take_along_axis(x, indices, 1, wrap=False, outside="clip")
    assert splits == [row_ranges, 3][row_ranges == 1 :] and indexops.host_threads() == 3
    assert (table == 2.0).all()
    np.testing.assert_array_equal(taken, x)
