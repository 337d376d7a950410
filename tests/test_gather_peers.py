"""gather against peers: the seed's examples and jax.lax.gather."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same, from_numpy
from hypothesis import given
from hypothesis import strategies as st
from strategies import arrays_of, window_cases

import indexops


def test_seed_gather_rows_of_a_matrix(xp):
    # anvil nvl_gather example; R's matrix(1:9, nrow = 3) is column-major, indices 1-based
    operand = from_numpy(xp, np.arange(1, 10, dtype=np.int32).reshape(3, 3, order="F"))
    indices = from_numpy(xp, np.array([[0], [2]], dtype=np.int32))
    result = indexops.gather(
        operand,
        indices,
        slice_sizes=(1, 3),
        offset_dims=(1,),
        collapsed_slice_dims=(0,),
        start_index_map=(0,),
        index_vector_dim=1,
    )
    assert_same(result, np.array([[1, 4, 7], [3, 6, 9]], dtype=np.int32))


@pytest.mark.backends("jax")
@given(data=st.data())
def test_gather_matches_jax_lax_gather_clip(data):
    import jax

    jax.config.update("jax_enable_x64", True)
    case = data.draw(window_cases())
    operand = arrays_of(data.draw, case.operand_shape, "float32")
    indices, ivd = case.indices, case.index_vector_dim
    if ivd == indices.ndim:
        indices = indices[..., None]
    indices = np.moveaxis(indices, ivd, -1)
    batching = tuple(a - (a > ivd) for a in case.start_indices_batching_dims)
    numbers = jax.lax.GatherDimensionNumbers(
        offset_dims=case.offset_dims,
        collapsed_slice_dims=case.collapsed_slice_dims,
        start_index_map=case.start_index_map,
        operand_batching_dims=case.operand_batching_dims,
        start_indices_batching_dims=batching,
    )
    expected = jax.lax.gather(
        operand, indices, numbers, case.slice_sizes, mode=jax.lax.GatherScatterMode.CLIP
    )
    result = indexops.gather(operand, case.indices, **case.gather_attrs())
    assert_same(result, np.asarray(expected))
