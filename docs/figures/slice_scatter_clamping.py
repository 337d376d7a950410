"""Figure: which elements ``slice_scatter`` writes along one axis of size 6.

One row per ``start:stop:step``: the cells written, numbered by the element of
``updates`` that lands there, next to what Python slicing selects. Every row is computed
by :func:`indexops.slice_scatter`; the number of elements comes from the ONNX Slice rule
that OpenVINO follows (the call refuses any other ``updates`` length).

>>> fig = figure()
>>> len(fig.axes)
1
>>> slice_length(6, -10, INT64_MIN, -1), len(range(6)[-10:INT64_MIN:-1])
(1, 0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import indexops

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DIM = 6
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
CASES = (
    (1, 5, 2, "in range"),
    (-25, 25, 2, "both clamped to [0, 6]"),
    (-4, -1, 1, "negatives count from the end"),
    (INT64_MAX, INT64_MIN, -2, "int64 max/min: from the end, backwards"),
    (-2, 0, -1, "negative step stops before stop"),
    (4, 2, 1, "empty: needs updates of length 0"),
    (-10, INT64_MIN, -1, "start, stop < -6, step < 0: OpenVINO writes 0, Python nothing"),
)


def slice_length(dim: int, start: int, stop: int, step: int) -> int:
    """The number of elements ONNX Slice (and so OpenVINO) selects along an axis."""
    start, stop = (v + dim if v < 0 else v for v in (start, stop))
    if step > 0:
        start, stop = min(max(start, 0), dim), min(max(stop, 0), dim)
        return max(0, -(-(stop - start) // step))
    start, stop = min(max(start, 0), dim - 1), min(max(stop, -1), dim - 1)
    return max(0, -(-(start - stop) // -step))


def label(value: int) -> str:
    return {INT64_MAX: "max", INT64_MIN: "min"}.get(value, str(value))


DIFFERS = "#c44e52"
"""The outline of an element where Python's slice and ONNX's clamping differ."""


def figure() -> Figure:
    """The clamping cases as a matplotlib Figure (no pyplot involved)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    fig = Figure(figsize=(8.5, 0.55 * len(CASES) + 1.3), layout="constrained")
    ax = fig.subplots()
    for row, (start, stop, step, note) in enumerate(CASES):
        count = slice_length(DIM, start, stop, step)
        updates = np.arange(1, count + 1)
        written = indexops.slice_scatter(
            np.zeros(DIM, dtype=np.int64), updates, [start], [stop], [step]
        )
        python = set(range(DIM)[start:stop:step])
        for col in range(DIM):
            value = int(written[col])
            face = "#4c72b0" if value else "white"
            ax.add_patch(
                Rectangle(
                    (col, -row - 0.4),
                    0.9,
                    0.8,
                    facecolor=face,
                    edgecolor="0.6",
                    alpha=0.5 if value else 1,
                )
            )
            if value:
                ax.text(col + 0.45, -row, f"u[{value - 1}]", ha="center", va="center", fontsize=10)
            if (col in python) != bool(value):
                ax.add_patch(
                    Rectangle(
                        (col + 0.05, -row - 0.35), 0.8, 0.7, fill=False, edgecolor=DIFFERS, lw=2.5
                    )
                )
        ax.text(
            -0.3,
            -row,
            f"{label(start)}:{label(stop)}:{step}",
            ha="right",
            va="center",
            fontsize=11,
            family="monospace",
        )
        ax.text(DIM + 0.2, -row, note, ha="left", va="center", fontsize=10)
    for col in range(DIM):
        ax.text(col + 0.45, 0.7, str(col), ha="center", fontsize=10, color="0.4")
    ax.text(
        0,
        -len(CASES) + 0.1,
        "red outline: Python's slice x[start:stop:step] differs here",
        fontsize=10,
        color=DIFFERS,
    )
    ax.set_xlim(-3.2, DIM + 5.2)
    ax.set_ylim(-len(CASES) - 0.2, 1.1)
    ax.set_axis_off()
    ax.set_title(
        "slice_scatter on an axis of size 6: the elements written (u[k]: updates[k])", fontsize=11
    )
    return fig
