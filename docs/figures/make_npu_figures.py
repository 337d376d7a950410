"""Draw the figures of docs/npu_emulator.md from the code, so they never drift from it.

    python docs/figures/make_npu_figures.py [OUTPUT_DIR]

writes ``npu_plan.png`` (a report's drawing), ``npu_plans.png`` (the ranked plans of
``indexops-npu plan --plot``) and ``npu_fit.png`` (the cost model against PyPTO 0.2.0's SIM)
into OUTPUT_DIR, by default the folder of this script. Each PNG carries
a digest of the numbers it draws in its ``Description``; the tests compare it with what the
code draws now. Only matplotlib's object API is used (no pyplot), so it runs headless.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HERE = Path(__file__).resolve().parent
DPI = 100
"""Dots per inch of the saved figures: 800 pixels for an 8-inch one, about a page's column."""


def digest(*arrays: np.ndarray) -> str:
    """A short digest of numbers, rounded to 1e-9 so it does not depend on float noise."""
    sha = hashlib.sha256()
    for array in arrays:
        sha.update(np.round(np.asarray(array, dtype=float) * 1e9).astype(np.int64).tobytes())
    return sha.hexdigest()[:16]


def plan_figure() -> tuple[Figure, str]:
    """The run of ``indexops-npu run --input 24x32x1x576 --index 8x24 --view 4x24x1x576
    --tile 2x8x1x576 --seed 3`` (8 sequences of 24 tokens, 10% padding), drawn, and the
    digest of what it draws."""
    from indexops_npu import emulate_scatter_update
    from indexops_npu.cli import Problem, random_problem

    problem = Problem((24, 32, 1, 576), (8, 24), "bf16", "int64")
    input, index, src = random_problem(problem, seed=3, padding=0.1)
    report = emulate_scatter_update(
        input, -2, index, src, view_shape=(4, 24, 1, 576), tile_shape=(2, 8, 1, 576)
    )
    schedule = report.estimate.schedule
    numbers = digest(
        report.slot_tile, report.tile_core, report.tile_ub_bytes, schedule.tile_start_s,
        schedule.tile_end_s, schedule.view_start_s, schedule.view_end_s,
    )  # fmt: skip
    return report.plot(), numbers


def plans_figure() -> tuple[Figure, str]:
    """The ranked plans of ``indexops-npu plan --plot`` for the default problem (a decode
    step of 64 sequences of 2 tokens into a 512x128x1x576 bf16 cache), drawn, and the digest
    of what it draws."""
    from indexops_npu import plan_scatter_update
    from indexops_npu.cli import DEFAULT
    from indexops_npu.plot import draw_plans

    plans = plan_scatter_update(
        DEFAULT.input_shape,
        DEFAULT.index_shape,
        dtype=DEFAULT.dtype,
        index_dtype=DEFAULT.index_dtype,
    )
    numbers = digest(
        [p.estimate.time_s for p in plans], [p.views for p in plans], [p.tiles for p in plans]
    )
    return draw_plans(plans, top=10), numbers


def fit_figure() -> tuple[Figure, str]:
    """The cost model against PyPTO 0.2.0's SIM on the published points."""
    from indexops_npu.calibration import FIT_POINTS, SIM_POINTS, model_cost_us, spearman
    from matplotlib.figure import Figure

    sim = np.array([p.sim_cost for p in SIM_POINTS])
    model = np.array([model_cost_us(p) for p in SIM_POINTS])
    fig = Figure(figsize=(6.5, 5))
    ax = fig.subplots()
    markers = {"views 2-D": "o", "views 4-D": "s", "tiles 4-D": "^"}
    for series, marker in markers.items():
        for fitted in (True, False):
            chosen = [
                i
                for i, p in enumerate(SIM_POINTS)
                if p.series == series and (i in FIT_POINTS) == fitted
            ]
            ax.scatter(
                sim[chosen], model[chosen], marker=marker, s=40,
                facecolors=f"C{list(markers).index(series)}" if fitted else "none",
                edgecolors=f"C{list(markers).index(series)}",
                label=f"{series}, {'fitted' if fitted else 'held back'}",
            )  # fmt: skip
    line = np.array([2.0, 200.0])
    ax.plot(line, line, color="0.5", linewidth=0.8, label="model = SIM")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("PyPTO 0.2.0 SIM cost (unit unstated, read as us)", fontsize=11)
    ax.set_ylabel("indexops_npu estimate (us)", fontsize=11)
    ax.tick_params(labelsize=10, which="both")
    errors = model / sim - 1
    ax.set_title(
        f"cost model vs SIM: Spearman rho {spearman(model, sim):.2f}, "
        f"error {errors.min():+.0%} to {errors.max():+.0%}",
        fontsize=10,
    )
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig, digest(sim, model)


FIGURES = {"npu_plan.png": plan_figure, "npu_plans.png": plans_figure, "npu_fit.png": fit_figure}
"""Each figure's file name and the function that draws it."""


def main(out: Path = HERE) -> None:
    """Write every figure of :data:`FIGURES` into ``out``."""
    for name, draw in FIGURES.items():
        fig, numbers = draw()
        fig.savefig(out / name, dpi=DPI, metadata={"Description": f"data {numbers}"})
        print(f"{out / name}: data {numbers}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
