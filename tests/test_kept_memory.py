"""Memory of large host results kept for later results (``_backends/_kept_memory.py``).

A kept result's memory goes to a later result only once every array that can reach it is
gone; the blocks held never total more than the setting; many threads never get the same
block; every entry point that writes a large result into kept memory gives the values it
gives without. The tests lower the size from which results are kept (and the size blocks
are rounded to) so that small arrays take the same route as 32 MiB ones.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time

import ml_dtypes
import numpy as np
import pytest
from array_api_compat import array_namespace
from helpers import map_in_threads

import indexops
from indexops import onnx
from indexops._backends import _host, _kept_memory
from indexops._testing import without_kernels

SMALL = 4096  # the lowered threshold, and the lowered block size


@pytest.fixture
def kept(monkeypatch):
    """Results of :data:`SMALL` bytes or more kept, in blocks of :data:`SMALL` bytes,
    under the default setting; afterwards every block let go."""
    monkeypatch.setattr(_kept_memory, "KEPT_MIN_BYTES", SMALL)
    monkeypatch.setattr(_kept_memory, "_BLOCK_BYTES", SMALL)
    indexops.set_kept_memory(None)
    yield
    indexops.set_kept_memory(0)
    indexops.set_kept_memory(None)


def in_a_block(a: np.ndarray) -> bool:
    """Whether ``a`` views one of the blocks held."""
    return any(np.shares_memory(a, block) for block in _kept_memory._blocks)


def none_shared(arrays) -> bool:
    """Whether no two of ``arrays`` share memory."""
    return not any(np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1 :])


def test_memory_of_a_dead_result_goes_to_the_next_of_its_size(kept):
    first = _kept_memory.empty((1024,), np.dtype(np.float64))
    address = first.ctypes.data
    assert in_a_block(first) and first.base is not None
    assert _kept_memory.held_bytes() == (8192, 0)
    del first
    assert _kept_memory.held_bytes() == (8192, 8192)
    again = _kept_memory.empty((32, 32), np.dtype(np.int64))  # another shape, same size
    assert again.ctypes.data == address and again.shape == (32, 32)
    assert again.dtype == np.int64 and again.flags.c_contiguous and again.flags.writeable


def test_results_below_the_threshold_and_of_objects_are_numpys(kept):
    small = _kept_memory.empty((SMALL // 8 - 1,), np.dtype(np.float64))
    objects = _kept_memory.empty((SMALL,), np.dtype(object))
    assert small.flags.owndata and objects.flags.owndata
    assert _kept_memory.held_bytes() == (0, 0)


HOLDERS = {
    "a slice": lambda a: a[3:],
    "the transpose": lambda a: a.reshape(32, 32).T,
    "a view of another dtype": lambda a: a.view(np.uint8),
    "np.asarray": np.asarray,
    "a memoryview": memoryview,
    "np.frombuffer of a memoryview": lambda a: np.frombuffer(memoryview(a), dtype=np.int64),
    "as_strided": lambda a: np.lib.stride_tricks.as_strided(a, shape=(4,), strides=(8,)),
    "a list holding the array": lambda a: [a],
}


@pytest.mark.parametrize("holder", HOLDERS.values(), ids=HOLDERS.keys())
def test_memory_any_array_still_reaches_is_never_handed_out(kept, holder):
    first = _kept_memory.empty((1024,), np.dtype(np.int64))
    first[...] = np.arange(1024)
    held = holder(first)
    del first
    snapshot = [r.copy() for r in _reachable(held)]
    second = _kept_memory.empty((1024,), np.dtype(np.int64))
    second[...] = -1
    assert not any(np.shares_memory(second, r) for r in _reachable(held))
    assert _kept_memory.held_bytes() == (16384, 0)
    for reached, before in zip(_reachable(held), snapshot, strict=True):
        np.testing.assert_array_equal(reached, before)
    del held, reached
    assert _kept_memory.held_bytes() == (16384, 8192)


def _reachable(held: object) -> list[np.ndarray]:
    if isinstance(held, list):
        return held
    if isinstance(held, memoryview):
        return [np.frombuffer(held, dtype=np.uint8)]
    return [np.asarray(held)]


@pytest.mark.backends("torch")
def test_memory_a_torch_tensor_shares_is_never_handed_out(kept):
    torch = pytest.importorskip("torch")
    first = _kept_memory.empty((1024,), np.dtype(np.float32))
    address = first.ctypes.data
    tensor = torch.from_numpy(first).view(torch.int32).view(32, 32)
    tensor.fill_(7)
    del first
    second = _kept_memory.empty((1024,), np.dtype(np.float32))
    second[...] = 0
    assert bool((tensor == 7).all())
    del tensor
    assert _kept_memory.empty((1024,), np.dtype(np.float32)).ctypes.data == address
    assert _kept_memory.held_bytes() == (2 * 4096, 4096)  # (that result died at once)


@pytest.mark.parametrize(
    "dtype",
    [np.dtype(">f4"), np.dtype("<i2"), np.dtype(ml_dtypes.bfloat16), np.dtype("f4,i4")],
    ids=str,
)
def test_results_keep_their_dtype_and_byte_order(kept, dtype):
    result = _kept_memory.empty((2048,), dtype)
    assert result.dtype == dtype and in_a_block(result)
    source = np.arange(4096).astype(dtype) if dtype.names is None else np.zeros(1024, dtype)
    copied = _kept_memory.copy(source)
    assert copied.dtype == source.dtype and in_a_block(copied)
    assert copied.tobytes() == source.tobytes()


def test_a_copy_keeps_a_layout_other_than_c_unless_asked(kept):
    fortran = np.asfortranarray(np.arange(4096.0).reshape(64, 64))
    kept_layout = _kept_memory.copy(fortran)
    assert kept_layout.flags.f_contiguous and not in_a_block(kept_layout)
    c_copy = _kept_memory.copy(fortran, order="C")
    assert c_copy.flags.c_contiguous and in_a_block(c_copy)
    np.testing.assert_array_equal(c_copy, fortran)
    np.testing.assert_array_equal(kept_layout, fortran)


def test_the_blocks_held_never_total_more_than_the_setting(kept):
    indexops.set_kept_memory(3 * SMALL)
    results = [_kept_memory.empty((SMALL // 4,), np.dtype(np.float32)) for _ in range(4)]
    assert [in_a_block(r) for r in results] == [True, True, True, False]
    assert results[3].flags.owndata
    assert _kept_memory.held_bytes() == (3 * SMALL, 0)
    twice = _kept_memory.empty((SMALL // 2,), np.dtype(np.float32))  # no room: its own
    assert not in_a_block(twice)
    del results[:2]
    # free blocks of another size are let go to make room
    twice = _kept_memory.empty((SMALL // 2,), np.dtype(np.float32))
    assert in_a_block(twice) and _kept_memory.held_bytes() == (3 * SMALL, 0)
    assert _kept_memory.empty((SMALL,), np.dtype(np.float32)).flags.owndata  # above it


def test_a_lower_setting_lets_go_at_once_and_results_alive_keep_their_values(kept):
    alive = _kept_memory.empty((1024,), np.dtype(np.int64))
    alive[...] = 5
    dead = _kept_memory.empty((2048,), np.dtype(np.int64))
    del dead
    assert _kept_memory.held_bytes() == (3 * 8192, 2 * 8192)
    indexops.set_kept_memory(0)
    assert _kept_memory.held_bytes() == (0, 0) and indexops.kept_memory() == 0
    assert (alive == 5).all()
    assert _kept_memory.empty((1024,), np.dtype(np.int64)).flags.owndata
    indexops.set_kept_memory(None)
    assert indexops.kept_memory() == _kept_memory.DEFAULT_KEPT_BYTES


def test_many_threads_never_get_the_same_block(kept):
    def work(seed: int) -> list[np.ndarray]:
        alive: list[np.ndarray] = []
        for step in range(60):
            size = 1024 * (1 + (seed + step) % 3)
            result = _kept_memory.empty((size,), np.dtype(np.int64))
            result[...] = seed * 1000 + step
            alive = [*alive[-2:], result]
            for earlier in alive:
                assert (earlier == earlier[0]).all()
        return alive

    kept_at_end = [r for rs in map_in_threads(work, range(16), threads=16) for r in rs]
    for i, a in enumerate(kept_at_end):
        assert not any(np.shares_memory(a, b) for b in kept_at_end[i + 1 :])
    held, free = _kept_memory.held_bytes()
    assert held <= _kept_memory.DEFAULT_KEPT_BYTES and held - free >= 48 * 8192


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True, None.__class__])
def test_set_kept_memory_names_a_bad_amount(bad):
    error = ValueError if bad == -1 else TypeError
    with pytest.raises(error, match=rf"set_kept_memory: max_bytes={bad!r} is not allowed: "):
        indexops.set_kept_memory(bad)
    assert indexops.kept_memory() == _kept_memory.DEFAULT_KEPT_BYTES


@pytest.mark.parametrize(("text", "answer"), [("0", "0"), (" 1048576 ", "1048576"),
                                              ("lots", "INDEXOPS_KEPT_MEMORY='lots'")])  # fmt: skip
def test_the_environment_variable_sets_the_default(text, answer):
    code = (
        "import indexops\n"
        "try:\n print(indexops.kept_memory())\nexcept ValueError as error:\n print(error)"
    )
    env = {"INDEXOPS_KEPT_MEMORY": text, "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert answer in out.stdout, out.stderr


# -- through the entry points ------------------------------------------------------------------


def kernels_or_skip():
    kernels = _host.load_kernels()
    if kernels is None:
        pytest.skip("numba is not installed (the fast extra)")


@pytest.fixture
def kernels_from_one_element(monkeypatch):
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_host, "ELEMENT_STEPS_MAX_ELEMENTS", 0)


def element_gather_calls(x, idx):
    rows = np.arange(x.shape[0])[:, None]
    return {
        "onnx.gather_elements": lambda: onnx.gather_elements(x, idx, axis=1),
        "at idiom": lambda: indexops.at(x)[rows, idx].get(),
    }


@pytest.mark.parametrize("entry", ["onnx.gather_elements", "at idiom"])
def test_element_gathers_write_kept_memory_and_reuse_it(kept, kernels_from_one_element, entry):
    kernels_or_skip()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    idx = rng.integers(-16, 16, size=(256, 16))
    expected = np.take_along_axis(x, idx % 16, axis=1)
    call = element_gather_calls(x, idx)[entry]
    first = call()
    assert in_a_block(first)
    np.testing.assert_array_equal(first, expected)
    address = first.ctypes.data
    del first
    second = call()
    assert second.ctypes.data == address
    np.testing.assert_array_equal(second, expected)
    third = call()  # second alive: memory of its own
    assert not np.shares_memory(second, third)
    np.testing.assert_array_equal(third, expected)


def test_a_gather_that_raises_leaves_no_block_in_use(kept, kernels_from_one_element):
    kernels_or_skip()
    x = np.zeros((256, 16), np.float32)
    idx = np.zeros((256, 16), np.int64)
    idx[200, 3] = 16
    with pytest.raises(indexops.IndexOpsValueError, match="16"):
        onnx.gather_elements(x, idx, axis=1)
    held, free = _kept_memory.held_bytes()
    assert held == free == 16384


def test_scatter_copies_of_kept_results_are_other_memory(kept):
    """A scatter into a copy of a kept result (the result fed back as the next input):
    the copy is new memory, the input stays as it was, the values are NumPy's."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 16))
    rows = rng.integers(0, 128, size=(40, 1))
    updates = rng.standard_normal((40, 16))
    expected = x.copy()
    current = x
    for _ in range(3):
        before = current.copy()
        current_next = onnx.scatter_nd(current, rows, updates, reduction="add")
        np.add.at(expected, rows[:, 0], updates)
        np.testing.assert_array_equal(current, before)
        assert not np.shares_memory(current_next, current)
        assert in_a_block(current_next)
        current = current_next
    np.testing.assert_allclose(current, expected, rtol=1e-12)


@pytest.mark.parametrize("kernels", ["with kernels", "without kernels"])
def test_the_numpy_backends_copies_are_kept(kept, kernels):
    x = np.arange(4096.0).reshape(256, 16)
    indices = np.array([[3], [3], [250]])
    updates = np.ones((3, 16))
    if kernels == "with kernels":
        kernels_or_skip()
        result = onnx.scatter_elements(x, np.tile(indices, (1, 16)), updates, reduction="max")
    else:
        with without_kernels():
            result = onnx.scatter_elements(x, np.tile(indices, (1, 16)), updates, reduction="max")
    expected = x.copy()
    np.maximum.at(expected, (np.tile(indices, (1, 16)), np.arange(16)), updates)
    np.testing.assert_array_equal(result, expected)
    assert in_a_block(result)


@pytest.mark.backends("torch")
def test_torch_copies_through_numpy_are_kept(kept, monkeypatch):
    torch = pytest.importorskip("torch")
    from indexops._backends import _torch

    monkeypatch.setattr(_torch, "NUMPY_COPY_MIN_BYTES", SMALL)
    x = torch.arange(4096, dtype=torch.float64).reshape(256, 16)
    rows = torch.tensor([[5], [9], [5]])
    updates = torch.ones(3, 16, dtype=torch.float64)
    results = [onnx.scatter_nd(x, rows, updates, reduction="add") for _ in range(3)]
    expected = x.index_add(0, rows[:, 0], updates)
    for result in results:
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
    arrays = [r.numpy() for r in results]
    assert all(in_a_block(a) for a in arrays)
    assert none_shared(arrays)
    assert x.equal(torch.arange(4096, dtype=torch.float64).reshape(256, 16))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
# JAX, where the same process imported it, warns of any fork: its threads' locks may be held
# there, and the child calls nothing of JAX
@pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")
def test_a_child_forked_while_the_lock_is_held_keeps_memory(kept):
    """A fork made while another thread holds the lock: the child's next large result
    does not wait for a thread it does not have."""
    _kept_memory._lock.acquire()
    try:
        pid = os.fork()
        if pid == 0:  # the child: exits 0 only if the result is made and kept
            result = _kept_memory.empty((1024,), np.dtype(np.float64))
            os._exit(0 if in_a_block(result) else 1)
    finally:
        _kept_memory._lock.release()
    for _ in range(300):  # at most 30 s, then the child is stuck
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the child forked while the lock was held waited for it")


ROW_GATHER = {
    "offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
    "index_vector_dim": 1, "slice_sizes": (1, 16),
}  # fmt: skip


def entry_point_calls(x, rows, updates, idx):
    """Every public call whose result is a gather's new output or a scatter's copy: its
    result is in kept memory."""
    counting = array_namespace(x).arange(x.shape[0])[:, None]
    return {
        "onnx.gather_elements": lambda: onnx.gather_elements(x, idx, axis=1),
        "at idiom get": lambda: indexops.at(x)[counting, idx].get(),
        "at idiom add": lambda: indexops.at(x)[counting, idx % 16].add(1.0),
        # (37 rows: a signature no other test gives, whose executor decides its take here)
        "gather rows": lambda: indexops.gather(x, rows[:37, None], **ROW_GATHER, mode="clip"),
        "gather rows, promised": lambda: indexops.gather(
            x, rows[:37, None], **ROW_GATHER, mode="promise_in_bounds"
        ),
        "onnx.gather": lambda: onnx.gather(x, rows[:37], axis=0),
        "at rows get": lambda: indexops.at(x)[rows[:33]].get(),
        "at rows add": lambda: indexops.at(x)[rows].add(updates),
        "at rows set": lambda: indexops.at(x)[rows].set(updates),
        "at rows max": lambda: indexops.at(x)[rows].max(updates),
        "at slice set": lambda: indexops.at(x)[8:16].set(1.0),
        "onnx.scatter_nd": lambda: onnx.scatter_nd(x, rows[:, None], updates, reduction="add"),
        "onnx.scatter_elements": lambda: onnx.scatter_elements(
            x, idx % 16, np.ones(x.shape), axis=1, reduction="mul"
        ),
        "dynamic_update_slice": lambda: indexops.dynamic_update_slice(x, updates[:4, :4], (3, 3)),
        "slice_scatter": lambda: indexops.slice_scatter(
            x, np.ones((128, 16)), start=[0], stop=[256], step=[2], axes=[0]
        ),
    }


def nothing_kept_then_kept(call):
    """``call()`` with nothing kept, then three calls under the default setting, their
    results all alive."""
    indexops.set_kept_memory(0)
    expected = call()
    indexops.set_kept_memory(None)
    return expected, [call() for _ in range(3)]


ENTRY_POINTS = list(entry_point_calls(*[np.zeros((1, 1))] * 4))


@pytest.fixture
def entry_arrays():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 16))
    return (
        x,
        rng.integers(0, 256, 40),
        rng.standard_normal((40, 16)),
        rng.integers(-16, 16, x.shape),
    )


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_writes_kept_memory_with_the_values_it_gives_without(
    kept, kernels_from_one_element, entry_arrays, entry
):
    kernels_or_skip()
    x = entry_arrays[0]
    before = x.copy()
    call = entry_point_calls(*entry_arrays)[entry]
    expected, results = nothing_kept_then_kept(call)
    for result in results:
        assert in_a_block(result) and not np.shares_memory(result, x)
        np.testing.assert_array_equal(result, expected)
    assert none_shared(results)
    np.testing.assert_array_equal(x, before)


def test_every_entry_point_from_many_threads(kept, kernels_from_one_element, entry_arrays):
    """Eight threads call every entry point in turn, keeping their last results: each
    result is the serial one and no two live results share memory."""
    kernels_or_skip()
    calls = entry_point_calls(*entry_arrays)
    serial = {name: call() for name, call in calls.items()}

    def work(seed: int) -> list[np.ndarray]:
        alive: list[np.ndarray] = []
        for step in range(3 * len(calls)):
            name = ENTRY_POINTS[(seed + step) % len(ENTRY_POINTS)]
            alive = [*alive[-3:], calls[name]()]
            np.testing.assert_array_equal(alive[-1], serial[name])
        return alive

    alive = [r for rs in map_in_threads(work, range(8), threads=8) for r in rs]
    assert none_shared(alive)


@pytest.mark.backends("torch")
@pytest.mark.parametrize("entry", ["onnx.gather_elements", "at idiom get", "onnx.scatter_nd"])
def test_torch_cpu_entry_points_write_kept_memory(
    kept, kernels_from_one_element, entry_arrays, monkeypatch, entry
):
    """torch's element gather (the kernel on NumPy views of the tensors) and its copies
    through NumPy: tensors over kept memory, the values torch gives without it."""
    torch = pytest.importorskip("torch")
    from indexops._backends import _torch

    kernels_or_skip()
    monkeypatch.setattr(_torch, "NUMPY_COPY_MIN_BYTES", SMALL)
    arrays = [torch.from_numpy(a) for a in entry_arrays]
    before = arrays[0].clone()
    call = entry_point_calls(*arrays)[entry]
    expected, results = nothing_kept_then_kept(call)
    for result in results:
        assert isinstance(result, torch.Tensor) and in_a_block(result.numpy())
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
    arrays_out = [r.numpy() for r in results]
    assert none_shared(arrays_out)
    assert arrays[0].equal(before)


def test_a_result_made_while_this_thread_holds_the_lock_gets_its_own_memory(kept):
    """A finalizer that the garbage collector runs while the module allocates, and that
    makes a large result, runs on the thread that holds the lock: its result gets memory
    of its own at once, rather than a block the interrupted count saw free or a wait for
    ever; the setting and the report do not wait either."""
    made: list[np.ndarray] = []

    def inside() -> None:
        with _kept_memory._held():
            made.append(_kept_memory.empty((1024,), np.dtype(np.float64)))
            indexops.set_kept_memory(None)
            _kept_memory.held_bytes()

    worker = threading.Thread(target=inside, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "a result made under the lock waited for it"
    assert made[0].flags.owndata and _kept_memory.held_bytes() == (0, 0)
    assert in_a_block(_kept_memory.empty((1024,), np.dtype(np.float64)))


def test_free_blocks_of_other_sizes_are_let_go_oldest_first(kept):
    indexops.set_kept_memory(3 * SMALL)
    made = [_kept_memory.empty((SMALL // 8,), np.dtype(np.float64)) for _ in range(3)]
    newest = made[2].ctypes.data
    del made
    _kept_memory.empty((SMALL // 4,), np.dtype(np.float64))  # room for it: two let go
    assert len(_kept_memory._blocks) == 2
    assert _kept_memory._blocks[0].ctypes.data == newest


def test_a_setting_lowered_on_the_thread_that_holds_the_lock_is_kept_by_the_next_result(kept):
    """A finalizer that lowers the setting while the module holds the lock lets go of
    nothing then; the next large result lets go of the free blocks beyond it."""
    dead = _kept_memory.empty((1024,), np.dtype(np.float64))
    del dead
    with _kept_memory._held():
        indexops.set_kept_memory(0)
    assert _kept_memory.held_bytes() == (8192, 8192)
    assert _kept_memory.empty((1024,), np.dtype(np.float64)).flags.owndata
    assert _kept_memory.held_bytes() == (0, 0)


def test_a_higher_setting_keeps_the_free_blocks(kept):
    dead = _kept_memory.empty((1024,), np.dtype(np.float64))
    address = dead.ctypes.data
    del dead
    indexops.set_kept_memory(2 * _kept_memory.DEFAULT_KEPT_BYTES)
    assert _kept_memory.held_bytes() == (8192, 8192)
    assert _kept_memory.empty((1024,), np.dtype(np.float64)).ctypes.data == address


def test_a_setting_lowered_while_a_call_waits_for_the_lock(kept):
    """A call that waits for the lock while another thread lowers the setting to 0: once
    its result is gone, no block stays held, whichever thread took the lock first."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with _kept_memory._held():
            holding.set()
            release.wait(30)

    made: list[np.ndarray] = []
    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(30)
    maker = threading.Thread(
        target=lambda: made.append(_kept_memory.empty((1024,), np.dtype(np.float64)))
    )
    maker.start()
    time.sleep(0.1)  # the maker waits for the lock
    setter = threading.Thread(target=indexops.set_kept_memory, args=(0,))
    setter.start()
    time.sleep(0.1)  # so does the setter, the setting already 0
    release.set()
    for thread in (holder, maker, setter):
        thread.join(30)
    assert len(made) == 1
    del made[:]
    _kept_memory.empty((1024,), np.dtype(np.float64))  # a result after it: let go of it
    assert _kept_memory.held_bytes() == (0, 0) and indexops.kept_memory() == 0


@pytest.mark.parametrize("mode", ["raise", "clip"])
def test_rows_taken_into_kept_memory_read_as_numpys_take(kept, mode):
    """A large row take: ``clip`` straight into kept memory; ``raise`` (where NumPy would
    buffer the output) finds the rows in ``[-n, n)`` first and reads them by ``wrap``,
    negative ones from the end; a row outside raises NumPy's error and holds no block."""
    rng = np.random.default_rng(3)
    table = rng.standard_normal((50, 16))
    rows = rng.integers(-50, 50, 64)
    taken = _kept_memory.take_rows(table, rows, mode)
    assert in_a_block(taken)
    np.testing.assert_array_equal(taken, table.take(rows, axis=0, mode=mode))
    outside = rows.copy()
    outside[40] = 50 if mode == "raise" else 1000
    if mode == "raise":
        with pytest.raises(IndexError, match="out of bounds"):
            _kept_memory.take_rows(table, outside, mode)
    else:
        np.testing.assert_array_equal(
            _kept_memory.take_rows(table, outside, mode), table.take(outside, axis=0, mode="clip")
        )
    del taken
    held, free = _kept_memory.held_bytes()
    assert held == free


@pytest.mark.backends("torch")
@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds"])
def test_torch_row_gathers_on_one_thread_write_kept_memory(kept, monkeypatch, mode):
    """torch's large row gather on one thread (NumPy's take on the tensors' memory):
    into kept memory, the rows ``index_select`` reads; a row outside under the promise
    is the library's error, nothing left in use."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        table = torch.randn(300, 16, dtype=torch.float64)
        rows = torch.randint(0, 300, (2500,))
        call = functools.partial(
            indexops.gather, table, offset_dims=(1,), collapsed_slice_dims=(0,),
            start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 16), mode=mode,
        )  # fmt: skip
        expected, results = nothing_kept_then_kept(lambda: call(rows[:, None]))
        torch.testing.assert_close(expected, table.index_select(0, rows), rtol=0, atol=0)
        for result in results:
            assert in_a_block(result.numpy())
            torch.testing.assert_close(result, expected, rtol=0, atol=0)
        assert none_shared([r.numpy() for r in results])
        if mode == "promise_in_bounds":
            outside = rows.clone()
            outside[7] = 300
            with pytest.raises(IndexError):
                call(outside[:, None])
    finally:
        torch.set_num_threads(threads)
    del results, result
    held, free = _kept_memory.held_bytes()
    assert held == free
