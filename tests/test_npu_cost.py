"""indexops_npu cost model: ranks tilings like PyPTO 0.2.0's SIM, and its schedule."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from indexops_npu import ATLAS_A2, ATLAS_A3, plan_scatter_update
from indexops_npu.calibration import (
    FIT_POINTS,
    SIM_POINTS,
    model_cost_us,
    ranks,
    relative_errors,
    spearman,
)
from indexops_npu.cli import DEFAULT
from indexops_npu.cost import Traffic, estimate, tile_cycles
from indexops_npu.plan import plan_tiling
from indexops_npu.tiling import Tiling, tile_grid

SERIES = sorted({p.series for p in SIM_POINTS})
SIM = np.array([p.sim_cost for p in SIM_POINTS])


@pytest.fixture(scope="module")
def model():
    return np.array([model_cost_us(p) for p in SIM_POINTS])


def in_series(series):
    return [i for i, p in enumerate(SIM_POINTS) if p.series == series]


def test_spearman_matches_the_textbook_formula_without_ties():
    rng = np.random.default_rng(0)
    for n in (3, 5, 10, 40):
        a, b = rng.permutation(n), rng.permutation(n)
        d = (a - b).astype(float)
        assert spearman(a, b) == pytest.approx(1 - 6 * (d * d).sum() / (n * (n * n - 1)))


def test_ranks_share_ties():
    assert ranks(np.array([5.0, 1.0, 5.0, 3.0])).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert spearman([1, 1, 2], [1, 1, 2]) == pytest.approx(1.0)


def test_the_published_points_are_the_reference_notes():
    # section 7: views varied with the tiles fixed; section 2: tileS 16, 64, 128 in one view
    assert [len(in_series(s)) for s in ("views 2-D", "views 4-D", "tiles 4-D")] == [4, 3, 3]
    assert SIM.tolist() == [4.89, 21.69, 61.48, 82.29, 3.98, 24.92, 56.6, 26.91, 6.98, 5.16]
    counts = [plan_tiling(p.input_shape, p.index_shape, dtype=p.dtype, index_dtype=p.index_dtype,
                          view_shape=p.view_shape, tile_shape=p.tile_shape)
              for p in SIM_POINTS]  # fmt: skip
    # the SIM reports one task per tile plus 3 for one-view kernels
    assert [(c.views, c.tiles) for c in counts] == [
        (1, 25), (3, 25), (13, 25), (25, 25), (1, 15), (3, 25), (8, 20), (1, 128), (1, 32), (1, 16)
    ]  # fmt: skip


@pytest.mark.parametrize("series", SERIES)
def test_each_series_is_ranked_as_the_sim_ranks_it(model, series):
    chosen = in_series(series)
    assert spearman(model[chosen], SIM[chosen]) >= 0.95
    assert (np.diff(model[chosen]) * np.diff(SIM[chosen]) > 0).all()  # the same order


def test_all_points_together_and_the_held_back_ones(model):
    assert spearman(model, SIM) >= 0.95
    held = np.setdiff1d(np.arange(len(SIM_POINTS)), FIT_POINTS)
    assert len(held) == 4 and spearman(model[held], SIM[held]) >= 0.95


@pytest.mark.parametrize("series", SERIES)
def test_best_estimate_is_within_10_percent_of_the_best_sim_cost(model, series):
    chosen = in_series(series)
    picked = chosen[int(np.argmin(model[chosen]))]
    assert SIM[picked] <= 1.1 * SIM[chosen].min()


def test_the_documented_fit_error(model):
    errors = model / SIM - 1
    assert np.allclose(errors, relative_errors())
    assert np.abs(errors).max() < 0.5  # docs/npu_emulator.md: within -41% .. +45%
    assert errors.min() > -0.42 and errors.max() < 0.46


@pytest.mark.parametrize("series", SERIES)
def test_the_planner_picks_one_view_for_each_series_problem(model, series):
    point = SIM_POINTS[in_series(series)[0]]
    best = plan_scatter_update(
        point.input_shape, point.index_shape, dtype=point.dtype, index_dtype=point.index_dtype
    )[0]
    assert best.views == 1
    assert best.estimate.time_s * 1e6 <= model[in_series(series)].min() + 1e-9


def test_the_readme_demo_plans_one_view():
    plans = plan_scatter_update(
        DEFAULT.input_shape, DEFAULT.index_shape, dtype="bf16", index_dtype="int64"
    )
    assert plans[0].views == 1
    assert max(p.views for p in plans) > 1  # there were multi-view plans to reject
    same_tile = [p for p in plans if p.tile_shape == plans[0].tile_shape]
    assert [p.views for p in same_tile] == sorted(p.views for p in same_tile)


def test_startup_is_a_profile_field_paid_by_every_view_after_the_first():
    point = SIM_POINTS[3]  # 25 views of one tile
    slower = dataclasses.replace(ATLAS_A2, view_startup_cycles=ATLAS_A2.view_startup_cycles + 1850)
    assert model_cost_us(point, slower) - model_cost_us(point) == pytest.approx(24.0)
    one_view = SIM_POINTS[0]
    assert model_cost_us(one_view, slower) == pytest.approx(model_cost_us(one_view))


def schedule_of(b, s, d, tiling, hardware=ATLAS_A2, stored=None):
    grid = tile_grid(b, s, d, tiling)
    stored = grid.rows if stored is None else stored
    moved = Traffic(grid.rows * d * 2 + grid.rows * 8, stored * d * 2)
    return grid, moved, estimate(grid, moved, stored, hardware)


def test_a_schedule_worked_by_hand():
    hw = dataclasses.replace(
        ATLAS_A2, vector_cores=2, clock_hz=1.0, hbm_bytes_per_s=1e9, view_startup_cycles=1000,
        dispatch_cycles_per_tile=10, tile_overhead_cycles=100, gm_read_bytes_per_cycle=1,
        gm_write_bytes_per_cycle=1, store_issue_cycles=0,
    )  # fmt: skip
    # index [2, 3], d=1, bf16/int64: views of one index row, tiles of one token: 3 tiles/view
    grid, moved, est = schedule_of(2, 3, 1, Tiling(1, 3, 1, 1, 1), hw)
    work = tile_cycles(moved, grid.rows, hw)
    assert work.tolist() == [112.0] * 6  # 100 + 10 bytes read + 2 written
    sched = est.schedule
    assert sched.tile_core.tolist() == [0, 1, 0, 0, 1, 0]
    # view 0: tiles handed out at 10, 20, 30; the third waits for core 0 (free at 122)
    assert sched.tile_start_s.tolist()[:3] == [10, 20, 122]
    assert sched.tile_end_s.tolist()[:3] == [122, 132, 234]
    # view 1 starts when view 0 ends, then waits its start-up
    assert sched.view_start_s.tolist() == [0, 234] and sched.view_tiles_s.tolist() == [0, 1234]
    assert sched.tile_start_s.tolist()[3:] == [1244, 1254, 1356]
    assert est.time_s == sched.view_end_s[-1] == 1468
    assert (est.views, est.tiles, est.waves, est.startup_s) == (2, 6, 4, 1000)
    assert est.dispatch_s == 60 and est.cores_s == 2 * 224 and est.bound == "cores"


@pytest.mark.parametrize(
    ("b", "s", "tiling"),
    [(5, 24, Tiling(3, 7, 1, 8, 64)), (8, 256, Tiling(8, 256, 1, 16, 576)),
     (64, 2, Tiling(4, 2, 1, 1, 576)), (3, 100, Tiling(3, 100, 1, 1, 576))],
)  # fmt: skip
def test_schedules_keep_their_promises(b, s, tiling):
    grid, moved, est = schedule_of(b, s, tiling.tile_d, tiling)
    sched, hw = est.schedule, ATLAS_A2
    clock = hw.clock_hz
    rank = np.cumsum(np.diff(grid.view, prepend=grid.view[0]) != 0)
    # views one after another, tiles inside their view, after their hand-out
    assert np.allclose(sched.view_start_s[1:], sched.view_end_s[:-1])
    assert (sched.tile_start_s >= sched.view_tiles_s[rank] - 1e-15).all()
    assert (sched.tile_end_s <= sched.view_end_s[rank] + 1e-15).all()
    k = np.arange(grid.count) - np.searchsorted(rank, rank)
    handed_out = sched.view_tiles_s[rank] + (k + 1) * hw.dispatch_cycles_per_tile / clock
    assert (sched.tile_start_s >= handed_out - 1e-12).all()
    work = tile_cycles(moved, grid.rows, hw) / clock
    assert np.allclose(sched.tile_end_s - sched.tile_start_s, work)
    # a core runs one tile at a time, in order
    for core in range(hw.vector_cores):
        on = np.flatnonzero(sched.tile_core == core)
        assert (sched.tile_start_s[on][1:] >= sched.tile_end_s[on][:-1] - 1e-12).all()
    assert est.time_s == pytest.approx(sched.view_end_s[-1])


def test_atlas_a3_is_one_die_of_two():
    assert (ATLAS_A3.dies_per_package, ATLAS_A3.vector_cores) == (2, 48)
    assert ATLAS_A3.package_vector_cores == 96 and ATLAS_A2.package_vector_cores == 48
    assert "one die of 2" in ATLAS_A3.scope() and "48 of the package's 96" in ATLAS_A3.scope()
    assert ATLAS_A3.die_link_bytes_per_s < ATLAS_A3.hbm_bytes_per_s
    # per die an A3 is an A2: the same plans and estimates
    shapes = (DEFAULT.input_shape, DEFAULT.index_shape)
    a2, a3 = (
        plan_scatter_update(*shapes, dtype="bf16", index_dtype="int64", hardware=hw)
        for hw in (ATLAS_A2, ATLAS_A3)
    )
    assert [(p.view_shape, p.tile_shape, p.estimate.time_s) for p in a2] == [
        (p.view_shape, p.tile_shape, p.estimate.time_s) for p in a3
    ]


def test_more_views_of_the_same_tiles_cost_more():
    for b, s, d in ((25, 4, 64), (8, 16, 576)):
        times = [
            schedule_of(b, s, d, Tiling(vb, vs, 1, min(4, vs), d))[2].time_s
            for vb, vs in itertools.product((b, max(1, b // 2), 1), (s,))
        ]
        assert times == sorted(times) and times[0] < times[-1]


def test_the_calibrated_model_on_the_published_points(model):
    """The fitted constants (hardware.py) give these times; a change of any of them shows
    here, not only in the ranks, which tolerate it."""
    expected = [5.23, 14.72, 62.15, 119.06, 3.32, 14.73, 37.67, 25.73, 8.46, 7.22]
    np.testing.assert_allclose(model, expected, atol=0.005)
