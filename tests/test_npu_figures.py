"""The docs' figures: drawn headless by docs/figures/make_npu_figures.py, never stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import load_script

FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"
SCRIPT = FIGURES / "make_npu_figures.py"


def test_the_script_draws_every_figure_headless_and_the_committed_ones_are_current(tmp_path):
    pytest.importorskip("matplotlib")
    image = pytest.importorskip("PIL.Image")  # matplotlib's own dependency
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MPLBACKEND"] = "agg"
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(root / "emulator")])
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    for name in ("npu_plan.png", "npu_plans.png", "npu_fit.png"):
        drawn = image.open(tmp_path / name)
        committed = image.open(FIGURES / name)
        assert drawn.size[0] > 500 and drawn.info["Description"].startswith("data ")
        # the same numbers drawn: rerun the script when the code changes what it draws
        assert committed.info["Description"] == drawn.info["Description"], (
            f"docs/figures/{name} is stale: run python docs/figures/make_npu_figures.py"
        )


def test_the_script_is_importable_without_drawing():
    module = load_script(SCRIPT)
    assert set(module.FIGURES) == {"npu_plan.png", "npu_plans.png", "npu_fit.png"}
    assert module.digest([1.0, 2.0]) == module.digest([1.0, 2.0 + 1e-12])
    assert module.digest([1.0, 2.0]) != module.digest([1.0, 2.1])
