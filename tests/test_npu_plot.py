"""The drawings of indexops_npu: what they show at a vLLM-sized cache, and that it reads."""

from __future__ import annotations

import numpy as np
import pytest
from indexops_npu import emulate_scatter_update, plan_scatter_update
from indexops_npu.cli import Problem, random_problem

matplotlib = pytest.importorskip("matplotlib")
from indexops_npu.plot import draw, draw_plans, token_tiles  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.text import Text  # noqa: E402

# vLLM's cache (2048 blocks of 128 slots) and a decode step of 64 sequences, with a small
# d so the test stays cheap: the drawing does not depend on d
VLLM = Problem((2048, 128, 1, 8), (64, 1), "fp16", "int64")


@pytest.fixture(scope="module")
def report():
    input, index, src = random_problem(VLLM, seed=0, padding=0.1)
    return emulate_scatter_update(
        input, -2, index, src, view_shape=(64, 1, 1, 8), tile_shape=(16, 1, 1, 8)
    )


@pytest.fixture(scope="module")
def drawn(report):
    fig = draw(report)
    texts(fig)
    return fig


def texts(fig):
    FigureCanvasAgg(fig).draw()  # tick labels exist once drawn
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def test_every_text_is_10_points_at_least_in_a_column_wide_figure(report):
    # (the committed figures, the plans' included, are checked in tests/test_docs_figures.py)
    fig = draw(report)
    assert fig.get_figwidth() * fig.dpi <= 800
    small = [(t.get_text(), t.get_fontsize()) for t in texts(fig) if t.get_fontsize() < 10]
    assert small == []


def test_the_slot_panel_shows_the_written_slots_of_the_touched_blocks_only(report):
    axes = draw(report).axes
    slots = next(ax for ax in axes if ax.get_title().startswith("written slots"))
    written = np.flatnonzero(report.slot_tile >= 0)
    blocks = np.unique(written // 128)
    assert slots.get_title() == (
        f"written slots: {len(written)} slots, {len(blocks)} blocks touched of 2048"
    )
    ((offset, line),) = [c.get_offsets().T for c in slots.collections]
    assert sorted(offset) == sorted(written % 128)
    assert sorted(set(line)) == list(range(len(blocks)))  # one line per touched block
    low, high = sorted(slots.get_ylim())
    assert low < 0 and len(blocks) - 1 < high < len(blocks) + 3  # no line for an untouched one


def test_tile_colour_bars_tick_whole_tile_numbers(report):
    fig = draw(report)
    texts(fig)
    bars = [ax for ax in fig.axes if ax.get_ylabel() == "tile (execution order)"]
    assert len(bars) == 2
    for bar in bars:
        ticks = [t for t in bar.get_yticks() if -0.5 <= t <= report.tiles - 0.5]
        assert ticks == [0, 1, 2, 3]


@pytest.mark.parametrize("touched", [8, 64, 256, 1000])
def test_the_slot_panels_colour_bar_keeps_its_height_with_many_blocks(touched):
    """The written slots' colour bar is 24 lines of its panel tall (or the panel): the
    panel grows with its lines up to LABELLED, and so does the bar's height, then both
    stop (it shrank on with every block past LABELLED: 2.4% of the panel at 1000, its
    ticks piled on one another)."""
    cache = np.zeros((touched, 2, 1, 4), np.float32)
    index = np.arange(0, 2 * touched, 2).reshape(-1, touched // 8 if touched > 8 else 1)
    view = (*index.shape, 1, 4)
    report = emulate_scatter_update(
        cache, -2, index, np.ones(view, np.float32), view_shape=view, tile_shape=view
    )
    fig = draw(report)
    texts(fig)
    slots = next(ax for ax in fig.axes if ax.get_title().startswith("written slots"))
    bar = [ax for ax in fig.axes if ax.get_ylabel() == "tile (execution order)"][-1]
    share = bar.get_window_extent().height / slots.get_window_extent().height
    assert share >= 24 / 64 - 0.01


def test_titles_count_in_singular_and_plural(report):
    titles = [ax.get_title() for ax in draw(report).axes]
    assert titles[0] == "tokens by tile: 1 view (outlined) of 64x1, tiles of 16x1"
    assert titles[2] == "timeline: 1 view, 4 tiles on 4 of 48 cores"
    plans = plan_scatter_update((64, 16), (4, 8), dtype="fp32", index_dtype="int32")
    one = draw_plans(plans[:1], top=1).axes
    assert one[0].get_title() == "the best 1 plan of 1 (view and tile in tokens)"
    assert one[1].get_title() == "all 1 legal plan at 1 point"


def test_token_panel_colours_each_token_by_its_tile(report):
    tiles = token_tiles(report)
    assert tiles.shape == (64, 1)
    assert (tiles[:, 0] == np.arange(64) // 16).all()


def test_plans_drawing_names_the_best_plans_in_order():
    plans = plan_scatter_update((256, 64), (25, 4), dtype="bf16", index_dtype="int32")
    fig = draw_plans(plans, top=3)
    texts(fig)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [
        f"{i + 1}. view {p.view_shape[0]} rows, tile {p.tile_shape[0]} rows"
        for i, p in enumerate(plans[:3])
    ]
    with pytest.raises(ValueError, match=r"plans=\[\] has nothing to draw"):
        draw_plans([])


def test_every_touched_block_is_labelled_and_readable(report, drawn):
    fig = drawn
    slots = next(ax for ax in fig.axes if ax.get_title().startswith("written slots"))
    blocks = np.unique(np.flatnonzero(report.slot_tile >= 0) // 128)
    assert len(blocks) > 32  # a decode step: a block per sequence, about
    labels = [t.get_text() for t in slots.get_yticklabels() if t.get_visible()]
    assert labels == [str(block) for block in blocks]
    line_points = slots.bbox.height / (len(blocks) + 1) * 72 / fig.dpi
    assert line_points >= 12  # labels of 10 points do not overlap


def test_padding_tokens_are_crossed_out_and_named(report, drawn):
    tokens = drawn.axes[0]
    (crosses,) = tokens.collections
    padding = np.argwhere(report.padding_tokens)  # (b, s) of each padding token
    assert len(padding) == report.padding > 0
    assert sorted(map(tuple, crosses.get_offsets()[:, ::-1])) == sorted(map(tuple, padding))
    (legend,) = [t.get_text() for t in tokens.get_legend().get_texts()]
    assert legend == f"padding token (slot < 0): not written ({report.padding})"


def test_the_best_plans_have_a_colour_each_and_their_points_are_counted():
    plans = plan_scatter_update((16, 8, 1, 16), (2, 4), dtype="fp32", index_dtype="int32")
    fig = draw_plans(plans, top=5)
    bars, spread = fig.axes[:2]
    colours = [tuple(patch.get_facecolor()) for patch in bars.patches]
    assert len(colours) == len(set(colours)) == 5
    points = {(p.tiles, p.views) for p in plans}
    assert len(points) < len(plans)  # plans that share a point: the title says so
    assert spread.get_title() == (
        f"all {len(plans)} legal plans at {len(points)} points: plans alike in views and "
        "tiles share one"
    )
    ranks = {}
    for rank, plan in enumerate(plans[:5], start=1):
        ranks.setdefault((plan.tiles, plan.views), []).append(str(rank))
    numbers = [t.get_text() for t in spread.texts]
    assert sorted(numbers) == sorted(", ".join(r) for r in ranks.values())
