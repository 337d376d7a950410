"""slice_scatter (OpenVINO SliceScatter-15) on every backend, against the loop oracle."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import helpers
import numpy as np
import pytest
from backends import WITH_VALUES, Backend
from helpers import assert_same, from_numpy, to_numpy
from hypothesis import given
from hypothesis import strategies as st
from reference import slice_scatter as ref

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError
from indexops._ops.slice_scatter import clamp

INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def slice_scatter(*args: Any, **kwargs: Any) -> Any:
    return indexops.slice_scatter(*args, **kwargs)  # as the backend calls it (e.g. jitted)


# ---------------------------------------------------------------------------------------
# strategies


def bounds(info: Any) -> st.SearchStrategy[int]:
    """Start/stop values: small, huge, and the index dtype's extremes."""
    low, high = int(info.min), int(info.max)
    small = st.integers(max(low, -12), min(high, 12))
    extremes = st.sampled_from([low, high, low + 1, high - 1])
    return st.one_of(small, small, extremes, st.integers(low, high))


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """A valid SliceScatter problem: shape, attributes, index form and dtype."""
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.lists(st.integers(0, 8), min_size=rank, max_size=rank)))
    k = draw(st.integers(0, rank))
    form = draw(st.sampled_from(["list", "xp", "numpy"]))
    dtype = "int64" if form == "list" else draw(st.sampled_from(INDEX_DTYPES))
    info = np.iinfo(dtype)
    steps = [s for s in range(-4, 5) if s != 0 and (s > 0 or info.min < 0)]
    steps += [int(info.max), int(info.min)] if info.min < 0 else [int(info.max)]  # huge
    start = draw(st.lists(bounds(info), min_size=k, max_size=k))
    stop = draw(st.lists(bounds(info), min_size=k, max_size=k))
    step = draw(st.lists(st.sampled_from(steps), min_size=k, max_size=k))
    axes = None
    if draw(st.booleans()):
        chosen = draw(st.permutations(range(rank)))[:k]
        signs = draw(st.lists(st.booleans(), min_size=k, max_size=k))
        negative_ok = info.min < 0
        axes = [
            a - rank if neg and negative_ok else a for a, neg in zip(chosen, signs, strict=True)
        ]
    return {"shape": shape, "start": start, "stop": stop, "step": step, "axes": axes,
            "form": form, "dtype": dtype}  # fmt: skip


def index_input(xp: ModuleType, values: list[int], form: str, dtype: str) -> Any:
    if form == "list":
        return list(values)
    array = np.asarray(values, dtype=dtype).reshape(len(values))
    return array if form == "numpy" else index_array(xp, array)


def index_array(xp: ModuleType, values: Any) -> Any:
    """Slice parameters as an array of the backend, with values (on the CPU for meta)."""
    if helpers.active is Backend.TORCH_META:
        xp = Backend.TORCH.namespace()
    return from_numpy(xp, np.asarray(values))


# ---------------------------------------------------------------------------------------
# against the oracle


@given(case=cases(), copy=st.sampled_from([True, None, False]), data_dtype=st.sampled_from(
    ["int32", "float64"]))  # fmt: skip
def test_matches_reference(
    xp: ModuleType, backend: Backend, case: dict[str, Any], copy: Any, data_dtype: str
):
    if copy is False and not backend.writable:
        copy = None
    shape, form, dtype = case["shape"], case["form"], case["dtype"]
    attrs = [case[name] for name in ("start", "stop", "step")]
    expected_shape = ref.slice_shape(shape, *attrs, case["axes"])
    data_np = np.arange(math.prod(shape), dtype=data_dtype).reshape(shape)
    updates_np = (1000 + np.arange(math.prod(expected_shape), dtype=data_dtype)).reshape(
        expected_shape
    )
    expected = ref.slice_scatter(data_np, updates_np, *attrs, case["axes"])
    data = from_numpy(xp, data_np)
    args = [index_input(xp, values, form, dtype) for values in attrs]
    axes = None if case["axes"] is None else index_input(xp, case["axes"], form, dtype)
    result = slice_scatter(data, from_numpy(xp, updates_np), *args, axes, copy=copy)
    assert_same(result, expected)
    if copy is True:
        assert_same(data, data_np)
    if copy is False:
        assert result is data


def test_oracle_is_python_slicing_except_the_corner():
    """Brute force: ONNX clamping equals Python slicing except in one documented corner."""
    values = [INT64_MIN, -11, -6, -5, -4, -3, -1, 0, 1, 3, 4, 5, 6, 11, INT64_MAX]
    for dim in range(6):
        for start in values:
            for stop in values:
                for step in (-5, -2, -1, 1, 2, 5):
                    onnx = ref.onnx_indices(dim, start, stop, step)
                    first, count = clamp(dim, start, stop, step)
                    assert onnx == [first + i * step for i in range(count)]
                    corner = step < 0 and dim > 0 and start < -dim and stop < -dim
                    python = list(range(dim))[start:stop:step]
                    assert onnx == ([0] if corner else python), (dim, start, stop, step)


# ---------------------------------------------------------------------------------------
# the seed's examples and the documented corner


def test_seed_example_1_fill_axis_0(xp: ModuleType):
    data = xp.asarray([[0.0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], dtype=xp.float32)
    updates = xp.asarray([[10.0, 20, 30, 40, 50]], dtype=xp.float32)
    result = slice_scatter(data, updates, [0], [1], [1], [0])
    assert_same(result, np.array([[10, 20, 30, 40, 50], [5, 6, 7, 8, 9]], dtype=np.float32))


def test_seed_example_2_clamped_every_second(xp: ModuleType):
    data = xp.asarray([[0.0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], dtype=xp.float32)
    updates = xp.asarray([[10.0, 20, 30], [40, 50, 60]], dtype=xp.float32)
    start, stop, step = (index_array(xp, np.array([v], np.int32)) for v in (-25, 25, 2))
    result = slice_scatter(data, updates, start, stop, step, [1])
    expected = np.array([[10, 1, 20, 3, 30], [40, 6, 50, 8, 60]], dtype=np.float32)
    assert_same(result, expected)


def test_seed_example_3_two_axes_default(xp: ModuleType):
    data = xp.reshape(xp.arange(15, dtype=xp.float32), (3, 5))
    updates = xp.asarray([[50.0, 60], [70, 80]], dtype=xp.float32)
    result = slice_scatter(data, updates, [0, 1], [3, 5], [2, 2])
    expected = np.arange(15, dtype=np.float32).reshape(3, 5)
    expected[0::2, 1::2] = [[50, 60], [70, 80]]
    assert_same(result, expected)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_corner_negative_step_below_minus_dim(xp: ModuleType, dtype: str):
    """OpenVINO writes index 0 where Python's ``[-10:INT_MIN:-1]`` is empty."""
    info = np.iinfo(dtype)
    data = xp.asarray([1, 2, 3, 4], dtype=xp.int64)
    start, stop, step = ([v] for v in (-10, int(info.min), -1))
    args = [index_array(xp, np.asarray(v, dtype=dtype)) for v in (start, stop, step)]
    result = slice_scatter(data, xp.asarray([9], dtype=xp.int64), *args)
    assert_same(result, np.array([9, 2, 3, 4]))


def test_negative_step_reverses_and_big_step(xp: ModuleType):
    data = xp.arange(16, dtype=xp.int64)
    updates = xp.asarray([100, 200], dtype=xp.int64)
    result = slice_scatter(data, updates, [INT64_MAX], [INT64_MIN], [-15])
    expected = np.arange(16)
    expected[[15, 0]] = [100, 200]
    assert_same(result, expected)


HUGE_STEPS = [INT64_MAX, INT64_MIN, 2**61, -(2**61)]


@pytest.mark.parametrize("axis", [0, 1])
def test_huge_steps_write_one_element(xp: ModuleType, axis: int):
    """A step beyond the dim takes one element; torch overflowed its stride (step times
    the row length) and JAX its int32 bounds when the step reached them unchanged."""
    data_np = np.arange(8).reshape(2, 4)
    for step in HUGE_STEPS:
        start, stop = (0, INT64_MAX) if step > 0 else (-1, INT64_MIN)
        attrs = ([start], [stop], [step], [axis])
        updates_np = -np.ones(ref.slice_shape(data_np.shape, *attrs), dtype=np.int64)
        result = slice_scatter(from_numpy(xp, data_np), from_numpy(xp, updates_np), *attrs)
        assert_same(result, ref.slice_scatter(data_np, updates_np, *attrs))


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_data(xp: ModuleType, dtype: str):
    """torch has few kernels for uint16/32/64; every value is copied, the largest too."""
    top = int(np.iinfo(dtype).max)
    data_np = np.array([[0, 1, top, 3], [top // 2, top // 2 + 1, 6, 7]], dtype=dtype)
    updates_np = np.array([[top, top // 2 + 1], [top - 1, top // 2]], dtype=dtype)
    attrs = ([-1, 0], [-3, 4], [-1, 2], [0, 1])  # rows reversed, every second column
    result = slice_scatter(from_numpy(xp, data_np), from_numpy(xp, updates_np), *attrs)
    assert_same(result, ref.slice_scatter(data_np, updates_np, *attrs))


def test_uint64_extreme_means_to_the_end(xp: ModuleType):
    data = xp.arange(6, dtype=xp.int64)
    stop = index_array(xp, np.array([2**64 - 1], dtype=np.uint64))
    result = slice_scatter(data, xp.asarray([7, 8], dtype=xp.int64), [2], stop, [2])
    assert_same(result, np.array([0, 1, 7, 3, 8, 5]))


def test_empty_start_replaces_everything(xp: ModuleType):
    data = xp.zeros((2, 3), dtype=xp.float64)
    updates = xp.ones((2, 3), dtype=xp.float64)
    assert_same(slice_scatter(data, updates, [], [], []), np.ones((2, 3)))


def test_zero_size_slice_and_zero_size_data(xp: ModuleType):
    data = xp.reshape(xp.arange(6, dtype=xp.int64), (2, 3))
    empty = xp.zeros((2, 0), dtype=data.dtype)
    assert_same(slice_scatter(data, empty, [2], [1], [1], [1]), np.arange(6).reshape(2, 3))
    zero = xp.zeros((0, 3), dtype=xp.float64)
    assert_same(
        slice_scatter(zero, xp.zeros((0, 3), dtype=xp.float64), [-1], [-5], [-1]), np.zeros((0, 3))
    )


# ---------------------------------------------------------------------------------------
# copy semantics


def test_copy_false_writes_in_place(xp: ModuleType, backend: Backend):
    data = xp.zeros((4,), dtype=xp.float64)
    if not backend.writable:
        with pytest.raises(IndexOpsValueError, match="copy"):
            slice_scatter(data, xp.ones((2,), dtype=xp.float64), [0], [2], [1], copy=False)
        return
    result = slice_scatter(data, xp.ones((2,), dtype=xp.float64), [3], [-5], [-2], copy=False)
    assert result is data
    assert_same(data, np.array([0.0, 1, 0, 1]))


def test_copy_none_and_true(xp: ModuleType, backend: Backend):
    data = xp.zeros((4,), dtype=xp.float64)
    copied = slice_scatter(data, xp.ones((1,), dtype=xp.float64), [0], [1], [1])
    assert copied is not data
    assert_same(data, np.zeros(4))
    result = slice_scatter(data, xp.ones((1,), dtype=xp.float64), [0], [1], [1], copy=None)
    assert_same(result, np.array([1.0, 0, 0, 0]))
    assert (result is data) == backend.writable


def test_numpy_view_is_written_in_place():
    base = np.zeros((4, 4))
    view = base[:, 1]
    slice_scatter(view, np.ones(2), [0], [4], [2], copy=False)
    assert base[:, 1].tolist() == [1, 0, 1, 0]
    with pytest.raises(IndexOpsTypeError, match="copy"):
        slice_scatter(np.zeros(3), np.ones(1), [0], [1], [1], copy="yes")


# ---------------------------------------------------------------------------------------
# errors: raised before any write, input unchanged


def error_cases(xp: ModuleType, writable: bool) -> list[tuple[str, dict[str, Any], type, str]]:
    """(id, arguments for a (2, 4) float data, error class, message fragment)."""
    ok = {
        "updates": xp.ones((2, 2), dtype=xp.float64),
        "start": [0],
        "stop": [2],
        "step": [1],
        "axes": [1],
    }

    def case(name: str, error: type, fragment: str, **changes: Any) -> tuple:
        return (name, {**ok, **changes}, error, fragment)

    V, T = IndexOpsValueError, IndexOpsTypeError
    return [
        case("step zero", V, "step", step=[0]),
        case("duplicate axes", V, "unique", start=[0, 0], stop=[2, 2], step=[1, 1], axes=[1, 1]),
        case(
            "duplicate negative", V, "unique", start=[0, 0], stop=[2, 2], step=[1, 1], axes=[-1, 1]
        ),
        case("axis too big", V, "axes", axes=[2]),
        case("axis too negative", V, "axes", axes=[-3]),
        case("unequal lengths", V, "equal lengths", stop=[2, 2]),
        case("axes length", V, "axes", axes=[0, 1]),
        case("longer than rank", V, "at most 2", start=[0, 0, 0]),
        case("start 2-D", V, "start", start=xp.asarray([[0]])),
        case("stop 0-d", V, "stop", stop=xp.asarray(2)),
        case("nested list", V, "step", step=[[1]]),
        case("python int", T, "start", start=0),
        case("float array", T, "dtype", start=xp.asarray([0.0])),
        case("bool array", T, "dtype", axes=xp.asarray([True])),
        case("float list", T, "stop", stop=[2.0]),
        case("bool list", T, "step", step=[True]),
        case("no broadcast", V, "updates.shape", updates=xp.ones((1, 2), dtype=xp.float64)),
        case("updates rank", V, "updates.shape", updates=xp.ones((2, 2, 1), dtype=xp.float64)),
        case("updates for empty slice", V, "updates.shape", stop=[0]),
        case("updates dtype", T, "updates.dtype", updates=xp.ones((2, 2), dtype=xp.float32)),
        # copy="yes" where arrays can be written, copy=False where they cannot
        case("copy", T if writable else V, "copy"),
    ]


ERROR_IDS = [name for name, *_ in error_cases(np, True)]


@pytest.mark.parametrize("index", range(len(ERROR_IDS)), ids=ERROR_IDS)
def test_errors_leave_data_unchanged(xp: ModuleType, backend: Backend, index: int):
    _, args, error, fragment = error_cases(xp, backend.writable)[index]
    data_np = np.arange(8.0).reshape(2, 4)
    data = from_numpy(xp, data_np)
    copy: Any = "yes" if ERROR_IDS[index] == "copy" and backend.writable else False
    with pytest.raises(error, match=fragment) as info:
        slice_scatter(data, **args, copy=copy)
    assert "slice_scatter" in str(info.value)
    assert_same(data, data_np)


def test_scalar_data_and_foreign_objects(xp: ModuleType):
    with pytest.raises(IndexOpsValueError, match=r"data\.shape"):
        slice_scatter(
            xp.asarray(1.0, dtype=xp.float64), xp.asarray(1.0, dtype=xp.float64), [], [], []
        )
    with pytest.raises(IndexOpsTypeError, match="data"):
        slice_scatter([1.0, 2.0], xp.asarray([1.0], dtype=xp.float64), [0], [1], [1])


@WITH_VALUES
def test_index_arrays_from_another_namespace(xp: ModuleType):
    data = xp.zeros((3, 3), dtype=xp.int64)
    updates = xp.ones((3, 1), dtype=xp.int64)
    result = slice_scatter(data, updates, np.array([-1]), np.array([-4]), np.array([-5]),
                           np.array([-1], dtype=np.int8))  # fmt: skip
    expected = np.zeros((3, 3), dtype=np.int64)
    expected[:, 2] = 1
    assert_same(result, expected)
    assert to_numpy(data).sum() == 0
