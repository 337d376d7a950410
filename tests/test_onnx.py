"""indexops.onnx: ONNX's operator examples, drawn cases against the operator definitions
(tests/reference/onnx_ops.py) on every backend, out-of-range indices on each kind of
backend, and onnxruntime as a peer where it is installed (``pip install indexops[onnx]``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from backends import DRAWN, WITH_VALUES, Backend
from helpers import assert_same, from_numpy, to_numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import onnx_ops as ref

from indexops import IndexOpsTypeError, IndexOpsValueError, onnx

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# Eager JAX takes jax_jit's code and compiles every primitive for each new shape: the tests
# run on jax_jit (and the one test of checkify below on eager JAX).
pytestmark = DRAWN

# Drawn cases are cheap checks of the lowering, not a search: a few per op and backend.
FEW = settings(max_examples=max(6, settings.default.max_examples // 6))


def op(backend: Backend, name: str) -> Callable[..., Any]:
    """``indexops.onnx.<name>`` called the backend's way (jitted, lazily, guarded)."""
    function = getattr(onnx, name)
    return backend.wrap(function) or function


def arrays(xp: ModuleType, *values: Any) -> list[Any]:
    return [from_numpy(xp, np.asarray(v)) for v in values]


# ---------------------------------------------------------------------------------------
# the examples of the ONNX operator documentation (Operators.md)

EXAMPLES = [
    ("gather", ([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], [[0, 1], [1, 2]]), {},
     [[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]]),
    ("gather", ([[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]], [[0, 2]]), {"axis": 1},
     [[[1.0, 1.9]], [[2.3, 3.9]], [[4.5, 5.9]]]),
    ("gather_elements", ([[1, 2], [3, 4]], [[0, 0], [1, 0]]), {"axis": 1}, [[1, 1], [4, 3]]),
    ("gather_elements", ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 0], [2, 0, 0]]),
     {"axis": 0}, [[4, 8, 3], [7, 2, 3]]),
    ("gather_elements", ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[-1, -2, 0], [-2, 0, 0]]),
     {"axis": 0}, [[7, 5, 3], [4, 2, 3]]),
    ("gather_nd", ([[0, 1], [2, 3]], [[0, 0], [1, 1]]), {}, [0, 3]),
    ("gather_nd", ([[0, 1], [2, 3]], [[1], [0]]), {}, [[2, 3], [0, 1]]),
    ("gather_nd", ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]]), {},
     [[2, 3], [4, 5]]),
    ("gather_nd", ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]]), {},
     [[[2, 3]], [[4, 5]]]),
    ("gather_nd", ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[1], [0]]), {"batch_dims": 1},
     [[2, 3], [4, 5]]),
    ("scatter_elements", ([[0.0] * 3] * 3, [[1, 0, 2], [0, 2, 1]],
                          [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]), {},
     [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 3]], [[1.1, 2.1]]), {"axis": 1},
     [[1.0, 1.1, 3.0, 2.1, 5.0]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, -3]], [[1.1, 2.1]]), {"axis": 1},
     [[1.0, 1.1, 2.1, 4.0, 5.0]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]]),
     {"axis": 1, "reduction": "add"}, [[1.0, 5.2, 3.0, 4.0, 5.0]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]]),
     {"axis": 1, "reduction": "mul"}, [[1.0, 2.0 * 1.1 * 2.1, 3.0, 4.0, 5.0]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]]),
     {"axis": 1, "reduction": "max"}, [[1.0, 2.1, 3.0, 4.0, 5.0]]),
    ("scatter_elements", ([[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]]),
     {"axis": 1, "reduction": "min"}, [[1.0, 1.1, 3.0, 4.0, 5.0]]),
    ("scatter_nd", ([1, 2, 3, 4, 5, 6, 7, 8], [[4], [3], [1], [7]], [9, 10, 11, 12]), {},
     [1, 11, 3, 10, 9, 6, 7, 12]),
    ("scatter_nd", ([1, 2, 3, 4, 5, 6, 7, 8], [[4], [3], [1], [7]], [9, 10, 11, 12]),
     {"reduction": "add"}, [1, 13, 3, 14, 14, 6, 7, 20]),
    ("scatter_nd", ([1, 2, 3, 4, 5, 6, 7, 8], [[4], [4], [1], [-1]], [9, 10, 11, 12]),
     {"reduction": "mul"}, [1, 22, 3, 4, 450, 6, 7, 96]),
    ("scatter_nd", ([[1, 2], [3, 4]], [[0, 1], [0, 1]], [5, 0]), {"reduction": "max"},
     [[1, 5], [3, 4]]),
    ("scatter_nd", ([[1, 2], [3, 4]], [[-1], [1]], [[9, 0], [0, 9]]), {"reduction": "min"},
     [[1, 2], [0, 0]]),
    ("gather_nd", ([[0, 1], [2, 3]], np.zeros((3, 0), int)), {}, [[[0, 1], [2, 3]]] * 3),
    ("scatter_nd", ([[0, 1], [2, 3]], np.zeros((2, 0), int), [[[1, 1], [1, 1]], [[2, 2], [2, 2]]]),
     {"reduction": "add"}, [[3, 4], [5, 6]]),
]  # fmt: skip


def check_example(xp, backend, name, inputs, attributes, expected) -> None:
    dtype = np.asarray(inputs[0]).dtype
    values = [np.asarray(v, dtype=dtype if k != 1 else np.int64) for k, v in enumerate(inputs)]
    result = op(backend, name)(*arrays(xp, *values), **attributes)
    assert_same(result, np.asarray(expected, dtype=dtype))


# Each call compiles (jax_jit) or builds a graph (dask) anew: there, one example per op and
# reduction, the drawn cases below do the rest.
EAGER = pytest.mark.backends(lambda backend: not backend.traced and backend is not Backend.DASK)


@WITH_VALUES
@EAGER
@pytest.mark.parametrize(
    ("name", "inputs", "attributes", "expected"),
    EXAMPLES,
    ids=[f"{case[0]}-{k}" for k, case in enumerate(EXAMPLES)],
)
def test_operator_examples(xp, backend, name, inputs, attributes, expected):
    check_example(xp, backend, name, inputs, attributes, expected)


@pytest.mark.backends(lambda backend: backend.traced or backend is Backend.DASK)
def test_operator_examples_traced_and_lazy(xp, backend):
    seen = set()
    for name, inputs, attributes, expected in EXAMPLES:
        if (name, attributes.get("reduction")) not in seen:
            seen.add((name, attributes.get("reduction")))
            check_example(xp, backend, name, inputs, attributes, expected)


def test_scatter_nd_example_2(xp, backend):
    block = [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]]
    other = [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]
    data = np.array([block, block, other, other])
    updates = np.array([[[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[1] * 4, [2] * 4, [3] * 4, [4] * 4]])
    expected = np.array([updates[0], block, updates[1], other])
    result = op(backend, "scatter_nd")(*arrays(xp, data, [[0], [2]], updates))
    assert_same(result, expected)


def test_slice_examples(xp, backend):
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    read = op(backend, "slice")
    assert_same(read(from_numpy(xp, data), [1, 0], [2, 3], [0, 1], [1, 2]), np.array([[5, 7]]))
    assert_same(read(from_numpy(xp, data), [0, 1], [-1, 1000]), np.array([[2, 3, 4]]))


def test_slice_scatter_in_onnx_order(xp, backend):
    data = np.zeros((2, 4), np.int64)
    updates = np.array([[1, 2]])
    write = op(backend, "slice_scatter")
    result = write(*arrays(xp, data, updates), [1, 0], [2, 3], [0, 1], [1, 2])
    assert_same(result, np.array([[0, 0, 0, 0], [1, 0, 2, 0]]))
    result = write(*arrays(xp, data, [[7, 8], [9, 10]]), [-1], [INT64_MIN], [1], [-2])
    assert_same(result, np.array([[0, 8, 0, 7], [0, 10, 0, 9]]))
    assert_same(from_numpy(xp, data) if backend.has_values else data, data)


def test_slice_steps_beyond_the_dim_take_one_element(xp, backend):
    """Steps near INT64_MAX reach no library unchanged (torch overflowed its strides)."""
    data = np.arange(8).reshape(2, 4)
    read, write = op(backend, "slice"), op(backend, "slice_scatter")
    for axis in (0, 1):
        for step, start, stop in ((INT64_MAX, 0, INT64_MAX), (-(2**61), -1, INT64_MIN)):
            attributes = ([start], [stop], [axis], [step])
            expected = ref.slice_(data, *attributes)
            assert_same(read(from_numpy(xp, data), *attributes), expected)
            updates = -np.ones_like(expected)
            written = data.copy()
            written[(slice(None),) * axis + ((0 if step > 0 else -1),)] = -1
            assert_same(write(*arrays(xp, data, updates), *attributes), written)


def test_slice_end_int64_max_backwards_is_empty_as_the_spec_says(xp, backend):
    data = from_numpy(xp, np.arange(5))
    assert_same(op(backend, "slice")(data, [-1], [INT64_MAX], None, [-1]), np.zeros(0, int))
    everything = op(backend, "slice")(data, [-1], [INT64_MIN], None, [-1])
    assert_same(everything, np.arange(5)[::-1])


# ---------------------------------------------------------------------------------------
# corners the porting guides get wrong


def test_empty_data_dims(xp, backend):
    data = from_numpy(xp, np.zeros((0, 3)))
    empty = from_numpy(xp, np.zeros((0,), np.int64))
    assert_same(op(backend, "gather")(data, empty), np.zeros((0, 3)))
    assert_same(op(backend, "gather_nd")(data, from_numpy(xp, np.zeros((0, 1), np.int64))),
                np.zeros((0, 3)))  # fmt: skip
    wide = from_numpy(xp, np.zeros((2, 0)))
    pick = from_numpy(xp, np.zeros((2, 0), np.int64))
    assert_same(op(backend, "gather_elements")(wide, pick, axis=1), np.zeros((2, 0)))
    written = op(backend, "scatter_elements")(wide, pick, from_numpy(xp, np.zeros((2, 0))), 1)
    assert_same(written, np.zeros((2, 0)))


def test_an_empty_dim_cannot_be_indexed(xp, backend):
    data = from_numpy(xp, np.zeros((0, 3)))
    with pytest.raises(IndexOpsValueError, match=r"data.shape\[0\] is 0"):
        op(backend, "gather")(data, from_numpy(xp, np.zeros((2,), np.int64)))


@WITH_VALUES
def test_bool_reductions_are_or_and_and(xp, backend):
    data = np.array([False, True, True, False])
    indices = np.array([[0], [0], [1], [1], [2]])
    updates = np.array([True, False, False, False, True])
    expected = {"add": [True, True, True, False], "max": [True, True, True, False],
                "mul": [False, False, True, False], "min": [False, False, True, False]}  # fmt: skip
    for reduction, want in expected.items():
        result = op(backend, "scatter_nd")(*arrays(xp, data, indices, updates), reduction)
        assert_same(result, np.array(want))
        assert_same(result, ref.scatter_nd(data, indices, updates, reduction))


@WITH_VALUES
def test_elements_with_shorter_indices(xp, backend):
    data = np.arange(24.0).reshape(2, 3, 4)
    indices = np.array([[[3, -4, 0]], [[1, 1, -1]]])  # shape (2, 1, 3): dims 1, 2 shorter
    updates = np.arange(6.0).reshape(indices.shape) + 100
    got = op(backend, "gather_elements")(*arrays(xp, data, indices), axis=2)
    assert_same(got, ref.gather_elements(data, indices, axis=2))
    written = op(backend, "scatter_elements")(*arrays(xp, data, indices, updates), axis=-1)
    assert_same(written, ref.scatter_elements(data, indices, updates, axis=2))


def test_scalar_indices(xp, backend):
    data = np.arange(6).reshape(2, 3)
    assert_same(op(backend, "gather")(*arrays(xp, data, np.int64(-1)), axis=1), data[:, -1])


# ---------------------------------------------------------------------------------------
# drawn cases against the operator definitions


@st.composite
def shapes(draw: st.DrawFn, min_rank: int = 1, max_rank: int = 3) -> tuple[int, ...]:
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))


def values(draw: st.DrawFn, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Small integral values, exact in every dtype and under any order of add or mul."""
    raw = draw(st.lists(st.integers(-3, 3), min_size=math.prod(shape), max_size=math.prod(shape)))
    return np.array(raw).reshape(shape).astype(dtype)


def indices_into(draw: st.DrawFn, shape: tuple[int, ...], sizes: tuple[int, ...]) -> np.ndarray:
    """Indices of ``shape`` in range, each last-dim component ``k`` into ``sizes[k]``
    (one size: every entry into it), negative ones included."""
    out = np.zeros(shape, np.int64)
    for where in np.ndindex(*shape):
        size = sizes[where[-1]] if len(sizes) > 1 else sizes[0]
        out[where] = draw(st.integers(-size, size - 1))
    return out


DTYPES = st.sampled_from(["float64", "int32", "bool"])


def of_dtype(operand: np.ndarray, dtype: str) -> np.ndarray:
    """Distinct small values in ``dtype``; alternating for bool."""
    return operand % 2 == 1 if dtype == "bool" else operand.astype(dtype)


REDUCTIONS = st.sampled_from(["none", "add", "mul", "max", "min"])


@st.composite
def axis_cases(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    shape = draw(shapes())
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return np.arange(math.prod(shape)).reshape(shape), axis


@DRAWN
@FEW
@given(case=axis_cases(), data=st.data())
def test_gather_matches_definition(xp, backend, case, data):
    operand, axis = case
    index_shape = data.draw(shapes(min_rank=0, max_rank=2))
    size = operand.shape[axis]
    if size == 0:
        index_shape = (*index_shape, 0)
    indices = indices_into(data.draw, index_shape, (max(size, 1),))
    result = op(backend, "gather")(*arrays(xp, operand, indices), axis=axis)
    assert_same(result, ref.gather(operand, indices, axis))


@st.composite
def element_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    operand, axis = draw(axis_cases())
    shape = operand.shape
    index_shape = tuple(
        draw(st.integers(0, 4)) if d == axis % len(shape) else draw(st.integers(0, n))
        for d, n in enumerate(shape)
    )
    size = shape[axis]
    if size == 0:
        index_shape = (0, *index_shape[1:])
    return operand, indices_into(draw, index_shape, (max(size, 1),)), axis


@DRAWN
@FEW
@pytest.mark.filterwarnings("ignore:Increasing number of chunks")  # dask, on drawn shapes
@given(case=element_cases(), dtype=DTYPES, reduction=REDUCTIONS, data=st.data())
def test_elements_match_definition(xp, backend, case, dtype, reduction, data):
    operand, indices, axis = case
    operand = of_dtype(operand, dtype)
    updates = values(data.draw, indices.shape, dtype)
    got = op(backend, "gather_elements")(*arrays(xp, operand, indices), axis=axis)
    assert_same(got, ref.gather_elements(operand, indices, axis))
    written = op(backend, "scatter_elements")(
        *arrays(xp, operand, indices, updates), axis=axis, reduction=reduction
    )
    assert_same(written, ref.scatter_elements(operand, indices, updates, axis, reduction))


@st.composite
def nd_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    shape = draw(shapes())
    b = draw(st.integers(0, len(shape) - 1))
    m = draw(st.integers(0, len(shape) - b))
    outer = draw(st.lists(st.integers(0, 3), max_size=2))
    index_shape = (*shape[:b], *outer, m)
    sizes = shape[b : b + m]
    if 0 in sizes:
        index_shape = (*shape[:b], 0, m)
    indices = indices_into(draw, index_shape, tuple(max(s, 1) for s in sizes))
    return np.arange(math.prod(shape)).reshape(shape), indices, b


@DRAWN
@FEW
@pytest.mark.filterwarnings("ignore:Increasing number of chunks")  # dask, on drawn shapes
@given(case=nd_cases(), dtype=DTYPES, reduction=REDUCTIONS, data=st.data())
def test_nd_match_definition(xp, backend, case, dtype, reduction, data):
    operand, indices, b = case
    operand = of_dtype(operand, dtype)
    got = op(backend, "gather_nd")(*arrays(xp, operand, indices), batch_dims=b)
    assert_same(got, ref.gather_nd(operand, indices, b))
    if b == 0:
        k = indices.shape[-1]
        updates = values(data.draw, indices.shape[:-1] + operand.shape[k:], dtype)
        written = op(backend, "scatter_nd")(*arrays(xp, operand, indices, updates), reduction)
        assert_same(written, ref.scatter_nd(operand, indices, updates, reduction))


@DRAWN
@FEW
@given(shape=shapes(), data=st.data())
def test_slice_matches_definition(xp, backend, shape, data):
    rank = len(shape)
    k = data.draw(st.integers(0, rank))
    ends = st.one_of(st.integers(-6, 6), st.sampled_from([INT64_MIN, INT64_MAX]))
    starts = data.draw(st.lists(ends, min_size=k, max_size=k))
    stops = data.draw(st.lists(ends, min_size=k, max_size=k))
    step = st.sampled_from([-3, -1, 1, 2, INT64_MAX, INT64_MIN, 2**61, -(2**61)])
    steps = data.draw(st.none() | st.lists(step, min_size=k, max_size=k))
    axes = data.draw(st.none() | st.permutations(range(-rank, 0)).map(lambda p: p[:k]))
    operand = np.arange(math.prod(shape)).reshape(shape)
    expected = ref.slice_(operand, starts, stops, axes, steps)
    result = op(backend, "slice")(from_numpy(xp, operand), starts, stops, axes, steps)
    assert_same(result, expected)


# ---------------------------------------------------------------------------------------
# out-of-range indices: an error where the values are on the host, else the library's way

OUT_OF_RANGE = [
    ("gather", (np.arange(5.0), np.array([[1, 5]])), {}, r"indices\[0, 1\]=5 .* \[-5, 4\]"),
    ("gather_elements", (np.ones((2, 3)), np.array([[0, -4]])), {"axis": 1},
     r"indices\[0, 1\]=-4 .* \[-3, 2\] \(data.shape\[1\] = 3\)"),
    ("gather_nd", (np.ones((2, 3)), np.array([[1, 0], [0, 3]])), {},
     r"indices\[1, 1\]=3 .* \[-3, 2\] \(data.shape\[1\] = 3\)"),
    ("scatter_elements", (np.ones((2, 3)), np.array([[0], [2]]), np.ones((2, 1))), {},
     r"indices\[1, 0\]=2 .* \[-2, 1\]"),
    ("scatter_nd", (np.ones((2, 3)), np.array([[-3]]), np.ones((1, 3))), {"reduction": "add"},
     r"indices\[0, 0\]=-3 .* \[-2, 1\]"),
]  # fmt: skip


@pytest.mark.backends(lambda backend: backend.values_on_host)
@pytest.mark.parametrize(("name", "inputs", "attributes", "message"), OUT_OF_RANGE)
def test_out_of_range_raises_before_any_work(xp, backend, name, inputs, attributes, message):
    given = arrays(xp, *inputs)
    with pytest.raises(IndexOpsValueError, match=message):
        op(backend, name)(*given, **attributes)
    assert_same(given[0], inputs[0])


@pytest.mark.backends("dask")
@pytest.mark.parametrize(("name", "inputs", "attributes", "message"), OUT_OF_RANGE)
def test_out_of_range_raises_when_dask_computes(xp, backend, name, inputs, attributes, message):
    result = op(backend, name)(*arrays(xp, *inputs), **attributes)
    with pytest.raises(IndexOpsValueError, match=message):
        result.compute()


@pytest.mark.backends("jax")
def test_out_of_range_under_jit_is_reported_by_checkify_and_filled():
    import jax
    from jax.experimental import checkify

    xp = Backend.JAX.namespace()
    read = jax.jit(lambda data, indices: onnx.gather(data, indices))
    error, result = checkify.checkify(read)(xp.arange(4.0), xp.asarray([1, 4, -5]))
    assert "onnx.gather: indices has an entry outside" in str(error.get())
    assert_same(result, np.array([1.0, np.nan, np.nan]))
    write = jax.jit(lambda data, indices, updates: onnx.scatter_nd(data, indices, updates))
    error, result = checkify.checkify(write)(xp.zeros(3), xp.asarray([[0], [3]]), xp.ones(2))
    assert "onnx.scatter_nd" in str(error.get())
    assert_same(result, np.array([1.0, 0.0, 0.0]))


@pytest.mark.backends(Backend.TORCH_DEVICE)
def test_out_of_range_on_device_paths_asserts(xp, backend):
    with pytest.raises(RuntimeError, match=r"onnx\.gather_elements: indices has an entry"):
        op(backend, "gather_elements")(*arrays(xp, np.ones((2, 3)), np.array([[0, 3]])), axis=1)


# ---------------------------------------------------------------------------------------
# static errors


BAD_CALLS = [
    ("gather", ([1.0, 2.0], np.array([0])), {}, r"data=.list \[1.0, 2.0\]. .* an array of"),
    ("gather", (np.ones(3), np.array([0])), {"axis": 1}, r"axis=1 .* \[-1, 0\]"),
    ("gather", (np.ones(3), np.array([0.5])), {}, "indices.dtype"),
    ("gather_elements", (np.ones((2, 3)), np.array([0, 1])), {}, "rank 2"),
    ("gather_elements", (np.ones((2, 3)), np.zeros((2, 4), int)), {}, "dim 1 is longer"),
    ("gather_nd", (np.ones((2, 3)), np.zeros((3, 1), int)), {"batch_dims": 1},
     "first batch_dims=1 dims"),
    ("gather_nd", (np.ones((2, 3)), np.zeros((2, 3), int)), {},
     r"indices.shape\[-1\]=3 .* \[0, 2\]"),
    ("gather_nd", (np.ones((2, 3)), np.zeros((2, 1), int)), {"batch_dims": 2}, "batch_dims=2"),
    ("scatter_elements", (np.ones((2, 3)), np.zeros((2, 3), int), np.ones((2, 2))), {},
     "updates.shape"),
    ("scatter_elements", (np.ones((2, 3)), np.zeros((2, 3), int), np.ones((2, 3))),
     {"reduction": "sum"}, "reduction='sum'"),
    ("scatter_nd", (np.ones((2, 3)), np.zeros((2, 1), int), np.ones((2, 2))), {},
     r"indices.shape\[:-1\] \+ data.shape\[k:\] = \(2, 3\)"),
    ("scatter_nd", (np.ones(3), np.zeros((2, 1), int), np.ones(2, np.float32)), {},
     "updates.dtype"),
    ("slice", (np.ones((2, 3)), [0], [1]), {"steps": [0]}, "steps=.* non-zero"),
    ("slice", (np.ones((2, 3)), [0, 0], [1, 1]), {"axes": [1, -1]}, "axes=.* unique"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "inputs", "attributes", "message"), BAD_CALLS)
def test_bad_calls_name_the_argument(xp, backend, name, inputs, attributes, message):
    given = [from_numpy(xp, v) if isinstance(v, np.ndarray) else v for v in inputs]
    with pytest.raises((IndexOpsValueError, IndexOpsTypeError), match=message):
        op(backend, name)(*given, **attributes)


# ---------------------------------------------------------------------------------------
# onnxruntime as a peer (in the numpy session; skipped, with the reason, without it)

PEER = pytest.mark.backends("numpy")


def onnxruntime_run(op_type: str, inputs: list[np.ndarray], **attributes: Any) -> np.ndarray:
    """One ONNX node run by onnxruntime on the CPU."""
    ort = pytest.importorskip(
        "onnxruntime", reason="onnxruntime is not installed: pip install indexops[onnx]"
    )
    helper = pytest.importorskip(
        "onnx.helper", reason="onnx is not installed: pip install indexops[onnx]"
    )
    names = [f"input{k}" for k in range(len(inputs))]
    node = helper.make_node(op_type, names, ["output"], **attributes)
    typed = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in zip(names, inputs)
    ]
    output = helper.make_tensor_value_info(
        "output", helper.np_dtype_to_tensor_dtype(inputs[0].dtype), None
    )
    graph = helper.make_graph([node], op_type, typed, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(names, inputs)))[0]


ONNX_OPS = {
    "gather": "Gather",
    "gather_elements": "GatherElements",
    "gather_nd": "GatherND",
    "scatter_elements": "ScatterElements",
    "scatter_nd": "ScatterND",
}


@PEER
@pytest.mark.parametrize(
    ("name", "inputs", "attributes", "expected"),
    EXAMPLES,
    ids=[f"{case[0]}-{k}" for k, case in enumerate(EXAMPLES)],
)
def test_examples_match_onnxruntime(name, inputs, attributes, expected):
    dtype = np.asarray(inputs[0]).dtype
    values = [np.asarray(v, dtype=dtype if k != 1 else np.int64) for k, v in enumerate(inputs)]
    peer = onnxruntime_run(ONNX_OPS[name], values, **attributes)
    np.testing.assert_array_equal(getattr(onnx, name)(*values, **attributes), peer)


@PEER
@FEW
@given(case=element_cases(), nd=nd_cases(), reduction=REDUCTIONS, data=st.data())
def test_drawn_cases_match_onnxruntime(case, nd, reduction, data):
    operand, indices, axis = case
    operand = operand.astype(np.float32)
    updates = values(data.draw, indices.shape, "float32")
    written = onnx.scatter_elements(operand, indices, updates, axis, reduction)
    if reduction != "none" or not _has_duplicates_along(indices, axis):  # else unspecified
        peer = onnxruntime_run(
            "ScatterElements", [operand, indices, updates], axis=axis, reduction=reduction
        )
        np.testing.assert_array_equal(written, peer)
    got = onnx.gather_elements(operand, indices, axis)
    np.testing.assert_array_equal(got, onnxruntime_run("GatherElements", [operand, indices],
                                                       axis=axis))  # fmt: skip
    operand, indices, b = nd
    got = onnx.gather_nd(operand, indices, b)
    np.testing.assert_array_equal(got, onnxruntime_run("GatherND", [operand, indices],
                                                       batch_dims=b))  # fmt: skip


def _has_duplicates_along(indices: np.ndarray, axis: int) -> bool:
    if indices.size == 0:
        return False
    moved = np.moveaxis(indices, axis, -1).reshape(-1, indices.shape[axis])
    return any(len(set(row.tolist())) < len(row) for row in moved)


@PEER
def test_onnxruntime_reads_int64_max_backwards_as_to_the_start():
    """The one place indexops follows the ONNX specification and not onnxruntime."""
    data = np.arange(5.0)
    inputs = [data, *(np.array([v]) for v in (-1, INT64_MAX, 0, -1))]
    np.testing.assert_array_equal(onnxruntime_run("Slice", inputs), data[::-1])
    assert onnx.slice(data, [-1], [INT64_MAX], [0], [-1]).shape == (0,)
    peer_everything = onnxruntime_run(
        "Slice", [data, *(np.array([v]) for v in (-1, INT64_MIN, 0, -1))]
    )
    np.testing.assert_array_equal(onnx.slice(data, [-1], [INT64_MIN], [0], [-1]), peer_everything)


@PEER
def test_onnxruntime_refuses_what_indexops_refuses():
    data, indices = np.arange(5.0), np.array([5])
    with pytest.raises(Exception, match="out of data bounds"):
        onnxruntime_run("Gather", [data, indices])
    with pytest.raises(IndexOpsValueError):
        onnx.gather(data, indices)
    assert to_numpy(onnx.gather(data, np.array([-5]))).tolist() == [0.0]


@pytest.mark.backends("dask")
def test_dask_data_with_numpy_indices():
    """As for the other ops, NumPy index arrays next to Dask data are read on the host."""
    import dask.array as da

    data = np.arange(12.0).reshape(3, 4)
    chunked = da.from_array(data, chunks=2)
    picks = np.array([[0, -1], [2, 1], [3, 3]])
    got = onnx.gather_elements(chunked, picks, axis=1)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), ref.gather_elements(data, picks, axis=1))
    with pytest.raises(IndexOpsValueError, match=r"indices\[0, 1\]=4"):
        onnx.gather(chunked, np.array([[0, 4]]), axis=1)


# index tuples into a [5, 3] data: in range, one component outside its own dim (the other
# dim's size would take it), and negative ones, which wrap
FEW_TUPLES = {
    "inside": [[4, 2], [0, 0], [2, 1]],
    "second outside": [[2, 4], [0, 0]],
    "first outside": [[5, 1], [0, 0]],
    "negative": [[-1, 2], [0, -3]],
    "negative outside": [[0, -4]],
}


@pytest.mark.backends(lambda backend: backend.values_on_host)
@pytest.mark.parametrize("case", list(FEW_TUPLES))
@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_few_index_tuples_each_checked_against_its_dim(xp, backend, case, reduction):
    """A few index tuples on the host, read as one list where nothing needs wrapping:
    each component is checked against its own dim (3 or 5), so an index the other dim
    would take is still refused before anything is written; negative ones wrap; the
    result is the operator definition's."""
    data = np.arange(15.0).reshape(5, 3)
    indices = np.array(FEW_TUPLES[case])
    updates = np.full(indices.shape[:1], 100.0)
    x, i, u = arrays(xp, data, indices, updates)
    if "outside" in case:
        with pytest.raises(IndexOpsValueError, match=r"indices\[0, [01]\]"):
            op(backend, "scatter_nd")(x, i, u, reduction=reduction)
        assert_same(x, data)
        return
    expected = ref.scatter_nd(data, indices, updates, reduction)
    assert_same(op(backend, "scatter_nd")(x, i, u, reduction=reduction), expected)


@pytest.mark.backends(lambda backend: backend.values_on_host)
@pytest.mark.parametrize("name", ["gather_nd", "scatter_nd", "gather_elements", "scatter_elements"])
def test_few_indices_from_the_end_are_counted_in_their_list_read(xp, backend, name, monkeypatch):
    """A few indices on the host, some negative, are counted from the end in the list
    they are read as (no array operation wraps them), one dim or index tuples of two; one
    outside ``[-s, s)`` is the named error; results are the operator definition's."""
    from indexops import onnx as onnx_module
    from indexops._backends import backend_for

    counted: list[bool] = []
    few_counted = onnx_module._few_counted
    monkeypatch.setattr(
        onnx_module, "_few_counted", lambda *a: counted.append(True) or few_counted(*a)
    )
    wrapped: list[bool] = []
    library = type(backend_for("test", x=arrays(xp, np.zeros(1))[0]))
    where = library.where
    monkeypatch.setattr(library, "where", lambda self, *a: wrapped.append(True) or where(self, *a))
    data = np.arange(15.0).reshape(5, 3)
    if name.endswith("_nd"):
        cases = {"one dim": [[-1], [0], [-5]], "two dims": [[-1, 2], [0, -3]], "outside": [[-6]]}
    else:
        cases = {"one dim": [[-1, 2], [0, -3]], "outside": [[0, 3]]}
    for case, picks in cases.items():
        indices = np.array(picks)
        attributes = {"axis": 1} if name.endswith("elements") else {}
        if name == "scatter_nd":
            args = (
                data,
                indices,
                np.full(indices.shape[:-1] + data.shape[indices.shape[-1] :], 9.0),
            )
        elif name == "scatter_elements":
            args = (data[: len(picks)], indices, np.full(indices.shape, 9.0))
        elif name == "gather_elements":  # (indices as long as data on the other dim)
            args = (data[: len(picks)], indices)
        else:
            args = (data, indices)
        counted.clear()
        wrapped.clear()
        call = op(backend, name)
        if case == "outside":
            with pytest.raises(IndexOpsValueError, match=r"indices\[0, [01]\]"):
                call(*arrays(xp, *args), **attributes)
            continue
        got = call(*arrays(xp, *args), **attributes)
        assert_same(got, getattr(ref, name)(*args, **attributes))
        assert counted and not wrapped, (case, counted, wrapped)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: onnx.scatter_elements(
                np.array(["a", "b"]), np.array([0]), np.array(["c"]), reduction="add"
            ),
            "onnx.scatter_elements: reduction='add' is not allowed: one of ('none',) for data "
            "of dtype <U1",
        ),
        (
            lambda: onnx.scatter_nd(
                np.zeros(3, complex), np.array([[0]]), np.ones(1, complex), reduction="min"
            ),
            "onnx.scatter_nd: reduction='min' is not allowed: one of ('none', 'add', 'mul') "
            "for data of dtype complex128",
        ),
        (
            lambda: onnx.slice_scatter(np.zeros(4), np.zeros(4), [0], [4], [0], [0]),
            "onnx.slice_scatter: steps=(0,) is not allowed: non-zero entries",
        ),
        (
            lambda: onnx.slice_scatter(np.zeros((2, 4)), np.zeros((2, 3)), [0], [4], [1]),
            "onnx.slice_scatter: updates.shape=(2, 3) is not allowed: exactly the slice's "
            "shape (2, 4)",
        ),
    ],
)
def test_errors_name_the_onnx_function_and_its_arguments(call, message):
    """A reduction the data's dtype has none of, and a bad slice: the error of the ONNX
    function called, naming its own arguments (they named scatter's update_computation
    and slice_scatter's step, which the caller never passed)."""
    with pytest.raises((IndexOpsTypeError, IndexOpsValueError)) as error:
        call()
    assert str(error.value) == message
