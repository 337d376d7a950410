"""Figure: gather windows at start indices, and what scatter does with a window that sticks out.

Top row: a 5x7 operand, three start vectors (one per row of ``start_indices``, the vector
along ``index_vector_dim=1``), their 2x3 windows (the third start is clamped back inside)
and the result, whose dim 0 is the batch dim (one per start vector) and whose dims 1 and 2
are the window's ``offset_dims``. Bottom row: the same three windows scattered into zeros
with the three out-of-bounds modes. Every number drawn is computed by indexops.

>>> fig = figure()
>>> len(fig.axes)
6
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import indexops

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

COLOURS = ("#4c72b0", "#dd8452", "#55a868")
SHAPE = (5, 7)
SIZES = (2, 3)
STARTS = np.array([[0, 1], [2, 4], [4, 5]])
GATHER: dict[str, Any] = dict(
    offset_dims=(1, 2),
    collapsed_slice_dims=(),
    start_index_map=(0, 1),
    index_vector_dim=1,
    slice_sizes=SIZES,
)
SCATTER: dict[str, Any] = dict(
    update_window_dims=(1, 2),
    inserted_window_dims=(),
    scatter_dims_to_operand_dims=(0, 1),
    index_vector_dim=1,
)


def clamped(start: np.ndarray) -> np.ndarray:
    """Where gather's ``mode="clip"`` moves a start: the window back inside the operand."""
    return np.clip(start, 0, np.array(SHAPE) - np.array(SIZES))


def grid(ax: Axes, values: np.ndarray, title: str) -> None:
    """Draw ``values`` as a table of cells, row 0 at the top."""
    rows, cols = values.shape
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(length=0, labelsize=10)
    for spine in ax.spines.values():
        spine.set_visible(False)
    for (r, c), value in np.ndenumerate(values):
        ax.add_patch(_cell(r, c, "white", "0.75"))
        ax.text(c, r, str(value), ha="center", va="center", fontsize=10, zorder=3)
    ax.set_title(title, fontsize=11)


def _cell(row: int, col: int, face: str, edge: str, width: int = 1, alpha: float = 1.0) -> Patch:
    """A cell (or ``width`` cells of a row) as a patch."""
    from matplotlib.patches import Rectangle

    corner = (col - 0.5, row - 0.5)
    return Rectangle(corner, width, 1, facecolor=face, edgecolor=edge, alpha=alpha)


def room_outside(ax: Axes) -> None:
    """Widen an operand's panel to show the part of a window asked for outside it."""
    outside = np.max(STARTS + np.array(SIZES), axis=0) - 0.5
    ax.set_xlim(-0.5, max(SHAPE[1] - 0.5, outside[1]) + 0.1)
    ax.set_ylim(max(SHAPE[0] - 0.5, outside[0]) + 0.1, -0.5)


def window(ax: Axes, start: np.ndarray, colour: str, dashed: bool = False) -> None:
    """Fill the window of ``SIZES`` at ``start`` (dashed: outline where it was asked for)."""
    from matplotlib.patches import Rectangle

    (r, c), (h, w) = start, SIZES
    if not dashed:  # only the part inside the operand
        h, w = min(h, SHAPE[0] - r), min(w, SHAPE[1] - c)
    ax.add_patch(
        Rectangle(
            (c - 0.5, r - 0.5),
            w,
            h,
            fill=not dashed,
            alpha=0.9 if dashed else 0.35,
            facecolor=colour,
            edgecolor=colour,
            linewidth=1.6,
            linestyle="--" if dashed else "-",
            clip_on=False,
        )
    )


def gather_row(axes: list[Axes]) -> None:
    operand = np.arange(SHAPE[0] * SHAPE[1]).reshape(SHAPE)
    result = indexops.gather(operand, STARTS, **GATHER)
    grid(axes[0], operand, "operand [5, 7] and its windows (slice_sizes=(2, 3))")
    room_outside(axes[0])
    for start, colour in zip(STARTS, COLOURS):
        window(axes[0], clamped(start), colour)
        if (clamped(start) != start).any():
            window(axes[0], start, colour, dashed=True)
    grid(axes[1], STARTS, "start_indices [3, 2]")
    axes[1].set_xlabel("index_vector_dim=1\n(start_index_map=(0, 1))", fontsize=10)
    axes[1].set_ylabel("batch", fontsize=10)
    for row, colour in enumerate(COLOURS):
        axes[1].add_patch(_cell(row, 0, colour, colour, width=2, alpha=0.3))
    stacked = result.reshape(-1, SIZES[1])
    grid(axes[2], stacked, "result [3, 2, 3]")
    axes[2].set_xlabel("batch dim 0,\noffset_dims (1, 2)", fontsize=10)
    for batch, colour in enumerate(COLOURS):
        for r in range(SIZES[0]):
            axes[2].add_patch(_cell(batch * SIZES[0] + r, 0, colour, colour, width=3, alpha=0.3))
    axes[2].set_yticks(range(len(stacked)))
    axes[2].set_yticklabels([f"{b}, {r}" for b in range(len(STARTS)) for r in range(SIZES[0])])
    axes[0].annotate(
        "start (4, 5) is\nclamped to (3, 4)",
        xy=(5.5, 4.6),
        xytext=(0, 5.45),
        fontsize=10,
        color=COLOURS[2],
        annotation_clip=False,
    )


def scatter_row(axes: list[Axes]) -> None:
    updates = np.arange(1, 1 + len(STARTS) * SIZES[0] * SIZES[1]).reshape(-1, *SIZES)
    for ax, mode in zip(axes, ("drop", "drop_window", "clip")):
        written = indexops.scatter(
            np.zeros(SHAPE, dtype=np.int64), STARTS, updates, mode=mode, **SCATTER
        )
        grid(ax, written, f'scatter, mode="{mode}"')
        room_outside(ax)
        for start, colour in zip(STARTS, COLOURS):
            inside = (clamped(start) == start).all()
            if mode == "clip" or inside:
                window(ax, clamped(start), colour)
            elif mode == "drop":
                window(ax, start, colour)
            if not inside:
                window(ax, start, colour, dashed=True)
    axes[0].set_xlabel("each element outside is\nskipped (StableHLO spec)", fontsize=10)
    axes[1].set_xlabel("a window partly outside is\nskipped whole (XLA, JAX)", fontsize=10)
    axes[2].set_xlabel("the start is clamped\nso the window fits", fontsize=10)


def figure() -> Figure:
    """The gather/scatter window diagram as a matplotlib Figure (no pyplot involved)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.5, 6.6), layout="constrained")
    rows = fig.add_gridspec(2, 1, height_ratios=[1.15, 1])
    top, bottom = fig.add_subfigure(rows[0]), fig.add_subfigure(rows[1])
    gather_row(list(top.subplots(1, 3, width_ratios=[7, 2, 3])))
    scatter_row(list(bottom.subplots(1, 3)))
    return fig
