"""gather and scatter with jax.lax's ``dimension_numbers=`` objects and ``GatherScatterMode``
members: duck-typed on every backend, JAX's own objects where JAX runs."""

from __future__ import annotations

import enum
from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np
import pytest
from backends import DRAWN
from helpers import assert_same, from_numpy
from reference import gather as gather_ref
from reference import scatter as scatter_ref

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError


class GatherNumbers(NamedTuple):
    """Not JAX's class, only its fields (hashable, as JAX's, for static jit arguments)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterNumbers(NamedTuple):
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()  # JAX's name of input_batching_dims
    scatter_indices_batching_dims: tuple[int, ...] = ()


ROWS = GatherNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
BATCHED = GatherNumbers((), (1,), (1,), (0,), (0,))  # one element per row: take_along_axis
WINDOWS = ScatterNumbers((1,), (), (0,))
ELEMENTS = ScatterNumbers((), (1,), (1,), (0,), (0,))


class GatherScatterMode(enum.Enum):
    """Stands for jax.lax's enum, which is recognised by its name (JAX is not imported)."""

    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3


@DRAWN
def test_gather_reads_the_fields_and_the_last_dim(xp):
    operand = np.arange(12.0).reshape(4, 3)
    rows = np.array([[3], [0], [9]])
    result = indexops.gather(
        *(from_numpy(xp, a) for a in (operand, rows)), dimension_numbers=ROWS, slice_sizes=(1, 3)
    )
    assert_same(result, operand[[3, 0, 3]])
    picks = np.array([[[2], [0]], [[1], [1]], [[0], [2]], [[2], [2]]])
    expected = gather_ref.gather(operand, picks, index_vector_dim=2, slice_sizes=(1, 1),
                                 **BATCHED._asdict())  # fmt: skip
    result = indexops.gather(
        *(from_numpy(xp, a) for a in (operand, picks)),
        dimension_numbers=BATCHED,
        slice_sizes=(1, 1),
    )
    assert_same(result, expected)


@DRAWN
def test_scatter_reads_the_fields_and_jax_batching_name(xp):
    starts, pair = np.array([[3], [1]]), np.array([[1.0, 2.0], [3.0, 4.0]])
    result = indexops.scatter(
        *(from_numpy(xp, a) for a in (np.zeros(4), starts, pair)), dimension_numbers=WINDOWS
    )
    assert_same(result, np.array([0.0, 3.0, 4.0, 1.0]))  # drop: per element, indexops' own
    result = indexops.scatter(
        *(from_numpy(xp, a) for a in (np.zeros(4), starts, pair)),
        dimension_numbers=WINDOWS,
        mode=GatherScatterMode.FILL_OR_DROP,
    )
    assert_same(result, np.array([0.0, 3.0, 4.0, 0.0]))  # lax.scatter's: the whole window
    table, picks = np.zeros((2, 3)), np.array([[[2], [2]], [[0], [1]]])
    updates = np.array([[1.0, 2.0], [3.0, 4.0]])
    result = indexops.scatter(
        *(from_numpy(xp, a) for a in (table, picks, updates)),
        dimension_numbers=ELEMENTS,
        update_computation="add",
    )
    expected = scatter_ref.scatter(
        table, picks, updates, update_window_dims=(), inserted_window_dims=(1,),
        scatter_dims_to_operand_dims=(1,), index_vector_dim=2, input_batching_dims=(0,),
        scatter_indices_batching_dims=(0,), update_computation="add",
    )  # fmt: skip
    assert_same(result, expected)


def test_lax_modes_and_their_strings():
    operand, rows = np.arange(6.0).reshape(3, 2), np.array([[2], [5]])
    read = dict(dimension_numbers=ROWS, slice_sizes=(1, 2))
    filled = np.array([[4.0, 5.0], [np.nan, np.nan]])
    clipped = np.array([[4.0, 5.0], [4.0, 5.0]])
    for mode, expected in [(GatherScatterMode.FILL_OR_DROP, filled), ("drop", filled),
                           ("fill", filled), (GatherScatterMode.CLIP, clipped)]:  # fmt: skip
        np.testing.assert_array_equal(indexops.gather(operand, rows, mode=mode, **read), expected)
    with pytest.raises(IndexOpsTypeError, match=r"mode=<GatherScatterMode.ONE_HOT: 3>"):
        indexops.gather(operand, rows, mode=GatherScatterMode.ONE_HOT, **read)
    write = dict(dimension_numbers=WINDOWS)
    starts, pair = np.array([[3]]), np.array([[1.0, 2.0]])
    for mode, expected in [("fill", [0.0, 0, 0, 0]), (GatherScatterMode.CLIP, [0.0, 0, 1, 2]),
                           ("drop", [0.0, 0, 0, 1])]:  # fmt: skip
        result = indexops.scatter(np.zeros(4), starts, pair, mode=mode, **write)
        np.testing.assert_array_equal(result, expected)


def test_an_explicit_index_vector_dim_wins():
    operand, rows = np.arange(6.0).reshape(3, 2), np.array([[2, 0]])  # vectors along dim 0
    result = indexops.gather(
        operand, rows, dimension_numbers=ROWS, slice_sizes=(1, 2), index_vector_dim=0
    )
    np.testing.assert_array_equal(result, operand[[2, 0]])


def test_errors_name_the_argument():
    operand, rows = np.arange(6.0).reshape(3, 2), np.array([[1]])
    with pytest.raises(IndexOpsValueError, match=r"not both \(also given: \['offset_dims'\]\)"):
        indexops.gather(operand, rows, dimension_numbers=ROWS, offset_dims=(1,), slice_sizes=(1, 2))
    with pytest.raises(IndexOpsTypeError, match="it has no start_index_map"):
        indexops.gather(
            operand, rows, dimension_numbers=SimpleNamespace(offset_dims=(1,),
            collapsed_slice_dims=(0,)), slice_sizes=(1, 2),
        )  # fmt: skip
    with pytest.raises(IndexOpsTypeError, match=r"index_vector_dim=None .* defaults to the last"):
        indexops.gather(operand, rows, slice_sizes=(1, 2), **ROWS._asdict())
    with pytest.raises(IndexOpsTypeError, match="inserted_window_dims=None"):
        indexops.scatter(np.zeros(3), rows, np.ones(1), update_window_dims=(), index_vector_dim=1)
    with pytest.raises(IndexOpsValueError, match="gather C5"):  # the fields are validated
        indexops.gather(
            operand, rows, dimension_numbers=SimpleNamespace(offset_dims=(5,),
            collapsed_slice_dims=(0,), start_index_map=(0,)), slice_sizes=(1, 2),
        )  # fmt: skip


GATHER_ATTRIBUTES = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
SCATTER_ATTRIBUTES = {
    "update_window_dims": (1,), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
}  # fmt: skip


@pytest.mark.parametrize("op", ["gather", "scatter"])
@pytest.mark.parametrize("left_out", [0, 1, 2])
def test_each_required_attribute_left_out_is_named(op, left_out):
    """Each of the three attributes, left out alone, is named with the hint that
    ``dimension_numbers=`` could stand for them."""
    operand, rows = np.arange(6.0).reshape(3, 2), np.array([[1]])
    attributes = dict(GATHER_ATTRIBUTES if op == "gather" else SCATTER_ATTRIBUTES)
    name = list(attributes)[left_out]
    del attributes[name]
    with pytest.raises(IndexOpsTypeError, match=rf"{name}=None .*dimension_numbers="):
        if op == "gather":
            indexops.gather(operand, rows, **attributes, index_vector_dim=1, slice_sizes=(1, 2))
        else:
            indexops.scatter(operand, rows, np.ones((1, 2)), **attributes, index_vector_dim=1)


@pytest.mark.backends("jax")
def test_jax_objects_unchanged():
    import jax
    from jax import lax

    jnp = jax.numpy
    operand = jnp.arange(12.0).reshape(4, 3)
    rows = jnp.asarray([[3], [0], [7]])
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    for mode in lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP, "fill":
        by_jax = lax.gather(operand, rows, numbers, slice_sizes=(1, 3), mode=mode)
        by_indexops = jax.jit(
            lambda x, i, mode=mode: indexops.gather(
                x, i, dimension_numbers=numbers, slice_sizes=(1, 3), mode=mode
            )
        )(operand, rows)
        np.testing.assert_array_equal(np.asarray(by_indexops), np.asarray(by_jax))
    scatter_numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,)
    )
    starts, pair = jnp.asarray([[3], [1]]), jnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    by_jax = lax.scatter_add(jnp.zeros(4), starts, pair, scatter_numbers)
    by_indexops = indexops.scatter(
        jnp.zeros(4), starts, pair, dimension_numbers=scatter_numbers,
        update_computation="add", mode=lax.GatherScatterMode.FILL_OR_DROP,
    )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(by_indexops), np.asarray(by_jax))


@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_repeat_calls_find_named_tuples_of_int_tuples_without_reading_them(op, monkeypatch):
    """A repeat call whose ``dimension_numbers`` is a named tuple of int tuples (as
    jax.lax's) finds its executor by that object, or by an equal one of its type, without
    reading the fields again; other objects (a list field, a SimpleNamespace) are read on
    every call. Every result is the reference's."""
    from indexops._ops import gather as gather_module
    from indexops._ops import scatter as scatter_module

    module = gather_module if op == "gather" else scatter_module
    reads: list[Any] = []
    window_attributes = module.window_attributes

    def spy(*args: Any) -> Any:
        reads.append(args[3])
        return window_attributes(*args)

    monkeypatch.setattr(module, "window_attributes", spy)
    operand, rows = np.arange(21.0).reshape(7, 3), np.array([[3], [0], [3]])  # (a shape of its own)
    if op == "gather":
        expected = operand[[3, 0, 3]]
        fields = ((1,), (0,), (0,))
        call = lambda numbers: indexops.gather(  # noqa: E731
            operand, rows, dimension_numbers=numbers, slice_sizes=(1, 3)
        )
        kind = GatherNumbers
    else:
        expected = operand.copy()
        np.add.at(expected, [3, 0, 3], np.ones((3, 3)))
        fields = ((1,), (0,), (0,))
        call = lambda numbers: indexops.scatter(  # noqa: E731
            operand, rows, np.ones((3, 3)), dimension_numbers=numbers, update_computation="add"
        )
        kind = ScatterNumbers
    numbers = kind(*fields)
    for _ in range(3):
        assert_same(call(numbers), expected)
    assert reads == [numbers]  # the first call only
    reads.clear()
    assert_same(call(kind(*fields)), expected)  # an equal one
    assert reads == []
    names = [
        field for _, field in (module.GATHER_FIELDS if op == "gather" else module.SCATTER_FIELDS)
    ]
    for other in (SimpleNamespace(**dict(zip(names, fields))), kind([1], (0,), (0,))):
        reads.clear()
        for _ in range(2):
            assert_same(call(other), expected)
        assert reads == [other, other]  # (a list field: the named tuple too)
