"""scatter against peers: the seeds' examples, jax.lax.scatter*, and every constraint's error."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same, from_numpy, to_numpy
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import arrays_of, window_cases

import indexops


def test_seed_scatter_into_a_zero_vector(xp):
    # anvil nvl_scatter example, 1-based positions 1 and 3 -> 0 and 2
    result = indexops.scatter(
        from_numpy(xp, np.zeros(5, np.float32)),
        from_numpy(xp, np.array([[0], [2]], np.int32)),
        from_numpy(xp, np.array([10, 30], np.float32)),
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1,
    )
    assert_same(result, np.array([10, 0, 30, 0, 0], np.float32))


def test_seed_dynamic_update_slice_examples(xp):
    x = from_numpy(xp, np.arange(1, 6, dtype=np.int32))
    update = from_numpy(xp, np.array([10, 20], np.int32))
    assert_same(
        indexops.dynamic_update_slice(x, update, (1,)), np.array([1, 10, 20, 4, 5], np.int32)
    )
    block = from_numpy(xp, np.array([[1, 3], [2, 4]], np.int32))  # R fills column-major
    expected = np.zeros((3, 4), np.int32)
    expected[1:3, 2:4] = [[1, 3], [2, 4]]
    assert_same(
        indexops.dynamic_update_slice(from_numpy(xp, np.zeros((3, 4), np.int32)), block, (1, 2)),
        expected,
    )


JAX_SCATTERS = {
    None: "scatter",
    "add": "scatter_add",
    "mul": "scatter_mul",
    "min": "scatter_min",
    "max": "scatter_max",
}


@pytest.mark.backends("jax")
@given(data=st.data())
def test_scatter_matches_jax_lax_fill_or_drop(data):
    import jax

    jax.config.update("jax_enable_x64", True)
    case = data.draw(window_cases())
    # XLA:CPU 0.10 fails its own HLO verifier on scatters into a rank-0 operand, and with
    # an empty index vector it combines only some of the updates (openxla/xla #48716);
    # test_empty_index_vector_combines_every_update covers that case against the reference
    assume(len(case.operand_shape) > 0 and len(case.start_index_map) > 0)
    combiner = data.draw(st.sampled_from(list(JAX_SCATTERS)))
    operand = arrays_of(data.draw, case.operand_shape, "int64")
    updates = arrays_of(data.draw, case.window_layout_shape(), "int64")
    indices, ivd = case.indices, case.index_vector_dim
    if ivd == indices.ndim:
        indices = indices[..., None]
    indices = np.moveaxis(indices, ivd, -1)
    numbers = jax.lax.ScatterDimensionNumbers(
        update_window_dims=case.offset_dims,
        inserted_window_dims=case.collapsed_slice_dims,
        scatter_dims_to_operand_dims=case.start_index_map,
        operand_batching_dims=case.operand_batching_dims,
        scatter_indices_batching_dims=tuple(
            a - (a > ivd) for a in case.start_indices_batching_dims
        ),
    )
    lax = getattr(jax.lax, JAX_SCATTERS[combiner])
    expected = np.asarray(
        lax(operand, indices, updates, numbers, mode=jax.lax.GatherScatterMode.FILL_OR_DROP)
    )
    result = to_numpy(
        indexops.scatter(
            operand,
            case.indices,
            updates,
            update_computation=combiner,
            mode="drop_window",
            **case.scatter_attrs(),
        )
    )
    if combiner is None:
        # replace: compare only where at most one update lands (jax leaves duplicates unordered)
        hits = to_numpy(
            indexops.scatter(
                np.zeros_like(operand),
                case.indices,
                np.ones_like(updates),
                update_computation="add",
                mode="drop_window",
                **case.scatter_attrs(),
            )
        )
        np.testing.assert_array_equal(result[hits <= 1], expected[hits <= 1])
    else:
        np.testing.assert_array_equal(result, expected)


BASE = dict(
    input_shape=(3, 4, 5, 6),
    index_shape=(3, 2, 2),
    updates_shape=(3, 2, 3, 6),
    update_window_dims=(2, 3),
    inserted_window_dims=(1,),
    input_batching_dims=(0,),
    scatter_indices_batching_dims=(0,),
    scatter_dims_to_operand_dims=(1, 2),
    index_vector_dim=2,
)
TWO_BATCHES = dict(
    input_shape=(2, 2, 5),
    index_shape=(2, 2, 1),
    updates_shape=(2, 2, 3),
    update_window_dims=(2,),
    inserted_window_dims=(),
    input_batching_dims=(0, 1),
    scatter_indices_batching_dims=(0, 1),
    scatter_dims_to_operand_dims=(2,),
    index_vector_dim=2,
)
VIOLATIONS = [
    ("C2", BASE, dict(update_window_dims=(2,))),
    ("C4", BASE, dict(updates_shape=(3, 3, 3, 6))),
    ("C4", BASE, dict(updates_shape=(3, 2, 3, 7))),
    ("C7", BASE, dict(update_window_dims=(3, 2))),
    ("C8", BASE, dict(update_window_dims=(2, 4))),
    ("C9", BASE, dict(inserted_window_dims=(0,))),
    (
        "C10",
        BASE,
        dict(update_window_dims=(2,), inserted_window_dims=(3, 1), updates_shape=(3, 2, 3)),
    ),
    ("C11", BASE, dict(inserted_window_dims=(4,))),
    ("C12", TWO_BATCHES, dict(input_batching_dims=(1, 0), scatter_indices_batching_dims=(1, 0))),
    ("C13", TWO_BATCHES, dict(input_batching_dims=(0, 3))),
    ("C14", TWO_BATCHES, dict(scatter_indices_batching_dims=(0, 0))),
    ("C15", TWO_BATCHES, dict(scatter_indices_batching_dims=(0, 3))),
    ("C16", TWO_BATCHES, dict(scatter_indices_batching_dims=(0, 2))),
    ("C17", BASE, dict(scatter_indices_batching_dims=())),
    ("C18", TWO_BATCHES, dict(input_shape=(2, 3, 5))),
    ("C19", BASE, dict(scatter_dims_to_operand_dims=(1,))),
    ("C20", BASE, dict(scatter_dims_to_operand_dims=(1, 0))),
    ("C21", BASE, dict(scatter_dims_to_operand_dims=(1, 7))),
    ("C22", BASE, dict(index_vector_dim=4)),
]


def call(xp, config, **kwargs):
    config = dict(config)
    target = xp.zeros(config.pop("input_shape"), dtype=xp.float32)
    indices = xp.zeros(config.pop("index_shape"), dtype=xp.int32)
    updates = xp.ones(config.pop("updates_shape"), dtype=xp.float32)
    return indexops.scatter(target, indices, updates, **config, **kwargs)


def test_base_configs_are_valid(xp):
    assert call(xp, BASE).shape == (3, 4, 5, 6)
    assert call(xp, TWO_BATCHES).shape == (2, 2, 5)


@pytest.mark.parametrize(("rule", "base", "change"), VIOLATIONS)
def test_each_scatter_constraint_has_its_error(xp, rule, base, change):
    config = {**base, **change}
    with pytest.raises(indexops.IndexOpsValueError, match=rf"(?m)\(scatter {rule}\)$"):
        call(xp, config)


@pytest.mark.parametrize("updates_shape", [(3, 2, 3), (3, 2, 3, 6, 1)])
def test_updates_of_the_wrong_rank_are_named(xp, updates_shape):
    # before the check of update_window_dims' range (C8), which blamed that attribute
    with pytest.raises(
        indexops.IndexOpsValueError,
        match=r"(?m)^scatter: updates\.shape=.* rank 4: .*\(scatter C4\)$",
    ):
        call(xp, {**BASE, "updates_shape": updates_shape})


def test_scatter_dtype_combiner_and_mode_errors(xp):
    target = xp.zeros(3)
    indices = xp.zeros((1, 1), dtype=xp.int32)
    attrs = dict(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1,
    )
    with pytest.raises(indexops.IndexOpsTypeError, match=r"updates.dtype.*\(scatter C6\)"):
        indexops.scatter(target, indices, xp.ones(1, dtype=xp.int32), **attrs)
    with pytest.raises(indexops.IndexOpsValueError, match="update_computation='sub'"):
        indexops.scatter(target, indices, xp.ones(1), update_computation="sub", **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match="update_computation=3"):
        indexops.scatter(target, indices, xp.ones(1), update_computation=3, **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match="update_computation"):
        indexops.scatter(
            xp.zeros(3, dtype=xp.bool),
            indices,
            xp.ones(1, dtype=xp.bool),
            update_computation="add",
            **attrs,
        )
    for name in ("min", "max"):  # complex numbers have no order in the Array API
        with pytest.raises(indexops.IndexOpsTypeError, match=f"update_computation='{name}'"):
            indexops.scatter(
                xp.zeros(3, dtype=xp.complex64),
                indices,
                xp.ones(1, dtype=xp.complex64),
                update_computation=name,
                **attrs,
            )
    with pytest.raises(indexops.IndexOpsValueError, match="mode='wrap'"):
        indexops.scatter(target, indices, xp.ones(1), mode="wrap", **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match="mode=3"):
        indexops.scatter(target, indices, xp.ones(1), mode=3, **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match=r"scatter_indices\.dtype"):
        indexops.scatter(target, xp.zeros((1, 1)), xp.ones(1), **attrs)
    with pytest.raises(indexops.IndexOpsTypeError, match="copy"):
        indexops.scatter(target, indices, xp.ones(1), copy="yes", **attrs)


def test_failed_calls_leave_input_untouched(xp, backend):
    before = np.arange(6.0)
    target = from_numpy(xp, before)
    indices = from_numpy(xp, np.array([[1], [9]]))
    attrs = dict(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1,
    )
    with pytest.raises(indexops.IndexOpsValueError, match=r"updates\.shape"):
        indexops.scatter(target, indices, xp.ones(3, dtype=xp.float64), copy=None, **attrs)
    if not backend.writable:
        with pytest.raises(indexops.IndexOpsValueError, match="cannot be written"):
            indexops.scatter(target, indices, xp.ones(2, dtype=xp.float64), copy=False, **attrs)
    assert_same(target, before)


@pytest.mark.parametrize(
    ("update_shape", "starts", "error", "match"),
    [
        ((2, 2), (0,), indexops.IndexOpsValueError, r"\(dynamic_update_slice C4\)"),
        ((4, 1), (0, 0), indexops.IndexOpsValueError, r"\(dynamic_update_slice C6\)"),
        ((2,), (0, 0), indexops.IndexOpsValueError, r"\(dynamic_update_slice C3\)"),
    ],
)
def test_dynamic_update_slice_errors(xp, update_shape, starts, error, match):
    operand = xp.zeros((3, 3))
    with pytest.raises(error, match=match):
        indexops.dynamic_update_slice(operand, xp.ones(update_shape), starts)
    with pytest.raises(indexops.IndexOpsTypeError, match=r"\(dynamic_update_slice C2\)"):
        indexops.dynamic_update_slice(operand, xp.ones((1, 1), dtype=xp.int32), (0, 0))
