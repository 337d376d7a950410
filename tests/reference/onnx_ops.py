"""ONNX's indexing operators, transcribed loop by loop from the operator definitions.

Source: onnx/onnx docs/Operators.md, Gather-13, GatherElements-13, GatherND-13,
ScatterElements-18, ScatterND-18 and Slice-13. Out-of-range indices raise IndexError, as
onnxruntime refuses them; bool ``add``/``mul`` are OR/AND (onnxruntime), and so are
``max``/``min``; duplicates with ``reduction="none"`` apply in row-major order (which ONNX
leaves unspecified).
"""

from __future__ import annotations

import itertools

import numpy as np


def wrap(index: int, size: int) -> int:
    """An index in ``[-size, size - 1]`` counted from the front, or IndexError."""
    if not -size <= index < size:
        raise IndexError(f"index {index} out of range for size {size}")
    return index + size if index < 0 else index


def positions(shape):
    return itertools.product(*(range(n) for n in shape))


def gather(data, indices, axis=0):
    data, indices = np.asarray(data), np.asarray(indices)
    axis %= data.ndim
    shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    out = np.empty(shape, data.dtype)
    q = indices.ndim
    for where in positions(shape):
        k = wrap(int(indices[where[axis : axis + q]]), data.shape[axis])
        out[where] = data[(*where[:axis], k, *where[axis + q :])]
    return out


def gather_elements(data, indices, axis=0):
    data, indices = np.asarray(data), np.asarray(indices)
    axis %= data.ndim
    out = np.empty(indices.shape, data.dtype)
    for where in positions(indices.shape):
        source = list(where)
        source[axis] = wrap(int(indices[where]), data.shape[axis])
        out[where] = data[tuple(source)]
    return out


def gather_nd(data, indices, batch_dims=0):
    data, indices = np.asarray(data), np.asarray(indices)
    b, m = batch_dims, indices.shape[-1]
    shape = indices.shape[:-1] + data.shape[b + m :]
    out = np.empty(shape, data.dtype)
    for where in positions(indices.shape[:-1]):
        tuple_ = [wrap(int(v), data.shape[b + k]) for k, v in enumerate(indices[where])]
        out[where] = data[where[:b] + tuple(tuple_)]
    return out


def combine(reduction, old, new):
    if reduction == "none":
        return new
    if old.dtype == np.bool_:
        return (old or new) if reduction in ("add", "max") else (old and new)
    return {"add": old + new, "mul": old * new, "max": max(old, new), "min": min(old, new)}[
        reduction
    ]


def scatter_elements(data, indices, updates, axis=0, reduction="none"):
    data, indices, updates = np.asarray(data), np.asarray(indices), np.asarray(updates)
    axis %= data.ndim
    out = data.copy()
    targets = []
    for where in positions(indices.shape):  # every index is checked before any write
        target = list(where)
        target[axis] = wrap(int(indices[where]), data.shape[axis])
        targets.append((tuple(target), where))
    for target, where in targets:
        out[target] = combine(reduction, out[target], updates[where])
    return out


def scatter_nd(data, indices, updates, reduction="none"):
    data, indices, updates = np.asarray(data), np.asarray(indices), np.asarray(updates)
    out = data.copy()
    targets = []
    for where in positions(indices.shape[:-1]):
        target = tuple(wrap(int(v), data.shape[k]) for k, v in enumerate(indices[where]))
        targets.append((target, where))
    for target, where in targets:
        for inner in positions(data.shape[len(target) :]):
            element = target + inner
            out[element] = combine(reduction, out[element], updates[where + inner])
    return out


def effective(dim, start, end, step):
    """Slice-13's clamping of one axis: the effective start and end."""
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        return min(max(start, 0), dim), min(max(end, 0), dim)
    return min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)


def slice_(data, starts, ends, axes=None, steps=None):
    data = np.asarray(data)
    axes = list(range(len(starts))) if axes is None else [a % data.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else list(steps)
    chosen = [list(range(n)) for n in data.shape]
    for axis, start, end, step in zip(axes, starts, ends, steps):
        first, last = effective(data.shape[axis], int(start), int(end), int(step))
        taken, i = [], first
        while (step > 0 and i < last) or (step < 0 and i > last):
            taken.append(i)
            i += step
        chosen[axis] = taken
    out = np.empty(tuple(len(c) for c in chosen), data.dtype)
    for where in positions(out.shape):
        out[where] = data[tuple(c[i] for c, i in zip(chosen, where))]
    return out
