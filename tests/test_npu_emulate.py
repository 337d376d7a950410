"""indexops_npu execution: equals indexops.scatter_update, in place, checks before writes."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same, from_numpy, to_numpy
from hypothesis import assume, given
from hypothesis import strategies as st
from indexops_npu import (
    ATLAS_A3,
    RuleViolationError,
    check_scatter_update,
    emulate_scatter_update,
)
from reference import scatter_update as reference
from test_scatter_update import (
    SEED_2D_INDEX,
    SEED_2D_OUT,
    SEED_2D_SRC,
    SEED_4D_INDEX,
    SEED_4D_OUT,
    SEED_4D_SRC,
)

import indexops
from indexops import IndexOpsValueError
from indexops._extension import scatter_update_src_shape

# The emulator writes real values in place: it runs on backends whose arrays hold values
# and can be written (the others: test_unwritable_input_is_an_error).
WRITABLE_VALUES = pytest.mark.backends(lambda backend: backend.writable and backend.has_values)


@pytest.fixture
def make(xp, backend):
    """Arrays of the test backend for the emulator (tests marked WRITABLE_VALUES)."""

    def array(a, dtype=None):
        return from_numpy(xp, np.asarray(a, dtype=dtype))

    return array


@WRITABLE_VALUES
@pytest.mark.parametrize(
    ("shape", "index", "src", "expected", "view", "tile"),
    [
        ((8, 3), SEED_2D_INDEX, SEED_2D_SRC, SEED_2D_OUT, (2, 3), (1, 3)),
        ((8, 3), SEED_2D_INDEX, SEED_2D_SRC, SEED_2D_OUT, (4, 3), (2, 3)),
        ((2, 6, 1, 3), SEED_4D_INDEX, SEED_4D_SRC, SEED_4D_OUT, (1, 2, 1, 3), (1, 1, 1, 3)),
        ((2, 6, 1, 3), SEED_4D_INDEX, SEED_4D_SRC, SEED_4D_OUT, (2, 2, 1, 3), (2, 2, 1, 3)),
    ],
)
def test_seed_examples(make, shape, index, src, expected, view, tile):
    input = make(np.zeros(shape), np.int32)
    report = emulate_scatter_update(
        input,
        -2,
        make(index, np.int64),
        make(src, np.int32),
        view_shape=view,
        tile_shape=tile,
    )
    assert_same(input, np.asarray(expected, dtype=np.int32))
    assert report.tiles >= 1 and report.warnings == ()


def test_pypto_st_case_views_and_tiles():
    # ScatterUpdate_test_2: input [15, 8], index [5, 2], src [10, 8], view [4, 8], tile [2, 8]
    rng = np.random.default_rng(0)
    input = np.zeros((15, 8), np.float32)
    index = rng.permutation(15)[:10].reshape(5, 2).astype(np.int64)
    src = rng.standard_normal((10, 8)).astype(np.float32)
    expected = reference.scatter_update(input, index, src)
    report = emulate_scatter_update(input, -2, index, src, view_shape=(4, 8), tile_shape=(2, 8))
    assert_same(input, expected)
    assert (report.views, report.tiles) == (3, 5)  # views of 2, 2, 1 index rows
    assert report.ub_peak_bytes == 2 * 32 + 32 and report.tile_ub_bytes.tolist() == [96] * 5
    assert report.traffic.read.sum() == 10 * 8 * 4 + 10 * 8
    assert report.gm_bytes == 10 * 8 * 4 + 10 * 8 + 10 * 8 * 4
    # tiles go round-robin over the cores within each view: views of 2, 2 and 1 tiles
    assert report.tile_core.tolist() == [0, 1, 0, 1, 0]
    assert report.tiles_per_core.sum() == 5 and report.tiles_per_core[:3].tolist() == [3, 2, 0]
    assert report.estimate.time_s > 0 and report.estimate.bound in ("cores", "hbm", "dispatch")
    assert report.estimate.views == 3 and report.estimate.startup_s > 0
    assert "tiles 5" in report.summary()


DTYPES = ("float32", "float16", "bfloat16", "int32", "int16")


def bfloat16():
    """NumPy's bfloat16 (from ml_dtypes); skips the test without ml_dtypes."""
    return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)


@st.composite
def problems(draw):
    """A legal problem and tiling for a random rule set, with padding and duplicates."""
    rules = draw(st.sampled_from(("doc", "pypto-0.2.0")))
    rank = draw(st.sampled_from((2, 4)))
    b, s, d = draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 6))
    if rank == 2:
        shape: tuple[int, ...] = (draw(st.integers(1, 12)), d)
        slots = shape[0]
        view = (s * draw(st.integers(1, b + 1)), d)
        tiles = [n for n in range(1, s + 1) if s % n == 0]
        if rules != "doc":
            tiles += [k * s for k in range(2, b + 2)]
        tile = (draw(st.sampled_from(tiles)), d)
    else:
        shape = (draw(st.integers(1, 4)), draw(st.integers(1, 4)), 1, d)
        slots = shape[0] * shape[1]
        view = (draw(st.integers(1, b + 1)), draw(st.integers(1, s + 1)), 1, d)
        tile_d = draw(st.integers(1, d)) if rules != "doc" else d
        tile = (draw(st.integers(1, b + 1)), draw(st.integers(1, s + 1)), 1, tile_d)
    index = draw(st.lists(st.integers(-2, slots - 1), min_size=b * s, max_size=b * s))
    index = np.maximum(np.asarray(index), -1).reshape(b, s)
    src_shape = scatter_update_src_shape(shape, (b, s))
    if draw(st.booleans()):
        dtype = bfloat16()
    else:
        dtype = np.dtype(draw(st.sampled_from(DTYPES[:2] + DTYPES[3:])))
    index_dtype = draw(st.sampled_from(("int16", "int32", "int64")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    input = rng.integers(-50, 50, size=shape).astype(dtype)
    src = rng.integers(-50, 50, size=src_shape).astype(dtype)
    return input, index.astype(index_dtype), src, view, tile, rules


@WRITABLE_VALUES
@given(case=problems())
def test_emulator_equals_the_op(xp, backend, make, case):
    input, index, src, view, tile, rules = case
    assume(backend.library == "numpy" or hasattr(xp, input.dtype.name))  # no f16 everywhere
    expected = reference.scatter_update(input, index, src)
    cache = make(input)
    op = indexops.scatter_update(make(input), -2, make(index), make(src))
    report = emulate_scatter_update(
        cache,
        -2,
        make(index),
        make(src),
        view_shape=view,
        tile_shape=tile,
        rules=rules,
    )
    assert_same(cache, expected)
    assert_same(op, to_numpy(cache))
    assert report.padding == int((index < 0).sum())
    assert int(report.tile_stored[report.grid.c0 == 0].sum()) == int((index >= 0).sum())
    assert report.ub_peak_bytes <= report.hardware.ub_bytes


@given(case=problems())
def test_report_matches_check(case):
    input, index, src, view, tile, rules = case
    result = check_scatter_update(
        input.shape,
        index.shape,
        src.shape,
        dtype=input.dtype,
        index_dtype=index.dtype,
        view_shape=view,
        tile_shape=tile,
        rules=rules,
    )
    assume(result.ok)
    report = emulate_scatter_update(
        input, -2, index, src, view_shape=view, tile_shape=tile, rules=rules
    )
    assert report.ub_peak_bytes == result.ub_bytes
    written = report.slot_tile >= 0
    assert written.sum() == len(np.unique(index[index >= 0]))


def test_duplicates_in_different_tiles_warn_same_tile_does_not():
    src = np.arange(8, dtype=np.float32).reshape(4, 2)
    across = np.zeros((4, 2), np.float32)
    report = emulate_scatter_update(
        across, -2, np.array([[3, 1], [3, -1]]), src, view_shape=(2, 2), tile_shape=(2, 2)
    )
    assert len(report.warnings) == 1 and "slot 3 by tiles [0, 1]" in report.warnings[0]
    assert across[3].tolist() == [4, 5]  # last in row-major order wins
    within = np.zeros((4, 2), np.float32)
    report = emulate_scatter_update(
        within, -2, np.array([[3, 3], [-1, -1]]), src, view_shape=(2, 2), tile_shape=(2, 2)
    )
    assert report.warnings == () and within[3].tolist() == [2, 3]
    assert report.padding == 2 and int((report.slot_tile >= 0).sum()) == 1


def test_ordering_follows_row_major_not_view_order():
    # 4-D views [2, 1]: view 0 holds (0, 0), (1, 0); view 1 holds (0, 1). Row-major: (1, 0) last.
    cache = np.zeros((1, 4, 1, 1), np.int32)
    src = np.array([[[[1]], [[2]]], [[[3]], [[4]]]], np.int32)
    report = emulate_scatter_update(
        cache,
        -2,
        np.array([[0, 0], [0, 3]]),
        src,
        view_shape=(2, 1, 1, 1),
        tile_shape=(1, 1, 1, 1),
    )
    assert cache[0, 0, 0, 0] == 3 and cache[0, 3, 0, 0] == 4 and report.warnings


@WRITABLE_VALUES
def test_out_of_range_stops_before_any_write(make):
    cache = make(np.zeros((2, 4, 1, 2)), np.float32)
    index = make([[0, 1], [2, 8]], np.int64)
    src = make(np.ones((2, 2, 1, 2)), np.float32)
    with pytest.raises(IndexOpsValueError, match=r"index\[1, 1\]=8.*view 1 .*tile 3.*nothing"):
        emulate_scatter_update(
            cache, -2, index, src, view_shape=(1, 2, 1, 2), tile_shape=(1, 1, 1, 2)
        )
    assert_same(cache, np.zeros((2, 4, 1, 2), np.float32))


def test_failed_check_leaves_cache_unchanged():
    cache = np.zeros((2, 4, 1, 2), np.float32)
    args = (cache, -2, np.array([[0, 1]]), np.ones((1, 2, 1, 2), np.float32))
    with pytest.raises(RuleViolationError, match="tile_d_mismatch") as info:
        emulate_scatter_update(*args, view_shape=(1, 2, 1, 2), tile_shape=(1, 1, 1, 1))
    assert info.value.result.kinds == ("tile_d_mismatch",)
    with pytest.raises(RuleViolationError, match="ub_overflow"):
        emulate_scatter_update(
            *args,
            view_shape=(1, 2, 1, 2),
            tile_shape=(1, 2, 1, 2),
            hardware=ATLAS_A3.__class__("tiny", ub_bytes=32),
        )
    assert not cache.any()


def test_pypto_rules_refuse_to_run_undefined_results():
    cache = np.zeros((4, 2), np.float32)
    index = np.array([[0, 1]])
    src = np.ones((2, 2), np.float16)
    assert check_scatter_update(
        cache.shape,
        index.shape,
        src.shape,
        dtype="fp32",
        src_dtype="fp16",
        index_dtype="int64",
        view_shape=(2, 2),
        tile_shape=(2, 2),
        rules="pypto-0.2.0",
    ).ok
    with pytest.raises(RuleViolationError, match="undefined"):
        emulate_scatter_update(
            cache, -2, index, src, view_shape=(2, 2), tile_shape=(2, 2), rules="pypto-0.2.0"
        )
    assert not cache.any()


def test_split_d_under_pypto_rules_writes_column_chunks():
    cache = np.zeros((2, 2, 1, 5), np.int16)
    src = np.arange(20, dtype=np.int16).reshape(2, 2, 1, 5)
    index = np.array([[3, 0], [-1, 2]])
    report = emulate_scatter_update(
        cache,
        -2,
        index,
        src,
        view_shape=(2, 2, 1, 5),
        tile_shape=(1, 2, 1, 2),
        rules="pypto-0.2.0",
    )
    assert_same(cache, reference.scatter_update(np.zeros((2, 2, 1, 5), np.int16), index, src))
    assert report.tiles == 2 * 3 and any("d is never split" in w for w in report.warnings)


def test_numpy_view_in_place_base_sees_the_write():
    base = np.zeros((3, 4, 1, 4), np.float32)
    view = base[:, :, :, ::2]
    emulate_scatter_update(
        view,
        -2,
        np.array([[5]]),
        np.ones((1, 1, 1, 2), np.float32),
        view_shape=(1, 1, 1, 2),
        tile_shape=(1, 1, 1, 2),
    )
    assert base[1, 1, 0].tolist() == [1, 0, 1, 0] and base.sum() == 2


@pytest.mark.backends("torch")
def test_torch_view_and_bfloat16():
    import torch

    base = torch.zeros((6, 4), dtype=torch.bfloat16)
    view = base[::2]
    src = torch.tensor([[1.5, 2, 3, 4]], dtype=torch.bfloat16)
    emulate_scatter_update(view, -2, torch.tensor([[2]]), src, view_shape=(1, 4), tile_shape=(1, 4))
    assert base[4].tolist() == [1.5, 2, 3, 4] and float(base.sum()) == 10.5


@WRITABLE_VALUES
@pytest.mark.parametrize("tile", [(1, 2, 1, 2), (2, 2, 1, 2), (1, 1, 1, 2)])
def test_src_that_views_the_cache_is_read_before_the_write(xp, backend, tile):
    """vLLM's block copy within one cache (``src`` a view of it): each tile reads the rows
    ``src`` held before the call, as ``indexops.scatter_update`` does, not rows an
    earlier tile wrote (blocks 0 and 1 go to blocks 1 and 2)."""
    blocks = np.arange(16, dtype=np.float32).reshape(4, 2, 1, 2)
    slots = from_numpy(xp, np.array([[2, 3], [4, 5]]))
    expected = from_numpy(xp, blocks.copy())  # (NumPy's asarray would share blocks)
    indexops.scatter_update(expected, -2, slots, expected[0:2, ...])
    cache = from_numpy(xp, blocks.copy())
    emulate_scatter_update(
        cache, -2, slots, cache[0:2, ...], view_shape=(2, 2, 1, 2), tile_shape=tile
    )
    assert_same(cache, to_numpy(expected))
    assert_same(cache[1:3, ...], blocks[0:2])


@pytest.mark.backends(lambda backend: not backend.writable)
def test_unwritable_input_is_an_error(xp, backend):
    cache = from_numpy(xp, np.zeros((4, 2), np.float32))
    args = (-2, from_numpy(xp, np.array([[1]])), from_numpy(xp, np.ones((1, 2), np.float32)))
    with pytest.raises(IndexOpsValueError, match="cannot be written in place") as error:
        emulate_scatter_update(cache, *args, view_shape=(1, 2), tile_shape=(1, 2))
    assert "copy=" not in str(error.value)  # (the emulator has no copy argument to pass)
    assert str(error.value).startswith("emulate_scatter_update: input=")
    assert_same(cache, np.zeros((4, 2), np.float32))


def plotted_report():
    """A 4-D emulation with padding, several views and tiles."""
    cache = np.zeros((4, 8, 1, 4), np.float32)
    index = np.array([[0, 1, 2, 3], [9, 10, -1, 12], [30, 31, 20, 21]])
    return emulate_scatter_update(
        cache,
        -2,
        index,
        np.ones((3, 4, 1, 4), np.float32),
        view_shape=(2, 4, 1, 4),
        tile_shape=(1, 2, 1, 4),
    )


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    fig = plotted_report().plot(str(tmp_path / "plan.png"))
    # slots by tile, by core (cores 0 and 1 run two tiles each), timeline; three colour bars
    assert (tmp_path / "plan.png").stat().st_size > 1000 and len(fig.axes) == 6
    flat = np.zeros((10, 3), np.int32)
    report = emulate_scatter_update(
        flat,
        -2,
        np.array([[1, 2], [5, -1]]),
        np.ones((4, 3), np.int32),
        view_shape=(2, 3),
        tile_shape=(1, 3),
    )
    assert len(report.plot().axes) == 6


def test_plot_draws_tokens_written_slots_and_timeline():
    # the cores show on the timeline: no panel of slots by core repeats the one by tile
    pytest.importorskip("matplotlib")
    report = emulate_scatter_update(
        np.zeros((10, 3), np.int32), -2, np.array([[1, 2], [5, -1]]), np.ones((4, 3), np.int32),
        view_shape=(4, 3), tile_shape=(1, 3),
    )  # fmt: skip
    titles = [ax.get_title() for ax in report.plot().axes]
    assert titles[:3] == [
        "tokens by tile: 1 view (outlined) of 2x2, tiles of 1x1",
        "written slots: 3 slots, 1 group of 64 rows touched",
        "timeline: 1 view, 4 tiles on 4 of 48 cores",
    ]
    assert titles[3:] == ["", "", ""]  # the colour bars


def test_timeline_draws_each_tile_on_its_core_when_it_runs():
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_rgba

    report = plotted_report()
    fig = report.plot()
    timeline = next(ax for ax in fig.axes if ax.get_title().startswith("timeline"))
    assert "2 views one after another" in timeline.get_title()
    (bars,) = timeline.containers
    schedule = report.estimate.schedule
    assert len(bars) == report.tiles == 6
    for t, bar in enumerate(bars):
        assert bar.get_x() == pytest.approx(schedule.tile_start_s[t] * 1e6)
        assert bar.get_width() == pytest.approx(
            (schedule.tile_end_s[t] - schedule.tile_start_s[t]) * 1e6
        )
        assert bar.get_y() + bar.get_height() / 2 == pytest.approx(report.tile_core[t])
    # the second view waits for the first and its start-up, shown as a span
    assert bars[4].get_x() > bars[3].get_x() + bars[3].get_width()
    startup = [p for p in timeline.patches if p not in bars.patches]
    assert any(p.get_facecolor()[:3] == to_rgba("tab:red")[:3] for p in startup)
    # bars coloured by UB use: the colour bar goes up to the hardware's UB
    ub_bar = next(ax for ax in fig.axes if "UB bytes per tile" in ax.get_ylabel())
    assert ub_bar.get_ylim()[1] == report.hardware.ub_bytes


@pytest.fixture
def svg_backend():
    """matplotlib on the svg backend (not the Agg that a PNG needs), restored afterwards."""
    matplotlib = pytest.importorskip("matplotlib")
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    yield matplotlib
    matplotlib.use(before)


def test_plot_leaves_matplotlib_state_alone(svg_backend, tmp_path):
    pyplot = pytest.importorskip("matplotlib.pyplot")
    users_figure = pyplot.figure()
    try:
        figures = pyplot.get_fignums()
        report = plotted_report()
        report.plot()
        report.plot(str(tmp_path / "plan.png"))
        assert (tmp_path / "plan.png").read_bytes().startswith(b"\x89PNG")
        assert svg_backend.get_backend() == "svg"
        assert pyplot.get_fignums() == figures
    finally:
        pyplot.close(users_figure)


def test_section_7_calls_int8_runs_the_undefined_ones_are_refused():
    int8 = np.zeros((16, 32), np.int8)
    index = np.array([[3, 7], [-1, 12]], np.int32)
    src = np.arange(128, dtype=np.int8).reshape(4, 32)
    expected = indexops.scatter_update(int8, -2, index, src, copy=True)
    args = dict(view_shape=(4, 32), tile_shape=(2, 32))
    with pytest.raises(RuleViolationError, match="dtype=int8"):
        emulate_scatter_update(int8.copy(), -2, index, src, **args)
    report = emulate_scatter_update(int8, -2, index, src, **args, rules="pypto-0.2.0")
    assert_same(int8, expected)
    assert report.warnings and "int8" in report.warnings[0]
    fp32 = np.zeros((16, 32), np.float32)
    for src, view, tile in (
        (np.ones((4, 16), np.float32), (4, 16), (2, 16)),  # tile's d is src's d
        (np.ones((3, 32), np.float32), (3, 32), (2, 32)),  # src not b*s rows
    ):
        with pytest.raises(RuleViolationError, match="result undefined, not emulated"):
            emulate_scatter_update(
                fp32, -2, index, src, view_shape=view, tile_shape=tile, rules="pypto-0.2.0"
            )
        assert not fp32.any()
