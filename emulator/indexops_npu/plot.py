"""Draw a report (which tile writes which token and slot, and a timeline) or ranked plans.

Imported only when :meth:`Report.plot <indexops_npu.report.Report.plot>` or ``indexops-npu
plan --plot`` draws, so matplotlib (the ``plot`` extra) stays optional. The figures are plain
:class:`matplotlib.figure.Figure` objects: no pyplot, so the caller's backend and open
figures are left alone. They are sized to be read at about 720 pixels wide, the width of a
documentation page's column: every text is at least 10 points.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import BoundaryNorm, Colormap
    from matplotlib.figure import Figure

    from .plan import Plan
    from .report import Report

US = 1e6
"""Microseconds per second: the timeline's unit."""

TEXT = 10
"""Points of the smallest text (ticks, legends); labels and titles are larger."""

WRAP = 64
"""Rows of a 2-D input drawn per line of the slot panel (its "blocks")."""

LINE_INCHES = 0.2
"""Height of one line of the slot panel when it labels every line: 14 points, room for a
label of :data:`TEXT` points."""

LABELLED = 64
"""The most lines of the slot panel labelled one by one; beyond, every k-th line is."""

PADDING = "padding token (slot < 0): not written"
"""The legend of the marks on padding tokens."""


def plural(count: int, word: str) -> str:
    """``count`` and ``word``, with an ``s`` unless ``count`` is one.

    Examples
    --------
    >>> from indexops_npu.plot import plural
    >>> plural(1, "view"), plural(3, "tile")
    ('1 view', '3 tiles')
    """
    return f"{count} {word}{'' if count == 1 else 's'}"


def _style(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=TEXT + 1)
    ax.set_xlabel(xlabel, fontsize=TEXT + 1)
    ax.set_ylabel(ylabel, fontsize=TEXT + 1)
    ax.tick_params(labelsize=TEXT)


def _tile_colours(tiles: int) -> tuple[Colormap, BoundaryNorm]:
    """One colour per tile number: distinct hues up to 20 tiles, a sequential map beyond."""
    import matplotlib
    from matplotlib.colors import BoundaryNorm, ListedColormap

    if tiles <= 20:
        hues = matplotlib.colormaps["tab10" if tiles <= 10 else "tab20"]
        cmap: Colormap = ListedColormap([hues(i) for i in range(tiles)])
    else:
        cmap = matplotlib.colormaps["viridis"].resampled(tiles)
    return cmap, BoundaryNorm(np.arange(tiles + 1) - 0.5, cmap.N)


def _tile_colourbar(fig: Figure, ax: Axes, shown: Any, tiles: int, shrink: float = 1.0) -> None:
    """A colour bar with whole tile numbers only (a tick per tile up to 10), ``shrink``
    times as tall as ``ax``."""
    from matplotlib.ticker import MaxNLocator

    bar = fig.colorbar(shown, ax=ax, pad=0.02, shrink=shrink)
    bar.set_label("tile (execution order)", fontsize=TEXT + 1)
    bar.ax.yaxis.set_major_locator(MaxNLocator(nbins=min(tiles, 10), integer=True))
    bar.ax.tick_params(labelsize=TEXT)
    bar.minorticks_off()


def token_tiles(report: Report) -> np.ndarray:
    """The ``[b, s]`` tile number of each token of the index (its first column chunk's)."""
    grid = report.grid
    b, s = int(grid.b1.max(initial=0)), int(grid.s1.max(initial=0))
    tiles = np.full((b, s), -1)
    for t in np.flatnonzero(grid.c0 == 0):
        tiles[grid.b0[t] : grid.b1[t], grid.s0[t] : grid.s1[t]] = t
    return tiles


def _tokens_panel(fig: Figure, ax: Axes, report: Report) -> None:
    """The index's tokens (sequence by token) coloured by tile, each view outlined."""
    from matplotlib.patches import Rectangle

    tiles = token_tiles(report)
    cmap, norm = _tile_colours(report.tiles)
    b, s = tiles.shape
    shown = ax.imshow(
        np.ma.masked_where(report.padding_tokens, tiles), cmap=cmap.with_extremes(bad="white"),
        norm=norm, aspect="auto", interpolation="nearest", extent=(-0.5, s - 0.5, b - 0.5, -0.5),
    )  # fmt: skip
    _mark_padding(fig, ax, report.padding_tokens)
    grid = report.grid
    for view in np.unique(grid.view):
        mine = grid.view == view
        b0, s0 = grid.b0[mine].min(), grid.s0[mine].min()
        b1, s1 = grid.b1[mine].max(), grid.s1[mine].max()
        ax.add_patch(
            Rectangle((s0 - 0.5, b0 - 0.5), s1 - s0, b1 - b0, fill=False, edgecolor="black", lw=2)
        )
    _tile_colourbar(fig, ax, shown, report.tiles)
    t = report.tiling
    _style(
        ax,
        f"tokens by tile: {plural(report.views, 'view')} (outlined) of {t.view_b}x{t.view_s}, "
        f"tiles of {t.tile_b}x{t.tile_s}",
        "token (s)",
        "sequence (b)",
    )
    ax.set_xlabel("token (s)", fontsize=TEXT + 1, loc="left")  # clear of the padding legend
    _whole_ticks(ax)


def _mark_padding(fig: Figure, ax: Axes, padding: np.ndarray) -> None:
    """A cross on each padding token (left white by the panel), named in a legend under
    the panel's right corner."""
    if not padding.any():
        return
    b, s = np.nonzero(padding)
    height = ax.get_position().height * fig.get_figheight() * 72 / padding.shape[0]
    from matplotlib.transforms import offset_copy

    size = float(np.clip(height, 5, 9))
    ax.scatter(
        s, b, marker="x", color="black", linewidths=1, s=size**2,
        label=f"{PADDING} ({int(padding.sum())})",
    )  # fmt: skip
    under_ticks = offset_copy(ax.transAxes, fig=fig, y=-2 * TEXT, units="points")
    ax.legend(
        loc="upper right", bbox_to_anchor=(1.0, 0.0), bbox_transform=under_ticks,
        fontsize=TEXT, frameon=False, borderaxespad=0, handletextpad=0.3,
        markerscale=6 / size,
    )  # fmt: skip


def _whole_ticks(ax: Axes, x: bool = True) -> None:
    """Ticks at whole numbers from 0 only, on the y axis (and the x axis)."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim()))[not x :]:
        low, high = max(min(low, high), 0), max(low, high)
        if high - low <= 8:  # a few lines: one tick each
            axis.set_major_locator(FixedLocator(range(int(np.ceil(low)), int(high) + 1)))
        else:
            axis.set_major_locator(MaxNLocator(nbins=8, integer=True))


def _slots_panel(fig: Figure, ax: Axes, report: Report) -> None:
    """The written slots only: each touched block a line, each slot a mark at its offset."""
    blocks, block_size = report.cache_shape
    width = _line_width(report)
    written, block, offset, touched = _written_slots(report)
    line = np.searchsorted(touched, block)
    cmap, norm = _tile_colours(report.tiles)
    marker = float(np.clip(3000 / max(len(touched), 1), 4, 60))
    shown = ax.scatter(
        offset, line, c=report.slot_tile[written], cmap=cmap, norm=norm, s=marker, marker="s",
        linewidths=0,
    )  # fmt: skip
    pad = 0.8  # room for the marks of the first and last lines
    ax.set_xlim(-0.02 * width - 1, 1.02 * width)
    ax.set_ylim(len(touched) - 1 + pad, -pad)
    _whole_ticks(ax, x=True)
    step = max(1, -(-len(touched) // LABELLED))  # every line labelled, up to LABELLED
    ax.set_yticks(range(0, len(touched), step), [str(number) for number in touched[::step]])
    ax.tick_params(axis="y", length=2)
    lines = min(max(len(touched), 1), LABELLED)  # (the panel grows with them up to LABELLED)
    _tile_colourbar(fig, ax, shown, report.tiles, shrink=min(1.0, 24 / lines))
    which = "" if step == 1 else f" (every {step}th labelled)"
    if block_size > 1:
        what, of = f"block{which}", f"{plural(len(touched), 'block')} touched of {blocks}"
        xlabel = f"slot in block (of {block_size})"
    else:
        what = f"group k (rows {width}k to {width}k+{width - 1}){which}"
        of = f"{plural(len(touched), 'group')} of {width} rows touched"
        xlabel = f"row - {width}k"
    _style(ax, f"written slots: {plural(len(written), 'slot')}, {of}", xlabel, what)


def _line_width(report: Report) -> int:
    """Slots per line of the slot panel: a block, or :data:`WRAP` rows of a 2-D input."""
    block_size = report.cache_shape[1]
    return block_size if block_size > 1 else WRAP


def _written_slots(report: Report) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The written slots, the block (line of the slot panel) and offset of each, and the
    touched blocks in order."""
    written = np.flatnonzero(report.slot_tile >= 0)
    block, offset = np.divmod(written, _line_width(report))
    return written, block, offset, np.unique(block)


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
        schedule.tile_core, end - start, left=start, height=0.8,
        color=cmap(norm(report.tile_ub_bytes)), edgecolor="black", linewidth=0.3,
    )  # fmt: skip
    views = zip(schedule.view_start_s * US, schedule.view_tiles_s * US, schedule.view_end_s * US)
    total = float(schedule.view_end_s[-1]) * US
    for v, (begin, tiles, finish) in enumerate(views):
        if tiles > begin:
            ax.axvspan(begin, tiles, color="tab:red", alpha=0.25, linewidth=0)
        if v % 2:
            ax.axvspan(tiles, finish, color="0.5", alpha=0.12, linewidth=0)
        if 1 < report.views <= 8 and finish - tiles > total / 12:
            ax.text((tiles + finish) / 2, -1.4, f"view {v}", fontsize=TEXT, ha="center")
    used = int(schedule.tile_core.max(initial=0)) + 1
    ax.set_xlim(0, total)
    ax.set_ylim(used - 0.5, -2.2 if 1 < report.views <= 8 else -0.5)
    bar = fig.colorbar(ScalarMappable(norm, cmap), ax=ax, pad=0.02)
    bar.set_label(f"UB bytes per tile\n(of {hardware.ub_bytes})", fontsize=TEXT + 1)
    bar.ax.tick_params(labelsize=TEXT)
    _whole_ticks(ax, x=False)
    order = f"{report.views} views one after another (red: start-up)"
    cores = f"{plural(report.tiles, 'tile')} on {used} of {plural(hardware.vector_cores, 'core')}"
    _style(
        ax,
        f"timeline: {order if report.views > 1 else '1 view'}, {cores}",
        "estimated time (us)",
        "vector core",
    )


def draw(report: Report, path: str | None = None, **figure_kwargs: Any) -> Figure:
    """A matplotlib figure of ``report``, saved to ``path`` if given.

    Panels: the index's tokens by tile (views outlined, padding tokens crossed out); the
    written slots only, one labelled line per touched block, coloured by the tile whose
    write each keeps (the panel grows with its lines); and the timeline.
    """
    from matplotlib.figure import Figure

    lines = min(len(_written_slots(report)[3]), LABELLED)
    middle_inches = max(2.6, lines * LINE_INCHES)
    figure_kwargs.setdefault("figsize", (8, 5.9 + middle_inches))
    figure_kwargs.setdefault("layout", "constrained")
    fig = Figure(**figure_kwargs)
    top, middle, bottom = fig.subplots(3, 1, height_ratios=[2.6, middle_inches, 2.9])
    _tokens_panel(fig, top, report)
    _slots_panel(fig, middle, report)
    _timeline_panel(fig, bottom, report)
    fig.suptitle(
        f"{report.hardware.name}: UB peak {report.ub_peak_bytes} B per tile, "
        f"estimated {report.time_s * US:.2f} us",
        fontsize=TEXT + 2,
    )
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def _tokens(shape: Sequence[int], rank: int) -> str:
    """A view or tile in tokens: ``BxS`` (4-D), rows (2-D)."""
    return f"{shape[0]}x{shape[1]}" if rank == 4 else f"{shape[0]} rows"


def _rank_colours(count: int) -> list[Any]:
    """A distinct colour for each of ``count`` ranked plans (they repeat past 20)."""
    import matplotlib

    hues = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return [hues(i % hues.N) for i in range(count)]


def _best_bars(ax: Axes, best: Sequence[Plan], count: int) -> None:
    """The estimated time of each of the ``best`` plans (of ``count``), a colour each."""
    rank = len(best[0].view_shape)
    times = np.array([p.estimate.time_s for p in best]) * US
    rows = np.arange(len(best))
    ax.barh(rows, times, color=_rank_colours(len(best)), height=0.7)
    ax.set_yticks(
        rows,
        [
            f"{i + 1}. view {_tokens(p.view_shape, rank)}, tile {_tokens(p.tile_shape, rank)}"
            for i, p in enumerate(best)
        ],
    )
    ax.invert_yaxis()
    for row, (time, plan) in enumerate(zip(times, best)):
        ax.text(
            time, row, f" {time:.2f} us, {plural(plan.views, 'view')}, "
            f"{plural(plan.tiles, 'tile')}", va="center", fontsize=TEXT,
        )  # fmt: skip
    ax.set_xlim(0, times.max() * 1.6)
    _style(
        ax,
        f"the best {plural(len(best), 'plan')} of {count} (view and tile in tokens)",
        "estimated time (us)",
        "",
    )


def _spread(fig: Figure, ax: Axes, plans: Sequence[Plan], best: int) -> None:
    """Every plan by its views and tiles, coloured by its estimated time; the point of each
    of the ``best`` plans ringed in its bar's colour and numbered by its rank."""
    import matplotlib
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    times = np.array([p.estimate.time_s for p in plans]) * US
    points = [(p.tiles, p.views) for p in plans]
    order = np.argsort(-times)  # the fastest drawn last, on top
    tiles, views = np.array(points)[order].T
    cmap = matplotlib.colormaps["viridis_r"]
    norm = LogNorm(times.min(), max(times.max(), times.min() * 1.01))
    shown = ax.scatter(
        tiles, views, c=times[order], cmap=cmap, norm=norm, s=40, edgecolors="black",
        linewidths=0.3,
    )  # fmt: skip
    ranks: dict[tuple[int, int], list[int]] = {}
    for rank, point in enumerate(points[:best], start=1):
        ranks.setdefault(point, []).append(rank)
    colours = _rank_colours(best)
    for (x, y), numbers in ranks.items():
        ax.scatter(
            [x], [y], s=160, facecolors="none", edgecolors=[colours[numbers[0] - 1]],
            linewidths=1.8, label="the best plans, numbered as above" if numbers[0] == 1 else None,
        )  # fmt: skip
        ax.annotate(
            ", ".join(map(str, numbers)), (x, y), xytext=(7, 5), textcoords="offset points",
            fontsize=TEXT,
        )  # fmt: skip
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
    ax.legend(fontsize=TEXT, loc="upper left")
    bar = fig.colorbar(shown, ax=ax, pad=0.02)
    bar.set_label("estimated time (us)", fontsize=TEXT + 1)
    bar.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    bar.ax.yaxis.set_major_formatter(plain)
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    bar.ax.tick_params(labelsize=TEXT, which="both")
    distinct = len(set(points))
    shared = "" if distinct == len(plans) else ": plans alike in views and tiles share one"
    title = f"all {plural(len(plans), 'legal plan')} at {plural(distinct, 'point')}{shared}"
    _style(ax, title, "tiles", "views")


def draw_plans(
    plans: Sequence[Plan], top: int = 10, path: str | None = None, **figure_kwargs: Any
) -> Figure:
    """A matplotlib figure of ranked plans, saved to ``path`` if given.

    Panels: the estimated time of the best ``top`` plans, a colour each, the view and tile
    of each named; and every plan by its number of views and tiles, coloured by its
    estimated time, the best ones ringed in their bar's colour and numbered (plans with the
    same views and tiles share a point: the title counts the points).

    Examples
    --------
    >>> import matplotlib  # the plot extra
    >>> from indexops_npu import plan_scatter_update
    >>> from indexops_npu.plot import draw_plans
    >>> plans = plan_scatter_update([16, 8, 1, 16], [2, 4], dtype="fp32", index_dtype="int32")
    >>> fig = draw_plans(plans, top=3)
    >>> for ax in fig.axes[:2]:
    ...     print(ax.get_title())
    the best 3 plans of 18 (view and tile in tokens)
    all 18 legal plans at 10 points: plans alike in views and tiles share one
    """
    from matplotlib.figure import Figure

    if not plans:
        raise ValueError("draw_plans: plans=[] has nothing to draw: pass at least one plan")
    best = list(plans[:top])
    figure_kwargs.setdefault("figsize", (8, 3 + 0.28 * len(best) + 3.8))
    figure_kwargs.setdefault("layout", "constrained")
    fig = Figure(**figure_kwargs)
    bars, spread = fig.subplots(2, 1, height_ratios=[0.6 + 0.28 * len(best), 3.8])
    _best_bars(bars, best, len(plans))
    _spread(fig, spread, plans, len(best))
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
