"""The site's pages and extensions: the install page explains every extra, each API page
links the guides that use its name most, and the pages fit a laptop's and a phone's window
(measured in headless Chromium on a built site, where one is named: ``INDEXOPS_SITE``)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import DOCS_EXTRA, load_script

ROOT = Path(__file__).resolve().parents[1]


def extras() -> dict[str, list[str]]:
    """The optional dependencies of pyproject.toml, by extra."""
    tomllib = (
        importlib.import_module("tomllib")
        if sys.version_info >= (3, 11)
        else pytest.importorskip("tomli")
    )
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]["optional-dependencies"]


def test_the_install_page_explains_every_extra():
    page = (ROOT / "docs" / "install.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(extras())


def test_the_dev_extra_brings_nox_for_the_docs_session():
    assert any(requirement.startswith("nox") for requirement in extras()["dev"])


def load_guide_links():
    pytest.importorskip("sphinx", reason=DOCS_EXTRA)
    return load_script(ROOT / "docs" / "_ext" / "guide_links.py")


def test_api_pages_link_the_guides_that_use_the_name_most():
    guide_links = load_guide_links()
    titles = {name: SimpleNamespace(astext=lambda name=name: name.title()) for name in "abcd"}
    env = SimpleNamespace(
        titles=titles,
        guide_links={
            "a": Counter({"indexops.gather": 1}),
            "b": Counter({"indexops_npu.Report.plot": 3}),  # a member of Report
            "c": Counter({"Report": 2, "indexops.gather": 2}),  # a literal, no module
            "d": Counter({"indexops.gathering": 9}),  # another name
        },
    )
    assert guide_links.guides_of(env, "indexops.gather", 4) == ["c", "a"]
    assert guide_links.guides_of(env, "indexops_npu.Report", 4) == ["b", "c"]
    assert guide_links.guides_of(env, "indexops_npu.Report", 1) == ["b"]
    assert guide_links.guides_of(env, "indexops.scatter", 4) == []


def test_literals_and_calls_name_what_they_show():
    guide_links = load_guide_links()
    named = [guide_links.NAMED.match(text) for text in ("Report.plot(path)", "x[idx]", "gather,")]
    assert [m.group(0) if m else None for m in named] == ["Report.plot", None, "gather"]
    code = ">>> out = indexops.at(x)[2].set(-1)\n>>> np.zeros(3)"
    assert guide_links.CALLED.findall(code) == ["indexops.at", "set", "np.zeros"]


def load_screenshots():
    return load_script(ROOT / "docs" / "screenshots.py")


def browser_and_site():
    """docs/screenshots.py, Chromium and the built site of ``INDEXOPS_SITE``, or a skip
    that says which is missing (building the site takes longer than the whole suite may)."""
    site = os.environ.get("INDEXOPS_SITE")
    if not site or not (Path(site) / "index.html").exists():
        pytest.skip("set INDEXOPS_SITE to a built site (python docs/screenshots.py builds one)")
    screenshots = load_screenshots()
    try:
        chromium = screenshots.browser()
    except SystemExit as missing:
        pytest.skip(str(missing))
    return screenshots, chromium, Path(site).resolve()  # file URIs need absolute paths


def test_layout_problems_are_named():
    problems = load_screenshots().problems
    fits = {"width": 390, "page_width": 390, "wide": [], "cut": [], "figures": []}
    fits |= {"scrolling": [], "broken": []}
    assert problems(fits, "phone", None) == []
    assert problems({**fits, "broken": ["indexops.scatter_update"]}, "phone", None) == [
        "a word broken over two lines: 'indexops.scatter_update'"
    ]
    scrolls = {**fits, "scrolling": ["pre '>>> indexops.gather('"]}
    assert problems(scrolls, "phone", None) == []  # a phone's column is narrower than code
    assert problems(scrolls, "desktop", None) == [
        "code scrolls sideways: pre '>>> indexops.gather('"
    ]
    wide = {**fits, "page_width": 500, "wide": ["table.table 'ONNX'"], "cut": ["h1 'indexops'"]}
    assert problems(wide, "phone", None) == [
        "text cut off: h1 'indexops'",
        "wider than its column or the window: table.table 'ONNX'",
        "the page scrolls sideways (500 px)",
    ]
    figure = {"src": "_images/npu_plan.png", "scale": 0.5, "linked": False}
    assert problems({**fits, "figures": [figure]}, "desktop", 24.0) == [
        "_images/npu_plan.png: not linked to its full size"
    ]
    assert problems({**fits, "figures": [figure]}, "desktop", 18.0)[1] == (
        "_images/npu_plan.png: text of 9.0 px as shown"
    )


@pytest.mark.parametrize("window", ["desktop", "phone"])
def test_pages_fit_the_window(window):
    screenshots, chromium, site = browser_and_site()
    size = screenshots.WINDOWS[window]
    found = {
        page: screenshots.problems(screenshots.measure(chromium, site / page, size), window, None)
        for page in screenshots.PAGES.values()
    }
    assert {page: problems for page, problems in found.items() if problems} == {}


def test_search_lists_the_history_last():
    screenshots, chromium, site = browser_and_site()
    for query in screenshots.SEARCHES:
        found = screenshots.search(chromium, site, query)
        assert screenshots.search_problems(found, query) == [], found
    history = ["changelog.html", "onnx.html"]
    assert screenshots.search_problems(history, "ScatterND") == [
        f"search 'ScatterND': history before the guides: {history}"
    ]


CODE_COLUMNS = 92
"""Characters of code that the narrowest code column of the site holds at 1280 px without
scrolling sideways (an API page's example, measured in Chromium; a guide's holds 96).
Output wraps at the column's edge (docs/_static/indexops.css), the code typed cannot."""


def typed_lines(text: str) -> list[str]:
    """The lines of code a reader types in ``text``, a doctest's or a code block's: the
    ``>>>`` and ``...`` lines of a doctest, every line of other code."""
    lines = text.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return lines
    return [line for line in lines if line.lstrip().startswith((">>>", "... "))]


def code_blocks(page: str) -> list[tuple[str, str]]:
    """The fenced blocks of a page: each one's language (or directive) and text."""
    blocks, language, lines = [], None, []
    for line in page.splitlines():
        if not line.startswith("```"):
            lines.append(line)
        elif language is None:
            language, lines = line[3:].strip(), []
        else:
            blocks.append((language, "\n".join(lines)))
            language = None
    return blocks


def code_of_the_docs() -> dict[str, str]:
    """Each code block of the docs' pages (text blocks and directives aside) and the
    examples of each docstring of the packages, by where they are."""
    found = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "_build" in page.parts:
            continue
        for at, (language, text) in enumerate(code_blocks(page.read_text())):
            if language != "text" and not language.startswith("{"):
                found[f"{page.relative_to(ROOT)} block {at}"] = text
    for module in sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "emulator").rglob("*.py")]):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                examples = typed_lines(f">>>\n{ast.get_docstring(node) or ''}")  # prose aside
                found[f"{module.relative_to(ROOT)} {getattr(node, 'name', '')}"] = "\n".join(
                    examples
                )
    return found


def test_the_code_typed_in_the_docs_fits_the_column_at_1280_px():
    too_long = {
        (where, line)
        for where, text in code_of_the_docs().items()
        for line in typed_lines(text)
        if len(line) > CODE_COLUMNS
    }
    assert sorted(too_long) == []
    assert typed_lines(">>> f(1,\n...   2)\nan output line") == [">>> f(1,", "...   2)"]
    assert code_blocks("```python\n>>> f()\n```\ntext\n```{figure} a.png\ncaption\n```") == [
        ("python", ">>> f()"),
        ("{figure} a.png", "caption"),
    ]


def test_links_are_named_by_what_they_open_not_by_a_file_name():
    pages = [page for page in (ROOT / "docs").rglob("*.md") if "_build" not in page.parts]
    named_by_file = {
        f"{page.relative_to(ROOT)}: {link}"
        for page in pages
        for link in re.findall(r"\[[\w/.-]+\.md\]\(", page.read_text())
    }
    assert sorted(named_by_file) == []
