"""The site's figures read at the width of its column: no text under 10 pixels as shown."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from helpers import DOCS_EXTRA

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
COLUMN = 720
"""Pixels: about the narrowest the site's article column gets; a wider image is shrunk."""


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def smallest_text_px(fig: Figure, dpi: float) -> float:
    """The smallest text of ``fig`` saved at ``dpi``, in pixels as a page shows it."""
    FigureCanvasAgg(fig).draw()  # tick labels exist once drawn
    shrink = min(1.0, COLUMN / (fig.get_figwidth() * dpi))
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    return min(sizes) * dpi / 72 * shrink


@pytest.mark.parametrize("script", ["gather_windows.py", "slice_scatter_clamping.py"])
def test_figures_drawn_by_the_build_read_in_the_column(script):
    pytest.importorskip("sphinx", reason=DOCS_EXTRA)  # the build's extension sets their dpi
    dpi = load(DOCS / "_ext" / "figures.py").DPI
    assert smallest_text_px(load(DOCS / "figures" / script).figure(), dpi) >= 10


def test_the_npu_figures_read_in_the_column():
    module = load(DOCS / "figures" / "make_npu_figures.py")
    for name, draw in module.FIGURES.items():
        fig, _ = draw()
        assert smallest_text_px(fig, module.DPI) >= 10, name
