"""Writing in place where torch allows it, and a named error where it does not.

torch refuses in-place writes to inference tensors outside ``torch.inference_mode()``, to
leaves that require grad (and their views) while grad mode is on, and to expanded tensors
(elements that share memory). Every writing op, with ``copy=False`` and ``copy=None``, in
each of those modes; and the reason in the ``copy=False`` error of every library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import ROW_SCATTER

import indexops
from indexops import IndexOpsValueError

torch = pytest.importorskip("torch")

# Each op writes ones into row 1 of a [4, 4] float32 array.
EXPECTED = np.zeros((4, 4), np.float32)
EXPECTED[1] = 1


def _row(x: Any) -> Any:
    return torch.ones(1, 4, dtype=x.dtype, device=x.device)


def _slot(x: Any) -> Any:
    return torch.tensor([[1]], device=x.device)


WRITES: dict[str, Callable[[Any, bool | None], Any]] = {
    "scatter": lambda x, copy: indexops.scatter(x, _slot(x), _row(x), **ROW_SCATTER, copy=copy),
    "scatter_update": lambda x, copy: indexops.scatter_update(x, -2, _slot(x), _row(x), copy=copy),
    "dynamic_update_slice": lambda x, copy: indexops.dynamic_update_slice(
        x, _row(x), (1, 0), copy=copy
    ),
    "slice_scatter": lambda x, copy: indexops.slice_scatter(
        x, _row(x), [1], [2], [1], [0], copy=copy
    ),
    "at.set": lambda x, copy: indexops.at(x)[1].set(_row(x)[0], copy=copy),
    "at.add": lambda x, copy: indexops.at(x)[1].add(1.0, copy=copy),
}
ops = pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
in_place_copies = pytest.mark.parametrize("copy", [False, None])


def _values(x: Any) -> np.ndarray:
    return x.detach().numpy()


def _assert_written_in_place(write: Callable[[Any, bool | None], Any], x: Any, copy: Any) -> None:
    result = write(x, copy)
    assert result is x
    np.testing.assert_array_equal(_values(x), EXPECTED)


def _assert_copied(write: Callable[[Any, bool | None], Any], x: Any) -> None:
    """copy=None gives the written values in a new array and leaves ``x`` as it was."""
    before = _values(x).copy()
    result = write(x, None)
    assert result is not x
    np.testing.assert_array_equal(_values(result), EXPECTED)
    np.testing.assert_array_equal(_values(x), before)


def _assert_refused(write: Callable[[Any, bool | None], Any], x: Any, *reason: str) -> None:
    """copy=False is the named error, giving ``reason``, and nothing is written."""
    before = _values(x).copy()
    with pytest.raises(IndexOpsValueError, match=r"copy=False is not allowed") as error:
        write(x, False)
    for fragment in (*reason, "pass copy=True"):
        assert fragment in str(error.value)
    np.testing.assert_array_equal(_values(x), before)


# -- torch.inference_mode() ---------------------------------------------------------------


@ops
@in_place_copies
def test_inference_tensor_is_written_in_place_inside_inference_mode(write, copy):
    with torch.inference_mode():
        x = torch.zeros(4, 4)
        assert x.is_inference()
        _assert_written_in_place(write, x, copy)


@ops
@in_place_copies
def test_normal_tensor_is_written_in_place_inside_inference_mode(write, copy):
    x = torch.zeros(4, 4)
    with torch.inference_mode():
        _assert_written_in_place(write, x, copy)
    assert not x.is_inference()


def _inference_tensor() -> Any:
    with torch.inference_mode():
        return torch.zeros(4, 4)


@ops
def test_inference_tensor_outside_inference_mode_is_a_named_error(write):
    _assert_refused(write, _inference_tensor(), "inference tensor", "torch.inference_mode()")


@ops
def test_inference_tensor_outside_inference_mode_is_copied_for_copy_none(write):
    _assert_copied(write, _inference_tensor())


@ops
def test_inference_mode_turned_off_inside_it_refuses_inference_tensors(write):
    x = _inference_tensor()
    with torch.inference_mode(), torch.inference_mode(False):
        _assert_refused(write, x, "inference tensor")
        _assert_copied(write, x)


# -- leaves that require grad -------------------------------------------------------------


def _leaf() -> Any:
    return torch.zeros(4, 4, requires_grad=True)


@ops
@in_place_copies
def test_leaf_requiring_grad_is_written_in_place_under_no_grad(write, copy):
    x = _leaf()
    with torch.no_grad():
        _assert_written_in_place(write, x, copy)
    assert x.is_leaf and x.requires_grad


@ops
@in_place_copies
def test_leaf_requiring_grad_is_written_in_place_inside_inference_mode(write, copy):
    x = _leaf()
    with torch.inference_mode():
        _assert_written_in_place(write, x, copy)


@ops
def test_leaf_requiring_grad_with_grad_on_is_a_named_error(write):
    _assert_refused(write, _leaf(), "leaf tensor that requires grad", "torch.no_grad()")


@ops
def test_leaf_requiring_grad_with_grad_on_is_copied_for_copy_none(write):
    _assert_copied(write, _leaf())


@ops
def test_view_of_a_leaf_requiring_grad_with_grad_on_is_refused_or_copied(write):
    view = torch.zeros(8, 4, requires_grad=True)[2:6]
    assert not view.is_leaf
    _assert_refused(write, view, "leaf tensor that requires grad (or a view of one)")
    _assert_copied(write, view)


@ops
def test_tensor_computed_from_a_leaf_is_written_in_place_with_grad_on(write):
    x = _leaf() * 0  # not a leaf: autograd records the write
    _assert_written_in_place(write, x, False)
    assert x.grad_fn is not None


# -- expanded tensors ---------------------------------------------------------------------


def _expanded() -> Any:
    return torch.zeros(1, 4).expand(4, 4)


@ops
def test_expanded_tensor_is_a_named_error(write):
    _assert_refused(write, _expanded(), "expanded tensor", "stride 0")


@ops
def test_expanded_tensor_is_copied_for_copy_none(write):
    _assert_copied(write, _expanded())


@ops
@in_place_copies
def test_non_contiguous_tensor_without_repeats_is_written_in_place(write, copy):
    x = torch.zeros(4, 4).t()  # strided, no element repeated
    assert not x.is_contiguous()
    _assert_written_in_place(write, x, copy)


def test_length_one_axis_of_stride_zero_is_written_in_place():
    x = torch.zeros(16).as_strided((1, 4, 4), (0, 1, 4))  # transposed, nothing repeated
    assert not x.is_contiguous()
    indexops.dynamic_update_slice(x, torch.ones(1, 1, 4), (0, 1, 0), copy=False)
    np.testing.assert_array_equal(x[0].numpy(), EXPECTED)


def test_expanded_meta_tensor_is_copied_for_copy_none():
    x = torch.zeros(1, 4, device="meta").expand(4, 4)
    result = indexops.scatter_update(x, -2, _slot(x), _row(x), copy=None)
    assert result is not x and result.shape == (4, 4) and result.device.type == "meta"


@pytest.mark.filterwarnings("error:Dynamo:UserWarning")  # nothing traced unfaithfully
@pytest.mark.parametrize(
    ("make", "mode", "copy", "in_place"),
    [
        (_expanded, torch.enable_grad, None, False),
        (_leaf, torch.no_grad, False, True),
        (_leaf, torch.enable_grad, None, False),
    ],
    ids=["expanded", "leaf under no_grad", "leaf with grad on"],
)
def test_under_torch_compile(make, mode, copy, in_place):
    torch._dynamo.reset()
    x = make()
    compiled = torch.compile(WRITES["scatter_update"], fullgraph=True)
    with mode():
        result = compiled(x, copy)
    assert (result is x) == in_place
    np.testing.assert_array_equal(_values(result), EXPECTED)


# -- the reason in the copy=False error of other libraries -------------------------------


def _numpy_read_only() -> np.ndarray:
    x = np.zeros((4, 4), np.float32)
    x.flags.writeable = False
    return x


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_numpy_read_only, "it is a read-only NumPy array (flags.writeable is False)"),
        (
            lambda: np.broadcast_to(np.zeros(4, np.float32), (4, 4)),
            "it is a broadcast view (np.broadcast_to's results are read-only)",
        ),
    ],
    ids=["read-only", "broadcast_to"],
)
def test_numpy_error_says_why(make, reason):
    x = make()
    with pytest.raises(IndexOpsValueError) as error:
        indexops.scatter_update(x, -2, np.array([[1]]), np.ones((1, 4), np.float32))
    assert f"input (numpy.ndarray) cannot be written in place: {reason}; pass copy=True" in str(
        error.value
    )


@pytest.mark.backends("jax")
def test_jax_error_says_why():
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(IndexOpsValueError, match="cannot be written in place: JAX arrays are"):
        indexops.dynamic_update_slice(jnp.zeros(4), jnp.ones(1), (0,), copy=False)


@pytest.mark.backends("dask")
def test_dask_error_says_why():
    da = pytest.importorskip("dask.array")
    with pytest.raises(IndexOpsValueError, match="cannot be written in place: Dask arrays are"):
        indexops.dynamic_update_slice(da.zeros(4), da.ones(1), (0,), copy=False)


# -- large copies through NumPy -------------------------------------------------------------


@ops
def test_large_tensors_are_copied_by_numpy_unless_autograd_records(write, monkeypatch):
    """A functional write of a tensor of NUMPY_COPY_MIN_BYTES or more copies it through
    NumPy (huge pages where torch's allocator asks for none): the same values in a tensor
    of its own, ``x`` untouched; a tensor that requires grad keeps torch's clone, and its
    gradient."""
    from indexops._backends import _torch

    rows = _torch.NUMPY_COPY_MIN_BYTES // 16  # float32 rows of 4: the threshold exactly
    from_numpy, made = torch.from_numpy, []
    monkeypatch.setattr(torch, "from_numpy", lambda a: made.append(a.nbytes) or from_numpy(a))
    x = torch.zeros(rows, 4)
    result = write(x, True)
    assert made == [x.nbytes] and result is not x
    assert not np.shares_memory(_values(result), _values(x)) and not x.any()
    np.testing.assert_array_equal(_values(result)[:4], EXPECTED)
    assert not result[4:].any()

    made.clear()
    leaf = torch.zeros(rows, 4, requires_grad=True)
    result = write(leaf, True)
    assert made == [] and result.grad_fn is not None
    result.sum().backward()
    assert leaf.grad is not None and leaf.grad.shape == leaf.shape
