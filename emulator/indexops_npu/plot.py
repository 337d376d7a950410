"""Draw a report: the cache's slots coloured by the tile and by the core that write them.

Imported only when :meth:`Report.plot <indexops_npu.report.Report.plot>` is called, so
matplotlib (the ``plot`` extra) stays optional. The figure is a plain
:class:`matplotlib.figure.Figure`: no pyplot, so the caller's backend and open figures are
left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .report import Report


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


def draw(report: Report, path: str | None = None, **figure_kwargs: Any) -> Figure:
    """A matplotlib figure of ``report`` (two panels: by tile, by core); saved to ``path``."""
    import matplotlib
    from matplotlib.figure import Figure

    tiles = report.slot_tile
    cores = np.where(tiles >= 0, report.tile_core[np.maximum(tiles, 0)], -1)
    figure_kwargs.setdefault("figsize", (11, 4.5))
    fig = Figure(**figure_kwargs)
    axes = fig.subplots(1, 2)
    cmap = matplotlib.colormaps["tab20"].with_extremes(bad="0.92")
    for ax, values, label in ((axes[0], tiles, "tile"), (axes[1], cores, "vector core")):
        image = np.ma.masked_less(_grid(values, report.cache_shape), 0).astype(float)
        shown = ax.imshow(image, aspect="auto", interpolation="nearest", cmap=cmap)
        fig.colorbar(shown, ax=ax, label=label)
        ax.set_title(f"slots by the {label} that writes them (grey: untouched)", fontsize=9)
        ax.set_xlabel("offset in block" if report.cache_shape[1] > 1 else "slot (wrapped)")
        ax.set_ylabel("block" if report.cache_shape[1] > 1 else "row of slots")
    view = report.tiling
    fig.suptitle(
        f"{report.hardware.name}: {report.views} views, {report.tiles} tiles "
        f"(tile {view.tile_b}x{view.tile_s} tokens), UB peak {report.ub_peak_bytes} B",
        fontsize=10,
    )
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
