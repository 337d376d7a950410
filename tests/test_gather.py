"""gather and dynamic_slice against the StableHLO transcription, on every backend."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from backends import DRAWN, WITH_VALUES
from helpers import ROW_GATHER, ROW_SCATTER, assert_same, from_numpy, to_numpy
from hypothesis import given
from hypothesis import strategies as st
from reference import gather as reference
from strategies import arrays_of, value_dtypes, window_cases

import indexops

MODES = ("clip", "fill")


@DRAWN
# Dask's own take warns where windows of a small array cross many chunks
@pytest.mark.filterwarnings("ignore:Increasing number of chunks")
@given(data=st.data())
@pytest.mark.parametrize("mode", MODES)
def test_gather_matches_reference(xp, backend, mode, data):
    case = data.draw(window_cases())
    dtype = data.draw(st.sampled_from(value_dtypes(backend.extension_dtypes)))
    operand = arrays_of(data.draw, case.operand_shape, dtype)
    expected = reference.gather(operand, case.indices, mode=mode, **case.gather_attrs())
    result = indexops.gather(
        from_numpy(xp, operand), from_numpy(xp, case.indices), mode=mode, **case.gather_attrs()
    )
    assert_same(result, expected)


def windows_in_bounds(case) -> bool:
    indices = case.indices
    if case.index_vector_dim == indices.ndim:
        indices = indices[..., None]
    starts = np.moveaxis(indices, case.index_vector_dim, -1).astype(object)
    for k, d in enumerate(case.start_index_map):
        limit = case.operand_shape[d] - case.slice_sizes[d]
        if ((starts[..., k] < 0) | (starts[..., k] > limit)).any():
            return False
    return True


@DRAWN
@given(data=st.data())
def test_gather_promise_in_bounds_agrees_when_in_bounds(xp, data):
    case = data.draw(window_cases())
    operand = arrays_of(data.draw, case.operand_shape, "float32")
    if not windows_in_bounds(case):
        return  # promise_in_bounds is undefined for windows that leave the operand
    clipped = reference.gather(operand, case.indices, mode="clip", **case.gather_attrs())
    result = indexops.gather(
        from_numpy(xp, operand),
        from_numpy(xp, case.indices),
        mode="promise_in_bounds",
        **case.gather_attrs(),
    )
    assert_same(result, clipped)


@WITH_VALUES
def test_gather_fill_value_and_defaults(xp):
    operand = from_numpy(xp, np.arange(12, dtype=np.int32).reshape(4, 3))
    indices = from_numpy(xp, np.array([[1], [3], [-1]], dtype=np.int64))
    attrs = dict(
        offset_dims=(1, 2),
        collapsed_slice_dims=(),
        start_index_map=(0,),
        index_vector_dim=1,
        slice_sizes=(2, 3),
    )
    filled = indexops.gather(operand, indices, mode="fill", fill_value=-7, **attrs)
    assert_same(filled, [[[3, 4, 5], [6, 7, 8]], [[-7] * 3] * 2, [[-7] * 3] * 2])
    default = indexops.gather(operand, indices, mode="fill", **attrs)
    assert to_numpy(default)[1, 0, 0] == np.iinfo(np.int32).min


@WITH_VALUES
@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        ("float32", np.nan),
        ("int16", -(2**15)),
        ("uint8", 255),
        ("uint16", 2**16 - 1),
        ("uint32", 2**32 - 1),
        ("uint64", 2**64 - 1),
        ("bool", True),
    ],
)
def test_gather_default_fill_per_dtype(xp, dtype, expected):
    operand = from_numpy(xp, np.zeros((2, 2), dtype=dtype))
    indices = from_numpy(xp, np.array([[5]], dtype=np.int32))
    out = to_numpy(
        indexops.gather(
            operand,
            indices,
            **ROW_GATHER,
            slice_sizes=(1, 2),
            mode="fill",
        )
    )
    np.testing.assert_array_equal(out, np.full((1, 2), expected, dtype=dtype))


@WITH_VALUES
def test_gather_result_stays_on_backend_and_input_untouched(xp):
    operand = from_numpy(xp, np.arange(6.0).reshape(2, 3))
    before = to_numpy(operand).copy()
    indices = from_numpy(xp, np.array([1, 0], dtype=np.uint8))
    out = indexops.gather(
        operand,
        indices,
        **ROW_GATHER,
        slice_sizes=(1, 3),
    )
    assert type(out) is type(operand)
    assert_same(out, before[[1, 0]])
    assert_same(operand, before)


@DRAWN
@given(data=st.data())
def test_dynamic_slice_matches_reference(xp, data):
    rank = data.draw(st.integers(0, 4))
    shape = tuple(data.draw(st.integers(0, 5)) for _ in range(rank))
    sizes = tuple(data.draw(st.integers(0, n)) for n in shape)
    starts = [data.draw(st.integers(-8, 8)) for _ in range(rank)]
    operand = arrays_of(data.draw, shape, "int64")
    expected = reference.dynamic_slice(operand, starts, sizes)
    form = data.draw(st.sampled_from(["ints", "0-d arrays", "1-d array"]))
    if form == "0-d arrays":
        starts = [xp.asarray(s, dtype=xp.int16) for s in starts]
    elif form == "1-d array" and rank:
        starts = xp.asarray(starts, dtype=xp.int32)
    assert_same(indexops.dynamic_slice(from_numpy(xp, operand), starts, sizes), expected)


def test_dynamic_slice_spec_examples(xp):
    operand = from_numpy(xp, np.arange(16).reshape(4, 4))
    assert_same(indexops.dynamic_slice(operand, (-1, 3), (2, 2)), [[2, 3], [6, 7]])
    three = from_numpy(xp, np.arange(9).reshape(3, 3))
    assert_same(indexops.dynamic_slice(three, (3, 3), (3, 3)), np.arange(9).reshape(3, 3))


def test_dynamic_slice_of_host_starts_is_a_view_as_documented():
    """Starts on the host give a basic slice: a view of the operand, as ``operand[a:b]``
    is (the docstring says so), through which a later write in place shows."""
    operand = np.arange(6.0)
    window = indexops.dynamic_slice(operand, (1,), (2,))
    assert np.shares_memory(window, operand)
    indexops.dynamic_update_slice(operand, np.array([9.0]), (2,), copy=False)
    np.testing.assert_array_equal(window, [1.0, 9.0])


@pytest.mark.backends("torch")
@pytest.mark.parametrize("kind", ["float32", "bfloat16", "requires_grad", "conj"])
def test_torch_cpu_rows_through_numpy_or_index_select(kind):
    # CPU tensors NumPy can view are gathered by np.take on shared memory; the rest (bf16,
    # autograd, conjugate views) by index_select. Both give index_select's values.
    import torch

    table = torch.arange(24.0).reshape(8, 3)
    if kind == "bfloat16":
        table = table.to(torch.bfloat16)
    elif kind == "requires_grad":
        table.requires_grad_()
    elif kind == "conj":
        table = (table * 1j).conj()
    rows = torch.tensor([[7], [0], [7]])
    result = indexops.gather(table, rows, **ROW_GATHER, slice_sizes=(1, 3))
    expected = table.index_select(0, rows[:, 0])
    assert result.dtype == table.dtype and result.device == table.device
    assert torch.equal(result.detach().resolve_conj(), expected.detach().resolve_conj())
    if kind == "requires_grad":
        result.sum().backward()
        assert table.grad[:, 0].tolist() == [1, 0, 0, 0, 0, 0, 0, 2]


@pytest.mark.backends("jax")
def test_jax_without_x64_works_in_int32_without_warnings():
    # JAX's default config has no int64: positions are int32 there, unsigned indices
    # saturate at the int32 maximum, and nothing asks for int64 (which would warn).
    import jax

    jnp = jax.numpy
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            operand = jnp.arange(12, dtype=jnp.float32).reshape(4, 3)
            rows = jnp.asarray([[3], [0], [2**32 - 1]], dtype=jnp.uint32)
            gathered = indexops.gather(operand, rows, **ROW_GATHER, slice_sizes=(1, 3))
            assert gathered.tolist() == [[9, 10, 11], [0, 1, 2], [9, 10, 11]]
            added = indexops.scatter(
                jnp.zeros((4, 3)),
                jnp.asarray([[1], [1], [7]]),
                jnp.ones((3, 3)),
                **ROW_SCATTER,
                update_computation="add",
            )
            assert added.tolist() == [[0, 0, 0], [2, 2, 2], [0, 0, 0], [0, 0, 0]]
            cache = indexops.scatter_update(
                jnp.zeros((4, 3)), -2, jnp.asarray([[2, -1]]), jnp.ones((2, 3)), copy=True
            )
            assert cache.tolist() == [[0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 0]]
    finally:
        jax.config.update("jax_enable_x64", previous)


# A size 0 on a collapsed or batching dim (StableHLO C9, C12) where the result is empty.
EMPTY_RESULTS = {
    "issue_batching": ((0,), (0, 1, 0), dict(offset_dims=(), collapsed_slice_dims=(),
                       operand_batching_dims=(0,), start_indices_batching_dims=(0,),
                       start_index_map=(), index_vector_dim=2, slice_sizes=(0,))),
    "no_batch": ((3, 4), (0, 1), dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                 start_index_map=(0,), index_vector_dim=1, slice_sizes=(0, 4))),
    "empty_window": ((3, 4), (2, 1), dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                     start_index_map=(0,), index_vector_dim=1, slice_sizes=(0, 0))),
    "empty_operand": ((0, 4), (2, 1), dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                      start_index_map=(0,), index_vector_dim=1, slice_sizes=(0, 0))),
}  # fmt: skip


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds"))
@pytest.mark.parametrize("name", EMPTY_RESULTS)
def test_gather_zero_slice_on_a_dropped_dim_gives_the_empty_result(xp, name, mode):
    operand_shape, index_shape, attrs = EMPTY_RESULTS[name]
    operand = np.zeros(operand_shape, dtype=np.float32)
    indices = np.ones(index_shape, dtype=np.int32)
    expected = reference.gather(operand, indices, **attrs)
    assert expected.size == 0
    result = indexops.gather(from_numpy(xp, operand), from_numpy(xp, indices), mode=mode, **attrs)
    assert_same(result, expected)


FILL_ATTRS = dict(ROW_GATHER, slice_sizes=(1, 2))


@pytest.mark.parametrize(
    ("dtype", "fill_value"),
    [
        ("int32", 0.5),
        ("int32", 2.0),
        ("int32", float("nan")),
        ("int32", 2**31),
        ("int32", -(2**31) - 1),
        ("int32", 1j),
        ("int32", True),
        ("uint8", -1),
        ("uint8", 256),
        ("int16", np.int64(2**15)),
        ("float32", 1j),
        ("float32", True),
        ("float32", 1e39),
        ("float32", -(2**200)),
        ("bool", 1),
        ("bool", 0.0),
        ("float64", "0"),
        ("float64", None.__class__),
    ],
)
def test_gather_fill_value_the_dtype_cannot_hold(xp, dtype, fill_value):
    operand = from_numpy(xp, np.zeros((2, 2), dtype=dtype))
    indices = from_numpy(xp, np.array([[5]], dtype=np.int32))
    with pytest.raises(indexops.IndexOpsTypeError, match=rf"fill_value=.*{dtype}") as info:
        indexops.gather(operand, indices, mode="fill", fill_value=fill_value, **FILL_ATTRS)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    ("dtype", "fill_value"),
    [
        ("int32", -(2**31)),
        ("int8", np.int64(-128)),
        ("uint8", 255),
        ("float32", 7),
        ("float32", -np.inf),
        ("float32", np.float64(0.5)),
        ("float64", float("nan")),
        ("bool", False),
        ("bool", np.bool_(False)),
    ],
)
def test_gather_fill_value_the_dtype_holds(xp, dtype, fill_value):
    operand = np.arange(4).reshape(2, 2).astype(dtype)
    indices = np.array([[1], [5]], dtype=np.int32)
    expected = reference.gather(operand, indices, mode="fill", fill_value=fill_value, **FILL_ATTRS)
    result = indexops.gather(
        from_numpy(xp, operand),
        from_numpy(xp, indices),
        mode="fill",
        fill_value=fill_value,
        **FILL_ATTRS,
    )
    assert_same(result, expected)


# Dask infers a result's type from a real meta array cast to complex (the values are right)
@pytest.mark.filterwarnings("ignore:Casting complex values to real")
def test_gather_fill_value_complex(xp):
    if not hasattr(xp, "complex64"):
        pytest.skip("no complex64")
    operand = np.zeros((2, 2), dtype=np.complex64)
    indices = np.array([[5]], dtype=np.int32)
    for fill_value in (2, -0.5, 1 - 2j):
        result = indexops.gather(
            from_numpy(xp, operand),
            from_numpy(xp, indices),
            mode="fill",
            fill_value=fill_value,
            **FILL_ATTRS,
        )
        assert_same(result, np.full((1, 2), fill_value, dtype=np.complex64))
    with pytest.raises(indexops.IndexOpsTypeError, match="fill_value"):
        indexops.gather(
            from_numpy(xp, operand),
            from_numpy(xp, indices),
            mode="fill",
            fill_value=complex(1e39, 0),
            **FILL_ATTRS,
        )


def test_gather_fill_value_as_a_0d_array_is_checked_by_dtype(xp):
    # its value is not read (it may be traced or on a device): the dtype's kind decides
    operand = from_numpy(xp, np.zeros((2, 2), dtype=np.int32))
    indices = from_numpy(xp, np.array([[5]], dtype=np.int32))
    with pytest.raises(indexops.IndexOpsTypeError, match="fill_value"):
        indexops.gather(operand, indices, mode="fill", fill_value=xp.asarray(0.5), **FILL_ATTRS)
    filled = indexops.gather(
        operand, indices, mode="fill", fill_value=xp.asarray(-3, dtype=xp.int32), **FILL_ATTRS
    )
    assert_same(filled, np.full((1, 2), -3, dtype=np.int32))


def test_clip_moves_each_window_inside_by_the_literal_rule(xp):
    """StableHLO clamping, spelled out: a start moves to ``[0, dim - size]``; the windows
    here are 2 rows tall, so rows 5 and -2 start at 2 and 0 (not 3, not wrapped)."""
    operand = from_numpy(xp, np.arange(12, dtype=np.int32).reshape(4, 3))
    starts = from_numpy(xp, np.array([[5], [-2], [1], [3]]))
    windows = indexops.gather(
        operand, starts, offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,),
        index_vector_dim=1, slice_sizes=(2, 3),
    )  # fmt: skip
    rows = [[6, 7, 8], [9, 10, 11]], [[0, 1, 2], [3, 4, 5]], [[3, 4, 5], [6, 7, 8]]
    assert_same(windows, np.array([rows[0], rows[1], rows[2], rows[0]], dtype=np.int32))
    one_row = indexops.gather(operand, starts, **ROW_GATHER, slice_sizes=(1, 3))
    assert_same(one_row, np.array([[9, 10, 11], [0, 1, 2], [3, 4, 5], [9, 10, 11]], np.int32))
    # dynamic_slice: the same rule for each start, given as ints, 0-d arrays or a mix
    matrix = from_numpy(xp, np.arange(20, dtype=np.int32).reshape(4, 5))
    expected = np.array([[2, 3, 4], [7, 8, 9]], dtype=np.int32)
    low, high = from_numpy(xp, np.array(-3)), from_numpy(xp, np.array(4))
    for starts in ((-3, 4), (low, high), (-3, high), (low, 4)):
        assert_same(indexops.dynamic_slice(matrix, starts, (2, 3)), expected)


@pytest.mark.backends("torch")
def test_torch_clipped_row_gather_reads_at_once_until_a_row_is_outside(monkeypatch):
    """torch's clipped row gather on the CPU below torch's parallel grain is one
    ``index_select``, whose own check finds a row outside; from the first such call that
    executor clips first (its raise costs 17-20 us), while another signature's still reads
    at once; above the grain the row take's own routes. Every result is the clipped read,
    float8 and uint16 as their bits."""
    import torch

    from indexops._backends._torch import TorchBackend

    clipped: list[int] = []
    method = TorchBackend.take_rows_clipped

    def spy(self: Any, table: Any, rows: Any) -> Any:
        clipped.append(rows.shape[0])
        return method(self, table, rows)

    monkeypatch.setattr(TorchBackend, "take_rows_clipped", spy)
    table = np.arange(11.0 * 4).reshape(11, 4)

    def gather(x: Any, rows: list[int]) -> Any:
        starts = torch.tensor(rows)[:, None]
        return indexops.gather(x, starts, **ROW_GATHER, slice_sizes=(1, 4), mode="clip")

    x = torch.from_numpy(table)
    calls = [[1, 2, 3], [1, 12, 3], [4, -1, 0], [0, 10, 9]]
    for rows in calls:
        assert_same(gather(x, rows), table[np.clip(rows, 0, 10)])
    assert clipped == [3, 3, 3]  # the first read at once; from the outside row on, clipped
    clipped.clear()
    assert_same(gather(x, [1, 2, 3, 4]), table[[1, 2, 3, 4]])  # another signature
    many = [k % 11 for k in range(40)]
    assert_same(gather(x, many), table[many])  # more rows than a list's worth: at once
    assert clipped == []
    wide = np.arange(11.0 * 4096).reshape(11, 4096)  # 9 rows of it: above torch's grain
    starts = torch.tensor([3] * 9)[:, None]
    read = indexops.gather(
        torch.from_numpy(wide), starts, **ROW_GATHER, slice_sizes=(1, 4096), mode="clip"
    )
    assert_same(read, wide[[3] * 9])
    assert clipped == [9]  # the row take's own routes
    for dtype in (torch.uint16, torch.float8_e4m3fn):
        bits = torch.from_numpy(table).to(torch.int64).to(dtype)
        read = gather(bits, [5, -3, 40])
        assert torch.equal(read.view(torch.uint8), bits[[5, 0, 10]].view(torch.uint8))
