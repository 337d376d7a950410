"""The site's figures read at the width of its column: no text under 10 pixels as shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DOCS_EXTRA, load_script

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
COLUMN = 720
"""Pixels: about the narrowest the site's article column gets; a wider image is shrunk."""


def smallest_text_px(fig: Figure, dpi: float, column: float | None = COLUMN) -> float:
    """The smallest text of ``fig`` saved at ``dpi``, in pixels as a page shows it in a
    column ``column`` pixels wide (``None``: in pixels of the image)."""
    FigureCanvasAgg(fig).draw()  # tick labels exist once drawn
    width = fig.get_figwidth() * dpi
    shrink = 1.0 if column is None else min(1.0, column / width)
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    return min(sizes) * dpi / 72 * shrink


def image_text_px() -> dict[str, float]:
    """The smallest text of each figure of the site, in pixels of its image, by file stem."""
    dpi = load_script(DOCS / "_ext" / "figures.py").DPI
    found = {
        script: smallest_text_px(load_script(DOCS / "figures" / f"{script}.py").figure(), dpi, None)
        for script in ("gather_windows", "slice_scatter_clamping")
    }
    npu = load_script(DOCS / "figures" / "make_npu_figures.py")
    for name, draw in npu.FIGURES.items():
        found[Path(name).stem] = smallest_text_px(draw()[0], npu.DPI, None)
    return found


@pytest.mark.parametrize("script", ["gather_windows.py", "slice_scatter_clamping.py"])
def test_figures_drawn_by_the_build_read_in_the_column(script):
    pytest.importorskip("sphinx", reason=DOCS_EXTRA)  # the build's extension sets their dpi
    dpi = load_script(DOCS / "_ext" / "figures.py").DPI
    assert smallest_text_px(load_script(DOCS / "figures" / script).figure(), dpi) >= 10


def test_the_npu_figures_read_in_the_column():
    module = load_script(DOCS / "figures" / "make_npu_figures.py")
    for name, draw in module.FIGURES.items():
        fig, _ = draw()
        assert smallest_text_px(fig, module.DPI) >= 10, name


@pytest.mark.parametrize("page", ["gather_scatter.html", "npu_emulator.html"])
def test_figure_text_is_10_px_as_a_1280_px_window_shows_it(page):
    """On the built site (opt in with ``INDEXOPS_SITE``, as for tests/test_docs_site.py)."""
    from test_docs_site import browser_and_site

    screenshots, chromium, site = browser_and_site()
    measures = screenshots.measure(chromium, site / page, screenshots.WINDOWS["desktop"])
    assert measures["figures"], f"{page} shows no figure"
    native = image_text_px()
    for figure in measures["figures"]:
        text_px = native[Path(figure["src"]).stem]  # Sphinx keeps the file's name
        assert screenshots.problems({**measures, "figures": [figure]}, "desktop", text_px) == []
        assert text_px * figure["scale"] >= 10, figure
