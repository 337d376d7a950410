"""Draw a report: the cache's slots by the tile (and core) that writes them, and a timeline.

Imported only when :meth:`Report.plot <indexops_npu.report.Report.plot>` is called, so
matplotlib (the ``plot`` extra) stays optional. The figure is a plain
:class:`matplotlib.figure.Figure`: no pyplot, so the caller's backend and open figures are
left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .report import Report

US = 1e6
"""Microseconds per second: the timeline's unit."""


def _grid(values: np.ndarray, cache_shape: tuple[int, int]) -> np.ndarray:
    """Slot values laid out as blocks (rows) by offsets in a block (columns).

    A 2-D input (block size 1) is wrapped into rows of up to 64 slots.
    """
    blocks, block_size = cache_shape
    if block_size == 1:
        width = min(64, max(1, blocks))
        padded = np.full(-(-blocks // width) * width, -1)
        padded[:blocks] = values
        return padded.reshape(-1, width)
    return values.reshape(blocks, block_size)


def _cache_panel(fig: Figure, ax: Axes, report: Report, values: np.ndarray, label: str) -> None:
    """The cache's slots coloured by ``values`` (one per slot, -1 for untouched)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab20"].with_extremes(bad="0.92")
    image = np.ma.masked_less(_grid(values, report.cache_shape), 0).astype(float)
    shown = ax.imshow(image, aspect="auto", interpolation="nearest", cmap=cmap)
    fig.colorbar(shown, ax=ax, label=label)
    ax.set_title(f"slots by the {label} that writes them (grey: untouched)", fontsize=9)
    ax.set_xlabel("offset in block" if report.cache_shape[1] > 1 else "slot (wrapped)")
    ax.set_ylabel("block" if report.cache_shape[1] > 1 else "row of slots")


def _timeline_panel(fig: Figure, ax: Axes, report: Report) -> None:
    """Views one after another, each tile a bar on its core coloured by its UB bytes."""
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    schedule, hardware = report.estimate.schedule, report.hardware
    norm = Normalize(0, hardware.ub_bytes)
    cmap = matplotlib.colormaps["viridis"]
    start, end = schedule.tile_start_s * US, schedule.tile_end_s * US
    ax.barh(
        schedule.tile_core,
        end - start,
        left=start,
        height=0.8,
        color=cmap(norm(report.tile_ub_bytes)),
        edgecolor="black",
        linewidth=0.3,
    )
    views = zip(schedule.view_start_s * US, schedule.view_tiles_s * US, schedule.view_end_s * US)
    for v, (begin, tiles, finish) in enumerate(views):
        if tiles > begin:
            ax.axvspan(begin, tiles, color="tab:red", alpha=0.25, linewidth=0)
        if v % 2:
            ax.axvspan(tiles, finish, color="0.5", alpha=0.12, linewidth=0)
        if report.views <= 12:
            ax.text(tiles, -1, f"view {v}", fontsize=7, va="bottom")
    ax.set_xlim(0, float(schedule.view_end_s[-1]) * US)
    ax.set_ylim(hardware.vector_cores - 0.5, -1.5)
    label = f"UB bytes per tile (of {hardware.ub_bytes})"
    fig.colorbar(ScalarMappable(norm, cmap), ax=ax, label=label)
    ax.set_title(
        f"timeline: {report.views} views one after another (red: start-up), "
        f"{report.tiles} tiles on {hardware.vector_cores} cores",
        fontsize=9,
    )
    ax.set_xlabel("estimated time (us)")
    ax.set_ylabel("vector core")


def draw(report: Report, path: str | None = None, **figure_kwargs: Any) -> Figure:
    """A matplotlib figure of ``report``, saved to ``path`` if given.

    Panels: the cache's slots by tile; by vector core, only when some core runs more than
    one tile (otherwise it would repeat the first); and the timeline.
    """
    from matplotlib.figure import Figure

    tiles = report.slot_tile
    by_core = bool(report.tiles_per_core.max(initial=0) > 1)
    widths = [1.0, 1.0, 1.6] if by_core else [1.0, 1.6]
    figure_kwargs.setdefault("figsize", (17, 4.8) if by_core else (12, 4.8))
    fig = Figure(**figure_kwargs)
    axes = fig.subplots(1, len(widths), width_ratios=widths)
    _cache_panel(fig, axes[0], report, tiles, "tile")
    if by_core:
        cores = np.where(tiles >= 0, report.tile_core[np.maximum(tiles, 0)], -1)
        _cache_panel(fig, axes[1], report, cores, "vector core")
    _timeline_panel(fig, axes[-1], report)
    view = report.tiling
    fig.suptitle(
        f"{report.hardware.name}: {report.views} views, {report.tiles} tiles "
        f"(tile {view.tile_b}x{view.tile_s} tokens), UB peak {report.ub_peak_bytes} B, "
        f"estimated {report.time_s * US:.2f} us",
        fontsize=10,
    )
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
