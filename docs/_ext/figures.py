"""Draw the documentation's figures on every build.

Each script named in ``figure_scripts`` (paths relative to the docs folder) defines
``figure() -> matplotlib.figure.Figure``; its figure is saved as
``_generated/<script name>.png``, where the pages link it. Nothing uses pyplot, so the
build changes no global matplotlib state.

Every image of the pages links to itself at full size (the page's CSS fits it to the column),
so a figure shrunk to the column can be opened and read whole.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

OUTPUT = "_generated"
DPI = 110
"""Dots per inch of the saved figures."""


def draw(script: Path, target: Path) -> None:
    """Run ``script``'s ``figure()`` and save the figure as ``target``."""
    spec = importlib.util.spec_from_file_location(f"docs_figure_{script.stem}", script)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load the figure script {script}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.figure().savefig(target, dpi=DPI, metadata={"Software": None})


def draw_all(app: Sphinx) -> None:
    folder = Path(app.srcdir) / OUTPUT
    folder.mkdir(exist_ok=True)
    for name in app.config.figure_scripts:
        script = Path(app.srcdir) / name
        draw(script, folder / f"{script.stem}.png")


def link_images(app: Sphinx, doctree: nodes.document) -> None:
    """Mark each image not already in a link as scaled (by 100%): the HTML writer then links
    it to the full-size file (``html_scaled_image_link``)."""
    for image in doctree.findall(nodes.image):
        sized = any(key in image for key in ("width", "height", "scale"))
        if not sized and not isinstance(image.parent, nodes.reference):
            image["scale"] = 100


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("figure_scripts", [], "env")
    app.connect("builder-inited", draw_all)
    app.connect("doctree-read", link_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
