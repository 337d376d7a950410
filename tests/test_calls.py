"""Executors per call signature: a repeated call skips validation and planning, and that
never changes what a call returns or which error it raises."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import numpy as np
import pytest
from helpers import ROW_SCATTER, map_in_threads

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError
from indexops._ops import at as at_module
from indexops._ops import gather as gather_module
from indexops._plan import executors as _calls

GATHER_ROWS = dict(
    offset_dims=(1,),
    collapsed_slice_dims=(0,),
    start_index_map=(0,),
    index_vector_dim=1,
    slice_sizes=(1, 3),
)


def table() -> np.ndarray:
    return np.arange(12.0).reshape(4, 3)


@pytest.mark.parametrize(
    "bad",
    [
        {"offset_dims": (True,)},
        {"offset_dims": (1.0,)},
        {"index_vector_dim": 1.0},
        {"slice_sizes": (True, 3)},
        {"collapsed_slice_dims": [0.0]},
    ],
)
def test_attributes_equal_to_valid_ints_are_refused_after_a_valid_call(bad):
    # True == 1 and 1.0 == 1: a signature lookup alone would accept them
    rows = np.array([[1], [3]])
    indexops.gather(table(), rows, **GATHER_ROWS)
    with pytest.raises(IndexOpsTypeError):
        indexops.gather(table(), rows, **(GATHER_ROWS | bad))


def test_scatter_attributes_equal_to_valid_ints_are_refused_after_a_valid_call():
    rows, ones = np.array([[1], [3]]), np.ones((2, 3))
    indexops.scatter(table(), rows, ones, **ROW_SCATTER)
    with pytest.raises(IndexOpsTypeError):
        indexops.scatter(table(), rows, ones, **(ROW_SCATTER | {"index_vector_dim": True}))


def test_per_call_arguments_are_checked_on_every_call():
    rows = np.array([[1], [3]])
    indexops.gather(table(), rows, **GATHER_ROWS, mode="fill", fill_value=0.5)
    with pytest.raises(IndexOpsTypeError, match="fill_value"):
        indexops.gather(table(), rows, **GATHER_ROWS, mode="fill", fill_value=True)
    frozen = table()
    frozen.flags.writeable = False
    ones = np.ones((2, 3))
    indexops.scatter(frozen, rows, ones, **ROW_SCATTER, copy=True)
    with pytest.raises(IndexOpsValueError, match="copy"):
        indexops.scatter(frozen, rows, ones, **ROW_SCATTER, copy=False)
    with pytest.raises(IndexOpsTypeError, match="copy"):
        indexops.scatter(table(), rows, ones, **ROW_SCATTER, copy=1)
    cache = np.zeros((4, 3))
    indexops.scatter_update(cache, -2, np.array([[0, 1]]), np.ones((2, 3)))
    with pytest.raises(IndexOpsValueError, match="slot below 4"):
        indexops.scatter_update(cache, -2, np.array([[0, 4]]), np.ones((2, 3)))
    assert cache.sum() == 6  # the refused call wrote nothing


def test_values_are_read_on_every_call():
    # the signature holds shapes, never values: the same signature, other rows
    rows = np.array([[0], [1]])
    first = indexops.gather(table(), rows, **GATHER_ROWS)
    rows[:] = [[3], [7]]  # 7 is clipped to the last row
    second = indexops.gather(table(), rows, **GATHER_ROWS)
    np.testing.assert_array_equal(first, table()[[0, 1]])
    np.testing.assert_array_equal(second, table()[[3, 3]])
    out = np.zeros(10)
    indexops.slice_scatter(out, np.ones(5), [0], [10], [2], copy=False)
    indexops.dynamic_update_slice(out, np.full(2, 7.0), (8,), copy=False)
    np.testing.assert_array_equal(out, [1, 0, 1, 0, 1, 0, 1, 0, 7, 7])
    np.testing.assert_array_equal(indexops.dynamic_slice(out, (-5,), (3,)), [1, 0, 1])
    np.testing.assert_array_equal(indexops.dynamic_slice(out, (9,), (3,)), [0, 7, 7])


def test_callable_combiners_and_unhashable_attributes_are_not_kept():
    rows, ones = np.array([[1], [1]]), np.ones((2, 3))
    before = len(_calls._EXECUTORS)
    for _ in range(3):  # a new function each time, as a lambda in a loop would be
        result = indexops.scatter(
            table(), rows, ones, **ROW_SCATTER, update_computation=lambda a, b: a - b
        )
        np.testing.assert_array_equal(result[1], [1.0, 2.0, 3.0])
    as_lists = {key: list(value) if isinstance(value, tuple) else value
                for key, value in GATHER_ROWS.items()}  # fmt: skip
    indexops.gather(table(), rows, **as_lists)
    assert len(_calls._EXECUTORS) == before


def test_the_table_is_bounded(monkeypatch):
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    monkeypatch.setattr(_calls, "MAX_SIGNATURES", 4)
    for n in range(1, 10):
        got = indexops.dynamic_slice(np.arange(n + 1), (0,), (n,))
        np.testing.assert_array_equal(got, np.arange(n))
    assert len(_calls._EXECUTORS) == 4


def test_signature_of_non_arrays_is_none():
    assert _calls.signature(("op",), np.zeros(2), [1, 2]) is None
    with pytest.raises(IndexOpsTypeError, match="operand"):
        indexops.gather([[1.0, 2.0]], np.array([[0]]), **GATHER_ROWS)


def test_many_threads_past_the_table_size_get_the_serial_results(monkeypatch):
    # evictions while other threads look up and insert: no error, every result right
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    monkeypatch.setattr(_calls, "MAX_SIGNATURES", 4)
    sizes = range(1, 41)  # ten times the table's size
    source = np.arange(64.0)
    expected = {n: source[3 : 3 + n] for n in sizes}

    def work(seed: int) -> list[int]:
        order = np.random.default_rng(seed).permutation(np.repeat(np.array(sizes), 10))
        wrong = []
        for n in order.tolist():
            got = indexops.dynamic_slice(source, (3,), (n,))
            if not np.array_equal(got, expected[n]):
                wrong.append(n)
        return wrong

    results = map_in_threads(work, range(20), threads=10)
    assert results == [[]] * 20
    assert len(_calls._EXECUTORS) <= 4


def test_same_shapes_with_another_dtype_are_validated_again():
    rows = np.array([[1], [3]])
    indexops.scatter(table(), rows, np.ones((2, 3)), **ROW_SCATTER)
    with pytest.raises(IndexOpsTypeError, match=r"updates\.dtype"):
        indexops.scatter(table(), rows, np.ones((2, 3), np.float32), **ROW_SCATTER)
    with pytest.raises(IndexOpsTypeError, match="scatter_indices"):
        indexops.scatter(table(), rows.astype(float), np.ones((2, 3)), **ROW_SCATTER)


@pytest.mark.backends("array_api_strict")
def test_same_shapes_on_another_device_are_validated_again():
    import array_api_strict as xps

    other = xps.Device("device1")
    operand = xps.reshape(xps.arange(12.0), (4, 3))
    rows = xps.asarray([[1], [3]])
    indexops.gather(operand, rows, **GATHER_ROWS)
    with pytest.raises(IndexOpsValueError, match="arrays on one device") as error:
        indexops.gather(operand, xps.asarray([[1], [3]], device=other), **GATHER_ROWS)
    assert "device1" in str(error.value)


def test_test_hooks_hold_in_their_own_thread_only():
    from indexops._backends import backend_for
    from indexops._testing import device_paths, generic_only

    x = np.zeros(3)
    seen = {}
    with generic_only():
        assert backend_for("test", x=x).name == "generic"
        thread = threading.Thread(target=lambda: seen.update(other=backend_for("test", x=x)))
        thread.start()
        thread.join()
        before = len(_calls._EXECUTORS)
        indexops.dynamic_slice(np.arange(7.0), (2,), (5,))
        assert len(_calls._EXECUTORS) == before  # nothing kept within a hook
    assert seen["other"].name == "numpy" and seen["other"].host_reads
    with device_paths():
        assert not backend_for("test", x=x).host_reads
    assert backend_for("test", x=x).host_reads


# -- at: the lowering of an index expression, one per signature ------------------------------


class _Marked(np.ndarray):
    """An ndarray subclass: a type of its own in a signature."""


def _at_calls() -> dict[str, tuple[np.ndarray, object]]:
    """``(x, idx)`` pairs whose signatures differ from the first one's in one part each
    (and from one another): the value of an int, a slice bound or step, where ``None``
    or ``...`` stands, whether ``idx`` is a tuple, an index array's shape or dtype, and
    x's shape, dtype or type."""
    x = np.arange(30.0).reshape(6, 5)
    rows, columns = np.array([4, 0, -1]), np.array([3, 0, -1])  # no position repeats
    return {
        "base": (x, (rows, slice(1, 4))),
        "slice start": (x, (rows, slice(0, 4))),
        "slice stop": (x, (rows, slice(1, 5))),
        "slice step": (x, (rows, slice(1, 4, 2))),
        "negative step": (x, (rows, slice(4, 1, -1))),
        "open start": (x, (rows, slice(None, 4))),
        "int": (x, (rows, 1)),
        "int value": (x, (rows, 3)),
        "negative int": (x, (rows, -2)),
        "None first": (x, (None, rows, slice(1, 4))),
        "None second": (x, (rows, None, slice(1, 4))),
        "Ellipsis last": (x, (rows, ...)),
        "Ellipsis first": (x, (..., columns)),
        "array alone": (x, rows),
        "array in a tuple": (x, (rows,)),
        "array shape": (x, (rows[:2], slice(1, 4))),
        "array rank": (x, (rows[:, None], slice(1, 4))),
        "array dtype": (x, (rows.astype(np.int32), slice(1, 4))),
        "unsigned array": (x, (np.array([4, 0, 5], np.uint8), slice(1, 4))),
        "two arrays": (x, (rows, columns)),
        "two arrays, the second's dtype": (x, (rows, columns.astype(np.int32))),
        "two arrays, the second's shape": (x, (rows, columns[:, None])),
        "two arrays, x's dtype": (x.astype(np.float32), (rows, columns)),
        "two arrays, x's byte order": (x.astype(">f8"), (rows, columns)),
        "two arrays, x's type": (x.view(_Marked), (rows.view(_Marked), columns.view(_Marked))),
        "array alone, its dtype": (x, rows.astype(np.int32)),
        "array alone, its shape": (x, rows[:2]),
        "array alone, x's shape": (np.arange(35.0).reshape(7, 5), rows),
        "array alone, x's byte order": (x.astype(">f8"), rows),
        "empty tuple": (x, ()),
        "int and array": (x, (1, columns)),
        "x shape": (x[:, :4], (rows, slice(1, 4))),
        "x dtype": (x.astype(np.float32), (rows, slice(1, 4))),
        "x byte order": (x.astype(">f8"), (rows, slice(1, 4))),
        "x type": (x.view(_Marked), (rows.view(_Marked), slice(1, 4))),
    }


def _at_results(calls: dict[str, tuple[np.ndarray, object]], order: list[str]) -> list[str]:
    """The names of the calls in ``order`` whose get, set or add differ from NumPy's."""
    wrong = []
    for name in order:
        x, idx = calls[name]
        expected_set, expected_add = np.array(x), np.array(x)
        expected_set[idx] = 7.0
        expected_add[idx] += 1.0
        target = indexops.at(x)[idx]
        got = (np.asarray(target.get()), target.set(7.0), target.add(1.0))
        expected = (np.asarray(x)[idx], expected_set, expected_add)
        if not all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, expected)):
            wrong.append(name)
    return wrong


def _at_entries() -> list[object]:
    """The lowerings in the table (at's signatures begin with its name, or with the
    marks of its flat signatures: one array, or a tuple of arrays, of x's type)."""
    marks = (at_module.OP, at_module._ROWS_OF_X, at_module._ARRAYS_OF_X)
    return [run for key, run in _calls._EXECUTORS.items() if key[0] in marks]


def test_at_boolean_masks_are_never_kept(monkeypatch):
    """A mask's values set the lowering: alone, in a tuple with arrays or with a slice,
    each call lowers its own, and gives NumPy's result after a kept lowering of the same
    shapes and an integer dtype."""
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    x = np.arange(30.0).reshape(6, 5)
    rows = np.array([4, 0, 5, 1, 2, 3])
    for mask in (np.array([True, False, True, False, False, True]), np.ones(6, bool)):
        for idx in (mask, (mask, np.array([0])), (mask, slice(1, 3))):
            integer = (
                tuple(rows if item is mask else item for item in idx)
                if type(idx) is tuple
                else rows
            )
            for index in (integer, idx, idx):  # (an integer array of the mask's shape first)
                expected = np.array(x)
                expected[index] = 7.0
                np.testing.assert_array_equal(indexops.at(x)[index].set(7.0), expected)
                np.testing.assert_array_equal(indexops.at(x)[index].get(), x[index])
    assert len(_at_entries()) == 3  # the integer arrays' lowerings only


def test_at_calls_that_differ_in_one_part_of_the_signature_never_share_a_lowering(monkeypatch):
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _at_calls()
    for _ in range(2):  # the second time through the table
        assert _at_results(calls, list(calls)) == []
    lowerings = _at_entries()
    assert len(lowerings) == len(calls)
    assert len({id(run) for run in lowerings}) == len(calls)


def test_at_calls_that_differ_in_one_part_of_the_signature_from_many_threads(monkeypatch):
    # threads meet each signature together, in different orders, while others look up
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _at_calls()
    start = threading.Barrier(8)

    def work(seed: int) -> list[str]:
        order = [str(name) for name in np.random.default_rng(seed).permutation(list(calls))]
        start.wait()
        return _at_results(calls, order + order[::-1])

    results = map_in_threads(work, range(8), threads=8)
    assert results == [[]] * 8
    assert len(_at_entries()) == len(calls)


def _by_option(rows: np.ndarray) -> dict[str, tuple[object, np.ndarray]]:
    """Calls on one index expression that differ in the method or one of its options,
    each with what it gives (``rows`` has an entry past the end and a negative one)."""
    x = np.arange(12.0).reshape(6, 2)
    wrapped = np.where(rows < 0, rows + 6, rows)
    inside = (wrapped >= 0) & (wrapped < 6)
    clipped = np.clip(wrapped, 0, 5)

    def updated(positions, how):
        out = x.copy()
        how(out, positions, np.full((len(positions), 2), 2.0))
        return out

    def assign(out, positions, y):
        out[positions] = y

    def at_ufunc(ufunc):
        return lambda out, positions, y: ufunc.at(out, positions, y)

    filled = np.where(inside[:, None], x[clipped], -1.0)
    y = np.full((len(rows), 2), 2.0)
    at = indexops.at(x)[rows]
    return {
        "get": (lambda: at.get(), x[clipped]),
        "get fill": (lambda: at.get(mode="fill", fill_value=-1.0), filled),
        "get drop": (lambda: at.get(mode="drop", fill_value=-1.0), filled),
        "set": (lambda: at.set(y), updated(wrapped[inside], assign)),
        "set clip": (lambda: at.set(y, mode="clip"), updated(clipped, assign)),
        "add": (lambda: at.add(y), updated(wrapped[inside], at_ufunc(np.add))),
        "add clip": (lambda: at.add(y, mode="clip"), updated(clipped, at_ufunc(np.add))),
        "multiply": (lambda: at.multiply(y), updated(wrapped[inside], at_ufunc(np.multiply))),
        "max": (lambda: at.max(y), updated(wrapped[inside], at_ufunc(np.maximum))),
        "min clip": (lambda: at.min(y, mode="clip"), updated(clipped, at_ufunc(np.minimum))),
    }


def test_at_methods_and_options_never_share_a_core_executor(monkeypatch):
    """The core executors a lowering keeps, one per method's combiner and options: each
    call gives its own result, first or repeated, in any order and from many threads."""
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _by_option(np.array([1, 9, -2, 3, -7]))
    assert _wrong_from_threads(calls) == [[]] * 4
    (lowering,) = _at_entries()
    # get: clip and fill (drop is fill); set and add: drop and clip; multiply, max, min
    assert len(lowering.core) == 9


def _wrong_from_threads(calls: dict[str, tuple[Any, np.ndarray]]) -> list[list[str]]:
    """Per thread of 4, the calls that did not give their result, each made twice in an
    order of the thread's own."""
    start = threading.Barrier(4)

    def work(seed: int) -> list[str]:
        order = [str(name) for name in np.random.default_rng(seed).permutation(list(calls))]
        start.wait()
        return [name for name in order * 2 if not np.array_equal(calls[name][0](), calls[name][1])]

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(work, range(4)))


def test_at_methods_on_rows_in_range_never_share_a_row_writer(monkeypatch):
    """Updates at int64 rows in range, repeated, go to the row writer of their combiner
    (one per combiner and signature): each call gives its own result, first or repeated,
    in any order and from many threads."""
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _by_option(np.array([1, 4, 5, 1, 0]))  # in range; row 1 twice
    assert _wrong_from_threads(calls) == [[]] * 4
    (lowering,) = _at_entries()
    writers = {key[1] for key in lowering.core if key[0] == "rows"}  # type: ignore[attr-defined]
    assert writers == {None, "add", "mul", "max", "min"}


@pytest.mark.backends("array_api_strict")
def test_at_with_an_index_array_on_another_device_after_a_call_on_one():
    import array_api_strict as xps

    x = xps.reshape(xps.arange(12.0), (4, 3))
    indexops.at(x)[xps.asarray([1, 3])].get()
    indexops.at(x)[xps.asarray([1, 3])].add(1.0)
    rows = xps.asarray([1, 3], device=xps.Device("device1"))
    for method in ("get", "add"):
        with pytest.raises(IndexOpsValueError, match="arrays on one device"):
            getattr(indexops.at(x)[rows], method)(*(() if method == "get" else (1.0,)))


def test_repeated_row_writes_decide_what_their_signature_fixes_once(monkeypatch):
    """A row writer is prepared per signature: whether min's and max's zero results need
    IEEE-754's signs is decided when it is made, not on each call of scatter, at's row
    updates or scatter_update; the signs are still right on every call."""
    from indexops._execute import rows as _rows

    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    asked = []
    decide = _rows.has_signed_zeros
    monkeypatch.setattr(_rows, "has_signed_zeros", lambda *a: asked.append(a) or decide(*a))
    x, rows = np.zeros((4, 3)), np.array([2, 0])
    calls = {
        "scatter": lambda y: indexops.scatter(
            x, rows[:, None], y, **ROW_SCATTER, update_computation="min"
        ),
        "at": lambda y: indexops.at(x)[rows].min(y),
        "scatter_update": lambda y: indexops.scatter_update(x, -2, rows, y, copy=True),
    }
    for name, call in calls.items():
        call(np.ones((2, 3)))  # makes the executor and its writer
        asked.clear()
        for sign in (-1.0, 1.0, -1.0):
            y = np.full((2, 3), sign * 0.0)
            expected = x.copy()  # +0.0: IEEE-754's minimum, and replace, give y's zero
            expected[rows] = y
            assert np.array_equal(np.signbit(call(y)), np.signbit(expected)), (name, sign)
        assert asked == [], name


def _gather_calls() -> dict[str, tuple[dict[str, Any], object]]:
    """Gathers of rows of ``table()`` whose attributes differ from ``GATHER_ROWS`` in one
    value, one type or one container, each with what it gives: its rows, or the error
    type its validation raises."""
    sizes_list = [1, 3]
    return {
        "the constants": ({}, [1, 3]),
        "equal new tuples": (
            {"offset_dims": tuple([1]), "slice_sizes": tuple([1, 3])},
            [1, 3],
        ),
        "another slice width": ({"slice_sizes": (1, 2)}, "narrow"),
        "a bool in a tuple": ({"offset_dims": (True,)}, IndexOpsTypeError),
        "a float in a tuple": ({"slice_sizes": (1.0, 3)}, IndexOpsTypeError),
        "a NumPy int in a tuple": ({"start_index_map": (np.int64(0),)}, [1, 3]),
        "a list": ({"slice_sizes": sizes_list}, [1, 3]),
        "a bool index_vector_dim": ({"index_vector_dim": True}, IndexOpsTypeError),
        "another index_vector_dim": ({"index_vector_dim": 0}, IndexOpsValueError),
        "a NumPy bool flag": ({"unique_indices": np.True_}, [1, 3]),
        "an int flag": ({"indices_are_sorted": 1}, IndexOpsTypeError),
        "an array flag": ({"indices_are_sorted": np.array(True)}, IndexOpsTypeError),
        "mode fill": ({"mode": "fill", "fill_value": -1.0}, [1, 3]),
        "an unknown mode": ({"mode": "wrap"}, IndexOpsValueError),
        "an array mode": ({"mode": np.array(["clip"])}, IndexOpsTypeError),
    }


def _gather_results(calls, order) -> list[str]:
    """The names of the calls, in ``order``, that did not give what they should."""
    rows = np.array([[1], [3]])
    wrong = []
    for name in order:
        change, expected = calls[name]
        try:
            got = indexops.gather(table(), rows, **(GATHER_ROWS | change))
        except (IndexOpsTypeError, IndexOpsValueError) as error:
            if expected is not type(error):
                wrong.append(name)
            continue
        want = table()[[1, 3], :2] if expected == "narrow" else table()[expected]
        if not np.array_equal(got, want):
            wrong.append(name)
    return wrong


def test_gathers_that_differ_in_one_attribute_or_its_type_never_share_an_executor(monkeypatch):
    """A repeated gather finds its executor by its attribute tuples without the
    validating path: the very tuples, or equal tuples of plain ints. Every other call
    (another value, a bool or float equal to an int, a list, a flag or mode of another
    type) is validated: the same result or named error on every repeat, in any order."""
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _gather_calls()
    after_the_constants = [name for other in calls for name in ("the constants", other)]
    for order in (list(calls), list(calls)[::-1], after_the_constants * 2):
        assert _gather_results(calls, order) == []


def test_repeated_gathers_with_the_same_or_equal_tuples_skip_validation(monkeypatch):
    built = []
    prepare = gather_module._prepare

    def counted(*args, **kwargs):
        built.append(args[2])
        return prepare(*args, **kwargs)

    monkeypatch.setattr(gather_module, "_prepare", counted)
    monkeypatch.setattr(gather_module, "_HELD", _calls.HeldAttributes())
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    rows = np.array([[1], [3]])
    checked = []
    monkeypatch.setattr(gather_module, "plain_ints", lambda flat: checked.append(1) or True)
    for sizes in [(1, 3), (1, 3), tuple([1, 3]), (1, 3)]:
        got = indexops.gather(table(), rows, **(GATHER_ROWS | {"slice_sizes": sizes}))
        np.testing.assert_array_equal(got, table()[[1, 3]])
    assert len(built) == 1 and len(checked) == 1  # validated once, then found by the tuples
    sizes = [1, 3]  # a list may change between calls: validated every time
    for width in (3, 2, 3):
        sizes[1] = width
        got = indexops.gather(table(), rows, **(GATHER_ROWS | {"slice_sizes": sizes}))
        np.testing.assert_array_equal(got, table()[[1, 3], :width])
    assert len(checked) == 4


def test_gathers_that_differ_in_one_attribute_from_many_threads(monkeypatch):
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    monkeypatch.setattr(gather_module, "_HELD", _calls.HeldAttributes())
    calls = _gather_calls()
    start = threading.Barrier(8)

    def work(seed: int) -> list[str]:
        order = [str(name) for name in np.random.default_rng(seed).permutation(list(calls))]
        start.wait()
        return _gather_results(calls, order + order[::-1])

    assert map_in_threads(work, range(8), threads=8) == [[]] * 8


def _scatter_calls() -> dict[str, tuple[dict[str, Any], object]]:
    """Scatters of two rows into ``table()`` that differ from ``ROW_SCATTER`` (replace) in
    one value, one type or one container, each with its result's rows 1 and 3, or the
    error type its validation raises."""
    return {
        "the constants": ({}, [[1.0] * 3, [2.0] * 3]),
        "equal new tuples": ({"update_window_dims": tuple([1])}, [[1.0] * 3, [2.0] * 3]),
        "add": ({"update_computation": "add"}, [[4.0, 5.0, 6.0], [11.0, 12.0, 13.0]]),
        "max": ({"update_computation": "max"}, [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]),
        "a bool in a tuple": ({"inserted_window_dims": (False,)}, IndexOpsTypeError),
        "a float index_vector_dim": ({"index_vector_dim": 1.0}, IndexOpsTypeError),
        "a NumPy bool promise": ({"unique_indices": np.True_}, [[1.0] * 3, [2.0] * 3]),
        "an int promise": ({"unique_indices": 1}, IndexOpsTypeError),
        "mode clip": ({"mode": "clip"}, [[1.0] * 3, [2.0] * 3]),
        "a list": ({"scatter_dims_to_operand_dims": [0]}, [[1.0] * 3, [2.0] * 3]),
    }


def test_scatters_that_differ_in_one_attribute_or_its_type_never_share_an_executor(monkeypatch):
    monkeypatch.setattr(_calls, "_EXECUTORS", {})
    calls = _scatter_calls()
    rows, updates = np.array([[1], [3]]), np.array([[1.0] * 3, [2.0] * 3])
    order = [name for other in calls for name in ("the constants", other)]
    wrong = []
    for name in order + order[::-1]:
        change, expected = calls[name]
        try:
            got = indexops.scatter(table(), rows, updates, **(ROW_SCATTER | change))
        except (IndexOpsTypeError, IndexOpsValueError) as error:
            if expected is not type(error):
                wrong.append(name)
            continue
        if not np.array_equal(got[[1, 3]], expected):
            wrong.append(name)
    assert wrong == []


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_repeated_row_writes_prove_small_rows_distinct_with_their_range(library, monkeypatch):
    """A repeated scatter, scatter_update or at's row update reads its few rows on the
    host as one list: in range, and distinct or not. Rows that repeat, in a call of the
    same signature, still resolve in order (the last write wins, adds accumulate): a
    replace finds the last write of each row in that list, with no search for repeats by
    array operations."""
    from indexops._execute import rows as _rows
    from indexops._execute.writes import RowWriter

    lib = pytest.importorskip(library)
    searched, kept = [], []
    search = _rows._last_occurrences_on_host
    monkeypatch.setattr(
        _rows, "_last_occurrences_on_host", lambda *a: searched.append(1) or search(*a)
    )
    last_writes = RowWriter._last_writes

    def counted(self, *arrays):
        found = last_writes(self, *arrays)
        kept.append(None if found is None else found[0].shape[0])
        return found

    monkeypatch.setattr(RowWriter, "_last_writes", counted)
    base = np.arange(24.0).reshape(8, 3)
    updates = np.arange(1.0, 13.0).reshape(4, 3)
    calls = {
        "scatter": lambda x, r, y, how: indexops.scatter(
            x, r[:, None], y, **ROW_SCATTER, update_computation=how, copy=False
        ),
        "scatter_update": lambda x, r, y, how: indexops.scatter_update(
            x, -2, r[None, :], y, copy=False
        ),
        "at": lambda x, r, y, how: indexops.at(x)[r].set(y, copy=False),
    }
    for name, call in calls.items():
        for rows, distinct in (([5, 0, 7, 2], True), ([5, 0, 5, 2], False), ([1, 2, 3, 4], True)):
            expected = base.copy()
            for row, value in zip(rows, updates):  # one by one, in order
                expected[row] = value
            x, r = lib.asarray(base.copy()), lib.asarray(np.array(rows))
            searched.clear()
            kept.clear()
            got = call(x, r, lib.asarray(updates), None)
            assert got is x and np.array_equal(np.asarray(got), expected), (name, rows)
            assert searched == [] and kept == ([] if distinct else [3]), (name, rows)
    for rows in ([5, 0, 5, 2], [5, 0, 7, 2]):
        expected = base.copy()
        np.add.at(expected, rows, updates)
        x = lib.asarray(base.copy())
        got = calls["scatter"](x, lib.asarray(np.array(rows)), lib.asarray(updates), "add")
        assert np.array_equal(np.asarray(got), expected), rows


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_repeated_window_calls_at_int_starts_skip_the_starts_type_question(library, monkeypatch):
    """dynamic_slice and dynamic_update_slice at Python-int starts keep an executor that
    knows them ints (the signature's check): it no longer asks per call; starts given
    as arrays still do. Each call clamps its own starts, an empty window writes nothing,
    an update that views the operand is read before the write, and a read-only operand
    is refused with copy=False, on the repeat as on the first call."""
    from indexops._ops import dynamic_slice as _windows

    lib = pytest.importorskip(library)
    asked = []
    all_ints = _windows._all_ints
    monkeypatch.setattr(_windows, "_all_ints", lambda s: asked.append(1) or all_ints(s))
    base = np.arange(30.0).reshape(5, 6)
    for starts in ((1, 2), (-3, 9), (4, 0)):  # one signature, other values each call
        asked.clear()
        x = lib.asarray(base.copy())
        expected = base.copy()
        first = [min(max(starts[0], 0), 3), min(max(starts[1], 0), 4)]
        read = indexops.dynamic_slice(x, starts, (2, 2))
        np.testing.assert_array_equal(
            np.asarray(read), base[first[0] : first[0] + 2, first[1] : first[1] + 2]
        )
        view = x[0:2, 0:2]  # the update views the operand: read before the write
        expected[first[0] : first[0] + 2, first[1] : first[1] + 2] = base[0:2, 0:2]
        got = indexops.dynamic_update_slice(x, view, starts, copy=False)
        assert got is x and np.array_equal(np.asarray(got), expected), starts
        assert asked == [], starts  # (the first call of each signature validates)
    empty = lib.asarray(base.copy())
    assert indexops.dynamic_update_slice(empty, empty[:0, :], (1, 1), copy=False) is empty
    np.testing.assert_array_equal(np.asarray(empty), base)
    asked.clear()
    starts = (lib.asarray(np.array(1)), 2)
    np.testing.assert_array_equal(
        np.asarray(indexops.dynamic_slice(lib.asarray(base), starts, (2, 2))), base[1:3, 2:4]
    )
    assert asked
    frozen = base.copy()
    frozen.flags.writeable = False
    for _ in range(2):
        with pytest.raises(IndexOpsValueError, match="copy"):
            indexops.dynamic_update_slice(frozen, np.ones((2, 2)), (1, 1), copy=False)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_slice_scatter_decides_emptiness_and_flips_once_per_signature(library, monkeypatch):
    """A slice_scatter that writes something and flips no axis keeps the assignment
    alone as its executor; empty and reversed slices keep the general one. The results,
    an update that views the data, and a read-only data with copy=False, alike."""
    from indexops._ops import slice_scatter as _slices

    lib = pytest.importorskip(library)
    general = []
    execute = _slices._execute
    monkeypatch.setattr(_slices, "_execute", lambda *a: general.append(1) or execute(*a))
    base = np.arange(30.0).reshape(5, 6)
    cases = [  # start, stop, step, the NumPy key, whether the general executor runs
        ([0, 1], [5, 6], [2, 3], np.s_[0:5:2, 1:6:3], False),
        ([4, 5], [-6, -7], [-2, -3], np.s_[4::-2, 5::-3], True),
        ([1, 1], [1, 6], [1, 1], np.s_[1:1, 1:6], True),
    ]
    for start, stop, step, key, flips_or_empty in cases:
        for _ in range(2):  # the first call, and the repeat of the kept executor
            general.clear()
            x = lib.asarray(base.copy())
            updates = base[: base[key].shape[0], : base[key].shape[1]]
            view = x[: updates.shape[0], : updates.shape[1]]  # views the data
            expected = base.copy()
            expected[key] = updates
            got = indexops.slice_scatter(x, view, start, stop, step, copy=False)
            assert got is x and np.array_equal(np.asarray(got), expected), key
            assert bool(general) == flips_or_empty, key
    frozen = base.copy()
    frozen.flags.writeable = False
    for _ in range(2):
        with pytest.raises(IndexOpsValueError, match="copy"):
            indexops.slice_scatter(frozen, np.ones((3, 2)), [0, 1], [5, 6], [2, 3], copy=False)


def test_mode_names_kept_per_class_and_flags():
    """A mode name parsed once is kept per mode class and naming flags: JAX's ``"fill"``
    is a drop for at's writes and an error where JAX's names are not taken, before and
    after either was parsed, and a read's ``"drop"`` a fill; ``jax.lax``'s names apart."""
    from indexops._validate.modes import GatherMode, ScatterMode

    for _ in range(2):  # (the second time through the kept names)
        assert ScatterMode.parse("op", "fill", jax_names=True) is ScatterMode.DROP
        assert ScatterMode.parse("op", "fill", lax_names=True) is ScatterMode.DROP_WINDOW
        assert GatherMode.parse("op", "drop", jax_names=True) is GatherMode.FILL
        assert GatherMode.parse("op", "clip") is GatherMode.CLIP
        assert ScatterMode.parse("op", "clip") is ScatterMode.CLIP
        for mode_class, name in ((ScatterMode, "fill"), (GatherMode, "drop")):
            with pytest.raises(IndexOpsValueError, match="mode"):
                mode_class.parse("op", name)
