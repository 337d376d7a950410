"""The site's pages and extensions: the install page explains every extra, each API page
links the guides that use its name most, and the pages fit a laptop's and a phone's window
(measured in headless Chromium on a built site, where one is named: ``INDEXOPS_SITE``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import DOCS_EXTRA

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
    path = ROOT / "docs" / "_ext" / "guide_links.py"
    spec = importlib.util.spec_from_file_location("guide_links", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    path = ROOT / "docs" / "screenshots.py"
    spec = importlib.util.spec_from_file_location("docs_screenshots", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    assert problems(fits, "phone", None) == []
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
