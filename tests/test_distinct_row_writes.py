"""Small writes of distinct rows, which the row writer hands to the library's one native
step (``Backend.write_distinct_rows``: NumPy's fancy assignment or gather, ufunc and
assignment; torch's ``index_copy_``, ``index_add_`` or ``index_select``, the function
and ``index_copy_``), against the writer's general path
and the generic backend, through every entry point that reaches them: ``scatter``,
``scatter_update`` and ``at``'s updates, in place and into a copy, with updates that view
the input, from many threads, and where the step must not run (autograd, repeated rows,
signed zeros of min and max, writes the compiled kernels take). A few rows read in range
but repeated are written by the same layer too: replace keeps the last write of each row
and takes the step, the combiners take the writer's general path.
"""

from __future__ import annotations

import contextlib

import ml_dtypes  # noqa: F401 (gives NumPy bfloat16 by name)
import numpy as np
import pytest
from helpers import ROW_SCATTER, map_in_threads, to_numpy

import indexops
from indexops._backends import _host
from indexops._execute.writes import RowWriter
from indexops._testing import device_paths, generic_only

torch = pytest.importorskip("torch")

ROWS = np.array([5, 0, 3, 7])  # distinct, in range of the [8, 6] tables below
WIDTH = 6

# entry point -> combiners it is called with here
SCATTERS = {
    "scatter": (None, "add", "mul", "min", "max"),
    "scatter_update": (None,),
    "at": ("set", "add", "multiply", "min", "max"),
}
DTYPES = ("int8", "uint64", "float32", ">f8", "complex64", "bool")


def write(entry: str, how: str | None, x, rows, y, copy):
    """One write through ``entry`` (``rows`` an index array of x's library)."""
    if entry == "scatter":
        index = rows[:, None]
        return indexops.scatter(x, index, y, update_computation=how, copy=copy, **ROW_SCATTER)
    if entry == "scatter_update":
        return indexops.scatter_update(x, -2, rows, y, copy=copy)
    return getattr(indexops.at(x)[rows], how)(y, copy=copy)


def combiners(library: str, dtype: str) -> list[tuple[str, str | None]]:
    """(entry point, combiner) pairs a table of ``dtype`` takes: replace only for bool
    (and torch's uint64, which the generic path, torch's own arithmetic, cannot add), no
    min or max for complex."""
    kind = np.dtype(dtype).kind
    pairs = [(entry, how) for entry, hows in SCATTERS.items() for how in hows]
    if kind == "b" or (library, dtype) == ("torch", "uint64"):
        return [(e, h) for e, h in pairs if h in (None, "set")]
    if kind == "c":
        return [(e, h) for e, h in pairs if h not in ("min", "max")]
    return pairs


def values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values over the dtype's range (integers wrap in add and mul); floats without zeros,
    so that min and max have no signs to fix, real ones with NaN and infinities among
    them."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    drawn = rng.uniform(0.5, 4.0, shape) * rng.choice([-1.0, 1.0], shape)
    if kind == "c":  # (no infinities: torch's complex kernels differ on them among themselves)
        return (drawn + 1j * rng.uniform(0.5, 4.0, shape)).astype(dtype)
    drawn.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    return drawn.astype(dtype)


def assert_equal(actual, expected, message: str = "") -> None:
    """The same dtype (byte order included) and values (integers exactly, NaNs equal:
    their payloads are not specified)."""
    actual, expected = to_numpy(actual), to_numpy(expected)
    assert actual.dtype == expected.dtype, message
    np.testing.assert_array_equal(actual, expected, err_msg=message)


@contextlib.contextmanager
def counting(library: str):
    """Count the row writer's direct writes (``counts[0]``) into arrays of ``library``."""
    counts = [0]
    original = RowWriter._distinct

    def counted(self, x, *args):
        counts[0] += type(x).__module__.split(".")[0] == library
        return original(self, x, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RowWriter, "_distinct", counted)
        yield counts


def library_arrays(library: str, *arrays: np.ndarray) -> tuple:
    """``arrays`` as they are (NumPy), or as torch tensors."""
    if library == "numpy":
        return arrays
    return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in arrays)


LIBRARIES = ("numpy", "torch")


@pytest.mark.parametrize(
    ("library", "dtype"),
    [(lib, dtype) for lib in LIBRARIES for dtype in DTYPES if lib == "numpy" or dtype != ">f8"],
)
@pytest.mark.parametrize("copy", [True, False, None])
def test_direct_writes_equal_the_generic_path(library, dtype, copy):
    """Each entry point's small write of distinct rows gives the generic backend's
    result (integer wrap, NaN, infinities, the dtype and byte order: NumPy's, as torch
    has no other), writes ``x`` itself exactly where asked, and runs the direct step
    (repeated calls too)."""
    for entry, how in combiners(library, dtype):
        x0, y = values(dtype, (8, WIDTH), 1), values(dtype, (4, WIDTH), 2)
        with generic_only():
            expected = write(entry, how, *library_arrays(library, x0.copy(), ROWS, y), True)
        for _ in range(2):  # the first call, then the repeat path
            x, rows, y_in = library_arrays(library, x0.copy(), ROWS, y)
            with counting(library) as counts, np.errstate(all="ignore"):
                got = write(entry, how, x, rows, y_in, copy)
            assert counts[0] == 1, (entry, how)
            assert (got is x) == (copy is not True), (entry, how)
            if copy is True:
                assert_equal(x, x0)
            assert_equal(got, expected, f"{entry} {how}")


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("entry", ["scatter", "scatter_update", "at"])
def test_direct_writes_in_place_read_updates_that_view_x(library, entry):
    """In place, the updates are rows of ``x`` itself, two of them rows written: the
    result is that of the updates as they were before the call."""
    x0 = np.arange(8 * WIDTH, dtype=np.float64).reshape(8, WIDTH)
    how = "add" if entry != "scatter_update" else None
    expected = x0.copy()
    before = expected[2:6].copy()
    if how is None:
        expected[ROWS] = before
    else:
        expected[ROWS] += before
    (x,) = library_arrays(library, x0.copy())
    rows = library_arrays(library, ROWS)[0]
    with counting(library) as counts:
        got = write(entry, how, x, rows, x[2:6], False)
    assert counts[0] == 1
    assert got is x
    np.testing.assert_array_equal(to_numpy(x), expected)


def test_direct_writes_in_place_read_rows_that_view_x():
    """In place, the rows are entries of ``x`` itself (an int table), one of them in a
    row written: the rows are read as they were before the call."""
    x = np.zeros((8, 1), dtype=np.int64)
    x[:4, 0] = ROWS
    rows = x[:4, 0]  # a view: the write of row 0 changes rows[0]
    expected = x.copy()
    expected[ROWS, 0] = 9
    with counting("numpy") as counts:
        got = indexops.at(x)[rows].set(9, copy=False)
    assert counts[0] == 1
    np.testing.assert_array_equal(got, expected)


def test_direct_writes_into_a_strided_x_in_place():
    """In place into an ``x`` whose rows are not contiguous, seen as rows of 6 elements
    (a transposed array: its 2-D view is a copy): the result is ``x`` itself, written."""
    x = np.zeros((3, 2, 8)).T
    y = np.arange(4.0 * WIDTH).reshape(4, 2, 3)
    expected = np.zeros((8, 2, 3))
    expected[ROWS] = y
    with counting("numpy") as counts:
        got = indexops.at(x)[ROWS].set(y, copy=False)
    assert counts[0] == 1
    assert got is x
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("library", LIBRARIES)
def test_direct_writes_from_many_threads(library):
    """Many threads repeat one signature's write on their own arrays at once: each
    result is its own."""

    def one(seed: int) -> bool:
        rng = np.random.default_rng(seed)
        rows = rng.permutation(8)[:4]
        x0, y = rng.standard_normal((8, WIDTH)), rng.standard_normal((4, WIDTH))
        x, rows_in, y_in = library_arrays(library, x0, rows, y)
        expected = x0.copy()
        for _ in range(20):
            x = indexops.at(x)[rows_in].add(y_in)
            expected[rows] += y
        return np.array_equal(to_numpy(x), expected)

    assert all(map_in_threads(one, range(64), threads=8))


@pytest.mark.parametrize(
    "case",
    ["repeated rows", "more elements than the kernels' minimum", "min with a zero update",
     "a callable"],
)  # fmt: skip
@pytest.mark.parametrize("library", LIBRARIES)
def test_direct_writes_leave_other_writes_to_the_general_path(library, case):
    """The direct step never runs where its result could differ: rows that repeat (added
    in order; a replace writes the last write of each row, as in the tests above),
    writes the compiled kernels take, min and max with a zero update (signed zeros),
    callables; each result is the generic path's."""
    rows, width, how, y_fill = ROWS, WIDTH, "add", 1.5
    if case == "repeated rows":
        rows = np.array([5, 0, 5, 7])
    elif case == "more elements than the kernels' minimum":
        width = _host.KERNEL_MIN_ELEMENTS
    elif case == "min with a zero update":
        how, y_fill = "min", -0.0
    else:
        how = lambda old, new: old * 2 + new  # noqa: E731  (no named combiner)
    x0 = np.arange(8.0 * width).reshape(8, width)
    y = np.full((4, width), y_fill)
    x, rows_in, y_in = library_arrays(library, x0, rows, y)
    with counting(library) as counts:
        got = indexops.scatter(x, rows_in[:, None], y_in, update_computation=how, **ROW_SCATTER)
    assert counts[0] == 0
    with generic_only():
        expected = indexops.scatter(
            x, rows_in[:, None], y_in, update_computation=how, **ROW_SCATTER
        )
    assert_equal(got, expected)
    if case == "min with a zero update":  # IEEE-754 minimum: -0.0 where it met +0.0
        assert np.signbit(to_numpy(got)[0, 0]) and to_numpy(got)[0, 0] == 0


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("how", [None, "add", "min"])
def test_direct_writes_read_nothing_where_values_are_not_on_the_host(library, how):
    """Where values are not on the host (a GPU, tracing: the ``device_paths`` hook), rows
    distinct by ``unique_indices=True`` take the direct step without reading anything;
    float min and max, whose zero updates would need a read, keep the general path."""
    x0, y = values("float32", (8, WIDTH), 3), values("float32", (4, WIDTH), 4)
    x, rows, y_in = library_arrays(library, x0, ROWS, y)
    attributes = {**ROW_SCATTER, "update_computation": how, "unique_indices": True}
    attributes["mode"] = "promise_in_bounds"  # ("drop" masks its rows there: no fast step)
    with device_paths(), counting(library) as counts:
        got = indexops.scatter(x, rows[:, None], y_in, **attributes)
    assert counts[0] == int(how != "min")
    with generic_only():
        expected = indexops.scatter(x, rows[:, None], y_in, **attributes)
    assert_equal(got, expected)


@pytest.mark.parametrize("how", ["mul", "min", "add", None])
def test_torch_direct_combines_up_to_their_row_count(how):
    """torch's multiply, min and max of distinct rows take the direct step up to
    ``DISTINCT_COMBINE_MAX_ROWS`` rows (above, ``scatter_reduce_`` costs as little);
    replace and add at any count the kernels leave; the generic path's result either
    way."""
    from indexops._backends._torch import DISTINCT_COMBINE_MAX_ROWS

    for count in (DISTINCT_COMBINE_MAX_ROWS, DISTINCT_COMBINE_MAX_ROWS + 1):
        x0 = values("float32", (2 * count, 2), count)
        y = values("float32", (count, 2), count + 1)
        rows = np.random.default_rng(count).permutation(2 * count)[:count, None]
        x, rows_in, y_in = library_arrays("torch", x0, rows, y)
        attributes = {**ROW_SCATTER, "update_computation": how, "unique_indices": True}
        with counting("torch") as counts:
            got = indexops.scatter(x, rows_in, y_in, **attributes)
        direct = how in (None, "add") or count <= DISTINCT_COMBINE_MAX_ROWS
        assert counts[0] == int(direct), (how, count)
        with generic_only():
            assert_equal(got, indexops.scatter(x, rows_in, y_in, **attributes))


@pytest.mark.parametrize(
    ("library", "dtype"),
    [("numpy", "float32"), ("numpy", ">f8"), ("numpy", "bfloat16"), ("torch", "float32")],
)
@pytest.mark.parametrize("entry", ["scatter", "scatter_update", "at"])
def test_a_replace_of_repeated_rows_writes_the_last_write_of_each_directly(library, dtype, entry):
    """A replace of a few rows that repeat, read on the host as one list, keeps the last
    write of each row and writes those in the direct step, through every entry point, in
    place and into a copy, in any byte order and extension dtype: the result of
    replacing the rows one by one, in ``x``'s dtype."""
    rows = np.array([5, 0, 5, 7, 0, 5])
    x0, y = values(dtype, (8, WIDTH), 21), values(dtype, (6, WIDTH), 22)
    expected = x0.copy()
    for row, update in zip(rows, y, strict=True):
        expected[row] = update
    for copy in (True, False):
        x, rows_in, y_in = library_arrays(library, x0.copy(), rows, y)
        with counting(library) as direct:
            got = write(entry, "set" if entry == "at" else None, x, rows_in, y_in, copy)
        assert direct == [1] and (got is x) == (not copy)
        assert_equal(got, expected)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("method", ["set", "add", "max"])
def test_at_updates_of_a_few_rows_counted_from_the_end(library, method):
    """``at``'s updates of a few rows some of which count from the end (NumPy's indexing)
    are written as the rows they name: distinct ones in the direct step, a row named
    twice (``-1`` and ``7``) in order (a replace: its last write, in the direct step), one
    outside ``[-8, 8)`` dropped (``at``'s default mode) by the general path; in place and
    into a copy, first and repeat calls."""
    x0, y = values("float32", (8, WIDTH), 23), values("float32", (4, WIDTH), 24)
    twice = int(method == "set")
    for rows, direct_steps in (([5, -8, 3, -1], 1), ([5, -1, 3, 7], twice), ([5, -9, 3, 7], 0)):
        expected = x0.copy()
        for row, update in zip(rows, y, strict=True):
            if -8 <= row < 8:
                old = expected[row]
                expected[row] = {"set": update, "add": old + update}.get(
                    method, np.maximum(old, update)
                )
        for copy in (True, False, True):
            x, rows_in, y_in = library_arrays(library, x0.copy(), np.array(rows), y)
            with counting(library) as direct:
                got = getattr(indexops.at(x)[rows_in], method)(y_in, copy=copy)
            assert direct == [direct_steps], (rows, copy)
            assert (got is x) == (not copy)
            assert_equal(got, expected, str(rows))
        if library == "torch" and method == "set":  # the overwritten update gets no gradient
            y_grad = torch.ones(4, WIDTH, requires_grad=True)
            x, rows_in = library_arrays(library, x0.copy(), np.array(rows))
            indexops.at(x)[rows_in].set(y_grad).sum().backward()
            kept = [float(-8 <= r < 8 and r % 8 not in [k % 8 for k in rows[i + 1 :]])
                    for i, r in enumerate(rows)]  # fmt: skip
            expected_grad = torch.tensor(kept)[:, None].expand(4, WIDTH)
            torch.testing.assert_close(y_grad.grad, expected_grad, msg=str(rows))


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("rows", [[5, 0, 3, 7], [5, 0, 5, 7]], ids=["distinct", "repeated"])
def test_promised_rows_read_as_a_list_take_the_direct_step(library, rows):
    """``mode="promise_in_bounds"`` (also what ``at`` and ``indexops.onnx`` pass once they
    checked the indices): a few rows are still read as one list and take the direct step,
    repeated ones too, as the last write of each row (a replace)."""
    x0, y = values("float32", (8, WIDTH), 5), values("float32", (4, WIDTH), 6)
    x, rows_in, y_in = library_arrays(library, x0, np.array(rows), y)
    attributes = {**ROW_SCATTER, "mode": "promise_in_bounds"}
    with counting(library) as counts:
        got = indexops.scatter(x, rows_in[:, None], y_in, **attributes)
    assert counts[0] == 1
    expected = x0.copy()
    for row, update in zip(rows, y, strict=True):
        expected[row] = update
    assert_equal(got, expected)
    with counting(library) as counts:
        indexops.onnx.scatter_nd(x, rows_in[:, None], y_in)
    assert counts[0] == 1


def test_direct_writes_leave_what_autograd_records_to_the_general_path():
    """torch: where autograd records (updates that require grad), the general path
    writes new tensors; the gradient is that of ``index_add``."""
    x = torch.arange(8.0 * WIDTH).reshape(8, WIDTH)
    y = torch.ones(4, WIDTH, requires_grad=True)
    rows = torch.from_numpy(ROWS)
    with counting("torch") as counts:
        got = indexops.at(x)[rows].add(y)
    assert counts[0] == 0
    (got * torch.arange(8.0)[:, None]).sum().backward()
    expected = torch.from_numpy(ROWS).double()[:, None].expand(4, WIDTH).float()
    torch.testing.assert_close(y.grad, expected)
    torch.testing.assert_close(got, x.index_add(0, rows, y.detach()))


def test_direct_writes_in_inference_mode():
    """torch: inference tensors written in place inside ``torch.inference_mode()`` (a
    decode step's cache) take the direct step."""
    with torch.inference_mode():
        cache = torch.zeros(8, WIDTH)
        tokens = torch.ones(4, WIDTH)
        with counting("torch") as counts:
            for _ in range(2):
                got = indexops.scatter_update(cache, -2, torch.from_numpy(ROWS), tokens)
    assert counts[0] == 2
    assert got is cache
    expected = torch.zeros(8, WIDTH)
    expected[torch.from_numpy(ROWS)] = 1.0
    torch.testing.assert_close(cache, expected)


def test_direct_writes_keep_the_write_from_earlier_repeats():
    """A repeat call of the same signature with other rows, one of them outside, takes
    the general path's error before anything is written: the direct step is only taken
    on rows the call proved in range."""
    x = np.zeros((8, WIDTH))
    y = np.ones((4, WIDTH))
    indexops.scatter_update(x, -2, ROWS, y)
    before = x.copy()
    with pytest.raises(ValueError, match="slot below 8"):
        indexops.scatter_update(x, -2, np.array([1, 2, 8, 3]), y)
    np.testing.assert_array_equal(x, before)


@contextlib.contextmanager
def one_layer_writes():
    """Count the writes ``RowWriter.write_few`` made itself (``counts[0]``) and those it
    left to the op's executor (``counts[1]``)."""
    counts = [0, 0]
    original = RowWriter.write_few

    def counted(self, *args):
        written = original(self, *args)
        counts[written is None] += 1
        return written

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RowWriter, "write_few", counted)
        yield counts


ROW_CASES = {  # rows of an [8, WIDTH] table: whether write_few takes them
    "distinct": ([5, 0, 3, 7], True),
    "repeated": ([5, 0, 5, 7], True),
    "negative": ([5, -1, 3, 7], False),
    "past the end": ([5, 0, 8, 7], False),
}


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    ("mode", "case", "index_dtype"),
    [
        (mode, case, dtype)
        for mode in ("drop", "drop_window", "clip", "promise_in_bounds")
        for case in ROW_CASES
        for dtype in ("int64", "int32", "uint8")
        # (no negative uint8; rows outside under promise_in_bounds: broken promises,
        # tests/test_broken_promises.py)
        if not (dtype == "uint8" and case == "negative")
        and not (mode == "promise_in_bounds" and case in ("negative", "past the end"))
    ],
)
def test_scatter_writes_few_rows_in_one_layer(library, mode, case, index_dtype):
    """``scatter`` of one start dim: a few rows the host reads in range are written by
    one layer (``RowWriter.write_few``; distinct ones in the direct step, repeated ones
    added in order), in every mode and from any integer dtype, first and repeat calls;
    rows that lie outside go to the op's executor, which drops or clips them as before.
    The result is the generic backend's every time."""
    rows, taken = ROW_CASES[case]
    x0, y = values("float32", (8, WIDTH), 7), values("float32", (4, WIDTH), 8)
    index = np.array(rows, dtype=index_dtype)[:, None]
    attributes = {**ROW_SCATTER, "mode": mode, "update_computation": "add"}
    with generic_only():
        expected = indexops.scatter(*library_arrays(library, x0, index, y), **attributes)
    for copy in (True, False):
        x, index_in, y_in = library_arrays(library, x0.copy(), index, y)
        with one_layer_writes() as counts, counting(library) as direct:
            got = indexops.scatter(x, index_in, y_in, copy=copy, **attributes)
        assert counts == ([1, 0] if taken else [0, 1]), (copy, counts)
        assert direct[0] == (case == "distinct"), (copy, direct)
        assert (got is x) == (not copy)
        assert_equal(got, expected)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", ["distinct", "repeated", "negative"])
def test_scatter_update_writes_few_slots_in_one_layer(library, case):
    """``scatter_update``: a few slots in range are written by one layer in the direct
    step (of repeated slots, the last token of each); padding (negative slots) goes to
    its executor, which skips it; a slot past the end is its error, raised before
    anything is written."""
    slots, taken = ROW_CASES[case]
    cache0, tokens = values("float32", (8, WIDTH), 9), values("float32", (4, WIDTH), 10)
    expected = cache0.copy()
    for slot, token in zip(slots, tokens, strict=True):
        if slot >= 0:
            expected[slot] = token
    cache, index, tokens_in = library_arrays(library, cache0.copy(), np.array([slots]), tokens)
    with one_layer_writes() as counts, counting(library) as direct:
        got = indexops.scatter_update(cache, -2, index, tokens_in)
    assert counts == ([1, 0] if taken else [0, 1]) and direct[0] == taken
    assert got is cache
    assert_equal(cache, expected)
    past = library_arrays(library, np.array([[5, 0, 8, 7]]))[0]
    before = to_numpy(cache).copy()
    with one_layer_writes() as counts, pytest.raises(ValueError, match="slot below 8"):
        indexops.scatter_update(cache, -2, past, tokens_in)
    assert counts == [0, 1]
    np.testing.assert_array_equal(to_numpy(cache), before)


@pytest.mark.parametrize("library", LIBRARIES)
def test_one_layer_writes_keep_the_promises(library):
    """The one-layer write reads updates that view the table before it writes (in
    place, the updates rows of the table itself, repeated rows too), writes from many
    threads each its own result, leaves to the executor values not on the host (nothing
    read) and more rows than one list holds, and keeps out of the direct step what
    autograd records and float min with a zero update (the writer's general path)."""
    x0 = np.arange(8.0 * WIDTH).reshape(8, WIDTH)
    for rows in (ROWS, np.array([5, 0, 5, 3])):  # distinct; row 5 twice
        (x,) = library_arrays(library, x0.copy())
        index = library_arrays(library, rows[:, None])[0]
        for how in (None, "add"):
            with one_layer_writes() as counts:
                got = indexops.scatter(x, index, x[2:6], update_computation=how, copy=False,
                                       **ROW_SCATTER)  # fmt: skip
            assert counts == [1, 0] and got is x
        expected = x0.copy()
        for row, update in zip(rows, x0[2:6].copy(), strict=True):
            expected[row] = update  # replace, one by one
        once = expected[2:6].copy()
        for row, update in zip(rows, once, strict=True):
            expected[row] += update  # then add the rows as they were before the add
        np.testing.assert_array_equal(to_numpy(x), expected)

    def one(seed: int) -> bool:
        rng = np.random.default_rng(seed)
        rows = rng.permutation(8)[:4] if seed % 2 else rng.integers(0, 8, 4)  # repeats
        table, y = rng.standard_normal((8, WIDTH)), rng.standard_normal((4, WIDTH))
        table_in, rows_in, y_in = library_arrays(library, table, rows[:, None], y)
        wanted = table.copy()
        for k in range(20):
            how = "add" if k % 2 else None
            table_in = indexops.scatter(table_in, rows_in, y_in, update_computation=how,
                                        **ROW_SCATTER)  # fmt: skip
            for row, update in zip(rows, y, strict=True):
                wanted[row] = wanted[row] + update if how else update
        return np.array_equal(to_numpy(table_in), wanted)

    assert all(map_in_threads(one, range(64), threads=8))

    y = values("float32", (4, WIDTH), 11)
    x, index, y_in = library_arrays(library, values("float32", (8, WIDTH), 12), ROWS[:, None], y)
    with device_paths(), one_layer_writes() as counts:
        indexops.scatter(x, index, y_in, **ROW_SCATTER)
    assert counts == [0, 1]
    zero = library_arrays(library, np.full((4, WIDTH), -0.0, np.float32))[0]
    with one_layer_writes() as counts, counting(library) as direct:
        got = indexops.scatter(x, index, zero, update_computation="min", **ROW_SCATTER)
    assert counts == [1, 0] and direct == [0]
    with generic_only():
        assert_equal(got, indexops.scatter(x, index, zero, update_computation="min",
                                           **ROW_SCATTER))  # fmt: skip
    many = np.random.default_rng(13).permutation(64)[:17, None]
    table, many_in, y17 = library_arrays(library, np.zeros((64, 2)), many, np.ones((17, 2)))
    with one_layer_writes() as counts:
        indexops.scatter(table, many_in, y17, **ROW_SCATTER)
    assert counts == [0, 0]  # (a writer of 17 rows never asks)
    if library == "torch":
        for rows, grads in ((ROWS, [1, 1, 1, 1]), (np.array([5, 0, 5, 3]), [0, 1, 1, 1])):
            y_grad = torch.ones(4, WIDTH, requires_grad=True)
            with one_layer_writes() as counts, counting(library) as direct:
                got = indexops.scatter(x, torch.asarray(rows[:, None]), y_grad, **ROW_SCATTER)
            assert counts == [1, 0] and direct == [0]
            got.sum().backward()  # the first write of a repeated row gets no gradient
            expected_grad = torch.tensor(grads, dtype=torch.float32)[:, None].expand(4, WIDTH)
            torch.testing.assert_close(y_grad.grad, expected_grad)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("how", [None, "add", "max"])
def test_one_layer_writes_elements_of_a_1d_table(library, how):
    """A scatter of elements into a 1-D table (an element plan, whose rows are one element
    wide) takes the one layer for a few positions in range, distinct or repeated, and
    the element paths for positions outside; the results are the generic backend's."""
    for positions, taken in (([5, 0, 3, 7], True), ([5, 0, 5, 7], True), ([5, 0, 9, 7], False)):
        x, index, y = library_arrays(
            library, values("float32", (8,), 14), np.array(positions)[:, None],
            values("float32", (4,), 15),
        )  # fmt: skip
        attributes = {
            "update_window_dims": (),
            "inserted_window_dims": (0,),
            "scatter_dims_to_operand_dims": (0,),
            "index_vector_dim": 1,
            "update_computation": how,
        }
        with one_layer_writes() as counts:
            got = indexops.scatter(x, index, y, **attributes)
        assert counts == ([1, 0] if taken else [0, 1]), positions
        with generic_only():
            assert_equal(got, indexops.scatter(x, index, y, **attributes))


@pytest.mark.parametrize("library", LIBRARIES)
def test_few_rows_in_range_reads_the_index_as_one_list(library):
    """``few_rows_in_range``: the index flat in the index dtype (any integer dtype, byte
    order or layout given) and whether its entries are distinct, where they are in
    range, else ``None``: entries outside on either side, more than a list read covers,
    none."""
    from indexops._backends import backend_for

    x = library_arrays(library, np.zeros((8, 2), np.float32))[0]
    backend = backend_for("test", x=x)
    wide = np.arange(12).reshape(3, 4)[:, ::2]  # not contiguous: [[0, 2], [4, 6], [8, 10]]
    shown = [
        (np.array([[5, 0], [3, 7]]), [5, 0, 3, 7]),
        (np.array([5, 0, 3], np.uint8), [5, 0, 3]),
        (wide[:, :1] % 8, [0, 4, 0]),  # repeated
        (wide[:2], [0, 2, 4, 6]),
        (np.array([5, 0, -1]), None),
        (np.array([5, 0, 8]), None),
        (np.arange(17) % 8, None),
        (np.zeros(0, np.int64), None),
    ]
    if library == "numpy":
        shown.append((np.array([7, 1], ">i4"), [7, 1]))
    for index, expected in shown:
        (index_in,) = library_arrays(library, index)
        found = backend.few_rows_in_range(index_in, 7)
        if expected is None:
            assert found is None, index
            continue
        assert found is not None
        rows, distinct = found
        assert to_numpy(rows).tolist() == expected
        assert to_numpy(rows).dtype == np.int64
        assert distinct == (len(set(expected)) == len(expected))


def _copied_writes() -> list[tuple[str, str | None, bool]]:
    """(dtype, combiner, large) of torch's writes of distinct rows into a copy: every
    combiner of every dtype that has it (torch adds no float8 or uint16, compares no
    complex), small, and a large replace and add (copied by NumPy)."""
    cases = []
    for dtype in ("float32", "bfloat16", "float8_e4m3fn", "uint16", "int64", "complex64"):
        for how in (None, "add", "mul", "min", "max"):
            if how is not None and dtype in ("float8_e4m3fn", "uint16"):
                continue
            if how in ("min", "max") and dtype == "complex64":
                continue
            cases.append((dtype, how, False))
    return [*cases, ("float32", None, True), ("float32", "add", True)]


@pytest.mark.parametrize(("dtype", "how", "large"), _copied_writes())
def test_torch_writes_of_distinct_rows_into_a_copy(dtype, how, large, monkeypatch):
    """torch's replace, add, multiply, min and max of distinct rows into a copy: one
    copying call (``index_copy``, ``index_add``; the other combiners' function into the
    rows taken, then ``index_copy``), no clone, below the size NumPy copies and for the
    types torch has those kernels for, else the clone and the in-place write; the
    generic path's result either way, ``x`` untouched, no memory shared with it."""
    from indexops._backends import _torch

    calls: list[str] = []
    for named, copying in list(_torch._COPYING_WRITES.items()):
        counted = lambda *a, _f=copying, _n=named: calls.append(_n and _n.value) or _f(*a)  # noqa: E731
        monkeypatch.setitem(_torch._COPYING_WRITES, named, counted)
    torch_dtype = getattr(torch, dtype)
    rows = _torch.NUMPY_COPY_MIN_BYTES // (2 * torch_dtype.itemsize) if large else 8
    x = torch.arange(1, rows * 2 + 1, dtype=torch.float64).reshape(rows, 2).to(torch_dtype)
    before = x.clone()
    index = torch.tensor([[5], [0], [3], [7]])
    y = torch.full((4, 2), 3.0).to(torch_dtype)
    attributes = {**ROW_SCATTER, "update_computation": how}
    with generic_only():
        expected = indexops.scatter(x, index, y, **attributes)
    clones: list[torch.Tensor] = []
    clone = torch.Tensor.clone
    spy = lambda t, *a, **k: clones.append(t) or clone(t, *a, **k)  # noqa: E731
    monkeypatch.setattr(torch.Tensor, "clone", spy)
    with one_layer_writes() as counts:
        got = indexops.scatter(x, index, y, **attributes)
    monkeypatch.undo()
    assert counts == [1, 0]
    one_call = not large and dtype not in ("float8_e4m3fn", "uint16")
    assert calls == ([how] if one_call and how in (None, "add") else [])
    if one_call:
        assert not any(t is x for t in clones)
    assert torch.equal(x.view(torch.uint8), before.view(torch.uint8))
    assert got.dtype == torch_dtype and got.untyped_storage().data_ptr() != x.data_ptr()
    assert torch.equal(got.view(torch.uint8), expected.view(torch.uint8))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("width", [8, 16, 63])
@pytest.mark.parametrize("threads", [1, 2])
def test_torch_adds_wide_float_rows_by_index_put(monkeypatch, dtype, width, threads):
    """torch's add of distinct rows of a real floating type at least
    ``PUT_ADD_MIN_WIDTH`` wide goes through ``index_put_`` with ``accumulate=True``
    (``index_add_`` runs a parallel region on two threads), in place and into a copy,
    through ``scatter``, ``at`` and ``at`` with rows from the end; narrower rows and
    integers keep ``index_add_``. The generic path's bits either way: NaN, infinities
    and signed zeros among the table's and the updates' values."""
    from indexops._backends import _torch

    calls: list[str] = []
    for name in ("index_add_", "index_put_", "index_add", "index_put"):
        function = getattr(torch.Tensor, name)
        spied = lambda *a, _f=function, _n=name, **k: calls.append(_n.rstrip("_")) or _f(*a, **k)  # noqa: E731
        monkeypatch.setattr(torch.Tensor, name, spied)
    monkeypatch.setitem(_torch._COPYING_WRITES, _torch.Named.ADD, torch.Tensor.index_add)
    torch_dtype = getattr(torch, dtype)
    table = values("float64" if dtype != "int64" else "int64", (8, width), seed=width)
    updates = values("float64" if dtype != "int64" else "int64", (4, width), seed=width + 1)
    if dtype != "int64":
        table[1, :2], updates[0, :2] = [-0.0, 0.0], [-0.0, -0.0]  # (row 5 of the table)
    x = torch.from_numpy(table).to(torch_dtype)
    y = torch.from_numpy(updates).to(torch_dtype)
    rows = torch.from_numpy(ROWS)
    from_end = torch.from_numpy(ROWS - 8)
    by_put = width >= _torch.PUT_ADD_MIN_WIDTH and dtype != "int64"
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for copy in (True, False):
            for call in (
                lambda target, copy: indexops.scatter(
                    target, rows[:, None], y, update_computation="add", copy=copy, **ROW_SCATTER
                ),
                lambda target, copy: indexops.at(target)[rows].add(y, copy=copy),
                lambda target, copy: indexops.at(target)[from_end].add(y, copy=copy),
            ):
                with generic_only():
                    expected = call(x.clone(), copy)
                calls.clear()
                target = x.clone()
                got = call(target, copy)
                assert calls == ["index_put" if by_put else "index_add"]
                assert got.dtype == torch_dtype
                wide = torch.float64 if dtype != "int64" else torch.int64  # (exact)
                assert_equal(got.to(wide), expected.to(wide))
                if dtype != "int64":  # (NaN payloads are not specified)
                    assert torch.equal(
                        got.signbit() | got.isnan(), expected.signbit() | got.isnan()
                    )
                assert (got is target) == (not copy)
                if copy:
                    assert torch.equal(target.view(torch.uint8), x.view(torch.uint8))
    finally:
        torch.set_num_threads(before)
