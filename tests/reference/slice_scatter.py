"""Oracle for OpenVINO SliceScatter-15, a literal transcription of its spec.

The spec's NumPy snippet is ``out = data.copy(); out[slices] = updates``. OpenVINO's
runtime differs from the snippet in two ways, both transcribed here: Python slicing is
replaced by ONNX Slice clamping (written out below, one axis at a time), and ``updates``
must have exactly the slice shape (no broadcasting). The write is an element-by-element
loop over ``updates``, so the oracle shares no indexing machinery with the library.
"""

from __future__ import annotations

import numpy as np


def onnx_indices(dim: int, start: int, stop: int, step: int) -> list[int]:
    """The indices written along one axis, by the ONNX Slice rule OpenVINO implements."""
    if start < 0:
        start += dim
    if stop < 0:
        stop += dim
    if step > 0:
        start = min(max(start, 0), dim)
        stop = min(max(stop, 0), dim)
    else:
        start = min(max(start, 0), dim - 1)
        stop = min(max(stop, -1), dim - 1)
    indices = []
    i = start
    while (step > 0 and i < stop) or (step < 0 and i > stop):
        indices.append(i)
        i += step
    return indices


def slice_indices(
    shape: tuple[int, ...],
    start: list[int],
    stop: list[int],
    step: list[int],
    axes: list[int] | None = None,
) -> list[list[int]]:
    """For each axis of ``data``, the list of indices the slice covers."""
    if axes is None:
        axes = list(range(len(start)))
    per_axis = [list(range(dim)) for dim in shape]
    for b, e, s, a in zip(start, stop, step, axes, strict=True):
        a = a + len(shape) if a < 0 else a
        per_axis[a] = onnx_indices(shape[a], b, e, s)
    return per_axis


def slice_shape(
    shape: tuple[int, ...],
    start: list[int],
    stop: list[int],
    step: list[int],
    axes: list[int] | None = None,
) -> tuple[int, ...]:
    """The shape ``updates`` must have."""
    return tuple(len(ix) for ix in slice_indices(shape, start, stop, step, axes))


def slice_scatter(
    data: np.ndarray,
    updates: np.ndarray,
    start: list[int],
    stop: list[int],
    step: list[int],
    axes: list[int] | None = None,
) -> np.ndarray:
    """``data`` with ``updates`` written into the slice (valid inputs only)."""
    per_axis = slice_indices(data.shape, start, stop, step, axes)
    assert updates.shape == tuple(len(ix) for ix in per_axis), "no broadcasting"
    out = np.copy(data)
    for position in np.ndindex(*updates.shape):
        target = tuple(per_axis[axis][k] for axis, k in enumerate(position))
        out[target] = updates[position]
    return out
