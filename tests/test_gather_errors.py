"""Every StableHLO gather and dynamic_slice constraint has a test of its error."""

from __future__ import annotations

import numpy as np
import pytest

import indexops

# operand (3, 4, 5, 6), indices (3, 2, 2): dim 0 batches with operand dim 0
BASE = dict(
    operand_shape=(3, 4, 5, 6),
    index_shape=(3, 2, 2),
    offset_dims=(2, 3),
    collapsed_slice_dims=(1,),
    operand_batching_dims=(0,),
    start_indices_batching_dims=(0,),
    start_index_map=(1, 2),
    index_vector_dim=2,
    slice_sizes=(1, 1, 3, 6),
)
# operand (2, 2, 5), indices (2, 2, 1): two batching dims
TWO_BATCHES = dict(
    operand_shape=(2, 2, 5),
    index_shape=(2, 2, 1),
    offset_dims=(2,),
    collapsed_slice_dims=(),
    operand_batching_dims=(0, 1),
    start_indices_batching_dims=(0, 1),
    start_index_map=(2,),
    index_vector_dim=2,
    slice_sizes=(1, 1, 3),
)

VIOLATIONS = [
    ("C1", BASE, dict(offset_dims=(2,))),
    ("C2", BASE, dict(index_vector_dim=4)),
    ("C2", BASE, dict(index_vector_dim=-1)),
    ("C3", BASE, dict(start_index_map=(1,))),
    ("C4", BASE, dict(offset_dims=(3, 2))),
    ("C4", BASE, dict(offset_dims=(2, 2))),
    ("C5", BASE, dict(offset_dims=(2, 4))),
    ("C6", BASE, dict(collapsed_slice_dims=(0,))),
    ("C7", BASE, dict(offset_dims=(2,), collapsed_slice_dims=(3, 1), slice_sizes=(1, 1, 3, 1))),
    ("C8", BASE, dict(collapsed_slice_dims=(4,))),
    ("C9", BASE, dict(slice_sizes=(1, 2, 3, 6))),
    ("C10", TWO_BATCHES, dict(operand_batching_dims=(1, 0), start_indices_batching_dims=(1, 0))),
    ("C11", TWO_BATCHES, dict(operand_batching_dims=(0, 3))),
    ("C12", TWO_BATCHES, dict(slice_sizes=(2, 1, 3))),
    ("C13", TWO_BATCHES, dict(start_indices_batching_dims=(0, 0))),
    ("C14", TWO_BATCHES, dict(start_indices_batching_dims=(0, 3))),
    ("C15", TWO_BATCHES, dict(start_indices_batching_dims=(0, 2))),
    ("C16", BASE, dict(start_indices_batching_dims=())),
    ("C17", TWO_BATCHES, dict(operand_shape=(2, 3, 5))),
    ("C18", BASE, dict(start_index_map=(1, 0))),
    ("C19", BASE, dict(start_index_map=(1, 7))),
    ("C20", BASE, dict(slice_sizes=(1, 1, 3))),
    ("C21", BASE, dict(slice_sizes=(1, 1, 3, 7))),
    ("C21", BASE, dict(slice_sizes=(1, 1, -1, 6))),
]


def call(xp, config):
    config = dict(config)
    operand = xp.zeros(config.pop("operand_shape"), dtype=xp.float32)
    indices = xp.zeros(config.pop("index_shape"), dtype=xp.int32)
    return indexops.gather(operand, indices, **config)


def test_base_configs_are_valid(xp):
    assert call(xp, BASE).shape == (3, 2, 3, 6)
    assert call(xp, TWO_BATCHES).shape == (2, 2, 3)


@pytest.mark.parametrize(("rule", "base", "change"), VIOLATIONS)
def test_each_gather_constraint_has_its_error(xp, rule, base, change):
    with pytest.raises(indexops.IndexOpsValueError, match=rf"(?m)\(gather {rule}\)$") as info:
        call(xp, {**base, **change})
    assert isinstance(info.value, ValueError)
    assert "gather: " in str(info.value) and "is not allowed" in str(info.value)


@pytest.mark.parametrize("slice_sizes", [(1, 0, 3, 6), (0, 1, 3, 6)], ids=["collapsed", "batching"])
def test_gather_zero_slice_on_a_dropped_dim_with_a_non_empty_result_is_refused(xp, slice_sizes):
    # StableHLO C9/C12 allow it, but each result element would come from an empty window
    with pytest.raises(
        indexops.IndexOpsValueError,
        match=r"slice_sizes\[\d\] = 0 .*only when the result is empty.*shape \(3, 2, 3, 6\)",
    ):
        call(xp, {**BASE, "slice_sizes": slice_sizes})


@pytest.mark.parametrize(
    ("operand", "indices", "match"),
    [
        ([1.0, 2.0], np.zeros((1, 1), np.int32), "operand"),
        (np.zeros(3), [[0]], "start_indices"),
        (np.zeros(3), np.zeros((1, 1), np.float32), "start_indices.dtype"),
        (np.zeros(3), np.zeros((1, 1), np.bool_), "start_indices.dtype"),
    ],
)
def test_gather_type_errors(operand, indices, match):
    with pytest.raises(indexops.IndexOpsTypeError, match=match):
        indexops.gather(
            operand,
            indices,
            offset_dims=(),
            collapsed_slice_dims=(0,),
            start_index_map=(0,),
            index_vector_dim=1,
            slice_sizes=(1,),
        )


def test_gather_attribute_and_mode_errors():
    operand, indices = np.zeros(3), np.zeros((1, 1), np.int32)
    attrs = dict(
        offset_dims=(),
        collapsed_slice_dims=(0,),
        start_index_map=(0,),
        index_vector_dim=1,
        slice_sizes=(1,),
    )
    with pytest.raises(indexops.IndexOpsValueError, match="mode='wrap'"):
        indexops.gather(operand, indices, mode="wrap", **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match="slice_sizes"):
        indexops.gather(operand, indices, **{**attrs, "slice_sizes": (1.0,)})
    with pytest.raises(indexops.IndexOpsTypeError, match="index_vector_dim"):
        indexops.gather(operand, indices, **{**attrs, "index_vector_dim": "1"})


@pytest.mark.backends("torch")
def test_gather_mixed_backends_is_a_type_error():
    import torch

    with pytest.raises(indexops.IndexOpsTypeError, match="one library"):
        indexops.gather(
            np.zeros(3),
            torch.zeros((1, 1), dtype=torch.int32),
            offset_dims=(),
            collapsed_slice_dims=(0,),
            start_index_map=(0,),
            index_vector_dim=1,
            slice_sizes=(1,),
        )


@pytest.mark.parametrize(
    ("starts", "sizes", "error", "match"),
    [
        ((0,), (1, 1), indexops.IndexOpsValueError, r"start_indices.*\(dynamic_slice C2\)"),
        ((0, 0), (1,), indexops.IndexOpsValueError, "slice_sizes"),
        ((0, 0), (4, 1), indexops.IndexOpsValueError, r"entry 0 must be in \[0, 3\]"),
        ((0, 0), (-1, 1), indexops.IndexOpsValueError, "slice_sizes"),
        ((0.5, 0), (1, 1), indexops.IndexOpsTypeError, "start_indices"),
        (5, (1, 1), indexops.IndexOpsTypeError, "start_indices"),
    ],
)
def test_dynamic_slice_errors(xp, starts, sizes, error, match):
    with pytest.raises(error, match=match):
        indexops.dynamic_slice(xp.zeros((3, 3)), starts, sizes)


def test_dynamic_slice_array_start_errors(xp):
    operand = xp.zeros((3, 3))
    with pytest.raises(indexops.IndexOpsTypeError, match="dtype"):
        indexops.dynamic_slice(operand, xp.asarray([0.0, 1.0]), (1, 1))
    with pytest.raises(indexops.IndexOpsValueError, match="1-D"):
        indexops.dynamic_slice(operand, xp.zeros((2, 1), dtype=xp.int32), (1, 1))
    with pytest.raises(indexops.IndexOpsValueError, match="0-d"):
        indexops.dynamic_slice(operand, [xp.asarray([1]), 0], (1, 1))


# Attributes in an order of their own (a set, a dict: its keys) or used up by one reading (a
# generator): each was read as its iteration gave it
UNORDERED = {
    "set": lambda values: set(values),
    "dict": lambda values: dict.fromkeys(values, "value"),
    "generator": lambda values: (v for v in values),
}
ROWS = np.arange(12.0).reshape(3, 4)
ATTRIBUTE_CALLS = {
    "offset_dims": lambda form: indexops.gather(
        ROWS, np.array([[1]]), offset_dims=form((1,)), collapsed_slice_dims=(0,),
        start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 4)),
    "update_window_dims": lambda form: indexops.scatter(
        ROWS, np.array([[1]]), np.ones((1, 4)), update_window_dims=form((1,)),
        inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1),
    "slice_sizes": lambda form: indexops.dynamic_slice(ROWS, (1, 0), form((1, 2))),
    "start_indices": lambda form: indexops.dynamic_slice(ROWS, form((1, 0)), (1, 2)),
    "axes": lambda form: indexops.slice_scatter(ROWS, np.ones((1, 4)), [0], [1], [1], form((0,))),
}  # fmt: skip


@pytest.mark.parametrize("form", UNORDERED)
@pytest.mark.parametrize("name", ATTRIBUTE_CALLS)
def test_attributes_are_sequences_not_sets_dicts_or_iterators(name, form):
    with pytest.raises(indexops.IndexOpsTypeError, match=rf"{name}=.* is not allowed: .*sequence"):
        ATTRIBUTE_CALLS[name](UNORDERED[form])
