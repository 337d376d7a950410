"""The site's pages and extensions: the install page explains every extra, and each API
page links the guides that use its name most."""

from __future__ import annotations

import importlib
import importlib.util
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
