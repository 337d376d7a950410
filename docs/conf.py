"""Sphinx configuration: pydata-sphinx-theme, numpydoc, MyST Markdown.

Build with ``nox -s docs`` (warnings are errors; ``python docs/screenshots.py`` builds and
takes screenshots to look at). The API reference lists every name in the ``__all__`` of
each module of ``public_api_modules`` (see ``_ext/public_api.py``), and each of its pages
links the guides that use the name (``_ext/guide_links.py``); the figures are drawn by the
scripts in ``figure_scripts`` on every build (``_ext/figures.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import indexops  # noqa: E402

project = "indexops"
author = "the indexops authors"
copyright = "the indexops authors"
release = indexops.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_copybutton",
    "public_api",
    "guide_links",
    "figures",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "_ext", "_static", "figures/*.py", "screenshots.py"]
templates_path = ["_templates"]
nitpicky = True

# MyST: the pages stay plain Markdown that reads on a repository host as well.
myst_heading_anchors = 3

# sphinx-copybutton: a copy button on every code block; from a ">>>" example it copies the
# code alone (the lines after ">>> " and "... ", without the output), so that it pastes
# into an interpreter; a block without prompts (bash, a listing) is copied whole.
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True

# autodoc + autosummary: one page per public name; types come from the numpydoc sections.
autosummary_generate = True
autodoc_typehints = "none"
autodoc_default_options = {"members": True}

# numpydoc: validated on every build. Left out, on purpose: ES01 (an extended summary is
# not needed where the summary says it all), SA01 (See Also is optional) and EX01
# (examples are required of every public function and class by public_api's own check,
# not of every attribute, property and method).
numpydoc_validation_checks = {"all", "ES01", "SA01", "EX01"}
# A record that documents its fields under "Attributes" is not built by users: its
# constructor parameters are those fields.
numpydoc_validation_overrides = {"PR01": [r"\n\s*Attributes\n\s*-{10}"]}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

public_api_modules = ["indexops", "indexops.onnx", "indexops_npu"]
figure_scripts = ["figures/gather_windows.py", "figures/slice_scatter_clamping.py"]

html_theme = "pydata_sphinx_theme"
html_title = f"indexops {release}"
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # the top bar: the root toctree's short titles, on one line
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
}
# Pages that are a section of their own have no section navigation to show.
html_sidebars = {page: [] for page in ("index", "install", "benchmarks", "changelog")}
html_static_path = ["_static"]
html_css_files = ["indexops.css"]
html_js_files = ["names.js"]  # where long names break on a phone
html_show_sourcelink = False
html_search_scorer = str(HERE / "_static" / "scorer.js")  # the history after the guides


def show_optional_index(app, what, name, obj, options, signature, return_annotation):
    """``at(x[, idx])``: the index is optional (``at(x)[idx]``), and its placeholder
    default has no value a reader could pass."""
    if signature and "idx=<no index>" in signature:
        signature = signature.replace(", idx=<no index>", "[, idx]")
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-signature", show_optional_index)
