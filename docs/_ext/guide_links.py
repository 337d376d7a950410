"""A "See also" box on each API page, linking the guides that use its name.

While the pages are read, every Python cross-reference of a guide (``{func}`~indexops.at```,
``{class}`indexops_npu.Report```, a method of it, ...), every inline literal that names
something (```indexops_npu.ATLAS_A3```, ```Report.plot(path)```), every call in a code
block and the name a title starts with are counted. When an API page is written, the
guides that refer to its name, or to a member of it, are linked at its end: those that
refer to it most first, at most ``guide_links_most`` of them (a literal may give the name
without its module). Nothing is listed by hand: a new guide, or a new name in ``__all__``,
is linked as soon as a guide refers to it. Pages matching ``guide_links_exclude`` (the
landing page, the changelog, the benchmarks, the reference itself) are not guides.
"""

from __future__ import annotations

import re
from collections import Counter
from fnmatch import fnmatch
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

API_PAGES = "reference/generated/"
"""Where autosummary writes one page per public name, named by the name."""

NAMED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(?=$|\(|:|,)")
"""A dotted name that is the whole literal, or is called in it (or leads a title)."""

CALLED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?=\()")
"""A dotted name called in a code block."""

TITLE = 1000
"""What a name at the start of a page's title counts, as references."""


def _noted(env: BuildEnvironment) -> dict[str, Counter[str]]:
    """Guide docname -> how often it refers to each Python name, kept in the environment."""
    if not hasattr(env, "guide_links"):
        env.guide_links = {}  # type: ignore[attr-defined]
    return env.guide_links  # type: ignore[attr-defined,no-any-return]


def note_references(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    if any(fnmatch(docname, pattern) for pattern in app.config.guide_links_exclude):
        return
    targets = Counter(
        node["reftarget"]
        for node in doctree.findall(addnodes.pending_xref)
        if node.get("refdomain") == "py"
    )
    for node in doctree.findall(nodes.literal):
        named = NAMED.match(node.astext())
        if named:
            targets[named.group(0)] += 1
    for block in doctree.findall(nodes.literal_block):
        targets.update(CALLED.findall(block.astext()))
    title = next(iter(doctree.findall(nodes.title)), None)
    if title is not None:  # the page about a name comes first
        targets.update({named.group(0): TITLE for named in [NAMED.match(title.astext())] if named})
    if targets:
        _noted(app.env)[docname] = targets


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _noted(env).pop(docname, None)


def merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _noted(env).update({name: _noted(other)[name] for name in docnames if name in _noted(other)})


def guides_of(env: BuildEnvironment, name: str, most: int) -> list[str]:
    """The ``most`` guides that refer most often to ``name`` (or its last part) or a member
    of it, the most first (then by title)."""
    names = (name, name.rpartition(".")[2])
    found = {
        guide: sum(
            count
            for target, count in targets.items()
            if any(target == n or target.startswith(f"{n}.") for n in names)
        )
        for guide, targets in _noted(env).items()
    }
    ranked = sorted(
        (guide for guide, count in found.items() if count),
        key=lambda guide: (-found[guide], env.titles[guide].astext().lower()),
    )
    return ranked[:most]


def add_see_also(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if not docname.startswith(API_PAGES) or app.builder.format != "html":
        return
    guides = guides_of(app.env, docname[len(API_PAGES) :], app.config.guide_links_most)
    section = next(iter(doctree.findall(nodes.section)), None)
    if not guides or section is None:
        return
    line = nodes.paragraph("", "Guides: ")
    for number, guide in enumerate(guides):
        if number:
            line += nodes.Text(", ")
        uri = app.builder.get_relative_uri(docname, guide)
        line += nodes.reference("", app.env.titles[guide].astext(), refuri=uri, internal=True)
    section += addnodes.seealso("", line)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value(
        "guide_links_exclude",
        ["index", "changelog", "benchmarks", "reference/*"],
        "env",
        types=(list,),
    )
    app.add_config_value("guide_links_most", 4, "env", types=(int,))
    app.connect("doctree-read", note_references)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("doctree-resolved", add_see_also)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
