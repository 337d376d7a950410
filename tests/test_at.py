"""indexops.at against NumPy indexing, a one-by-one update loop, and jax.numpy's ``.at``."""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from backends import DRAWN, Backend, halves
from helpers import assert_same, check_array, dtype_name, from_numpy, to_numpy
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import VALUE_DTYPES

import indexops
from indexops._testing import device_paths

INDEX_DTYPES = ("int64", "int32", "int16", "int8", "uint8")
FLOAT_DTYPES = ("float32", "float64")


def twice_plus(old: Any, new: Any) -> Any:
    """Neither associative nor commutative: any change of application order shows."""
    return old * 2 + new


# NumPy's elementwise meaning of each update method, applied one update at a time
STEPS = {
    "set": lambda old, new: new,
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "power": np.power,
    "min": np.minimum,
    "max": np.maximum,
    "apply": twice_plus,
}
# value ranges that keep every method exact (and away from division by zero)
VALUE_RANGES = {"multiply": (0, 3), "power": (0, 2), "divide": (1, 4)}


# -- index expressions -----------------------------------------------------------------------


@dataclass
class IndexCase:
    """An index expression in NumPy's terms (arrays are NumPy arrays or lists)."""

    shape: tuple[int, ...]
    idx: tuple[Any, ...]

    def on(self, xp: Any) -> tuple[Any, ...]:
        """The expression with its NumPy arrays made arrays of ``xp``."""
        return tuple(from_numpy(xp, i) if isinstance(i, np.ndarray) else i for i in self.idx)

    def positions(self) -> np.ndarray:
        """The flat position in x of every element of ``x[idx]``, NumPy's own answer."""
        return np.arange(math.prod(self.shape)).reshape(self.shape)[self.idx]


def _slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3]))
    return st.builds(slice, bound, bound, step)


def _broadcastable(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``shape``: a suffix of it with some sizes set to 1."""
    rank = draw(st.integers(0, len(shape)))
    suffix = shape[len(shape) - rank :]
    return tuple(n if draw(st.booleans()) else 1 for n in suffix)


def _index_array(draw: Any, n: int, shape: tuple[int, ...]) -> Any:
    """Integer positions on a dim of size ``n``: in range, negative ones included."""
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    count = math.prod(shape)
    low = 0 if dtype.startswith("u") else -n
    values = draw(st.lists(st.integers(low, n - 1), min_size=count, max_size=count))
    array = np.asarray(values, dtype=dtype).reshape(shape)
    if array.size and draw(st.integers(0, 4)) == 0:
        return array.tolist()  # a (nested) sequence
    return array


@st.composite
def index_cases(draw: Any, booleans: bool = True, python_bools: bool = True) -> IndexCase:
    """A shape and an index expression of every kind: ints, slices, None, ..., integer
    arrays and sequences broadcast together, or a boolean array, and Python's True (a
    0-d mask: an advanced index of shape (1,), which broadcasts with any), mixed."""
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    advanced_shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    with_mask = booleans and draw(st.integers(0, 3)) == 0
    leading = draw(st.integers(0, rank))  # dims indexed before the ... (or all items)
    with_ellipsis = draw(st.booleans())
    trailing = draw(st.integers(0, rank - leading)) if with_ellipsis else 0
    # at most one boolean array; the number of its true entries is drawn, so the integer
    # arrays beside it are 0-d (they broadcast with its positions)
    advanced_shape = () if with_mask else advanced_shape
    masks = [with_mask]
    items = _items(draw, shape, range(leading), advanced_shape, masks)
    if with_ellipsis:
        items.append(Ellipsis)
        items += _items(draw, shape, range(rank - trailing, rank), advanced_shape, masks)
    if draw(st.integers(0, 4)) == 0:
        items.insert(draw(st.integers(0, len(items))), None)
    if python_bools and draw(st.integers(0, 5)) == 0:
        items.insert(draw(st.integers(0, len(items))), True)
    return IndexCase(shape, tuple(items))


def _items(
    draw: Any, shape: tuple[int, ...], dims: range, advanced_shape: tuple, masks: list[bool]
) -> list[Any]:
    """Index items for the dims ``dims`` of ``shape``, with a None now and then; a boolean
    array where ``masks`` holds True (which it then gives up)."""
    items: list[Any] = []
    dim = dims.start
    while dim < dims.stop:
        if draw(st.integers(0, 5)) == 0:
            items.append(None)
        n = shape[dim]
        kind = draw(st.sampled_from(["slice", "int", "array", "array", "mask"]))
        if kind == "mask" and masks[0]:
            masks[0] = False
            width = draw(st.integers(1, min(2, dims.stop - dim)))
            size = math.prod(shape[dim : dim + width])
            bits = draw(st.lists(st.booleans(), min_size=size, max_size=size))
            items.append(np.asarray(bits, dtype=bool).reshape(shape[dim : dim + width]))
            dim += width
            continue
        if kind == "slice" or n == 0:
            items.append(draw(_slices(n)))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(_index_array(draw, n, _broadcastable(draw, advanced_shape)))
        dim += 1
    return items


def values_of(draw: Any, shape: tuple[int, ...], dtype: str, low: int = 0, high: int = 100):
    count = math.prod(shape)
    values = draw(st.lists(st.integers(low, high), min_size=count, max_size=count))
    return np.asarray(values).astype(dtype).reshape(shape)


def draw_update(data: Any, case: IndexCase, dtype: str, method: str) -> tuple[np.ndarray, Any]:
    """``x`` and ``y``: an array broadcasting to ``x[idx]``, or a Python scalar."""
    low, high = VALUE_RANGES.get(method, (0, 100))
    x = values_of(data.draw, case.shape, dtype, low, high)
    shape = case.positions().shape
    if data.draw(st.integers(0, 4)) == 0:
        scalar = data.draw(st.integers(max(low, 1), high))
        return x, float(scalar) if dtype.startswith("float") else scalar
    return x, values_of(data.draw, _broadcastable(data.draw, shape), dtype, low, high)


def one_by_one(
    x: np.ndarray, case: IndexCase, y: Any, method: str, xp: Any = np, jitted: bool = False
) -> np.ndarray:
    """The updates applied one at a time, in the row-major order of ``x[idx]``; ``divide``
    by ``xp``'s own division, as ``at`` does (XLA's float32 division on the CPU is not
    NumPy's: ``7 / 3`` is 2.3333335 there). Under ``jax.jit`` (``jitted``) a Python scalar
    ``y`` is a constant of the program, and XLA divides by a constant as it multiplies by
    its reciprocal, as it does in any jitted ``x / 3.0``: 1 divided by 3.0 twice is
    0.11111112 there, 0.11111111 eagerly; the steps divide by it in a jitted program too."""
    positions = case.positions()
    values = np.broadcast_to(np.asarray(y, dtype=x.dtype), positions.shape)
    flat = x.copy().reshape(-1)
    step = STEPS[method]
    if method == "divide" and jitted and not isinstance(y, np.ndarray):
        import jax  # only the jax_jit backend's tests are jitted

        by_constant = jax.jit(lambda old: old / y)
        step = lambda old, new: to_numpy(by_constant(from_numpy(xp, old)))  # noqa: E731
    elif method == "divide" and xp is not np:
        step = lambda old, new: to_numpy(xp.divide(from_numpy(xp, old), from_numpy(xp, new)))  # noqa: E731
    with np.errstate(over="ignore"):
        for p, v in zip(positions.reshape(-1).tolist(), values.reshape(-1)):
            flat[p : p + 1] = np.asarray(step(flat[p : p + 1], np.asarray([v], x.dtype)))
    return flat.reshape(x.shape)


def unique_positions(case: IndexCase) -> bool:
    positions = case.positions()
    return len(np.unique(positions)) == positions.size


def as_backend(xp: Any, y: Any) -> Any:
    return from_numpy(xp, y) if isinstance(y, np.ndarray) else y


def indexed(xp: Any, x: Any, case: IndexCase, use_brackets: bool) -> Any:
    """``at(x)[idx]`` or ``at(x, idx)``."""
    idx = case.on(xp)
    return indexops.at(x)[idx] if use_brackets else indexops.at(x, idx)


# -- against NumPy ---------------------------------------------------------------------------


@given(data=st.data())
def test_get_is_numpy_indexing(xp, backend, data):
    case = data.draw(index_cases(booleans=backend.reads_boolean_indices))
    x = values_of(data.draw, case.shape, data.draw(st.sampled_from(VALUE_DTYPES)))
    got = indexed(xp, from_numpy(xp, x), case, data.draw(st.booleans())).get()
    assert_same(got, x[case.idx])


@DRAWN
@given(data=st.data())
@pytest.mark.parametrize("method", ["set", "add"])
def test_set_and_add_are_numpy_on_unique_positions(xp, backend, method, data):
    case = data.draw(index_cases(booleans=backend.reads_boolean_indices))
    assume(unique_positions(case))
    x, y = draw_update(data, case, data.draw(st.sampled_from(VALUE_DTYPES)), method)
    expected = x.copy()
    with np.errstate(over="ignore"):
        if method == "set":
            expected[case.idx] = y
        else:
            expected[case.idx] += np.asarray(y, dtype=x.dtype)
    target = indexed(xp, from_numpy(xp, x), case, data.draw(st.booleans()))
    assert_same(getattr(target, method)(as_backend(xp, y)), expected)


@DRAWN
@given(data=st.data())
@pytest.mark.parametrize("method", list(STEPS))
def test_repeated_positions_apply_one_by_one(xp, backend, method, data):
    case = data.draw(index_cases(booleans=backend.reads_boolean_indices))
    dtypes = FLOAT_DTYPES if method in ("divide", "power") else VALUE_DTYPES
    x, y = draw_update(data, case, data.draw(st.sampled_from(dtypes)), method)
    xp_of_steps = xp if backend.has_values else np
    expected = one_by_one(x, case, y, method, xp_of_steps, jitted=backend.traced)
    target = indexed(xp, from_numpy(xp, x), case, data.draw(st.booleans()))
    args = (twice_plus, as_backend(xp, y)) if method == "apply" else (as_backend(xp, y),)
    got = getattr(target, method)(*args)
    if method == "power":  # pow may differ from NumPy's in the last bit on some libraries
        check_array(got)
        assert (tuple(got.shape), dtype_name(got)) == (expected.shape, expected.dtype.name)
        if backend.has_values:
            np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-6)
    else:
        assert_same(got, expected)


@pytest.mark.backends(lambda backend: backend is Backend.JAX_JIT)
def test_repeated_division_by_a_python_scalar_under_jit_is_xlas(xp, backend):
    """A Python scalar divisor is a constant of the jitted program, which XLA divides by as
    it multiplies by the constant's reciprocal: the reference divides the same way."""
    x = np.ones(3, dtype=np.float32)
    case = IndexCase(x.shape, (np.array([1, 1]),))
    expected = one_by_one(x, case, 3.0, "divide", xp, jitted=True)
    assert expected[1] == np.float32(0.11111112)
    assert one_by_one(x, case, 3.0, "divide", xp)[1] == np.float32(0.11111111)
    assert_same(indexed(xp, from_numpy(xp, x), case, True).divide(3.0), expected)


@pytest.mark.parametrize("method", ["set", "add", "subtract", "multiply", "power", "min", "max"])
@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_repeated_positions_apply_one_by_one(xp, dtype, method):
    """torch has few kernels for uint16/32/64 (no neg, no pow): every method over the whole
    range, wrapping around, min and max across the sign bit, exponents of 2**(bits-1) and
    more (uint64 ones are negative as int64)."""
    info = np.iinfo(dtype)
    half = 2 ** (info.bits - 1)
    x = np.array([0, 1, half - 1, half, info.max, 3], dtype=dtype)
    case = IndexCase(x.shape, (np.array([2, 3, 4, 3, 0, 4, 5, 2, 1, 5]),))
    y = np.array([half, half - 1, info.max, 1, info.max, half + 1, 3, 7, 2, half], dtype=dtype)
    expected = one_by_one(x, case, y, method)
    got = getattr(indexed(xp, from_numpy(xp, x), case, True), method)(from_numpy(xp, y))
    assert_same(got, expected)


def test_repeated_set_keeps_the_last_in_row_major_order(xp):
    x = xp.zeros((2, 3), dtype=xp.int64)
    rows = xp.asarray([[1, 1], [0, 1]])
    y = xp.asarray([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]])
    # x[rows] has shape (2, 2, 3); row 1 is written three times, (1, 1) last
    assert_same(indexops.at(x)[rows].set(y), np.array([[7, 8, 9], [10, 11, 12]]))
    assert_same(indexops.at(x)[rows].add(y), np.array([[7, 8, 9], [15, 18, 21]]))


# Boolean arrays over two dims whose patterns are not their own transpose, on square and
# non-square dims, alone, after a slice or ..., and over the first two of three dims.
ASYMMETRIC = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)
UPPER = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=bool)
MASKS = {
    "(3, 4) mask of (3, 4)": ((3, 4), (ASYMMETRIC,)),
    "(3, 3) mask of (3, 3)": ((3, 3), (UPPER,)),
    "last two of (2, 3, 4) after :": ((2, 3, 4), (slice(None), ASYMMETRIC)),
    "last two of (2, 3, 3) after ...": ((2, 3, 3), (Ellipsis, UPPER)),
    "first two of (3, 4, 2)": ((3, 4, 2), (ASYMMETRIC,)),
    "first two of (3, 3, 2), then an int": ((3, 3, 2), (UPPER, -1)),
}


def reads_masks(backend: Backend) -> bool:
    """Whether ``at`` reads boolean index arrays on ``backend`` (Dask: NumPy masks)."""
    return backend.reads_boolean_indices or backend.library == "dask"


# (a lambda: pytest takes a named function as the test that a mark decorates)
READS_MASKS = pytest.mark.backends(lambda backend: reads_masks(backend))


def mask_of(xp: Any, backend: Backend, mask: np.ndarray) -> Any:
    """``mask`` as a boolean index of ``backend``: NumPy's own next to a Dask x."""
    return mask if backend.library == "dask" else from_numpy(xp, mask)


def key_on(xp: Any, backend: Backend, idx: tuple[Any, ...]) -> tuple[Any, ...]:
    """``idx`` with its NumPy boolean arrays as masks of ``backend``."""
    return tuple(mask_of(xp, backend, i) if isinstance(i, np.ndarray) else i for i in idx)


def check_against_numpy(xp: Any, x: np.ndarray, key: Any, idx: Any) -> None:
    """get, set and add of ``at(x)[key]`` against NumPy's ``x[idx]`` (unique positions)."""
    assert_same(indexops.at(from_numpy(xp, x))[key].get(), x[idx])
    y = np.arange(1, x[idx].size + 1, dtype=x.dtype).reshape(x[idx].shape)
    for method in ("set", "add"):
        expected = x.copy()
        if method == "set":
            expected[idx] = y
        else:
            expected[idx] += y
        got = getattr(indexops.at(from_numpy(xp, x), key), method)(from_numpy(xp, y))
        assert_same(got, expected)


@READS_MASKS
@pytest.mark.parametrize("name", MASKS)
def test_two_dim_masks_are_numpy_indexing(xp, backend, name):
    shape, idx = MASKS[name]
    x = np.arange(np.prod(shape), dtype=np.int64).reshape(shape) * 10
    check_against_numpy(xp, x, key_on(xp, backend, idx), idx)


# Python bools (NumPy's 0-d masks): a new advanced dim of size 1 or 0, no dim of x taken.
BOOL_EXPRESSIONS = {
    "True": (True,),
    "False": (False,),
    "0, :2, False": (0, slice(None, 2), False),
    "True, 0, False": (True, 0, False),
    "..., True": (Ellipsis, True),
    "1, True, [2, 0]": (1, True, [2, 0]),
    "None, False, :": (None, False, slice(None)),
    "np.True_, -1": (np.True_, -1),
    "[0, 1], True, ::-2": ([0, 1], True, slice(None, None, -2)),
    "[[True, False, True]] mask, True": (slice(None), np.array([True, False, True]), True),
    "list mask, True": ([True, False], True),  # a list of bools is known: also traced
    "2-D list mask": ([[True, False, True], [False, True, True]],),
    "empty list mask": (slice(None), [[]]),
}


@pytest.mark.parametrize("name", BOOL_EXPRESSIONS)
def test_python_bools_are_numpy_indexing(xp, backend, name):
    idx = BOOL_EXPRESSIONS[name]
    if any(isinstance(i, np.ndarray) for i in idx) and not reads_masks(backend):
        return  # boolean arrays where values are unknown: test_array_errors
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    check_against_numpy(xp, x, key_on(xp, backend, idx), idx)


@READS_MASKS
@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("where", ["alone", "between ints", "after ..."])
def test_zero_d_boolean_arrays_are_numpy_indexing(xp, backend, value, where):
    mask = np.asarray(value)
    idx = {"alone": (mask,), "between ints": (1, mask, 2), "after ...": (Ellipsis, mask)}[where]
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    check_against_numpy(xp, x, key_on(xp, backend, idx), idx)


@READS_MASKS
def test_zero_d_boolean_array_on_zero_d_x(xp, backend):
    """array-api-extra's case: ``at(20.0)[True].add(40.0)`` is 60.0."""
    x = from_numpy(xp, np.asarray(20.0))
    assert_same(indexops.at(x)[mask_of(xp, backend, np.asarray(True))].add(40.0), np.asarray(60.0))
    assert_same(indexops.at(x)[mask_of(xp, backend, np.asarray(False))].add(40.0), np.asarray(20.0))


# A boolean array with a dim of size 0 matches any size there (NumPy's and JAX's rule).
EMPTY_MASKS = {
    "(0,) of (3, 4)": (np.zeros(0, bool),),
    "(0, 4) of (3, 4)": (np.zeros((0, 4), bool),),
    "(3, 0) of (3, 4)": (np.zeros((3, 0), bool),),
    "(0, 0) of (3, 4)": (np.zeros((0, 0), bool),),
    ":, (0,)": (slice(None), np.zeros(0, bool)),
}


@READS_MASKS
@pytest.mark.parametrize("name", EMPTY_MASKS)
def test_empty_masks_of_another_shape_are_numpy_indexing(xp, backend, name):
    idx = EMPTY_MASKS[name]
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    check_against_numpy(xp, x, key_on(xp, backend, idx), idx)


@pytest.mark.parametrize(
    "bounds",
    [(np.int64(2), np.int32(11)), (np.uint8(9), None, np.int8(-2))],
    ids=str,
)
def test_slice_bounds_with_index(xp, bounds):
    x = np.arange(20, dtype=np.int64)
    check_against_numpy(xp, x, slice(*bounds), slice(*bounds))


# steps and bounds near INT64_MAX: torch's own slicing overflowed on them (its strides are
# step * stride), so at hands it in-range slices
HUGE_SLICES = [
    slice(None, None, 2**63 - 1),
    slice(None, None, 2**61),
    slice(None, None, -(2**61)),
    slice(None, None, -(2**63)),
    slice(2**63 - 1, -(2**63), -1),
    slice(-(2**63), 2**63 - 1, 2),
]


# the libraries whose own slicing at runs, and one that gathers (the others gather alike)
@pytest.mark.backends("numpy", "torch", "array_api_strict")
def test_huge_slice_steps_and_bounds(xp):
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    for key in HUGE_SLICES:
        check_against_numpy(xp, x[0], key, key)
        check_against_numpy(xp, x, (slice(None), key), (slice(None), key))
        check_against_numpy(xp, x, key, key)


# where a 0-d array's value is read without a trace, a device or a graph
CONCRETE = (Backend.NUMPY, Backend.NUMPY_READONLY, Backend.ARRAY_API_STRICT, Backend.TORCH)


@pytest.mark.backends(*CONCRETE, Backend.JAX)
def test_slice_bounds_of_zero_d_arrays(xp):
    x, expected = xp.arange(20), np.arange(2, 11, 3)
    assert_same(indexops.at(x)[xp.asarray(2) : xp.asarray(11) : 3].get(), expected)
    assert_same(indexops.at(x)[np.asarray(2) : np.asarray(11) : 3].get(), expected)


@pytest.mark.parametrize("bound", [True, 1.0, "a"], ids=repr)
def test_slice_bounds_without_index_are_errors(xp, bound):
    with pytest.raises(indexops.IndexOpsTypeError, match="slices of ints, None or integers"):
        indexops.at(xp.arange(5))[bound:].get()


@pytest.mark.backends(lambda backend: not backend.traced)  # jit: no array in a static slice
@pytest.mark.parametrize("bound", ["size-1 array", "0-d bool", "NumPy size-1"])
def test_slice_bounds_of_other_arrays_are_errors_as_in_numpy(xp, bound):
    """NumPy takes 0-d integer arrays only; torch's and Dask's ``__index__`` took more."""
    value = {
        "size-1 array": xp.asarray([1]),
        "0-d bool": xp.asarray(True),
        "NumPy size-1": np.asarray([1]),
    }[bound]
    with pytest.raises(indexops.IndexOpsTypeError, match="slices of ints, None or integers"):
        indexops.At(xp.arange(5))[value:].get()  # unwrapped: Dask may compute the bound


class Position(tuple):
    """A tuple subclass, which NumPy reads as the tuple of its items."""


class Integer:
    """An object with ``__index__``, which NumPy takes as an int."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.mark.backends(lambda backend: backend.library != "jax")  # parsing: the same on all
def test_tuple_subclasses_ranges_and_index_objects_as_numpy(xp):
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    for idx in (Position((1, 2)), Position((-1,)), (Integer(1), Integer(-2)), range(3, 0, -2)):
        check_against_numpy(xp, x, idx, idx)
    check_against_numpy(xp, x, (slice(Integer(1), Integer(4)), Integer(0)), (slice(1, 4), 0))
    with pytest.raises(indexops.IndexOpsTypeError, match="ints only or of bools only"):
        indexops.at(xp.asarray(x))[[Integer(1)]].get()  # NumPy refuses it as well


@pytest.mark.backends(lambda backend: backend is not Backend.JAX)  # jax_jit: the same code
@pytest.mark.parametrize("method", ["set", "add"])
def test_y_with_leading_dims_of_size_one_as_numpy(xp, method):
    """NumPy's assignment drops them: ``x[:2] = y`` with y of shape (1, 1, 2, 5)."""
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    y = np.arange(10, dtype=np.float64).reshape(1, 1, 2, 5)
    expected = x.copy()
    if method == "set":
        expected[[2, 0]] = y
    else:
        expected[[2, 0]] = expected[[2, 0]] + y
    got = getattr(indexops.at(from_numpy(xp, x))[xp.asarray([2, 0])], method)(from_numpy(xp, y))
    assert_same(got, expected)
    with pytest.raises(indexops.IndexOpsValueError, match=r"broadcasts to x\[idx\]'s \(2, 5\)"):
        indexops.at(from_numpy(xp, x))[:2].set(from_numpy(xp, np.ones((2, 1, 2, 5))))


@pytest.mark.backends(lambda backend: backend is not Backend.JAX)  # jax_jit: the same code
@pytest.mark.parametrize(
    "shape",
    [(5, 0, *(2,) * 8), (2, *(1,) * 32)],  # empty of 10 dims; 33 dims, 34 with None
    ids=["empty-10-dims", "33-dims"],
)
def test_many_dims_as_numpy(xp, backend, shape):
    """Dask's automatic chunks divided by zero for empty arrays of 10 dims or more, and
    its rechunk refused more than 32 dims."""
    if backend is Backend.DASK:  # (the namespace's own creation rechunks: not here)
        import dask.array as da

        def make(a: np.ndarray) -> Any:
            return da.from_array(a, chunks=halves(a.shape))
    else:

        def make(a: np.ndarray) -> Any:
            return from_numpy(xp, a)

    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    for idx in ((None,), (np.array([1, 0]), None)):
        key = tuple(make(i) if isinstance(i, np.ndarray) else i for i in idx)
        expected = x[idx]
        assert_same(indexops.at(make(x))[key].get(), expected)
        y = np.arange(expected.size, dtype=np.float64).reshape(expected.shape)
        written = x.copy()
        written[idx] = y
        assert_same(indexops.at(make(x))[key].set(make(y)), written)
        written[idx] = -1.0  # a scalar: broadcast in one chunk, then split as x is
        assert_same(indexops.at(make(x))[key].set(-1.0), written)


@pytest.mark.parametrize("scalar", [np.float64(3.0), np.int8(-2), np.bool_(True)], ids=repr)
def test_numpy_scalar_x_is_a_zero_d_array(scalar):
    """As array-api-extra: a NumPy scalar is the 0-d array of its value."""
    expected = np.asarray(scalar)
    assert_same(indexops.at(scalar)[()].get(), expected)
    assert_same(indexops.at(scalar)[...].set(np.asarray(scalar)), expected)
    assert_same(indexops.at(scalar)[None].get(), expected[None])


@pytest.mark.backends("dask")
def test_dask_chunk_that_is_a_numpy_scalar():
    """array-api-extra's gh-134: ``da.zeros(1)[0]``'s chunk is a NumPy scalar."""
    import dask.array as da

    x = da.zeros(1)[0]
    assert_same(indexops.at(x)[()].set(2.0).compute(), np.asarray(2.0))
    assert_same(indexops.at(x)[...].add(3.0).compute(), np.asarray(3.0))
    assert_same(indexops.at(x)[()].get().compute(), np.asarray(0.0))


@pytest.mark.backends("dask")
@pytest.mark.parametrize("name", ["1-D", "2-D", "1-D then uint8 array"])
def test_dask_x_with_numpy_masks(name):
    import dask.array as da

    x = np.arange(24.0).reshape(4, 6)
    idx = {
        "1-D": (np.array([True, False, True, True]),),
        "2-D": (x % 5 < 2,),
        "1-D then uint8 array": (np.array([True, False, False, True]), np.array([5, 0], np.uint8)),
    }[name]
    chunked = da.from_array(x, chunks=(3, 4))
    assert_same(indexops.at(chunked)[idx].get().compute(), x[idx])
    expected = x.copy()
    expected[idx] += 1.0
    assert_same(indexops.at(chunked)[idx].add(1.0).compute(), expected)


TORCH_DEFINED = ["True", "False", "True, 0, False", "..., True", "1, True, [2, 0]"]


@pytest.mark.backends("torch")
@pytest.mark.parametrize("name", TORCH_DEFINED)
def test_bools_as_torch_indexing(name):
    """The expressions where torch's own indexing defines a result agree with it."""
    import torch

    idx = BOOL_EXPRESSIONS[name]
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert torch.equal(indexops.at(x)[idx].get(), x[idx])
    assert torch.equal(indexops.at(x)[torch.tensor(True)].get(), x[torch.tensor(True)])


@pytest.mark.backends("jax")
@pytest.mark.parametrize(
    "name",
    [n for n in BOOL_EXPRESSIONS if n not in ("np.True_, -1", "None, False, :", "empty list mask")],
)
def test_bools_as_jax_indexing(name):
    """JAX's own indexing agrees where it defines the expression like NumPy (no np.bool_
    scalar; ``x[None, False, :]`` has shape (1, 0, 1, 3, 4) in JAX 0.10, NumPy's is
    (1, 0, 2, 3, 4); ``jnp.asarray([[]])`` is float32, so no empty list)."""
    import jax.numpy as jnp

    idx = BOOL_EXPRESSIONS[name]
    x = jnp.arange(24.0).reshape(2, 3, 4)
    key = tuple(jnp.asarray(i) if isinstance(i, (list, np.ndarray)) else i for i in idx)
    assert (indexops.at(x)[key].get() == x[key]).all()
    assert indexops.at(x)[key].get().shape == x[key].shape


# -- out-of-range values: the modes ------------------------------------------------------------


@st.composite
def out_of_range_cases(draw: Any) -> tuple[tuple[int, int], np.ndarray, int]:
    """x of shape [n, m], index values from far below -n to far above n, and the axis."""
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    axis = draw(st.integers(0, 1))
    n = shape[axis]
    count = draw(st.integers(0, 6))
    values = draw(st.lists(st.integers(-2 * n - 1, 2 * n), min_size=count, max_size=count))
    return shape, np.asarray(values, dtype=np.int64), axis


def wrapped(values: np.ndarray, n: int) -> np.ndarray:
    """Negative values counted from the end (still out of range below -n)."""
    return np.where(values < 0, values + n, values)


@DRAWN
@given(case=out_of_range_cases(), data=st.data())
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_get_modes(xp, mode, case, data):
    shape, values, axis = case
    n = shape[axis]
    x = values_of(data.draw, shape, "float64")
    if mode == "promise_in_bounds":
        values = values[(values >= -n) & (values < n)]  # the caller keeps the promise
    key = (slice(None),) * axis + (from_numpy(xp, values),)
    got = indexops.at(from_numpy(xp, x))[key].get(mode=mode, fill_value=-1.0)
    positions = wrapped(values, n)
    expected = np.moveaxis(x, axis, 0)[np.clip(positions, 0, n - 1)]
    if mode == "fill":
        expected[(positions < 0) | (positions >= n)] = -1.0
    assert_same(got, np.moveaxis(expected, 0, axis))


@DRAWN
@given(case=out_of_range_cases(), data=st.data())
@pytest.mark.parametrize("mode", ["drop", "clip", "fill"])
def test_update_modes(xp, mode, case, data):
    shape, values, axis = case
    n = shape[axis]
    x = values_of(data.draw, shape, "int64")
    y = values_of(data.draw, (values.size,), "int64")
    positions = wrapped(values, n)
    if mode == "clip":
        positions = np.clip(positions, 0, n - 1)
    expected = np.moveaxis(x.copy(), axis, 0)
    for p, v in zip(positions.tolist(), y.tolist()):
        if 0 <= p < n:  # "drop" and JAX's name for it, "fill"
            expected[p] += v
    if axis == 0:  # x[values] is [count, m]: one y per row
        key, y_shaped = (from_numpy(xp, values),), y[:, None]
    else:  # x[:, values] is [n, count]
        key, y_shaped = (slice(None), from_numpy(xp, values)), y
    got = indexops.at(from_numpy(xp, x), key).add(from_numpy(xp, y_shaped), mode=mode)
    assert_same(got, np.moveaxis(expected, 0, axis))


@pytest.mark.parametrize("library", ["numpy", "jax without x64"])
def test_list_ints_beyond_the_index_dtype_follow_the_mode(library):
    """A list's ints beyond the index dtype (2**70 for int64; 2**31 for JAX's int32
    without x64) lie outside every dim as their bound does, and each mode treats them so:
    clipped, filled or dropped (JAX raised its own OverflowError)."""
    far = 2**70 if library == "numpy" else 2**31
    if library == "numpy":
        xp, restore = np, contextlib.nullcontext()
    else:
        jax = pytest.importorskip("jax")
        xp, previous = jax.numpy, jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", False)
        restore = contextlib.ExitStack()
        restore.callback(jax.config.update, "jax_enable_x64", previous)
    with restore:
        x = xp.arange(6.0)
        for rows, clipped in (([1, far], [1.0, 5.0]), ([1, -far], [1.0, 0.0])):
            np.testing.assert_array_equal(indexops.at(x)[rows].get(), clipped)
            np.testing.assert_array_equal(indexops.at(x)[rows].get(mode="fill"), [1.0, np.nan])
            added = indexops.at(x)[rows].add(1.0)
            np.testing.assert_array_equal(added, [0.0, 2.0, 2.0, 3.0, 4.0, 5.0])
            clip_added = np.arange(6.0)
            clip_added[[1, 5 if clipped[1] == 5.0 else 0]] += 1
            np.testing.assert_array_equal(indexops.at(x)[rows].add(1.0, mode="clip"), clip_added)


def test_default_modes_are_jax_ones(xp):
    x = xp.asarray([0.0, 1.0, 2.0], dtype=xp.float64)
    far = xp.asarray([5, -7])
    assert_same(indexops.at(x)[far].get(), np.array([2.0, 0.0]))  # clipped
    assert_same(indexops.at(x)[far].set(9.0), np.array([0.0, 1.0, 2.0]))  # dropped


def test_modes_as_jax_lax_members_and_jax_names():
    """``at`` takes ``jax.lax.GatherScatterMode``'s members as JAX's ``.at`` does (its
    ``FILL_OR_DROP`` a fill for ``get``, a drop for the updates), with JAX's results; an
    unknown mode's error lists every name ``at`` takes."""
    jnp = pytest.importorskip("jax.numpy")
    from jax import lax

    x, rows = jnp.arange(4.0), jnp.asarray([1, 9, -2])
    for member in lax.GatherScatterMode:
        if member.name == "ONE_HOT":  # (JAX's own .at refuses it too)
            continue
        if member.name != "PROMISE_IN_BOUNDS":
            got = indexops.at(x)[rows].get(mode=member, fill_value=-1.0)
            np.testing.assert_array_equal(got, x.at[rows].get(mode=member, fill_value=-1.0))
            added = indexops.at(x)[rows].add(1.0, mode=member)
            np.testing.assert_array_equal(added, x.at[rows].add(1.0, mode=member))
    with pytest.raises(indexops.IndexOpsValueError) as get_error:
        indexops.at(x)[rows].get(mode="wrap")
    assert "('clip', 'fill', 'promise_in_bounds', 'drop')" in str(get_error.value)
    with pytest.raises(indexops.IndexOpsValueError) as add_error:
        indexops.at(x)[rows].add(1.0, mode="wrap")
    assert "'promise_in_bounds', 'fill') or a jax.lax.GatherScatterMode" in str(add_error.value)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max", "apply"])
def test_updates_into_a_zero_size_x_are_dropped(xp, method):
    """No element to write (a segment reduction of a graph without edges): every update
    is dropped, as NumPy's ufuncs leave an empty array (torch raised for a 1-D x: its
    element scatter got the indices clamped into [0, -1]; row writes are
    test_scatter.py's ZERO_SIZE_INPUTS)."""
    x = xp.zeros((0,), dtype=xp.float32)
    y = xp.ones((2,), dtype=xp.float32)
    args = (twice_plus, y) if method == "apply" else (y,)
    for mode in ("drop", "clip"):
        result = getattr(indexops.at(x)[xp.asarray([0, 1])], method)(*args, mode=mode)
        assert_same(result, np.zeros((0,), dtype=np.float32))


# -- copies -----------------------------------------------------------------------------------


def test_copy_false_writes_in_place_or_raises(xp, backend):
    x = xp.zeros((3, 2), dtype=xp.float64)
    if backend.writable:
        result = indexops.at(x)[xp.asarray([2, 2]), 1].add(1.0, copy=False)
        assert result is x
        assert_same(x, np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 2.0]]))
    else:
        with pytest.raises(indexops.IndexOpsValueError, match="copy=False"):
            indexops.at(x)[0].set(1.0, copy=False)
        assert_same(x, np.zeros((3, 2)))


def test_copy_true_leaves_x_untouched(xp):
    x = xp.zeros((3,), dtype=xp.float64)
    assert_same(indexops.at(x)[1].set(5.0), np.array([0.0, 5.0, 0.0]))
    assert_same(x, np.zeros(3))


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("idx", "error", "message"),
    [
        (1.5, indexops.IndexOpsTypeError, "idx=1.5"),
        ((0, slice(0.5, 2)), indexops.IndexOpsTypeError, "slices of ints"),
        ("a", indexops.IndexOpsTypeError, "idx="),
        ((0, 0, 0), indexops.IndexOpsValueError, "at most 2 indices"),
        ((Ellipsis, 0, Ellipsis), indexops.IndexOpsValueError, "at most one"),
        ((3, 0), indexops.IndexOpsValueError, r"must be in \[-3, 3\)"),
        ((0, -5), indexops.IndexOpsValueError, r"must be in \[-4, 4\)"),
        (slice(None, None, 0), indexops.IndexOpsValueError, "other than 0"),
        ([1, 2.0], indexops.IndexOpsTypeError, "ints only or of bools only"),
        ([[0, 1], [2]], indexops.IndexOpsValueError, "equal-length rows"),
        (([0, 1], [0, 1, 2]), indexops.IndexOpsValueError, "broadcast together"),
    ],
    ids=str,
)
def test_static_index_errors(xp, idx, error, message):
    x = xp.zeros((3, 4), dtype=xp.float64)
    with pytest.raises(error, match=message):
        indexops.at(x)[idx].get()
    with pytest.raises(error, match=message):
        indexops.at(x, idx).add(1.0, copy=None)
    assert_same(x, np.zeros((3, 4)))


def test_array_errors(xp, backend):
    x = xp.zeros((3, 4), dtype=xp.float64)
    with pytest.raises(indexops.IndexOpsTypeError, match="an array of dtype"):
        indexops.at(x)[xp.asarray([0.0, 1.0])].get()
    if backend.reads_boolean_indices:
        with pytest.raises(indexops.IndexOpsValueError, match=r"the shape of the dims .*\(3,\)"):
            indexops.at(x)[xp.asarray([True, False])].get()
        with pytest.raises(indexops.IndexOpsValueError, match=r"\(4,\)"):
            indexops.at(x)[:, xp.asarray([True, False, True])].set(1.0)
        with pytest.raises(indexops.IndexOpsValueError, match="a dim of size 0 matches"):
            indexops.at(x)[xp.asarray([[False], [False]])].get()  # (2, 1): neither is 0
    else:  # under jax.jit (and on meta tensors) a boolean array's values are unknown
        with pytest.raises(indexops.IndexOpsTypeError, match="boolean arrays whose values"):
            indexops.at(x)[xp.asarray([True, False, True])].get()


@pytest.mark.backends(lambda backend: backend.library != "numpy")  # NumPy's are its own
def test_index_arrays_of_another_library(xp, backend):
    if backend.library == "dask":  # as in every op: NumPy indices go with a Dask operand
        got = indexops.at(xp.arange(3.0))[np.array([2, 0])].get()
        assert_same(got, np.array([2.0, 0.0]))
        return
    with pytest.raises(indexops.IndexOpsTypeError, match="arrays of one library"):
        indexops.at(xp.zeros(3))[np.array([0, 1])].get()


def test_update_errors(xp):
    x = xp.zeros((3, 4), dtype=xp.int32)
    with pytest.raises(indexops.IndexOpsTypeError, match=r"y.dtype='?.*float64.* same_kind"):
        indexops.at(x)[0].set(xp.ones(4, dtype=xp.float64))
    with pytest.raises(indexops.IndexOpsValueError, match=r"broadcasts to x\[idx\]'s \(4,\)"):
        indexops.at(x)[0].set(xp.ones(3, dtype=xp.int32))
    with pytest.raises(indexops.IndexOpsTypeError, match=r"y=1.5 .* an int in \[-2147483648"):
        indexops.at(x)[0].set(1.5)
    with pytest.raises(indexops.IndexOpsTypeError, match=r"y=300 .* an int in \[0, 255\]"):
        indexops.at(xp.zeros(3, dtype=xp.uint8))[0].set(300)
    with pytest.raises(indexops.IndexOpsTypeError, match="real floating"):
        indexops.at(x)[0].divide(2)
    with pytest.raises(indexops.IndexOpsTypeError, match="integral"):
        indexops.at(xp.zeros(3, dtype=xp.bool))[0].add(True)
    with pytest.raises(indexops.IndexOpsValueError, match="mode="):
        indexops.at(x)[0].add(1, mode="wrap")
    with pytest.raises(indexops.IndexOpsValueError, match="mode="):
        indexops.at(x)[0].get(mode="drop_window")
    with pytest.raises(indexops.IndexOpsTypeError, match="callable"):
        indexops.at(x)[0].apply(None, 1)
    with pytest.raises(indexops.IndexOpsTypeError, match="an index"):
        indexops.at(x).get()
    with pytest.raises(indexops.IndexOpsTypeError, match="one index"):
        indexops.at(x)[0][1]
    assert_same(x, np.zeros((3, 4), dtype=np.int32))


@pytest.mark.backends(lambda backend: backend is not Backend.JAX)  # jax_jit: the same
@pytest.mark.parametrize("returns", ["another shape", "no array", "another library"])
def test_apply_must_return_an_array_of_the_shape_of_old(xp, backend, returns):
    """A named error instead of the library's own (or NumPy's silent broadcast): for a
    result of another shape, not an array, or an array of another library (NumPy's, or
    array-api-strict's where x is NumPy's or Dask's, which computes with NumPy's)."""

    def of_another_library(old, new):  # (of old's shape: no values read, traced too)
        if isinstance(old, np.ndarray) or backend is Backend.DASK:
            import array_api_strict

            return array_api_strict.zeros(tuple(old.shape))
        return np.zeros(tuple(old.shape))

    f = {
        "another shape": lambda old, new: old[None, ...],
        "no array": lambda old, new: None,
        "another library": of_another_library,
    }[returns]
    error = indexops.IndexOpsValueError if returns == "another shape" else TypeError
    x = xp.zeros((4, 3), dtype=xp.float64)
    for idx in (xp.asarray([0, 1, 1]), slice(1, 3)):
        with pytest.raises(error, match=r"at.apply: f=.* is not allowed: a function f\(old, new\)"):
            result = indexops.at(x)[idx].apply(f, 1.0, copy=None)
            if backend.has_values:
                to_numpy(result)  # Dask: raised when computed
    assert_same(x, np.zeros((4, 3)))


@pytest.mark.backends(lambda backend: backend is not Backend.JAX)  # jax_jit: the same
@pytest.mark.parametrize("form", ["Python int", "array"])
def test_integer_power_by_a_negative_exponent_is_a_named_error(xp, backend, form):
    """NumPy raised its own ValueError, torch and JAX wrote a wrong value (2 ** -1 as 0,
    or -2**63): a named error where the exponent is known on the host, before any write."""
    x = xp.asarray([2, 3, 4], dtype=xp.int32)
    y = -1 if form == "Python int" else xp.asarray([2, -1], dtype=xp.int32)
    message = r"at.power: y.* is not allowed: exponents of 0 or more for an integer x"
    # (torch_device runs at's power as torch on the CPU: its passes are counted there)
    if form == "Python int" or backend.values_on_host or backend is Backend.TORCH_DEVICE:
        for idx in (slice(0, 2), xp.asarray([0, 1])):
            with pytest.raises(indexops.IndexOpsValueError, match=message):
                indexops.at(x)[idx].power(y, copy=None)
        assert_same(x, np.array([2, 3, 4], dtype=np.int32))
    elif backend is Backend.DASK:
        result = indexops.at(x)[xp.asarray([0, 1])].power(y)
        with pytest.raises(indexops.IndexOpsValueError, match=message):
            to_numpy(result)
    if backend is Backend.TORCH and form == "array":  # on a GPU or compiled: an assert
        with device_paths(), pytest.raises(RuntimeError, match="y has a negative entry"):
            indexops.at(x)[xp.asarray([0, 1])].power(y)
    exponents = xp.abs(y) if form == "array" else 2
    expected = np.array([2, 9, 4] if form == "array" else [2, 9, 16], dtype=np.int32)
    assert_same(indexops.at(x)[xp.asarray([1, 2])].power(exponents), expected)


# -- y of another dtype: NumPy's same_kind casts ----------------------------------------------

# (y's dtype, x's dtype, y's values): cast to x's dtype as NumPy's x[idx] = y does
SAME_KIND = [
    ("float32", "float64", [1.5, -2.25]),
    ("float64", "float32", [1.5, 3.0e38]),  # narrowed, as NumPy's same_kind allows
    ("int64", "float64", [3, -4]),
    ("uint8", "int16", [255, 7]),
    ("int64", "int8", [300, -129]),  # wraps around, as NumPy's cast
    ("bool", "int32", [True, False]),
    ("int32", "complex128", [5, -6]),
]
LOSSY_KINDS = [("float64", "int64"), ("complex64", "float32"), ("int8", "uint8"), ("int8", "bool")]


@pytest.mark.parametrize(("y_dtype", "x_dtype", "values"), SAME_KIND, ids=str)
def test_y_of_another_dtype_of_the_same_kind_is_cast(xp, y_dtype, x_dtype, values):
    x = np.zeros((3, 2), dtype=x_dtype)
    y = np.asarray(values, dtype=y_dtype)
    expected = x.copy()
    expected[[2, 0]] += y.astype(x_dtype)[:, None]
    got = indexops.at(from_numpy(xp, x))[xp.asarray([2, 0])].add(from_numpy(xp, y)[:, None])
    assert_same(got, expected)
    expected[1, :] = y.astype(x_dtype)
    got = indexops.at(from_numpy(xp, expected), (1, slice(None))).set(from_numpy(xp, y))
    assert_same(got, expected)


@pytest.mark.parametrize(("y_dtype", "x_dtype"), LOSSY_KINDS, ids=str)
def test_y_of_a_lossy_kind_is_an_error(xp, y_dtype, x_dtype):
    x = xp.zeros((3,), dtype=getattr(xp, x_dtype))
    y = xp.ones((2,), dtype=getattr(xp, y_dtype))
    for method in ("set", "add") if x_dtype != "bool" else ("set",):
        with pytest.raises(indexops.IndexOpsTypeError, match=rf"y.dtype='?.*{y_dtype}.*same_kind"):
            getattr(indexops.at(x)[:2], method)(y, copy=None)
    assert_same(x, np.zeros(3, dtype=x_dtype))


@pytest.mark.parametrize("x_dtype", ["uint8", "uint16", "uint32"])
def test_weakly_typed_jax_ints_go_into_unsigned_x(x_dtype):
    """A Python int as JAX makes it an array (weakly typed int32), eagerly and traced under
    jit, goes into unsigned integers as JAX's own ``.at`` casts it (without its warning:
    -1 wraps); an int32 array of JAX's (strongly typed) and a weakly typed float stay
    errors, as NumPy's same_kind and JAX's warning have them."""
    import warnings

    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = jnp.zeros(3, dtype=x_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (JAX's FutureWarning of an unsafe cast)
        for method in ("set", "add"):
            ours = jax.jit(lambda x, y, m=method: getattr(indexops.at(x)[0], m)(y))
            theirs = jax.jit(lambda x, y, m=method: getattr(x.at[0], m)(y))
            for y in (3, -1):
                np.testing.assert_array_equal(ours(x, y), theirs(x, y))
            weak = jnp.asarray(-1)
            assert weak.weak_type
            np.testing.assert_array_equal(
                getattr(indexops.at(x)[0], method)(weak), getattr(x.at[0], method)(weak)
            )
    for y in (jnp.int32(3), jnp.asarray(1.5)):
        with pytest.raises(indexops.IndexOpsTypeError, match=r"y\.dtype"):
            indexops.at(x if y.dtype == jnp.int32 else jnp.zeros(3, jnp.int8))[0].set(y)


@pytest.mark.parametrize(
    ("x_dtype", "y", "expected"),
    [("int64", True, 1), ("float32", 3, 3.0), ("complex64", 2.5, 2.5), ("uint8", 255, 255)],
    ids=str,
)
def test_python_scalars_that_x_holds(xp, x_dtype, y, expected):
    x = np.zeros(2, dtype=x_dtype)
    assert_same(indexops.at(from_numpy(xp, x))[1].set(y), np.array([0, expected], x_dtype))


@pytest.mark.parametrize(
    ("x_dtype", "y", "allowed"),
    [
        ("int64", 1.5, "an int in"),
        ("uint8", -1, r"an int in \[0, 255\]"),
        ("int8", 128, r"an int in \[-128, 127\]"),
        ("float64", 1j, "an int or real number"),
        ("float32", 1e300, "an int or real number that .*float32 holds"),
        ("bool", 1, "True or False"),
    ],
    ids=str,
)
def test_python_scalars_that_x_does_not_hold_are_errors(xp, x_dtype, y, allowed):
    x = xp.zeros(2, dtype=getattr(xp, x_dtype))
    with pytest.raises(
        indexops.IndexOpsTypeError, match=rf"y={re.escape(repr(y))} is not allowed: {allowed}"
    ):
        indexops.at(x)[0].set(y, copy=None)
    assert_same(x, np.zeros(2, dtype=x_dtype))


# -- against jax.numpy's .at -------------------------------------------------------------------


@pytest.mark.backends("jax")
@given(data=st.data())
@pytest.mark.parametrize("method", ["get", "set", "add", "subtract", "multiply", "min", "max"])
def test_matches_jax_at_on_unique_positions(method, data):
    import jax

    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    case = data.draw(index_cases(python_bools=False))  # JAX's differ with None (see above)
    assume(method == "get" or unique_positions(case))
    x, y = draw_update(data, case, data.draw(st.sampled_from(VALUE_DTYPES)), method)
    jax_idx = tuple(jnp.asarray(i) if isinstance(i, (np.ndarray, list)) else i for i in case.idx)
    reference = jnp.asarray(x).at[jax_idx]
    ours = indexops.at(x)[case.idx]
    if method == "get":
        expected, got = reference.get(), ours.get()
    else:
        y_jax = jnp.asarray(y) if isinstance(y, np.ndarray) else y
        with np.errstate(over="ignore"):
            expected, got = getattr(reference, method)(y_jax), getattr(ours, method)(y)
    np.testing.assert_array_equal(got, np.asarray(expected))
    assert got.dtype == np.asarray(expected).dtype


# -- the lowering -----------------------------------------------------------------------------


def test_one_core_call_per_expression(monkeypatch):
    """Each method makes exactly one gather or scatter call; the plan is cached."""
    from indexops._ops import at as _at
    from indexops._ops import numpy_index as _indexing

    calls: list[str] = []
    for name in ("gather", "scatter"):
        real = getattr(_at, name)
        monkeypatch.setattr(
            _at, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k)
        )
    x = np.arange(24.0).reshape(2, 3, 4)
    idx = (np.array([1, 0]), None, slice(None, None, -2), [3, 3])
    assert_same(indexops.at(x)[idx].get(), x[idx])
    expected = x.copy()
    expected[idx] *= 2.0
    assert_same(indexops.at(x)[idx].multiply(2.0), expected)
    assert calls == ["gather", "scatter"]
    parts = (_indexing.ArrayPart((2,), True), None, _indexing.SlicePart(None, None, -2))
    first = _indexing.index_plan("at.get", (2, 3, 4), parts)
    assert _indexing.index_plan("at.get", (2, 3, 4), parts) is first


def test_backend_enum_reads_boolean_indices():
    assert Backend.NUMPY.reads_boolean_indices
    assert not Backend.JAX_JIT.reads_boolean_indices
    assert not Backend.TORCH_META.reads_boolean_indices


@pytest.mark.backends("numpy")
@pytest.mark.parametrize("method", list(STEPS))
@pytest.mark.parametrize("columns", [15, 16, 32])  # rows of 30, 32 and 64 elements
@pytest.mark.parametrize("copy", [True, False])
def test_a_mask_of_wide_rows_updates_as_numpy_indexing(monkeypatch, method, columns, copy):
    """A boolean mask over the leading dim whose rows hold 32 elements or more updates by
    NumPy's own ``x[mask] = f(x[mask], y)`` (each row once; min and max keep the scatter,
    for IEEE-754's signed zeros); narrower rows scatter the mask's positions. Both give the
    updates applied one by one, in x's dtype, y cast within its kind, and y viewing x
    read before the write."""
    from indexops._ops import at as at_module

    own = []
    write_basic = at_module._write_basic
    monkeypatch.setattr(at_module, "_write_basic", lambda *a: own.append(a) or write_basic(*a))
    low, high = VALUE_RANGES.get(method, (-5, 5))
    x = np.random.default_rng(columns).integers(low, high, size=(6, 2, columns)) * 1.0
    mask = np.array([True, False, True, True, False, True])
    args = {"apply": (twice_plus,)}.get(method, ())
    for y, target in ((x[[1, 4, 0, 2]].astype(np.float32), x.copy()), (None, x.copy())):
        if y is None:  # rows 1-4 of the array the call writes
            y = target[1:5]
        expected = target.copy()
        for row, value in zip(np.flatnonzero(mask), y.astype(np.float64)):
            expected[row] = STEPS[method](expected[row], value)
        got = getattr(indexops.at(target)[mask], method)(*args, y, copy=copy)
        assert_same(got, expected)
        assert (got is target) == (not copy)
    assert bool(own) == (2 * columns >= 32 and method not in ("min", "max"))


@pytest.mark.backends("numpy")
def test_a_mask_of_wide_rows_in_a_big_array_scatters(monkeypatch):
    """Above ROW_MASK_MAX_ELEMENTS the mask's positions are scattered (faster there)."""
    from indexops._ops import at as at_module

    own = []
    write_basic = at_module._write_basic
    monkeypatch.setattr(at_module, "_write_basic", lambda *a: own.append(a) or write_basic(*a))
    x = np.arange(6 * 64.0).reshape(6, 64)
    mask = np.array([True, False, True, True, False, True])
    expected = x.copy()
    expected[mask] += 1.0
    monkeypatch.setattr(at_module, "ROW_MASK_MAX_ELEMENTS", x.size - 1)
    assert_same(indexops.at(x)[mask].add(1.0), expected)
    assert own == []
    monkeypatch.setattr(at_module, "ROW_MASK_MAX_ELEMENTS", x.size)
    assert_same(indexops.at(x)[mask].add(1.0), expected)
    assert len(own) == 1


@pytest.mark.backends(lambda backend: backend.values_on_host)
def test_one_array_of_rows_in_range_reads_by_the_library_s_own_indexing(xp, backend, monkeypatch):
    """``at(x)[rows].get()`` with int64 rows that the host finds in range reads ``x[rows]``
    (a new array), whatever the mode but ``"fill"``, whose ``fill_value`` is checked on
    every call; rows out of range, other dtypes (torch reads uint8 as a mask) and the
    first call of a signature take the core's gather; negative rows in range are read
    so too, counted from the end (NumPy's take checks each row; torch's indexing reads
    rows a list showed in ``[-n, n)``). The first and the repeated calls give NumPy's
    ``x[rows]`` (clipped where out of range)."""
    from indexops._ops import at as at_module

    own: list[bool] = []
    read_rows = at_module._read_rows

    def spy(*args: Any) -> Any:
        found = read_rows(*args)
        own.append(found is not None)
        return found

    monkeypatch.setattr(at_module, "_read_rows", spy)
    table = np.arange(7.0 * 3).reshape(7, 3)
    x = from_numpy(xp, table)
    cases = [  # rows, mode, whether the library's own indexing reads them
        (np.array([[6, 0], [2, 2]]), None, True),
        (np.array([6, 0, 2]), "promise_in_bounds", True),
        (np.array([6, 0, 2]), "clip", True),
        (np.array([6, 0, 2]), "fill", False),
        (np.array([6, -1, -7]), None, True),
        (np.array([6, -8, 2]), None, False),
        (np.array([6, 9, 2]), None, False),
        (np.array([6, 0, 2], np.uint8), None, False),
        (np.array([6, 0, 2], np.int32), None, False),
    ]
    for rows, mode, by_own_indexing in cases:
        expected = table[np.clip(np.where(rows < 0, rows + 7, rows), 0, 6)]
        for _ in range(2):  # the first call of a signature, then a repeated one
            own.clear()
            got = indexops.at(x)[from_numpy(xp, rows)].get(mode=mode)
            assert_same(got, expected)
            assert not np.shares_memory(to_numpy(got), to_numpy(x))
            assert any(own) == by_own_indexing, (rows, mode)
    with pytest.raises(indexops.IndexOpsTypeError, match=r"^at\.get: fill_value='a'"):
        indexops.at(x)[from_numpy(xp, np.array([6, 0]))].get(mode="fill", fill_value="a")


def test_at_get_names_itself_in_errors_of_its_fill_value(xp):
    """``at(x)[idx].get(mode="fill", fill_value=v)`` checks ``v`` against ``x``'s dtype
    before any read and names ``at.get`` in the error, whatever the index's form (rows,
    the ``take_along_axis`` idiom, a slice): not the ``gather`` it runs."""
    flags = from_numpy(xp, np.ones((2, 3), dtype=bool))
    counting, columns = np.arange(2)[:, None], np.array([[0, 5], [1, 1]])
    for key in (
        (from_numpy(xp, counting), from_numpy(xp, columns)),
        from_numpy(xp, np.array([1, 7])),
        slice(0, 2),
    ):
        with pytest.raises(indexops.IndexOpsTypeError, match=r"^at\.get: fill_value=0 .*bool"):
            indexops.at(flags)[key].get(mode="fill", fill_value=0)
    small = from_numpy(xp, np.arange(4, dtype=np.int8))
    with pytest.raises(
        indexops.IndexOpsTypeError, match=r"^at\.get: fill_value=300 .*\[-128, 127\]"
    ):
        indexops.at(small)[from_numpy(xp, np.array([1, 9]))].get(mode="fill", fill_value=300)
    got = indexops.at(small)[from_numpy(xp, np.array([1, 9]))].get(mode="fill", fill_value=-5)
    assert_same(got, np.array([1, -5], dtype=np.int8))


@pytest.mark.parametrize("dtype", [">f8", "<i2", "bfloat16", "float8_e4m3fn", "bool"])
def test_numpy_checked_take_keeps_the_dtype_and_byte_order(dtype):
    """NumPy's checked take of ``at(x)[rows].get()`` (rows of the index dtype, negative
    ones from the end) gives ``x[rows]`` in x's dtype and byte order, a new array, on a
    read-only ``x`` too; a row outside leaves it to the gather (clipped)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    kind = getattr(ml_dtypes, dtype, None) or np.dtype(dtype)
    x = np.arange(5.0 * 2).reshape(5, 2).astype(kind)
    x.flags.writeable = False
    for rows, expected in (([4, -1, -5, 0], [4, 4, 0, 0]), ([1, 7, -9], [1, 4, 0])):
        got = indexops.at(x)[np.array(rows)].get()
        assert got.dtype == x.dtype and not np.shares_memory(got, x)
        np.testing.assert_array_equal(got.view(np.uint8), x[expected].view(np.uint8))


def test_numpy_checked_take_reads_nothing_where_values_are_not_on_the_host():
    """Under the ``device_paths`` hook (values not on the host: a device, tracing) the
    checked take, whose raise branches on the rows' values, declines before ``take``
    even for rows in range, and ``at.get`` takes the gather, with the same values."""
    from indexops._backends import backend_for

    x = np.arange(7.0 * 3).reshape(7, 3)
    rows = np.array([6, -1, 2])
    backend = backend_for("test", x=x)
    np.testing.assert_array_equal(backend.take_rows_checked(x, rows), x[rows])
    with device_paths():  # (the hook's backends are variants: asked for within it)
        assert backend_for("test", x=x).take_rows_checked(x, rows) is None
        for _ in range(2):  # the first call of a signature, then a repeated one
            np.testing.assert_array_equal(indexops.at(x)[rows].get(), x[rows])


def test_torch_reads_a_few_rows_counted_from_the_end_by_its_own_indexing():
    """torch: up to 16 rows on the CPU are read by torch's own indexing, negative ones
    counted from the end, with no gather: at once, or read as one list and found in
    ``[-n, n)`` first (``values_first``); a row outside, more rows or values not on the
    host (nothing read) are not, and ``at.get`` clips a row outside as before."""
    torch = pytest.importorskip("torch")
    from indexops._backends import backend_for

    x = torch.arange(7.0 * 3).reshape(7, 3)
    backend = backend_for("test", x=x)
    rows = torch.tensor([6, -1, 2, -7])
    for values_first in (False, True):
        assert torch.equal(backend.take_rows_checked(x, rows, values_first), x[rows])
        for outside in ([1, 7], [1, -8], [k % 7 for k in range(17)]):
            taken = backend.take_rows_checked(x, torch.tensor(outside), values_first)
            assert taken is None, (outside, values_first)
        with device_paths():
            assert backend_for("test", x=x).take_rows_checked(x, rows, values_first) is None
        empty = backend.take_rows_checked(x, torch.tensor([], dtype=torch.int64), values_first)
        assert empty is None or torch.equal(empty, x[:0])
    for asked, read in (([6, -1, 2, -7], [6, 6, 2, 0]), ([1, 9, -9], [1, 6, 0])):
        for _ in range(2):  # the first call of a signature, then a repeated one
            assert torch.equal(indexops.at(x)[torch.tensor(asked)].get(), x[read])


@pytest.mark.parametrize("index", ["rows", "elements"])
def test_torch_reads_its_values_first_once_a_read_of_the_signature_found_one_outside(
    index, monkeypatch
):
    """torch's own checked indexing raises slowly (17-20 us): the first read of a
    signature with an entry outside falls back to the general path (clipped, as before)
    and from then on that signature's reads find their values in range on the host
    first; another signature, and a signature whose reads were only traced by vmap,
    still read at once. Every read equals the clipped read."""
    torch = pytest.importorskip("torch")
    from indexops._backends._torch import TorchBackend

    name = "take_rows_checked" if index == "rows" else "take_elements"
    asked: list[bool] = []
    method = getattr(TorchBackend, name)

    def spy(self: Any, x: Any, idx: Any, values_first: bool = False) -> Any:
        asked.append(values_first)
        return method(self, x, idx, values_first)

    monkeypatch.setattr(TorchBackend, name, spy)
    x = torch.arange(9.0 * 4).reshape(9, 4)

    def key(values: list[int]) -> Any:
        if index == "rows":
            return torch.tensor(values)
        return torch.tensor(values), torch.tensor([v % 4 for v in values])

    def clipped(values: list[int]) -> Any:  # negative ones from the end, then clipped
        rows = [min(max(v + 9 if v < 0 else v, 0), 8) for v in values]
        return x[rows] if index == "rows" else x[rows, [v % 4 for v in values]]

    # index arrays that vmap batches keep their values from the host: nothing is set
    def read(*arrays: Any) -> Any:
        return indexops.at(x)[arrays[0] if index == "rows" else arrays].get()

    outside = key([1, 12, 3])
    batched = [a[None] for a in (outside if isinstance(outside, tuple) else (outside,))]
    assert torch.equal(torch.func.vmap(read)(*batched)[0], clipped([1, 12, 3]))
    asked.clear()
    calls = [[1, 2, 3], [1, 12, 3], [4, -1, 0], [0, 8, -9], [2, 2, 7]]
    for values in calls:
        assert torch.equal(indexops.at(x)[key(values)].get(), clipped(values)), values
    assert asked == [False, False, True, True, True]
    asked.clear()  # another signature (four entries): at once again
    assert torch.equal(indexops.at(x)[key([1, 2, 3, 4])].get(), clipped([1, 2, 3, 4]))
    assert asked == [False]


@pytest.mark.backends(lambda backend: backend.values_on_host)
def test_many_rows_in_range_read_by_the_backend_s_row_take(xp, backend, monkeypatch):
    """More rows than the list read covers (17 and more, 1-D or not) read by the
    backend's row take on repeat calls (faster there than the library's indexing), up
    to 16 by the indexing; on NumPy every size by its checked take (faster than
    indexing at every size): the same values as NumPy's ``x[rows]``, a new array."""
    from indexops._backends import backend_for

    table = np.arange(40.0 * 3).reshape(40, 3)
    x = from_numpy(xp, table)
    library = type(backend_for("test", x=x))
    taken: list[int] = []
    checked = backend.library == "numpy"
    name = "take_rows_checked" if checked else "take_rows"
    take_rows = getattr(library, name)

    def spy(self: Any, table: Any, rows: Any, *values_first: bool) -> Any:
        taken.append(math.prod(rows.shape))
        return take_rows(self, table, rows, *values_first)

    monkeypatch.setattr(library, name, spy)
    rng = np.random.default_rng(2)
    for rows, by_take in [
        (rng.integers(0, 40, 16), checked),
        (rng.integers(0, 40, 17), True),
        (rng.integers(0, 40, (3, 9)), True),
    ]:
        for _ in range(2):  # the first call of a signature, then a repeated one
            taken.clear()
            got = indexops.at(x)[from_numpy(xp, rows)].get()
            assert_same(got, table[rows])
            assert not np.shares_memory(to_numpy(got), to_numpy(x))
        assert (rows.size in taken) == by_take, rows.shape


@pytest.mark.backends("torch")
def test_many_rows_read_by_the_row_take_carry_the_gradient(xp):
    import torch

    x = torch.arange(40.0 * 3).reshape(40, 3).requires_grad_()
    rows = torch.tensor([3, 3, 39, 0] * 5)
    for _ in range(2):
        x.grad = None
        (indexops.at(x)[rows].get() * 2).sum().backward()
        expected = torch.zeros(40, 3).index_add_(0, rows, torch.full((20, 3), 2.0))
        assert torch.equal(x.grad, expected)


@pytest.mark.backends(lambda backend: backend.values_on_host)
def test_updates_of_rows_in_range_go_straight_to_the_row_writer_on_repeat_calls(
    xp, backend, monkeypatch
):
    """A repeated update at one int64 array of rows that the host finds in range writes
    them with the core's row writer (no start indices, no scatter executor), with every
    named combiner, duplicates one by one in order, ``y`` cast to x's dtype, a copy or
    ``x`` itself, and so are a few rows counting from the end once counted; rows out of
    range, other dtypes and callables take the core's scatter. First and repeated calls
    give the same result, with or without the writer."""
    from indexops._ops import at as at_module
    from indexops._plan import executors

    direct: list[bool] = []

    class Spy(at_module.RowWriter):  # the prepared row writer, each write of it counted
        __slots__ = ()

        def __call__(self, *args: Any, **options: Any) -> Any:
            direct.append(True)
            return super().__call__(*args, **options)

        def write_distinct(self, *args: Any) -> Any:  # (rows proven distinct: no __call__)
            written = super().write_distinct(*args)
            direct.append(written is not None)
            return written

    monkeypatch.setattr(executors, "_EXECUTORS", {})  # writers made from here on are spies
    monkeypatch.setattr(at_module, "RowWriter", Spy)
    table = np.arange(1.0, 7.0 * 3 + 1).reshape(7, 3)
    y = (np.arange(12.0) - 5.5).reshape(4, 3) / 4  # exact in float32, none zero
    cases = [  # rows, whether the row writer writes them
        (np.array([6, 0, 2, 5]), True),
        (np.array([[6, 2], [2, 6]]), True),  # repeated rows, applied in order
        (np.array([6, -1, 2, 5]), True),  # (row 6 twice, once counted from the end)
        (np.array([6, 7, 2, 5]), False),
        (np.array([6, 0, 2, 5], np.int32), False),
    ]
    for method in ("set", "add", "subtract", "multiply", "min", "max", "divide"):
        for rows, by_the_writer in cases:
            wrapped = np.where(rows < 0, rows + 7, rows).reshape(-1)
            expected = table.copy()
            for row, value in zip(wrapped, y):
                if row < 7:  # (the default mode drops the others)
                    expected[row] = STEPS[method](expected[row], value)
            # the first call, a repeated one, and one in place where x can be written
            for copy in (True, True, False if backend.writable else None):
                direct.clear()
                x = from_numpy(xp, table.copy())
                updates = from_numpy(xp, y.astype(np.float32).reshape(*rows.shape, 3))
                got = getattr(indexops.at(x)[from_numpy(xp, rows)], method)(updates, copy=copy)
                assert_same(got, expected)
                assert (got is x) == (copy is False)
                if copy is not False:
                    assert_same(x, table)
                assert any(direct) == (by_the_writer and method != "divide"), (method, rows)


@pytest.mark.backends(lambda backend: backend.values_on_host)
def test_repeated_updates_of_rows_in_range_keep_every_check(xp, backend):
    """The repeat path of rows in range checks what the first call checks, before
    anything is written: the dtype of x for the method (no min of complex numbers, no add
    of bools), y's shape and dtype, copy=False on an array that cannot be written."""
    rows = from_numpy(xp, np.array([2, 0]))
    complex_x = from_numpy(xp, np.ones((3, 2), np.complex128))
    indexops.at(complex_x)[rows].add(1.0)
    boolean = from_numpy(xp, np.zeros((3, 2), bool))
    indexops.at(boolean)[rows].set(True)
    x = from_numpy(xp, np.ones((3, 2)))
    indexops.at(x)[rows].set(2.0)
    for _ in range(2):
        complex_min = r"at\.min: x\.dtype='(torch\.)?complex128'"
        with pytest.raises(indexops.IndexOpsTypeError, match=complex_min):
            indexops.at(complex_x)[rows].min(1.0)
        with pytest.raises(indexops.IndexOpsTypeError, match=r"x\.dtype"):
            indexops.at(boolean)[rows].add(True)
        with pytest.raises(indexops.IndexOpsValueError, match=r"y\.shape"):
            indexops.at(x)[rows].set(from_numpy(xp, np.ones((3, 2))))
        with pytest.raises(indexops.IndexOpsTypeError, match=r"y\.dtype"):
            indexops.at(x)[rows].set(from_numpy(xp, np.ones((2, 2), np.complex64)))
    assert_same(complex_x, np.ones((3, 2), np.complex128))
    if not backend.writable:
        for _ in range(2):
            with pytest.raises(indexops.IndexOpsValueError, match="copy"):
                indexops.at(x)[rows].add(1.0, copy=False)
    assert_same(x, np.ones((3, 2)))


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_a_few_rows_counted_from_the_end_once_read(library):
    """The host's ``few_rows_from_end``: up to 16 rows in ``[-n, n)`` with each negative
    one counted from the end, in the rows' shape, and whether they are distinct once
    counted (-1 and n - 1 are the same row); ``None`` for a row outside or more rows."""
    from indexops._backends import backend_for

    torch = pytest.importorskip("torch") if library == "torch" else None

    def array(values: Any, dtype: str = "int64") -> Any:
        found = np.array(values, dtype=dtype)
        return found if torch is None else torch.from_numpy(found.astype(np.int64))

    backend = backend_for("test", x=array([0]))
    cases = [
        ([3, -17, 5, -64, 63], [3, 47, 5, 0, 63], True),
        ([3, -1, 63], [3, 63, 63], False),
        ([[2, -2], [-62, 1]], [[2, 62], [2, 1]], False),
        ([1, 2, 3], [1, 2, 3], True),
    ]
    dtypes = ["int64"] + ([">i8"] if torch is None else [])  # (NumPy's other byte order)
    for (asked, counted, distinct), dtype in [(c, d) for c in cases for d in dtypes]:
        rows, expected = array(asked, dtype), np.array(counted)
        found, unique = backend.few_rows_from_end(rows, 64)
        got = np.asarray(found) if torch is None else found.numpy()
        np.testing.assert_array_equal(got, expected)
        assert got.shape == expected.shape and got.dtype.kind == "i"
        assert unique is distinct, asked
    for outside in ([1, 64], [-65, 0], [0] * 17):
        assert backend.few_rows_from_end(array(outside), 64) is None


@pytest.mark.parametrize("method", ["min", "max"])
@pytest.mark.parametrize("dtype", ["complex64", "bool"])
def test_min_and_max_name_the_dtypes_they_take(method, dtype):
    """min and max of complex numbers or bools: at's own error, naming the method, x's
    dtype and the kinds it takes (real numbers: the Array API orders no others)."""
    x = np.zeros(3, dtype=dtype)
    allowed = "a dtype of kind integral or real floating$"
    message = rf"at\.{method}: x\.dtype='{dtype}' is not allowed: {allowed}"
    with pytest.raises(indexops.IndexOpsTypeError, match=message):
        getattr(indexops.at(x)[0], method)(1)
