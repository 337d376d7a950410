"""The compiled host kernels (numba, the ``fast`` extra) against the generic path and the
StableHLO and ONNX transcriptions.

The kernels run from a size (``_host.KERNEL_MIN_ELEMENTS``); the tests set it to 0 so
that small arrays take them, and spy on the kernel module to check that they ran. Few
dtypes are drawn on purpose: each kernel compiles once per dtype (a fraction of a second,
cached on disk), so the tests use the ones the rest of the suite uses (float64, int64)
where any will do, and one of each other way the kernels see a dtype (bits moved as they
are, complex numbers as float pairs, dtypes they decline). The broken promises of every
kernel run in a child process in tests/test_broken_promises.py; the host paths they take
over from are tested without them in tests/test_host_fast_paths.py.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
import subprocess
import sys
import types

import ml_dtypes
import numpy as np
import pytest
from helpers import ROW_GATHER, ROW_SCATTER, map_in_threads
from hypothesis import given
from hypothesis import strategies as st
from reference import gather as gather_reference
from reference import onnx_ops
from reference import scatter as reference
from test_host_fast_paths import assert_bits_equal, values_of

import indexops
from indexops import onnx
from indexops._backends import _host, _loader
from indexops._execute import rows as rows_module
from indexops._testing import generic_only, without_kernels
from indexops._validate.combiners import Named

kernels = _host.load_kernels()
pytestmark = pytest.mark.skipif(kernels is None, reason="numba is not installed (the fast extra)")

COMBINERS = (None, "add", "mul", "min", "max")
# float64: IEEE add, mul, min and max; int64: sums and products that wrap
DTYPES = ("float64", "int64")
ELEMENT_GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip


@pytest.fixture
def ran(monkeypatch):
    """Kernels from the first element on (no index tuple left to the library's own
    element steps); the list of the kernels that ran (a wrapper that returns ``None``
    declined the arrays). ``apply_rows``: a row plan's call, which every row write
    makes, prepared by a writer or not."""
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_host, "ELEMENT_STEPS_MAX_ELEMENTS", 0)
    calls: list[str] = []
    for owner, name, seen in (
        (kernels.RowPlan, "__call__", "apply_rows"),
        (kernels, "take_along_axis", "take_along_axis"),
        (kernels, "scatter_tuples", "scatter_tuples"),
        (kernels, "scatter_along_axis", "scatter_along_axis"),
    ):
        run = getattr(owner, name)

        def spy(*args, run=run, seen=seen, **kwargs):
            result = run(*args, **kwargs)
            if result is not None:
                calls.append(seen)
            return result

        monkeypatch.setattr(owner, name, spy)
    return calls


def scatter_rows(operand, rows, updates, how, **options):
    with np.errstate(all="ignore"):  # sums and products that wrap or overflow
        return indexops.scatter(
            operand, rows, updates, update_computation=how, **ROW_SCATTER, **options
        )


def wide(a):
    """``a`` in a NumPy type that holds every value of the dtypes here, to compare."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


@given(
    dtype=st.sampled_from(DTYPES),
    how=st.sampled_from(COMBINERS),
    width=st.sampled_from([1, 3]),
    mode=st.sampled_from(["drop", "clip", "promise_in_bounds"]),
    copy=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_row_kernel_applies_the_updates_in_order(
    ran, prefetched, dtype, how, width, mode, copy, seed
):
    """Every combiner, duplicates applied one by one in order, rows asked for ahead or
    not: bit for bit the sequence (signed zeros, NaN and wrapping included) and the
    generic path."""
    ran.clear()
    rng = np.random.default_rng(seed)
    operand = values_of(rng, (7, width), dtype)
    low, high = (0, 7) if mode == "promise_in_bounds" else (-2, 9)
    rows = rng.integers(low, high, size=(40, 1))
    updates = values_of(rng, (40, width), dtype)
    result = scatter_rows(operand.copy(), rows, updates, how, mode=mode, copy=copy)
    assert ran == ["apply_rows"]
    with generic_only():
        expected = scatter_rows(operand.copy(), rows, updates, how, mode=mode)
    assert_bits_equal(result, expected)
    if how not in ("min", "max"):  # the transcription's min and max are Python's
        with np.errstate(all="ignore"):
            sequence = reference.scatter(
                operand, rows, updates, update_computation=how, mode=mode, **ROW_SCATTER
            )
        assert_bits_equal(result, sequence)


@pytest.mark.parametrize("how", ["min", "max"])
def test_row_kernel_min_max_are_ieee(ran, how):
    """Zeros of both signs give -0.0 for min and +0.0 for max in every order; NaN wins,
    already there or updated."""
    operand = np.array([[-0.0, 0.0, 0.0, -0.0, np.nan, 1.0]])
    updates = np.array([[0.0, -0.0, 0.0, -0.0, 1.0, np.nan]] * 2)
    result = scatter_rows(operand, np.zeros((2, 1), np.int64), updates, how)
    negative = how == "min"
    np.testing.assert_array_equal(np.signbit(result[0, :4]), [negative] * 2 + [False, True])
    assert np.isnan(result[0, 4:]).all()


def test_replace_without_unique_indices_skips_the_last_write_search(ran, monkeypatch):
    """Last write wins by the order of the loop: no search for each row's last writer."""
    searches = []
    monkeypatch.setattr(
        rows_module, "_last_occurrences_on_host", lambda *a: searches.append(a) or None
    )
    rows = np.array([[2], [0], [2], [1], [2]])
    updates = np.arange(10.0).reshape(5, 2)
    result = scatter_rows(np.zeros((3, 2)), rows, updates, None)
    np.testing.assert_array_equal(result, [[2.0, 3.0], [6.0, 7.0], [8.0, 9.0]])
    assert searches == []


def as_dtype(name):
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


@pytest.mark.parametrize(
    ("dtype", "how"),
    [
        (dtype, how)
        for dtype in ("float16", ">f8", "complex128", "bfloat16", "bool", "object")
        for how in (None, "add", "mul")
        # named combiners refuse bool and objects (test_scatter.py)
        if how is None or dtype not in ("bool", "object")
    ],
)
def test_row_kernel_keeps_dtype_and_byte_order_or_declines(ran, dtype, how):
    """Replace moves bits, so every dtype of 1, 2, 4 or 8 bytes (or a multiple of 8)
    takes the kernel; arithmetic needs numba's types in native order, else the other
    paths run (half floats, ml_dtypes' bfloat16, non-native byte order, complex products). Which
    dtypes take the kernel is one rule for every combiner (``_arithmetic_type``). Python
    objects never do: moving their bits would not count their references."""
    dtype = as_dtype(dtype)
    rng = np.random.default_rng(0)
    operand = rng.integers(0, 3, size=(5, 4)).astype(dtype)
    updates = rng.integers(1, 3, size=(9, 4)).astype(dtype)
    rows = rng.integers(0, 5, size=(9, 1))
    result = scatter_rows(operand, rows, updates, how)
    with generic_only():
        expected = scatter_rows(operand, rows, updates, how)
    assert result.dtype == dtype  # its byte order too
    np.testing.assert_array_equal(wide(result), wide(expected))
    arithmetic = dtype.isnative and (
        dtype.kind in "iu" or dtype in (np.float32, np.float64) or (dtype.kind, how) == ("c", "add")
    )
    assert ran == (["apply_rows"] if (how is None or arithmetic) and not dtype.hasobject else [])


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("dtype", ["float64", ">f8", "complex128", "bfloat16", "object"])
def test_element_gather_kernel(ran, mode, dtype):
    """GatherElements along axis 1 in one pass: every mode, indices outside included
    (clipped, filled; in range under the promise), elements moved as bits."""
    dtype = as_dtype(dtype)
    rng = np.random.default_rng(1)
    operand = rng.integers(-9, 9, size=(6, 5)).astype(dtype)
    low, high = (0, 5) if mode == "promise_in_bounds" else (-3, 8)
    indices = rng.integers(low, high, size=(6, 4, 1))
    # objects have no default fill (test_semantics_edges.py): name one
    fill = {"fill_value": -1} if mode == "fill" and dtype.hasobject else {}
    result = indexops.gather(operand, indices, **ELEMENT_GATHER, mode=mode, **fill)
    expected = gather_reference.gather(operand, indices, **ELEMENT_GATHER, mode=mode, **fill)
    assert result.dtype == dtype
    np.testing.assert_array_equal(wide(result), wide(expected))
    assert ran[:1] == (["take_along_axis"] if dtype.itemsize <= 8 and not dtype.hasobject else [])


@pytest.fixture(params=[False, True], ids=["stored", "streamed"])
def streamed(request, monkeypatch):
    """Whether the element gathers write their results by non-temporal stores: from the
    first byte on, or (as small results are) not at all."""
    if request.param:
        monkeypatch.setattr(kernels, "STREAM_MIN_BYTES", 0)
    return request.param


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("outside", ["stop", "clip", "fill"])
@pytest.mark.parametrize("axis", [1, 0])
def test_element_gather_loops_of_their_own_for_the_last_axis(
    index_dtype, wrap, outside, axis, streamed
):
    """The last axis's loops of their own (and the general loop, along axis 0), their
    results stored or streamed past the cache: each index read, counted from the end,
    clipped or filled, as NumPy's ``take_along_axis`` of the indices made valid first;
    where ``outside`` stops, the position of the one index outside reported, at either
    end, a negative one too."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    n = x.shape[axis]
    anywhere = outside != "stop"  # (stop: the probe alone outside)
    low = -2 * n if anywhere else -n if wrap else 0
    indices = rng.integers(low, 2 * n if anywhere else n, (5, 7)).astype(index_dtype)
    at = (3, 4)
    for edge in (-n - 1, -n, -1, 0, n - 1, n, -(2**31)):
        probe = indices.copy()
        probe[at] = edge
        taken, bad = kernels.take_along_axis(x, probe, axis, wrap=wrap, outside=outside, fill=-1.5)
        valid = probe.astype(np.int64)
        if wrap:
            valid = np.where(valid < 0, valid + n, valid)
        inside = (valid >= 0) & (valid < n)
        if outside == "stop" and not inside[at]:
            assert bad == np.ravel_multi_index(at, probe.shape)
            continue
        assert bad == -1
        read = np.take_along_axis(x, np.clip(valid, 0, n - 1), axis)
        expected = np.where(inside, read, -1.5) if outside == "fill" else read
        np.testing.assert_array_equal(taken, expected)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize(
    ("wrap", "outside"), [(False, "clip"), (True, "clip"), (True, "stop"), (True, "fill")]
)
def test_faster_loops_first_each_next_one_resuming_where_one_stopped(
    monkeypatch, wrap, outside, threads, streamed
):
    """The loop for indices in [0, n) runs first, then (for a clip) the one that stops,
    each next loop resuming at the row where one stopped: rows before it, the row itself
    (half written) and every row after it, in each thread's share (stored or streamed),
    read as NumPy reads the indices made valid; where the loop asked for stops, at the
    first index outside."""
    from indexops._backends import _threads

    monkeypatch.setattr(_threads, "THREAD_MIN_ELEMENTS", 1)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((40, 7)).astype(np.float32)
    indices = rng.integers(0, 7, (40, 9))  # the first rows in [0, n)
    if wrap:
        for row, column, value in ((12, 2, -1), (12, 8, -7), (25, 0, -3)):
            indices[row, column] = value
    outside_at = ((30, 4, 30),) if outside == "stop" else ((5, 8, 7), (17, 4, 30), (33, 3, -100))
    for row, column, value in outside_at:
        indices[row, column] = value
    valid = np.where(indices < 0, indices + 7, indices) if wrap else indices
    inside = (valid >= 0) & (valid < 7)
    expected = np.take_along_axis(x, np.clip(valid, 0, 6), axis=1)
    if outside == "fill":
        expected = np.where(inside, expected, np.float32(-1.5))
    indexops.set_host_threads(threads)
    try:
        for rows in (slice(0, 40), slice(0, 5), slice(0, 13), slice(6, 40), slice(26, 39)):
            taken, bad = kernels.take_along_axis(
                x[rows], indices[rows], 1, wrap=wrap, outside=outside, fill=-1.5
            )
            stop = rows.start <= 30 < rows.stop and outside == "stop"
            assert bad == ((30 - rows.start) * 9 + 4 if stop else -1)
            done = slice(0, 30 - rows.start) if stop else slice(None)
            np.testing.assert_array_equal(taken[done], expected[rows][done])
    finally:
        indexops.set_host_threads(None)


@pytest.mark.parametrize("bits", ["u1", "u2", "u4", "u8"])
@pytest.mark.parametrize("inner", [0, 1, 3])
def test_streamed_stores_write_what_plain_stores_write(bits, inner):
    """Each element gather loop (those of the last axis, ``inner`` 0; the general one,
    with ``inner`` elements after the axis), on every element size it moves: the same
    bits and the same stop streamed past the cache as stored, an index outside stopping
    the loop midway with what came before it written."""
    rng = np.random.default_rng(31)
    dtype = np.dtype(bits)
    x = rng.integers(0, np.iinfo(dtype).max, (6, 5, max(inner, 1)), dtype=dtype)
    indices = rng.integers(-5, 5, (6, 4, max(inner, 1)))  # (in [0, n) in the first
    indices[:3] = rng.integers(0, 5, (3, 4, max(inner, 1)))  # rows: every loop reads them)
    stopping = indices.copy()
    stopping[3, 2, 0] = 5  # outside [-5, 5): the loops that stop stop there
    fill = np.full(1, 9, dtype=dtype)
    if inner:
        loops = [
            (functools.partial(kernels._take_along, wrap=wrap, outside=how, fill=fill), True)
            for wrap in (False, True)
            for how in (kernels.CLIP, kernels.FILL, kernels.STOP)
        ]
    else:
        loops = [
            (functools.partial(loop, fill=fill) if how == kernels.FILL else loop, False)
            for (_, how), loop in kernels._TAKE_LAST.items()
        ]
        # (C-contiguous, as the wrapper gives them: the signatures compiled ahead)
        x, indices, stopping = (np.ascontiguousarray(a[..., 0]) for a in (x, indices, stopping))
    for loop, general in loops:
        for where in (indices, stopping):
            written = []
            for streaming in (False, True):
                out = np.zeros(where.shape, dtype=dtype)
                if general:
                    stop = loop(x, where, out, lo=0, hi=6, streaming=streaming)
                else:
                    stop = loop(x, where, out, 0, 6, streaming)
                written.append((stop, out))
            (stored_stop, stored), (streamed_stop, streamed_out) = written
            assert streamed_stop == stored_stop
            assert_bits_equal(streamed_out, stored)
            assert stored[:3].any()  # (written before any stop)


@pytest.mark.parametrize(
    "library", ["numpy", pytest.param("torch", marks=pytest.mark.backends("torch"))]
)
def test_element_gathers_stream_from_their_size_through_every_entry_point(monkeypatch, library):
    """A result of :data:`STREAM_MIN_BYTES` or more is streamed, a smaller one stored,
    through ``indexops.onnx``, ``at``'s ``take_along_axis`` idiom and the core gather:
    each result NumPy's ``take_along_axis`` of the indices counted from the end (a
    full-size call at the bound; the others, small, at a bound made small)."""
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_host, "ELEMENT_STEPS_MAX_ELEMENTS", 0)
    streamed: list[bool] = []

    def spied(key):
        loop = kernels._TAKE_LAST[key]

        def spy(*args):
            streamed.append(args[5])
            return loop(*args)

        monkeypatch.setitem(kernels._TAKE_LAST, key, spy)

    spied((False, kernels.STOP))  # (every call starts with it)
    convert, back = (lambda a: a), np.asarray
    if library == "torch":
        import torch

        convert, back = torch.from_numpy, lambda t: t.numpy()
    rng = np.random.default_rng(32)

    def forms(rows, columns, low):
        x = rng.standard_normal((rows, columns)).astype(np.float32)
        idx = rng.integers(low, columns, (rows, columns))
        counting = np.arange(rows)[:, None]
        expected = np.take_along_axis(x, idx % columns, axis=1)
        t, t_idx, t_counting = convert(x), convert(idx), convert(counting)
        return expected, (
            lambda: onnx.gather_elements(t, t_idx, axis=1),
            lambda: indexops.at(t)[t_counting, t_idx].get(),
            lambda: indexops.gather(t, t_idx[..., None], **ELEMENT_GATHER),
        )

    rows = kernels.STREAM_MIN_BYTES // (4 * 64)  # float32 rows of 64: the bound
    for size, streams in ((rows, True), (rows - 1, False)):
        expected, (gather_elements, *_) = forms(size, 64, -64)
        streamed.clear()
        np.testing.assert_array_equal(back(gather_elements()), expected)
        assert set(streamed) == {streams}  # (a call per thread's share)
    monkeypatch.setattr(kernels, "STREAM_MIN_BYTES", 4 * 24 * 7)
    for size, streams in ((24, True), (23, False)):
        for low in (-7, 0):
            expected, calls = forms(size, 7, low)
            for call in calls[: 3 if low == 0 else 2]:  # (the core form counts from 0)
                streamed.clear()
                np.testing.assert_array_equal(back(call()), expected)
                assert set(streamed) == {streams}


@pytest.mark.parametrize("dtype", [">f4", "<i2", ">f8", "bfloat16", "float8_e4m3fn"])
def test_streamed_gathers_keep_the_dtype_and_byte_order(monkeypatch, dtype):
    """Streamed element gathers of non-native byte orders and ml_dtypes, through
    ``indexops.onnx`` and ``at``'s idiom: the input's dtype, byte order included, and
    NumPy's ``take_along_axis`` bits."""
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_host, "ELEMENT_STEPS_MAX_ELEMENTS", 0)
    monkeypatch.setattr(kernels, "STREAM_MIN_BYTES", 0)
    streamed: list[bool] = []
    loop = kernels._TAKE_LAST[False, kernels.STOP]

    def spy(*args):
        streamed.append(args[5])
        return loop(*args)

    monkeypatch.setitem(kernels._TAKE_LAST, (False, kernels.STOP), spy)  # (every call's first)
    rng = np.random.default_rng(34)
    kind = getattr(ml_dtypes, dtype, None)
    x = rng.standard_normal((24, 7)).astype(np.dtype(kind) if kind else np.dtype(dtype))
    idx = rng.integers(-7, 7, (24, 7))
    expected = np.take_along_axis(x, idx % 7, axis=1)
    counting = np.arange(24)[:, None]
    for call in (
        lambda: onnx.gather_elements(x, idx, axis=1),
        lambda: indexops.at(x)[counting, idx].get(),
    ):
        streamed.clear()
        got = call()
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))
        assert streamed and all(streamed)


def test_streamed_gathers_from_many_threads_on_split_kernels(monkeypatch):
    """Eight Python threads each running streamed element gathers, every call split
    between three of the kernels' threads: each result bit for bit one thread's stored
    one (the stores each thread streamed are fenced before its share ends)."""
    from indexops._backends import _threads

    monkeypatch.setattr(_threads, "THREAD_MIN_ELEMENTS", 1)
    monkeypatch.setattr(kernels, "STREAM_MIN_BYTES", 0)
    rng = np.random.default_rng(33)
    cases = []
    for seed in range(8):
        x = rng.standard_normal((97 + seed, 33))
        idx = rng.integers(-33, 33, (97 + seed, 33))
        cases.append((x, idx, np.take_along_axis(x, idx % 33, axis=1)))
    indexops.set_host_threads(3)
    try:

        def gather_all(case):
            x, idx, expected = case
            for _ in range(20):
                assert_bits_equal(onnx.gather_elements(x, idx, axis=1), expected)
            return True

        assert all(map_in_threads(gather_all, cases, threads=8))
    finally:
        indexops.set_host_threads(None)


@pytest.mark.parametrize("how", COMBINERS)
@pytest.mark.parametrize("outside", ["stop", "clip", "fill", "padding", "checked stop"])
def test_row_loops_asking_ahead_write_what_plain_loops_write(how, outside):
    """Each row loop (rows; index tuples), every combiner: the same bits and the same
    stop with the rows of 1, 3, 16 or more updates than there are asked for ahead as with
    none, for each share of the table; rows outside, negative ones and other shares'
    rows on the way, and a stop midway with what came before it written."""
    rng = np.random.default_rng(34)
    how = Named(how) if how else None
    table = values_of(rng, (9, 5), "float64")
    values = values_of(rng, (40, 5), "float64")
    rows = rng.integers(-9, 9, 40)
    rows[[25, 31]] = 30, -20  # outside: a stop midway at the first, unless clipped or dropped
    code = kernels._OUTSIDE[outside.split()[-1]] + (kernels.CHECK_FIRST * (" " in outside))
    row_loop, tuple_loop = kernels._ROW_KERNELS[how], kernels._TUPLE_KERNELS[how]
    inside = rows % 9
    tuples = np.stack([inside // 3, inside % 3], axis=-1)  # into [3, 3] rows
    tuples[::4] -= 3  # counted from the end
    tuples[25, 0] = 10
    dims = np.array([3, 3])
    for ahead in (1, 3, 16, 100):
        for lo, hi in ((0, 9), (2, 7), (7, 9)):
            written = []
            for asked in (0, ahead):
                out = table.copy()
                with np.errstate(all="ignore"):
                    stop = row_loop(out, rows, values, lo, hi, True, code, asked)
                written.append((stop, out))
            (plain_stop, plain), (asked_stop, asked_out) = written
            assert asked_stop == plain_stop
            assert_bits_equal(asked_out, plain)
        out, asked_out = table.copy(), table.copy()
        with np.errstate(all="ignore"):
            stop = tuple_loop(out, tuples, dims, values, 0)
            assert tuple_loop(asked_out, tuples, dims, values, ahead) == stop
        assert stop == 25 * 2  # (tuple 25's first component, 10, outside its dim)
        assert_bits_equal(asked_out, out)
    assert plain_stop == (-1 if outside in ("clip", "fill") else 25)
    assert (plain_stop == 25 and outside == "checked stop") == (plain.tobytes() == table.tobytes())


ROW_ADD = {**ROW_SCATTER, "update_computation": "add"}


@pytest.mark.parametrize(
    "library", ["numpy", pytest.param("torch", marks=pytest.mark.backends("torch"))]
)
def test_row_writes_ask_ahead_from_their_size_through_every_entry_point(monkeypatch, library):
    """A row write into a table of :data:`PREFETCH_MIN_BYTES` or more asks for its rows
    ahead, into a smaller one or one of single elements not, through the core scatter,
    ``at``'s add, ONNX's ScatterND (its rows the dims after the index depth: 1-D data,
    and 2-D data at depth 2, are single elements) and ``scatter_update`` (in place):
    each result NumPy's ``np.add.at`` or assignment, the input's dtype kept."""
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    asked: list[int] = []
    ahead_of = kernels._prefetch_ahead

    def spy(table):
        asked.append(ahead_of(table))
        return asked[-1]

    monkeypatch.setattr(kernels, "_prefetch_ahead", spy)
    convert, back = (lambda a: a), np.asarray
    if library == "torch":
        import torch

        convert, back = torch.from_numpy, lambda t: t.numpy()
    rng = np.random.default_rng(35)
    bound = kernels.PREFETCH_MIN_BYTES // (4 * 64)  # float32 rows of 64
    for n, ahead in ((bound, kernels.PREFETCH_AHEAD), (bound - 1, 0)):
        table = rng.standard_normal((n, 64)).astype(np.float32)
        rows = rng.integers(0, n, 300)
        rows[:3] = [n - 1, 0, n - 1]  # a repeat
        values = rng.standard_normal((300, 64)).astype(np.float32)
        added = table.copy()
        np.add.at(added, rows, values)
        replaced = table.copy()
        replaced[rows] = values
        t, t_rows, t_values = convert(table), convert(rows), convert(values)
        calls = (
            (indexops.scatter, (t, t_rows[:, None], t_values), ROW_ADD, added),
            (lambda *a: indexops.at(a[0])[a[1]].add(a[2]), (t, t_rows, t_values), {}, added),
            (onnx.scatter_nd, (t, t_rows[:, None], t_values), {"reduction": "add"}, added),
            (indexops.scatter_update, (convert(table.copy()), -2, t_rows, t_values), {},
             replaced),
        )  # fmt: skip
        for call, args, kwargs, expected in calls:
            asked.clear()
            result = back(call(*args, **kwargs))
            assert asked == [ahead]
            assert result.dtype == np.float32
            np.testing.assert_array_equal(result, expected)
        assert back(t).tobytes() == table.tobytes()
    for shape, depth, ahead in (
        ((bound * 64,), 1, 0),
        ((bound, 64), 2, 0),
        ((bound, 1, 64), 1, 16),
    ):
        data = np.zeros(shape, np.float32)  # (ScatterND's rows: the dims after depth)
        indices = rng.integers(0, 9, (5, depth))
        asked.clear()
        result = back(
            onnx.scatter_nd(
                convert(data),
                convert(indices),
                convert(np.ones((5, *shape[depth:]), np.float32)),
                reduction="add",
            )
        )
        assert asked == [ahead]
        np.add.at(data, tuple(indices.T), 1.0)
        np.testing.assert_array_equal(result, data)
    column = rng.standard_normal((bound * 64, 1)).astype(np.float32)  # single elements
    rows, values = rng.integers(0, bound * 64, (300, 1)), np.ones((300, 1), np.float32)
    asked.clear()
    result = back(indexops.scatter(convert(column), convert(rows), convert(values), **ROW_ADD))
    assert asked == [0]
    np.add.at(column, rows[:, 0], values)
    np.testing.assert_array_equal(result, column)


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [("uint8", (9, 300)), ("<f4", (9, 64)), (">f8", (9, 40)), ("complex128", (9, 20)),
     ("bfloat16", (9, 160)), ("float8_e4m3fn", (9, 300)), ("<f4", (9, 2, 40)),
     ("<U3", (9, 64)), ("V5", (9, 100)), ("S10", (9, 30))],
)  # fmt: skip
def test_row_gather_kernel_reads_what_numpy_take_reads(monkeypatch, dtype, shape):
    """The compiled row gather (any table bound lowered) on every element size, byte
    order and extension dtype, rows of any shape and integer dtype, counted from the end
    or clipped as NumPy's ``take`` does: the same bytes and dtype; in ``"raise"`` mode a
    row outside is NumPy's error, at the first one; a table viewed at an odd address
    reads by narrower words. It declines what it does not take."""
    monkeypatch.setattr(kernels, "PREFETCH_MIN_BYTES", 0)
    monkeypatch.setattr(kernels, "ROW_GATHER_MIN_RESULT_BYTES", 0)
    rng = np.random.default_rng(36)
    dtype = as_dtype(dtype)
    if dtype.kind in "USV":  # (rows of whole words, elements of 12, 5 and 10 bytes)
        table = np.frombuffer(rng.bytes(math.prod(shape) * dtype.itemsize), dtype).reshape(shape)
    else:
        table = (rng.standard_normal(shape) * 8).astype(dtype)
    n = shape[0]
    for rows in (rng.integers(-n, n, 17), rng.integers(-n, n, (3, 4)).astype(np.int16)):
        for mode, low, high in (("raise", -n, n), ("clip", -3 * n, 3 * n)):
            rows = np.clip(rows, low, high - 1) if mode == "raise" else rows * 3
            taken = kernels.take_rows(table, rows, mode)
            expected = table.take(rows, axis=0, mode=mode)
            assert taken.dtype == table.dtype and taken.shape == expected.shape
            assert taken.tobytes() == expected.tobytes()
    rows = np.array([0, -n, n - 1, n, -n - 1])
    with pytest.raises(IndexError, match=f"^index {n} is out of bounds for axis 0 with size {n}$"):
        kernels.take_rows(table, rows, "raise")
    memory = np.zeros(table.nbytes + 1, np.uint8)
    odd = memory[1:].view(table.dtype).reshape(shape)  # (one byte past an aligned address)
    odd[...] = table
    assert kernels.take_rows(odd, rows[:3], "raise").tobytes() == table[rows[:3]].tobytes()
    narrow = np.ascontiguousarray(table.reshape(n, -1)[:, : 255 // table.itemsize])
    for declined_table, declined_rows in (
        (table[:, ::-1], rows[:3]),  # not C-contiguous
        (table, rows[:3].astype(np.uint64)),
        (narrow, rows[:3]),  # rows under 256 bytes
        (np.zeros((9, 64), object), rows[:3]),
        (table[:0], rows[:0]),
        (table, rows[:0]),  # (NumPy's empty result)
        (table, rows[:0].reshape(0, 3)),
        (table, rows[0]),  # (a 0-d row: NumPy's scalar)
        (np.zeros((9, 64), np.dtype([])), rows[:3]),
    ):
        assert kernels.take_rows(declined_table, declined_rows, "raise") is None
    inside = rows[[0, 1, 2, 2]]
    monkeypatch.setattr(kernels, "ROW_GATHER_MIN_RESULT_BYTES", table[inside].nbytes)
    assert kernels.take_rows(table, inside[:3], "raise") is None
    assert kernels.take_rows(table, inside, "raise").tobytes() == table[inside].tobytes()
    monkeypatch.setattr(kernels, "PREFETCH_MIN_BYTES", table.nbytes + 1)
    assert kernels.take_rows(table, inside, "raise") is None


def test_row_gather_on_threads_reads_one_threads_bytes_and_names_the_first_row_outside(
    monkeypatch,
):
    """The row gather split among three threads by ranges of its output: the bytes of
    one thread's read; with rows outside in two shares, the error names the first."""
    from indexops._backends import _threads

    monkeypatch.setattr(_threads, "THREAD_MIN_ELEMENTS", 1)
    monkeypatch.setattr(kernels, "PREFETCH_MIN_BYTES", 0)
    monkeypatch.setattr(kernels, "ROW_GATHER_MIN_RESULT_BYTES", 0)
    rng = np.random.default_rng(38)
    table = rng.standard_normal((50, 64))
    rows = rng.integers(-50, 50, 300)
    indexops.set_host_threads(3)
    try:
        for mode in ("clip", "raise"):
            expected = table.take(rows, 0, mode=mode).tobytes()
            assert kernels.take_rows(table, rows, mode).tobytes() == expected
        rows[[250, 120]] = 50, -51  # in the third share and the second
        with pytest.raises(IndexError, match=r"^index -51 is out"):
            kernels.take_rows(table, rows, "raise")
    finally:
        indexops.set_host_threads(None)


@pytest.mark.parametrize(
    "library", ["numpy", pytest.param("torch", marks=pytest.mark.backends("torch"))]
)
def test_row_gathers_take_the_kernel_from_their_size_through_every_entry_point(
    monkeypatch, library
):
    """A row read of :data:`ROW_GATHER_MIN_RESULT_BYTES` or more from a table of
    :data:`PREFETCH_MIN_BYTES` or more, of rows of :data:`ROW_GATHER_MIN_BYTES` or more,
    (or narrower, read on two threads) is the compiled row gather's; a table a row
    smaller, narrower rows on one thread or a row fewer read NumPy's take, through the
    core gather (clip and
    ``promise_in_bounds``), ``at``'s get and ONNX's Gather: each result NumPy's
    ``take``, in the table's dtype, from eight Python threads at once too; a row
    outside is clamped by ``at`` as without the kernel and named by ONNX's Gather."""
    taken: list[bool] = []
    take_rows = kernels.take_rows

    def spy(*args):
        result = take_rows(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(kernels, "take_rows", spy)
    convert, back = (lambda a: a), np.asarray
    if library == "torch":
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # (on more, torch's own index_select)
        convert, back = torch.from_numpy, lambda t: t.numpy()
    rng = np.random.default_rng(37)
    bound = kernels.PREFETCH_MIN_BYTES // kernels.ROW_GATHER_MIN_BYTES
    try:
        read = kernels.ROW_GATHER_MIN_RESULT_BYTES // kernels.ROW_GATHER_MIN_BYTES
        # rows of 63: a table and a read at their bounds
        narrow = -(-kernels.PREFETCH_MIN_BYTES // 252)
        narrow_read = -(-kernels.ROW_GATHER_MIN_RESULT_BYTES // 252)
        for n, width, count, host_threads, kernel in (
            (bound, 64, read, 1, True),
            (bound - 1, 64, read, 1, False),
            (narrow, 63, narrow_read, 1, False),
            (narrow, 63, narrow_read, 2, True),  # narrower rows, read on two threads
            (bound, 64, read - 1, 1, False),
        ):
            indexops.set_host_threads(host_threads)
            table = rng.standard_normal((n, width)).astype(np.float32)
            rows = rng.integers(-n, n, count)
            expected = table.take(rows, axis=0)
            t, t_rows = convert(table), convert(rows)
            inside = convert(rows % n)[:, None]
            attributes = {**ROW_GATHER, "slice_sizes": (1, width)}
            calls = (
                (indexops.gather, (t, inside), {**attributes, "mode": "clip"}),
                (indexops.gather, (t, inside), {**attributes, "mode": "promise_in_bounds"}),
                (lambda x, i: indexops.at(x)[i].get(), (t, t_rows), {}),
                (onnx.gather, (t, t_rows), {"axis": 0}),
            )
            for call, args, kwargs in calls:
                taken.clear()
                result = back(call(*args, **kwargs))
                assert result.dtype == np.float32
                np.testing.assert_array_equal(result, expected)
                assert any(taken) is kernel
            past = rows.copy()
            past[1000] = n
            with without_kernels():
                clamped = back(indexops.at(t)[convert(past)].get())
            np.testing.assert_array_equal(back(indexops.at(t)[convert(past)].get()), clamped)
            with pytest.raises(ValueError, match=r"indices\[1000\]"):
                onnx.gather(t, convert(past), axis=0)
            reads = [(t, t_rows)] * 8
            results = map_in_threads(
                lambda read: back(indexops.at(read[0])[read[1]].get()), reads, 8
            )
            assert all(np.array_equal(r, expected) for r in results)
    finally:
        indexops.set_host_threads(None)
        if library == "torch":
            torch.set_num_threads(threads)


@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint8", "int16"])
def test_onnx_gather_elements_wraps_and_checks_in_one_pass(ran, index_dtype):
    """ONNX's negative indices wrap inside the kernel (int64 and int32 indices; the
    others are widened first) and the first index outside is the named error."""
    rng = np.random.default_rng(2)
    data = rng.random((4, 3, 6))
    low = 0 if index_dtype == "uint8" else -3
    indices = rng.integers(low, 3, size=(4, 5, 6)).astype(index_dtype)
    result = onnx.gather_elements(data, indices, axis=1)
    np.testing.assert_array_equal(result, onnx_ops.gather_elements(data, indices, axis=1))
    assert ran == ["take_along_axis"]
    indices[2, 1, 4], indices[3, 0, 0] = 3, 7  # the first one outside is named
    with pytest.raises(indexops.IndexOpsValueError, match=r"indices\[2, 1, 4\]=3 "):
        onnx.gather_elements(data, indices, axis=1)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_onnx_scatter_nd_wraps_checks_and_writes_in_one_pass(ran, prefetched, reduction):
    """ScatterND hands its raw index tuples to one loop over a copy of ``data`` (rows
    asked for ahead or not): negative components count from the end, duplicates apply in
    order (bit for bit the generic path; the transcription's min and max are Python's),
    updates that view ``data`` are read as they were; the first index outside is the
    named error, ``data`` untouched."""
    rng = np.random.default_rng(16)
    data = values_of(rng, (5, 4, 3), "float64")
    original = data.copy()
    indices = np.stack([rng.integers(-5, 5, (6, 7)), rng.integers(-4, 4, (6, 7))], axis=-1)
    updates = values_of(rng, (6, 7, 3), "float64")
    for values in (updates, np.broadcast_to(data[0, :1], (6, 7, 3))):  # the latter views data
        with np.errstate(all="ignore"):
            result = onnx.scatter_nd(data, indices, values, reduction=reduction)
            with generic_only():
                expected = onnx.scatter_nd(data, indices, values.copy(), reduction=reduction)
            sequence = onnx_ops.scatter_nd(original, indices, values.copy(), reduction)
        assert_bits_equal(result, expected)
        if reduction not in ("min", "max"):
            assert_bits_equal(result, sequence)
    assert ran == ["scatter_tuples"] * 2
    indices[2, 3, 1], indices[4, 0, 0] = 4, -6  # the first one outside is named
    with pytest.raises(indexops.IndexOpsValueError, match=r"indices\[2, 3, 1\]=4 "):
        onnx.scatter_nd(data, indices, updates, reduction=reduction)
    assert_bits_equal(data, original)


@pytest.mark.parametrize(
    ("dtype", "reduction", "index_dtype", "kernel"),
    [
        (">f8", "none", "int64", True),
        (">f8", "none", "int32", True),
        (">f8", "none", "uint64", False),
        (">f8", "none", ">i2", True),
        (">f8", "add", "int64", False),
        ("bfloat16", "none", "int64", True),
        ("bfloat16", "add", "int64", False),
    ],
)
def test_onnx_scatter_nd_moves_bits_or_declines(ran, dtype, reduction, index_dtype, kernel):
    """Replace moves any dtype's bits (the input's dtype and byte order kept); add on a
    non-native byte order or an extension type has no kernel arithmetic and takes the
    other path, as do uint64 indices (others are widened to int64)."""
    dtype = as_dtype(dtype)
    rng = np.random.default_rng(17)
    data = rng.integers(-9, 9, size=(6, 2)).astype(dtype)
    low = 0 if np.dtype(index_dtype).kind == "u" else -6
    indices = rng.integers(low, 6, size=(9, 1)).astype(index_dtype)
    updates = rng.integers(-9, 9, size=(9, 2)).astype(dtype)
    result = onnx.scatter_nd(data, indices, updates, reduction=reduction)
    expected = onnx_ops.scatter_nd(data, indices, updates, reduction)
    assert result.dtype == dtype
    np.testing.assert_array_equal(wide(result), wide(expected))
    assert ("scatter_tuples" in ran) is kernel  # (declined: the row kernel may run after)


@pytest.mark.parametrize("how", COMBINERS)
def test_element_scatter_kernel(ran, how):
    """The core element scatter in one pass, every mode, in place or not: duplicates in
    the updates' order, bit for bit the generic path (signed zeros and NaN included) and
    the transcription (its min and max are Python's); updates that view the input
    written in place are read as they were."""
    rng = np.random.default_rng(18)
    operand = values_of(rng, (6, 5), "float64")
    for mode in ("drop", "clip", "promise_in_bounds"):
        low, high = (0, 5) if mode == "promise_in_bounds" else (-3, 8)
        indices = rng.integers(low, high, size=(6, 9, 1))
        updates = values_of(rng, (6, 9), "float64")
        for copy in (True, False):
            target = operand.copy()
            with np.errstate(all="ignore"):
                result = scatter_elements(target, indices, updates, how, mode=mode, copy=copy)
                with generic_only():
                    expected = scatter_elements(operand.copy(), indices, updates, how, mode=mode)
                sequence = reference.scatter(
                    operand, indices, updates, update_computation=how, mode=mode,
                    **ELEMENT_SCATTER,
                )  # fmt: skip
            assert (result is target) is not copy
            assert_bits_equal(result, expected)
            if how not in ("min", "max"):
                assert_bits_equal(result, sequence)
    target = operand.copy()  # updates that are the input's columns, written in place
    indices = rng.integers(0, 5, size=(6, 3, 1))
    with np.errstate(all="ignore"):
        expected = reference.scatter(
            target, indices, target[:, :3].copy(), update_computation=how, **ELEMENT_SCATTER
        )
        scatter_elements(target, indices, target[:, :3], how, copy=False)
    assert_bits_equal(target, expected)
    assert ran == ["scatter_along_axis"] * 7


@pytest.mark.parametrize("how", COMBINERS)
def test_element_scatter_broken_promise_in_place_writes_nothing(ran, how):
    """An index outside under ``promise_in_bounds`` (a broken promise) stops the element
    scatter before it writes, in place: the core's element plan and ``at``'s
    ``x[rows[:, None], idx]``, ``x`` keeping its bits (into a copy, the copy is dropped)."""
    rng = np.random.default_rng(19)
    operand = values_of(rng, (6, 5), "float64")
    indices = rng.integers(0, 5, size=(6, 9, 1))
    indices[4, 7, 0] = 5  # one past the end, late in the loop's order
    updates = values_of(rng, (6, 9), "float64")
    method = {None: "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}[how]
    for copy in (False, True):
        target = operand.copy()
        with pytest.raises(IndexError, match="out of bounds"):
            scatter_elements(target, indices, updates, how, mode="promise_in_bounds", copy=copy)
        assert_bits_equal(target, operand)
        rows = np.arange(6)[:, None]
        with pytest.raises(IndexError, match="out of bounds"):
            getattr(indexops.at(target)[rows, indices[..., 0]], method)(
                updates, mode="promise_in_bounds", copy=copy
            )
        assert_bits_equal(target, operand)
    assert ran == ["scatter_along_axis"] * 4  # (the kernel stopped each: its callers raise)


def scatter_elements(operand, indices, updates, how, **options):
    return indexops.scatter(
        operand, indices, updates, update_computation=how, **ELEMENT_SCATTER, **options
    )


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_onnx_scatter_elements_wraps_checks_and_writes_in_one_pass(ran, reduction):
    """ScatterElements hands its raw indices to the element scatter's loop over a copy:
    negative indices count from the end, duplicates in order; the first index outside
    is the named error, ``data`` untouched. Along an axis other than the last, and
    with indices shorter than ``data`` on another dim (its other path)."""
    rng = np.random.default_rng(19)
    data = rng.random((4, 5, 3))
    original = data.copy()
    indices = rng.integers(-5, 5, size=(4, 7, 3))
    updates = rng.random((4, 7, 3))
    for taken, values in ((indices, updates), (indices[:, :, :2], updates[:, :, :2])):
        result = onnx.scatter_elements(data, taken, values, axis=1, reduction=reduction)
        expected = onnx_ops.scatter_elements(data, taken, values, axis=1, reduction=reduction)
        np.testing.assert_array_equal(result, expected)
    assert ran == ["scatter_along_axis", "apply_rows"]  # (shorter: coordinates, rows)
    indices[1, 2, 0], indices[3, 0, 0] = 5, -6  # the first one outside is named
    with pytest.raises(indexops.IndexOpsValueError, match=r"indices\[1, 2, 0\]=5 "):
        onnx.scatter_elements(data, indices, updates, axis=1, reduction=reduction)
    np.testing.assert_array_equal(data, original)


@pytest.mark.parametrize(
    ("dtype", "how", "index_dtype", "kernel"),
    [
        (">f8", None, "int64", True),
        (">f8", "add", "int64", False),
        ("bfloat16", None, "int64", True),
        ("complex128", "add", "int64", False),
        ("float64", None, "int32", True),  # (the core widens indices to int64 first)
    ],
)
def test_element_scatter_kernel_moves_bits_or_declines(ran, dtype, how, index_dtype, kernel):
    """Replace moves any dtype's bits of at most 8 bytes (dtype and byte order kept);
    arithmetic the kernels lack and complex elements take the other paths: the
    transcription's result either way."""
    dtype = as_dtype(dtype)
    rng = np.random.default_rng(20)
    operand = rng.integers(-9, 9, size=(6, 5)).astype(dtype)
    indices = rng.integers(-2, 7, size=(6, 4, 1)).astype(index_dtype)
    updates = rng.integers(-9, 9, size=(6, 4)).astype(dtype)
    result = scatter_elements(operand, indices, updates, how)
    expected = reference.scatter(
        operand, indices, updates, update_computation=how, **ELEMENT_SCATTER
    )
    assert result.dtype == dtype
    np.testing.assert_array_equal(wide(result), wide(expected))
    assert ("scatter_along_axis" in ran) is kernel


def test_in_place_updates_and_rows_that_view_the_table(ran, prefetched):
    """Rows and updates that view the array written are read before the loop writes."""
    table = np.arange(40, dtype=np.int64).reshape(10, 4) % 7
    expected = reference.scatter(
        table, table[3:9, :1].copy(), table[2:8].copy(), update_computation="add",
        **ROW_SCATTER,
    )  # fmt: skip
    result = scatter_rows(table, table[3:9, :1], table[2:8], "add", copy=False)
    assert result is table
    np.testing.assert_array_equal(table, expected)
    assert ran == ["apply_rows"]
    rows = np.array([0, 1, 0, 1])  # straight into the kernel: no copy made above it
    values = np.arange(8.0).reshape(4, 2)
    view = np.zeros((2, 2))
    assert kernels.apply_rows(view, rows, view[[1, 0, 1, 0]], None) is view
    np.testing.assert_array_equal(view, 0.0)
    kernels.apply_rows(values[:2], rows, values, Named.ADD)
    np.testing.assert_array_equal(values[:2], [[4.0, 7.0], [10.0, 13.0]])
    table = np.array([[1], [0], [0], [0]])  # rows alone viewing it: row 1 is rows[1]
    kernels.apply_rows(table, table[:2, 0], np.array([[3], [2]]), None)
    np.testing.assert_array_equal(table, [[2], [3], [0], [0]])  # (not rows 1, 3)
    memory = np.array([0, 0, 0, 0, 0, 3, 1])  # rows from past the table back into it
    table, rows = memory[:4].reshape(4, 1), memory[6:2:-1]  # rows[3] is row 3
    kernels.apply_rows(table, rows, np.array([[7], [9], [2], [4]]), None)
    np.testing.assert_array_equal(table, [[4], [7], [0], [9]])  # (rows 1, 3, 0, 0)


def test_read_only_updates_and_indices_compile_no_other_signature(ran):
    """Read-only arrays are other types to numba: read-only rows, updates and indices
    are copied instead (a read-only table to gather from is not: it compiles again)."""
    rows, values, indices = np.array([[1], [1]]), np.ones((2, 3)), np.array([[-1, 0], [2, -3]])
    for a in (rows, values, indices):
        a.flags.writeable = False
    result = scatter_rows(np.zeros((2, 3)), rows, values, "add")
    np.testing.assert_array_equal(result, [[0.0] * 3, [2.0] * 3])
    taken = onnx.gather_elements(np.ones((2, 3)), indices, axis=1)
    np.testing.assert_array_equal(taken, np.ones((2, 2)))
    assert ran == ["apply_rows", "take_along_axis"]
    from numba import types

    for kernel in (kernels._add_rows, kernels._take_along):
        arrays = [t for signature in kernel.signatures for t in signature]
        assert all(t.mutable for t in arrays if isinstance(t, types.Array))


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("size", [17, 300])
@pytest.mark.parametrize("case", ["inside", "at the bound", "one above", "negative", "empty"])
def test_all_in_range_by_the_kernels(dtype, size, case):
    """The host's range check of more than 16 entries runs one compiled pass once the
    kernels are loaded (and NumPy's reduction without them, or for arrays they do not
    take): the same answer either way, negative entries outside, ``high < 0`` only for
    no entries."""
    x = np.arange(size, dtype=dtype)[::-1].copy()  # 0 at the end: a late entry decides
    high = size - 1
    if case == "at the bound":
        x[-1] = high
    elif case == "one above":
        x[-1] = high + 1
    elif case == "negative":
        x[-1] = -1
    elif case == "empty":
        high = -1
    expected = case in ("inside", "at the bound")
    calls = []
    compiled = kernels.all_in_range
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "all_in_range", lambda *a: calls.append(a) or compiled(*a))
        assert _host.all_in_range(x, high) is expected
        strided = x[::2]  # not contiguous: the kernel declines, NumPy answers
        assert _host.all_in_range(strided, high) is bool(np.all((strided >= 0) & (strided <= high)))
        with without_kernels():
            assert _host.all_in_range(x, high) is expected
    assert len(calls) == 1 + (strided.size > 16)  # (up to 16 entries: a list)
    assert kernels.all_in_range(np.arange(20, dtype=np.uint64), 30) is None
    assert kernels.all_in_range(np.zeros(0, dtype=np.int64), -1) is True


def test_range_check_never_imports_numba():
    """A range check of many entries in a process that has not loaded the kernels (no
    call was large enough) takes NumPy's reduction: numba stays unimported."""
    code = (
        "import sys, numpy as np\n"
        "from indexops._backends._host import all_in_range\n"
        "assert all_in_range(np.arange(100), 99) and not all_in_range(np.arange(100), 98)\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_kernel_rows_outside_raise_index_error():
    """A row outside the table (a broken promise) stops the loop with NumPy's error."""
    table = np.zeros((4, 2))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        kernels.apply_rows(table, np.array([1, 4, 2]), np.ones((3, 2)), None)
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        kernels.apply_rows(table, np.array([-1]), np.ones((1, 2)), None)


def test_kernels_from_many_threads_at_once(ran, prefetched):
    """The kernels release the GIL and share nothing: results equal the serial ones."""
    rng = np.random.default_rng(3)
    cases = [(rng.random((64, 8)), rng.integers(0, 64, (500, 1)), how) for how in COMBINERS]
    updates = rng.random((500, 8))
    indices = rng.integers(-8, 8, size=(64, 8))

    def call(case):
        if case is None:
            return onnx.gather_elements(cases[0][0], indices, axis=1)
        if case == "at":  # the idiom's negative indices counted from the end in the loop
            return indexops.at(cases[0][0])[np.arange(64)[:, None], indices].get()
        if case == "nd":  # ScatterND's tuples counted from the end and checked in the loop
            return onnx.scatter_nd(cases[0][0], indices[:, :1], updates[:64], reduction="add")
        if case == "elements":
            return onnx.scatter_elements(cases[0][0], indices, updates[:64], axis=1)
        if case == "at rows":  # rows from the end and outside, placed in one pass
            return indexops.at(cases[0][0])[indices.reshape(-1)[:500] * 9].add(updates)
        table, rows, how = case
        return scatter_rows(table, rows, updates, how)

    work = [*cases, None, "at", "nd", "elements", "at rows"] * 8
    serial = [call(case) for case in work]
    results = map_in_threads(call, work, threads=8)
    for got, expected in zip(results, serial):
        np.testing.assert_array_equal(got, expected)


@pytest.fixture
def numba_missing(monkeypatch):
    """``import numba`` fails, as where the fast extra is not installed."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, "indexops._backends._kernels")
    monkeypatch.delattr(indexops._backends, "_kernels")  # what `from . import` reads first
    monkeypatch.setattr(_loader, "LOADER", _loader.KernelLoader())  # no load begun


class _BrokenNumba:
    """A numba that imports but fails on use (built against another NumPy)."""

    def __getattr__(self, name):
        raise AttributeError(f"numba.{name}: built for another NumPy")


@pytest.mark.parametrize("how", ["missing", "broken"])
def test_without_numba_the_other_paths_give_the_same_results(numba_missing, monkeypatch, how):
    if how == "broken":
        monkeypatch.setitem(sys.modules, "numba", _BrokenNumba())
    monkeypatch.setattr(_host, "KERNEL_MIN_ELEMENTS", 0)
    assert _host.load_kernels() is None and not indexops.load_host_kernels()
    assert _host.kernels() is None
    rng = np.random.default_rng(4)
    operand, rows = rng.random((6, 3)), rng.integers(0, 6, (20, 1))
    updates, indices = rng.random((20, 3)), rng.integers(-3, 3, (6, 2))
    for combiner in COMBINERS:
        with generic_only():
            expected = scatter_rows(operand, rows, updates, combiner)
        np.testing.assert_array_equal(scatter_rows(operand, rows, updates, combiner), expected)
    np.testing.assert_array_equal(
        onnx.gather_elements(operand, indices, axis=1),
        onnx_ops.gather_elements(operand, indices, axis=1),
    )


def test_without_kernels_hook_holds_in_its_thread_only():
    with without_kernels():
        assert _host.kernels() is None
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            assert pool.submit(_host.kernels).result() is kernels
    assert _host.kernels() is kernels


# -- torch on the CPU: the kernels on NumPy views of the tensors' memory ---------------------

TORCH = pytest.mark.backends("torch")


@TORCH
@pytest.mark.parametrize("how", COMBINERS)
def test_torch_rows_take_the_kernel_and_give_numpy_results(ran, how):
    import torch

    rng = np.random.default_rng(5)
    operand, rows = values_of(rng, (6, 3), "float64"), rng.integers(0, 6, (30, 1))
    updates = values_of(rng, (30, 3), "float64")
    result = scatter_rows(*(torch.from_numpy(a) for a in (operand, rows, updates)), how)
    assert type(result) is torch.Tensor and ran == ["apply_rows"]
    with without_kernels():
        expected = scatter_rows(operand, rows, updates, how)
    assert_bits_equal(result.numpy(), expected)


@TORCH
def test_torch_onnx_gather_elements_takes_the_kernel(ran):
    import torch

    rng = np.random.default_rng(6)
    data, indices = rng.random((5, 7)), rng.integers(-7, 7, (5, 4))
    result = onnx.gather_elements(torch.from_numpy(data), torch.from_numpy(indices), axis=1)
    assert type(result) is torch.Tensor and ran == ["take_along_axis"]
    np.testing.assert_array_equal(result.numpy(), onnx_ops.gather_elements(data, indices, 1))


@TORCH
@pytest.mark.parametrize("how", [None, "max"])
def test_torch_element_scatter_takes_the_kernel_unless_grad_is_needed(ran, how):
    """torch's ``scatter_``/``scatter_reduce_`` form: the kernel in place or into a new
    tensor (NumPy's result, the input's version counted); with a tensor that requires
    grad, torch's own ops and a gradient."""
    import torch

    rng = np.random.default_rng(8)
    operand, updates = rng.random((5, 4)), rng.random((5, 6))
    indices = rng.integers(0, 4, (5, 6, 1))
    expected = reference.scatter(
        operand, indices, updates, update_computation=how, **ELEMENT_SCATTER
    )
    x, i, u = (torch.from_numpy(a.copy()) for a in (operand, indices, updates))
    version = x._version
    result = scatter_elements(x, i, u, how, copy=False)
    assert result is x and x._version > version and ran == ["scatter_along_axis"]
    np.testing.assert_array_equal(x.numpy(), expected)
    ran.clear()
    leaf = torch.from_numpy(operand.copy()).requires_grad_()
    scatter_elements(leaf, i, u, how).sum().backward()
    assert ran == [] and leaf.grad is not None


@TORCH
def test_torch_onnx_scatter_nd_takes_the_kernel(ran):
    """A new tensor, the input untouched; with autograd recorded, the other path."""
    import torch

    rng = np.random.default_rng(7)
    data, indices, updates = rng.random((5, 3)), rng.integers(-5, 5, (8, 1)), rng.random((8, 3))
    tensors = [torch.from_numpy(a) for a in (data, indices, updates)]
    result = onnx.scatter_nd(*tensors, reduction="add")
    assert type(result) is torch.Tensor and ran == ["scatter_tuples"]
    np.testing.assert_array_equal(
        result.numpy(), onnx_ops.scatter_nd(data, indices, updates, "add")
    )
    np.testing.assert_array_equal(tensors[0].numpy(), data)
    ran.clear()
    leaf = tensors[0].clone().requires_grad_()
    onnx.scatter_nd(leaf, tensors[1], tensors[2], reduction="add").sum().backward()
    assert "scatter_tuples" not in ran and leaf.grad is not None


@TORCH
def test_torch_kernels_keep_autograd(ran):
    """Tensors that require grad keep torch's own ops (the gradient flows); an in-place
    kernel write counts as torch's own in-place ops count theirs, so a backward that
    needs the values before it fails as it would after ``index_add_``."""
    import torch

    rows = torch.tensor([[0], [2], [0]])
    updates = torch.ones(3, 2, requires_grad=True)
    result = scatter_rows(torch.zeros(4, 2), rows, updates, "add")
    result.sum().backward()
    assert ran == [] and torch.equal(updates.grad, torch.ones(3, 2))
    x, weight = torch.zeros(4, 2), torch.ones(4, 2, requires_grad=True)
    saved = (x * weight).sum()  # x is saved for the gradient of weight
    version = x._version
    scatter_rows(x, rows, torch.ones(3, 2), "add", copy=False)
    assert ran == ["apply_rows"] and x._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()


@TORCH
def test_torch_scatter_update_gradient_with_padding(unchecked):
    """A kernel-sized ``scatter_update`` with padding and a repeated slot on tensors that
    require grad keeps autograd's path (not the one pass): the cache's gradient is zero
    on the rows written, the tokens' one on each token written last, zero on padding and
    on the token a later one overwrote, as without kernels."""
    import torch

    rng = np.random.default_rng(15)
    slots = rng.permutation(128)[:48].reshape(2, 24)
    slots[0, 3], slots[1, 5], slots[1, 6] = -1, -1, slots[0, 0]  # padding, a repeat

    def gradients():
        leaf = torch.from_numpy(rng.standard_normal((16, 8, 1, 64))).requires_grad_()
        tokens = torch.from_numpy(rng.standard_normal((2, 24, 1, 64))).requires_grad_()
        cache = leaf.clone()
        indexops.scatter_update(cache, -2, torch.from_numpy(slots), tokens)
        cache.sum().backward()
        return leaf.grad.reshape(128, 64), tokens.grad.reshape(48, 64)

    unchecked.clear()
    got = gradients()
    assert unchecked == []
    with without_kernels():
        expected = gradients()
    flat = slots.reshape(-1)
    cache_grad = np.ones((128, 64))
    cache_grad[flat[flat >= 0]] = 0
    token_grad = np.ones((48, 64))
    token_grad[flat < 0] = 0
    token_grad[0] = 0  # slot slots[0, 0] written again by token 29
    for result, reference_result in zip(got, expected):
        np.testing.assert_array_equal(result.numpy(), reference_result.numpy())
    np.testing.assert_array_equal(got[0].numpy(), cache_grad)
    np.testing.assert_array_equal(got[1].numpy(), token_grad)


@TORCH
def test_torch_kernels_in_inference_mode(ran):
    import torch

    with torch.inference_mode():
        x = torch.zeros(4, 2)
        written = scatter_rows(x, torch.tensor([[1], [1]]), torch.ones(2, 2), "add", copy=False)
    assert written is x and ran == ["apply_rows"]
    np.testing.assert_array_equal(x.numpy(), [[0, 0], [2, 2], [0, 0], [0, 0]])


@TORCH
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_torch_element_gather_takes_the_kernel_unless_grad_is_needed(ran, mode):
    import torch

    rng = np.random.default_rng(7)
    operand = rng.random((6, 5))
    low, high = (0, 5) if mode == "promise_in_bounds" else (-3, 8)
    indices = rng.integers(low, high, size=(6, 4, 1))
    expected = gather_reference.gather(operand, indices, **ELEMENT_GATHER, mode=mode)
    result = indexops.gather(
        torch.from_numpy(operand), torch.from_numpy(indices), **ELEMENT_GATHER, mode=mode
    )
    assert type(result) is torch.Tensor and ran == ["take_along_axis"]
    np.testing.assert_array_equal(result.numpy(), expected)
    x = torch.from_numpy(operand).requires_grad_()
    indexops.gather(x, torch.from_numpy(indices), **ELEMENT_GATHER, mode=mode).sum().backward()
    assert ran == ["take_along_axis"]  # torch's own gather: each read gets its gradient
    counts = np.zeros_like(operand)
    for row, columns in enumerate(indices[..., 0]):
        read = columns if mode != "fill" else columns[(columns >= 0) & (columns < 5)]
        np.add.at(counts[row], np.clip(read, 0, 4), 1)
    np.testing.assert_array_equal(x.grad.numpy(), counts)


def test_device_paths_take_no_kernel(ran):
    """The test hook that runs the sync-free device algorithms on host arrays runs no
    kernel either: they are host paths."""
    from indexops._testing import device_paths

    rows, values = np.array([[1], [1]]), np.ones((2, 3))
    with device_paths():
        result = scatter_rows(np.zeros((2, 3)), rows, values, "add")
        taken = indexops.gather(np.ones((2, 3)), np.array([[[0], [2]]] * 2), **ELEMENT_GATHER)
    np.testing.assert_array_equal(result, [[0.0] * 3, [2.0] * 3])
    np.testing.assert_array_equal(taken, np.ones((2, 2)))
    assert ran == []


# -- NumPy's take_along_axis idiom: x[rows[:, None], idx] ----------------------------------

ELEMENT_SCATTER = {
    "update_window_dims": (), "inserted_window_dims": (1,), "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2, "input_batching_dims": (0,), "scatter_indices_batching_dims": (0,),
}  # fmt: skip


@pytest.fixture
def columns(monkeypatch):
    """The number of columns of the start indices of each of at's calls."""
    from indexops._ops import at as at_module

    seen: list[int] = []
    make = at_module.start_indices

    def spy(*args):  # (from_end included: positional)
        starts, in_range = make(*args)
        seen.append(starts.shape[-1])
        return starts, in_range

    monkeypatch.setattr(at_module, "start_indices", spy)
    return seen


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("dtype", ["float64", ">f4", "bfloat16"])
def test_at_take_along_idiom_reaches_the_element_gather_kernel(ran, columns, mode, dtype):
    """``rows`` counting down the first dim is a batching dim: one start column, the
    element gather kernel, NumPy's and the reference's result in x's dtype and byte
    order (negative indices count from the end first, as in NumPy)."""
    dtype = as_dtype(dtype)
    rng = np.random.default_rng(11)
    x = rng.integers(-9, 9, size=(6, 5)).astype(dtype)
    low, high = (-5, 5) if mode == "promise_in_bounds" else (-8, 9)
    idx = rng.integers(low, high, size=(6, 7))
    result = indexops.at(x)[np.arange(6)[:, None], idx].get(mode=mode, fill_value=-1)
    wrapped = np.where(idx < 0, idx + 5, idx)
    expected = gather_reference.gather(
        x, wrapped[..., None], **ELEMENT_GATHER, mode=mode, fill_value=-1
    )
    assert result.dtype == dtype and ran == ["take_along_axis"] and columns == [1]
    np.testing.assert_array_equal(wide(result), wide(expected))
    if mode == "promise_in_bounds":
        np.testing.assert_array_equal(wide(result), wide(x[np.arange(6)[:, None], idx]))


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_at_take_along_idiom_counts_negative_indices_in_the_loop(ran, monkeypatch, mode):
    """Negative indices of the idiom reach the element gather's loop as they are, which
    counts them from the end (no pass over them before it); where the kernel declines
    the elements (complex128: wider than its 8 bytes) one ``where`` counts them first.
    NumPy's result both ways, and the reference's for indices outside ``[-n, n)``."""
    options: list[bool] = []
    spied = kernels.take_along_axis

    def spy(*args, **kwargs):
        options.append(kwargs["wrap"])
        return spied(*args, **kwargs)

    monkeypatch.setattr(kernels, "take_along_axis", spy)
    rng = np.random.default_rng(15)
    rows = np.arange(6)[:, None]
    low, high = (-5, 5) if mode == "promise_in_bounds" else (-8, 9)
    idx = rng.integers(low, high, size=(6, 7))
    wrapped = np.where(idx < 0, idx + 5, idx)[..., None]
    for dtype in ("int64", "complex128"):
        x = rng.integers(-9, 9, size=(6, 5)).astype(dtype)
        result = indexops.at(x)[rows, idx].get(mode=mode, fill_value=-1)
        expected = gather_reference.gather(x, wrapped, **ELEMENT_GATHER, mode=mode, fill_value=-1)
        assert result.dtype == x.dtype
        np.testing.assert_array_equal(result, expected)
        if mode == "promise_in_bounds":
            np.testing.assert_array_equal(result, x[rows, idx])
    # each dtype's first call is the loop that counts from the end (complex128's declines)
    assert options[:2] == [True, True] and ran == ["take_along_axis"]


@pytest.mark.parametrize("how", ["set", "add", "max"])
def test_at_take_along_idiom_writes_by_a_batching_dim(ran, columns, how):
    """``.set``, ``.add`` and ``.max`` through the idiom (rows of another integer
    dtype): one start column, the row kernel, the reference scatter's result
    (duplicates in order); in place, updates that are x itself are read as they were."""
    rng = np.random.default_rng(12)
    x = rng.integers(-9, 9, size=(6, 5)).astype(np.float64)
    idx = rng.integers(-5, 5, size=(6, 5))
    y = rng.integers(-9, 9, size=(6, 5)).astype(np.float64)
    computation = {"set": None, "add": "add", "max": "max"}[how]
    wrapped = np.where(idx < 0, idx + 5, idx)[..., None]
    rows = np.arange(6, dtype=np.int32)[:, None]
    for updates, target, copy in ((y, x, True), (x, x.copy(), False)):
        expected = reference.scatter(
            target, wrapped, updates if updates is y else target,
            update_computation=computation, **ELEMENT_SCATTER,
        )  # fmt: skip
        aliased = updates if updates is y else target
        result = getattr(indexops.at(target)[rows, idx], how)(aliased, copy=copy)
        np.testing.assert_array_equal(result, expected)
        assert (result is target) is not copy
    assert columns == [1, 1] and ran == ["scatter_along_axis"] * 2


@pytest.mark.parametrize("how", ["set", "add", "max"])
def test_at_take_along_idiom_writes_count_negative_indices_in_the_loop(ran, monkeypatch, how):
    """The idiom's writes hand negative indices to the element scatter's loop as they
    are, which counts them from the end, then drops or clips those still outside;
    where the kernel declines (complex128 elements) one ``where`` counts them first. The
    reference scatter's result at the wrapped indices either way."""
    options: list[bool] = []
    spied = kernels.scatter_along_axis

    def spy(*args, **kwargs):
        options.append(kwargs["wrap"])
        return spied(*args, **kwargs)

    monkeypatch.setattr(kernels, "scatter_along_axis", spy)
    rng = np.random.default_rng(21)
    rows = np.arange(6)[:, None]
    idx = rng.integers(-8, 9, size=(6, 7))
    wrapped = np.where(idx < 0, idx + 5, idx)[..., None]
    computation = {"set": None, "add": "add", "max": "max"}[how]
    dtypes = ("float64", "complex128") if how != "max" else ("float64",)
    for dtype in dtypes:
        x = rng.integers(-9, 9, size=(6, 5)).astype(dtype)
        y = rng.integers(-9, 9, size=(6, 7)).astype(dtype)
        for mode in ("drop", "clip"):
            result = getattr(indexops.at(x)[rows, idx], how)(y, mode=mode)
            expected = reference.scatter(
                x, wrapped, y, update_computation=computation, mode=mode, **ELEMENT_SCATTER
            )
            assert result.dtype == x.dtype
            np.testing.assert_array_equal(result, expected)
    # (complex128's other path writes rows, as complex numbers as pairs of floats)
    assert set(options) == {True} and ran[:2] == ["scatter_along_axis"] * 2


@pytest.mark.parametrize(
    "rows",
    [np.arange(6)[::-1, None], np.r_[0, 1, 2, 3, 5, 5][:, None], np.arange(5)[None, :]],
    ids=["reversed", "one off", "along an axis of another size"],
)
def test_at_arrays_that_do_not_count_keep_their_columns(ran, columns, rows):
    """Rows that do not count along their axis, or count along an axis of another size,
    stay a start column: NumPy's result all the same."""
    rng = np.random.default_rng(13)
    x = rng.random((6, 5))
    idx = rng.integers(0, 5, size=(6, 5))
    np.testing.assert_array_equal(indexops.at(x)[rows, idx].get(), x[rows, idx])
    assert columns == [2]


@TORCH
def test_torch_take_along_idiom_reaches_the_kernels(ran, columns):
    import torch

    rng = np.random.default_rng(14)
    x = torch.from_numpy(rng.random((6, 5)))
    idx = torch.from_numpy(rng.integers(-5, 5, size=(6, 7)))
    rows = torch.arange(6)[:, None]
    torch.testing.assert_close(indexops.at(x)[rows, idx].get(), x[rows, idx], rtol=0, atol=0)
    y = torch.from_numpy(rng.random((6, 7)))
    expected = x.clone().index_put_((rows.expand(6, 7), idx % 5), y, accumulate=True)
    torch.testing.assert_close(indexops.at(x)[rows, idx].add(y), expected)
    assert columns == [1, 1] and ran[:1] == ["take_along_axis"]  # (adds: torch's scatter)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_counts_up_in_one_compiled_pass(dtype):
    """The at idiom's rows ``0, 1, 2, ...`` found by the kernel as by NumPy's comparison:
    wrong first, middle or last entries, none, and arrays the kernel declines."""
    up = np.arange(1000, dtype=dtype)
    cases = [up, up.reshape(250, 4), up[:0], up[:1]]
    for position in (0, 500, 999):
        wrong = up.copy()
        wrong[position] = -1
        cases.append(wrong)
    cases.append(up[::-1].copy())
    for x in cases:
        assert kernels.counts_up(x) is _host.counts_up(x), x
    assert kernels.counts_up(up[::2]) is None  # not contiguous
    assert kernels.counts_up(up.astype(np.uint8)) is None
    swapped = up.astype(up.dtype.newbyteorder())  # the same values, big-endian
    assert kernels.counts_up(swapped) is None and _host.counts_up(swapped)


@pytest.fixture
def unchecked(monkeypatch):
    """The writes that the row writer's one pass took, rows unchecked (one entry each)."""
    from indexops._execute import writes

    taken: list[bool] = []
    one_pass = writes.RowWriter.in_one_pass

    def spied(*args, **kwargs):
        written = one_pass(*args, **kwargs)
        if written is not None:
            taken.append(True)
        return written

    monkeypatch.setattr(writes.RowWriter, "in_one_pass", spied)
    return taken


def host(a):
    """A NumPy view of a NumPy array or a torch tensor's memory."""
    return a if isinstance(a, np.ndarray) else a.detach().numpy()


def _row_cases(rng, n=200, width=6, count=300):
    """A table and rows of kernel size (count * width > 1024): rows repeated, some
    negative within ``[-n, 0)``, some outside ``[-n, n)`` on either side."""
    table = values_of(rng, (n, width), "float64")
    rows = rng.integers(0, n, count)
    rows[[3, 50, 120]] = [-1, -n, -7]
    rows[[9, 200]] = [n, -n - 3]
    return table, rows, values_of(rng, (count, width), "float64")


@pytest.mark.parametrize("library", ["numpy", pytest.param("torch", marks=TORCH)])
@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_large_row_writes_place_each_row_in_one_pass(unchecked, library, mode):
    """Kernel-sized writes whose starts are the rows go to the row writer's one pass,
    which places each row as it goes (no range check, mask of rows to drop or search
    for repeats before it): the core scatter (rows outside dropped or clipped, negative
    ones outside too), ``dimension_numbers=``, and ``at``'s updates (negative rows from
    the end, as NumPy's): bit for bit the paths without kernels, into a copy (``x``
    untouched) and in place (``x`` written: no row can stop the pass halfway)."""
    convert = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    table, rows, values = _row_cases(np.random.default_rng(8))
    dimension_numbers = types.SimpleNamespace(  # jax.lax.ScatterDimensionNumbers' fields
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        operand_batching_dims=(),
        scatter_indices_batching_dims=(),
    )

    def calls(x, copy):
        r, y = convert(rows.copy()), convert(values.copy())
        for how in COMBINERS:
            yield indexops.scatter(
                x, r[:, None], y, **ROW_SCATTER, update_computation=how, mode=mode, copy=copy
            )
        yield indexops.scatter(x, r[:, None], y, dimension_numbers=dimension_numbers,
                               update_computation="add", mode=mode, copy=copy)  # fmt: skip
        for method in ("set", "add", "max", "multiply"):
            yield getattr(indexops.at(x)[r], method)(y, mode=mode, copy=copy)

    for copy in (True, False):
        x = convert(table.copy())
        unchecked.clear()
        with np.errstate(all="ignore"):  # (NaN and infinities among the values)
            got = [host(result).copy() for result in calls(x, copy)]
            assert len(unchecked) == len(got) == 10
            if copy:
                np.testing.assert_array_equal(host(x), table)
            with without_kernels():
                x_expected = convert(table.copy())
                expected = [host(result).copy() for result in calls(x_expected, copy)]
        for result, reference_result in zip(got, expected):
            assert_bits_equal(result, reference_result)
        assert_bits_equal(host(x), host(x_expected))


@pytest.mark.parametrize("library", ["numpy", pytest.param("torch", marks=TORCH)])
def test_one_pass_leaves_to_the_checks_what_it_cannot_undo(unchecked, library):
    """The one pass declines, and the paths before it run, where ``x``'s 2-D view is
    not its memory (a strided ``x`` written in place) and where autograd records.
    Updates that view ``x`` are read before the pass writes."""
    convert = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    table, rows, values = _row_cases(np.random.default_rng(9))
    wide = convert(np.repeat(table, 2, axis=1))
    strided = wide[:, ::2]  # (200, 6), not contiguous: written through the checks
    inside = convert(rows % 200)
    expected = table.copy()
    with np.errstate(all="ignore"):  # (NaN and infinities among the values)
        written = indexops.at(strided)[inside].add(convert(values), copy=False)
        np.add.at(expected, rows % 200, values)
    assert written is strided and unchecked == []
    np.testing.assert_array_equal(host(strided), expected)
    if library == "torch":
        leaf = torch.from_numpy(table.copy()).requires_grad_()
        indexops.at(leaf)[inside].add(convert(values)).sum().backward()
        assert unchecked == [] and leaf.grad is not None
    cache = convert(table.copy())  # updates that view the array they go into
    expected = table.copy()
    for row, value in zip(rows[:200], table):  # the last write wins; -n-3 dropped
        if -200 <= row < 200:
            expected[row] = value
    indexops.at(cache)[convert(rows[:200])].set(cache, copy=False)
    assert unchecked == [True]
    np.testing.assert_array_equal(host(cache), expected)


@pytest.mark.parametrize("library", ["numpy", pytest.param("torch", marks=TORCH)])
@pytest.mark.parametrize("threads", [1, 3])
def test_broken_promises_stop_the_one_pass_before_it_writes(monkeypatch, library, threads):
    """A row outside under ``promise_in_bounds`` (a broken promise) stops the one pass
    with an :class:`IndexError` before it writes anything, through every entry point
    that reaches it: the core scatter of every combiner, ``dimension_numbers=`` and
    ``at``'s methods, in place (``x`` as it was, on one thread and split among three)
    and into a copy (dropped: ``x`` untouched). The pass, not a check before it, is what
    stops: each call reaches it and raises from it."""
    from indexops._backends import _threads
    from indexops._execute import writes

    monkeypatch.setattr(_threads, "THREAD_MIN_ELEMENTS", 2**8)
    stopped: list[str] = []
    one_pass = writes.RowWriter.in_one_pass

    def spied(*args, **kwargs):
        try:
            return one_pass(*args, **kwargs)
        except IndexError as error:
            stopped.append(str(error))
            raise

    monkeypatch.setattr(writes.RowWriter, "in_one_pass", spied)
    convert = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    table, rows, values = _row_cases(np.random.default_rng(10))
    rows[[9, 200]] = [5, 6]  # in range: only the negative ones and one past the end
    rows[250] = 200
    dimension_numbers = types.SimpleNamespace(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
        operand_batching_dims=(), scatter_indices_batching_dims=(),
    )  # fmt: skip
    promise = {"mode": "promise_in_bounds"}
    r, y = convert(rows), convert(values)
    calls = [
        *(
            lambda x, copy, how=how: indexops.scatter(
                x, r[:, None], y, **ROW_SCATTER, update_computation=how, copy=copy, **promise
            )
            for how in COMBINERS
        ),
        lambda x, copy: indexops.scatter(
            x, r[:, None], y, dimension_numbers=dimension_numbers, copy=copy, **promise
        ),
        *(
            lambda x, copy, method=method: getattr(indexops.at(x)[r], method)(
                y, copy=copy, **promise
            )
            for method in ("set", "add", "max", "multiply")
        ),
    ]
    indexops.set_host_threads(threads)
    try:
        for copy in (False, True):
            for call in calls:
                x = convert(table.copy())
                with pytest.raises(IndexError, match="out of bounds"):
                    call(x, copy)
                assert_bits_equal(host(x), table)
    finally:
        indexops.set_host_threads(None)
    assert len(stopped) == 2 * len(calls)


def test_first_calls_of_a_signature_from_many_threads():
    """Sixteen calls of signatures no call has made before, from eight threads switching
    every microsecond: the threads that find a writer without its row plan make it at
    once (a replace, an add in place, ``scatter_update`` with padding), and every result
    is the serial one."""
    rng = np.random.default_rng(15)
    table = rng.standard_normal((97, 13))  # (a shape no other test writes)
    rows = rng.integers(-3, 97, 111)
    values = rng.standard_normal((111, 13))
    slots = rows.reshape(3, 37)

    def writes(_):
        x = table.copy()
        first = indexops.at(x)[rows].set(values, copy=True)
        indexops.scatter(x, np.abs(rows)[:, None], values, **ROW_SCATTER,
                         update_computation="add", copy=False)  # fmt: skip
        indexops.scatter_update(x, -2, slots, values)
        return first.tobytes() + x.tobytes()

    results = map_in_threads(writes, range(16), 8)
    assert results == [writes(None)] * 16


@pytest.mark.parametrize(
    ("library", "dtype"),
    [("numpy", "<f4"), ("numpy", ">f8"), ("numpy", "bfloat16"),
     pytest.param("torch", "<f4", marks=TORCH)],
)  # fmt: skip
@pytest.mark.parametrize("width", [64, 1024])
def test_scatter_update_slots_in_range_go_to_one_pass(
    unchecked, monkeypatch, prefetched, library, dtype, width
):
    """``scatter_update`` of a kernel-sized paged cache whose slots the host found below
    the end (repeats included: the last token wins; negative ones are padding, which the
    pass skips, all of them too) writes them in the one pass, in place and into a copy,
    tokens that view the cache itself (vLLM's block copies) read first; a slot past the
    end is an error before anything is written. Bit for bit the paths without kernels,
    in the cache's dtype and byte order, from many threads too; rows of 4 KiB and more
    copied whole (the cache counted as large)."""
    monkeypatch.setattr(kernels, "COPY_TABLE_MIN_BYTES", 0)
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    convert = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    rng = np.random.default_rng(14)
    cache = rng.standard_normal((16, 8, 1, width)).astype(dtype)  # 128 slots
    slots = rng.integers(0, 128, (2, 24))
    slots[0, :4] = [127, 0, 5, 5]  # a repeat: the later token wins
    padded = slots.copy()
    padded[1, 3] = -1

    def tokens(block):  # [2, 24, 1, width] from blocks block and block + 1
        return convert(np.repeat(cache[block : block + 2], 3, axis=1))

    def writes():
        x = convert(cache.copy())
        yield indexops.scatter_update(x, -2, convert(slots), tokens(4))
        yield indexops.scatter_update(x, -2, convert(slots), tokens(6), copy=True)
        yield indexops.scatter_update(x, -2, convert(slots), x[:6].reshape(2, 24, 1, width))
        yield indexops.scatter_update(x, -2, convert(padded), tokens(8))
        yield indexops.scatter_update(x, -2, convert(-1 - slots), tokens(10))  # all padding
        yield indexops.scatter_update(x, -2, convert(padded), x[6:12].reshape(2, 24, 1, width))

    unchecked.clear()
    got = [host(result).tobytes() for result in writes()]
    assert len(unchecked) == 6
    with without_kernels():
        expected = [host(result).tobytes() for result in writes()]
    assert got == expected
    x = convert(cache.copy())
    past = slots.copy()
    past[1, 20] = 128
    with pytest.raises(ValueError, match=r"index\[1, 20\]"):
        indexops.scatter_update(x, -2, convert(past), x[:6].reshape(2, 24, 1, width))
    assert host(x).dtype == dtype and host(x).tobytes() == cache.tobytes()
    caches = [convert(cache.copy()) for _ in range(16)]
    map_in_threads(lambda c: indexops.scatter_update(c, -2, convert(slots), tokens(8)), caches, 8)
    serial = convert(cache.copy())
    indexops.scatter_update(serial, -2, convert(slots), tokens(8))
    assert all(host(c).tobytes() == host(serial).tobytes() for c in caches)


@pytest.mark.parametrize("dtype", [">f8", "<f4", ">i4", "bfloat16", "float8_e4m3fn", "bool"])
def test_one_pass_keeps_byte_order_and_extension_dtypes(unchecked, prefetched, dtype):
    """Kernel-sized writes through the one pass (rows from the end and outside, dropped)
    in either byte order and of ml_dtypes' types: replace moves their bits; arithmetic
    the kernels lack (another byte order, extension types) declines to the other paths.
    Every result bit for bit the paths' without kernels, in the input's dtype."""
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    rng = np.random.default_rng(12)
    x = rng.standard_normal((300, 8)).astype(dtype)
    rows, y = rng.integers(-320, 320, 400), rng.standard_normal((400, 8)).astype(dtype)
    methods = {None: "set"} if dtype == np.bool_ else {None: "set", "add": "add", "max": "max"}

    def writes():
        for how, method in methods.items():
            yield indexops.scatter(x, rows[:, None], y, **ROW_SCATTER, update_computation=how)
            yield getattr(indexops.at(x)[rows], method)(y)
            in_place = x.copy()
            getattr(indexops.at(in_place)[rows], method)(y, copy=False)
            yield in_place

    with np.errstate(all="ignore"):
        got = list(writes())
        with without_kernels():
            expected = list(writes())
    assert len(unchecked) >= 3  # replace, at least, in one pass
    for result, reference_result in zip(got, expected):
        assert result.dtype == dtype
        assert result.tobytes() == reference_result.tobytes()


@pytest.mark.parametrize("library", ["numpy", pytest.param("torch", marks=TORCH)])
def test_one_pass_on_an_input_whose_row_view_is_a_copy(unchecked, monkeypatch, library):
    """A strided 3-D input whose 2-D view of rows is a copy: a functional write goes
    through the one pass into that copy (no second one), in place it declines and the
    input itself is written; both as without kernels, the input untouched by the first."""
    rng = np.random.default_rng(13)
    base = values_of(rng, (200, 8, 2), "float64")
    rows = rng.integers(-210, 210, 300)
    values = values_of(rng, (300, 4, 2), "float64")
    convert = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy

    def write(copy):
        x = convert(base.copy())[:, ::2]  # (200, 4, 2): rows of 8 elements, not one block
        with np.errstate(all="ignore"):
            result = indexops.at(x)[convert(rows)].add(convert(values), copy=copy)
        return host(result).copy(), host(x).copy()

    copied = []  # whether the kernel copied the table it was given
    planned = kernels.RowPlan.__call__
    monkeypatch.setattr(
        kernels.RowPlan, "__call__", lambda *a, **o: copied.append(o["copy"]) or planned(*a, **o)
    )
    for copy in (True, False):
        unchecked.clear()
        got = write(copy)
        assert unchecked == ([True] if copy else [])
        if copy:  # the one pass wrote the view's copy itself
            assert copied == [False]
        copied.clear()
        with without_kernels():
            expected = write(copy)
        for result, reference_result in zip(got, expected):
            assert_bits_equal(result, reference_result)
        if copy:
            np.testing.assert_array_equal(got[1], base[:, ::2])
