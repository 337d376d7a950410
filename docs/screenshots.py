"""Build the site, screenshot its pages whole in headless Chromium, and measure their layout.

    python docs/screenshots.py [--out DIR] [--no-build] [--check]

builds the site from a copy of ``docs/`` (so a read-only checkout builds too: Sphinx writes
generated sources next to the pages it reads) into ``DIR/html``, then, for each page of
:data:`PAGES` at each window of :data:`WINDOWS` (a laptop and a phone), writes a full-page
screenshot ``DIR/screenshots/<page>-<window>.png`` and measures in the browser what a
reader would meet (:func:`measure`): elements wider than the window, text cut off, and the
scale at which each figure is shown. ``--check`` exits with 1 when a measure fails
(:func:`problems`); ``tests/test_docs_site.py`` runs the same check on a built site. ``DIR``
defaults to ``docs/_build``.

Needs Chromium (Debian: ``apt-get install chromium``; elsewhere set ``CHROMIUM`` to the
browser's path) and the ``docs`` extra. The browser runs headless with a fresh profile and
no network access of its own beyond the local files.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
BUILD = DOCS / "_build"

PAGES = {
    "landing": "index.html",
    "install": "install.html",
    "api-gather": "reference/generated/indexops.gather.html",
    "api-scatter-update": "reference/generated/indexops.scatter_update.html",
    "api-at": "reference/generated/indexops.at.html",
    "guide": "scatter_update.html",
    "figures": "gather_scatter.html",
    "npu": "npu_emulator.html",
    "onnx": "onnx.html",
    "porting-jax": "porting/from_jax_lax.html",
}
"""Screenshot name and the page it shows: each kind of page, and those readers reported."""

WINDOWS = {"desktop": (1280, 800), "phone": (390, 844)}
"""Window name and size in CSS pixels: a laptop, and a phone held upright."""

SMALLEST_FIGURE_TEXT = 10.0
"""CSS pixels: the smallest figure text a reader should meet on the desktop window."""

FLAGS = (
    "--headless",
    "--allow-file-access-from-files",  # the frame below reads the measures of its page
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)

MEASURE = r"""
<script>
window.addEventListener("load", () => setTimeout(() => {
  const root = document.documentElement, width = root.clientWidth;
  const shown = (el) => el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== "hidden" && !el.closest("dialog:not([open])");
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.classList.length ? "." + [...el.classList].join(".") : "")
    + " '" + (el.textContent || "").trim().slice(0, 50) + "'";
  const article = document.querySelector(".bd-article");
  const right = Math.min(width, article ? article.getBoundingClientRect().right : width);
  const wide = [], cut = [], figures = [], scrolling = [], outside = new Set();
  for (const el of document.body.querySelectorAll("*")) {
    if (!shown(el) || (el.parentElement && el.parentElement.closest("pre"))) continue;
    const box = el.getBoundingClientRect();
    const edge = article && article.contains(el) ? right : width;
    if (box.right > edge + 1 || box.left < -1) {
      outside.add(el);
      if (!outside.has(el.parentElement)) wide.push(name(el));  // the outermost alone
    }
    const style = getComputedStyle(el);
    const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (text && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0
        && (style.overflowX === "hidden" || style.textOverflow === "ellipsis")) cut.push(name(el));
    if (el.tagName === "PRE" && el.scrollWidth > el.clientWidth + 1) scrolling.push(name(el));
  }
  const broken = [];  // words of titles and tables split over two lines
  for (const root of document.querySelectorAll(".bd-article h1, .bd-article table")) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const text = walker.currentNode;
      if (text.parentElement.closest("table code")) continue;  // code breaks where it must
      for (const word of text.data.matchAll(/[^\s-]+-?/g)) {  // a line may end at a -
        const range = document.createRange();
        range.setStart(text, word.index);
        range.setEnd(text, word.index + word[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(word[0]);
      }
    }
  }
  for (const img of document.querySelectorAll(".bd-article img")) {
    if (!shown(img) || !img.naturalWidth) continue;
    const link = img.closest("a");
    figures.push({src: img.getAttribute("src"), scale: img.clientWidth / img.naturalWidth,
                  linked: !!link && link.getAttribute("href") === img.getAttribute("src")});
  }
  document.body.dataset.measure = JSON.stringify({
    width, height: root.scrollHeight, page_width: root.scrollWidth, wide, cut, figures,
    scrolling, broken});
}, 200));
</script>
"""
"""Measures the page once it and its images have loaded; the result goes in an attribute of
``<body>``, where ``--dump-dom`` shows it. ``wide``: shown elements (code lines aside)
reaching past the article's column, or past the window outside the article; ``cut``:
elements whose own text overflows a box that hides it; ``scrolling``: code blocks that
scroll sideways; ``broken``: words of a title or a table split over two lines (after a
hyphen aside; a long name may break after a dot or an underscore, ``_static/names.js``,
and code in a table where it must); ``figures``: each
image of the article, the scale it is shown at and whether it links to its full size."""


def browser() -> str:
    """The Chromium to run: ``$CHROMIUM``, else the first of its usual names on PATH."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return str(shutil.which(name))
    raise SystemExit("no Chromium found: apt-get install chromium, or set CHROMIUM")


SOURCES = ("docs", "benchmarks")
"""The folders of the checkout that the pages read (``benchmarks.md`` includes the
benchmarks' README)."""


def build(out: Path) -> Path:
    """The site, as ``nox -s docs`` builds it (warnings are errors), from a copy of the
    folders it reads in ``out/source`` into ``out/html``; returns the html folder."""
    copy, target = out / "source", out / "html"
    shutil.rmtree(copy, ignore_errors=True)
    ignored = shutil.ignore_patterns("_build", "_generated", "generated", "__pycache__")
    for folder in SOURCES:
        shutil.copytree(ROOT / folder, copy / folder, ignore=ignored)
    source = copy / "docs"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT / "emulator"), env.get("PYTHONPATH", "")]
    )
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q"]
    subprocess.run([*command, "-b", "html", str(source), str(target)], check=True, env=env)
    return target


FRAME = """<!DOCTYPE html>
<html><body style="margin: 0">
<iframe id="page" src="{src}"
  style="border: 0; display: block; width: {width}px; height: {height}px"></iframe>
<script>
const frame = document.getElementById("page");
const copy = () => {{
  const found = frame.contentDocument && frame.contentDocument.body
    && frame.contentDocument.body.dataset.measure;
  if (found) document.body.dataset.measure = found; else setTimeout(copy, 50);
}};
frame.addEventListener("load", copy);
</script>
</body></html>
"""
"""A page shown in a frame of the window's size: Chromium's headless windows are at least
500 px wide, a frame can be a phone's width (the page's media queries see the frame)."""


def _chromium(chromium: str, size: tuple[int, int], *args: str) -> str:
    window = f"--window-size={max(size[0], 500)},{size[1]}"
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", window, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return done.stdout


def _framed(folder: Path, page: Path, size: tuple[int, int], measured: bool) -> Path:
    """A file in ``folder`` that shows ``page`` in a frame of ``size`` (with
    :data:`MEASURE` in the page if ``measured``)."""
    text = page.read_text(encoding="utf-8")
    text = text.replace("<head>", f'<head><base href="{page.as_uri()}">', 1)
    if measured:
        text = text.replace("</body>", MEASURE + "</body>", 1)
    probe = folder / "page.html"
    probe.write_text(text, encoding="utf-8")
    frame = folder / "frame.html"
    frame.write_text(FRAME.format(src=probe.name, width=size[0], height=size[1]))
    return frame


def measure(chromium: str, page: Path, size: tuple[int, int]) -> dict[str, Any]:
    """What :data:`MEASURE` finds on ``page`` (an HTML file) in a window of ``size``."""
    with tempfile.TemporaryDirectory() as folder:
        frame = _framed(Path(folder), page, size, measured=True)
        dom = _chromium(chromium, size, "--virtual-time-budget=10000", "--dump-dom", frame.as_uri())
    found = re.search(r'<body[^>]*\sdata-measure="([^"]*)"', dom)
    if found is None:
        raise RuntimeError(f"{page}: the page's measures did not come back")
    return dict(json.loads(html.unescape(found.group(1))))


def screenshot(chromium: str, page: Path, target: Path, width: int, height: int) -> None:
    """The whole of ``page`` (``height`` pixels tall), ``width`` pixels wide, into
    ``target``: a frame as tall as the page, so nothing is left below it."""
    with tempfile.TemporaryDirectory() as folder:
        frame = _framed(Path(folder), page, (width, height), measured=False)
        _chromium(
            chromium,
            (width, height),
            "--virtual-time-budget=10000",
            f"--screenshot={target}",
            frame.as_uri(),
        )
    if width < 500:  # the window's margin right of the frame
        from PIL import Image  # matplotlib's dependency, in the docs extra

        with Image.open(target) as image:
            image.crop((0, 0, width, image.height)).save(target)


SEARCHES = {"ScatterND": "onnx.html", "xpx": "porting/index.html"}
"""Searches readers made, and the page each should find."""

HISTORY = ("changelog.html", "benchmarks.html", "HISTORY.html")
"""The pages of the project's history, which a search lists after every other page."""


def search(chromium: str, site: Path, query: str) -> list[str]:
    """The pages the site's search lists for ``query``, in their order."""
    dom = _chromium(
        chromium,
        WINDOWS["desktop"],
        "--virtual-time-budget=15000",
        "--dump-dom",
        f"{(site / 'search.html').as_uri()}?q={query}",
    )
    return re.findall(r'<li class="kind-[a-z]+"><a href="([^"?#]+)', dom)


def search_problems(found: list[str], query: str) -> list[str]:
    """What is wrong with the pages ``found`` for ``query``: the page it should find
    missing, or a history page before another page."""
    problems = []
    pages = [page for page in found if page not in HISTORY]
    if SEARCHES[query] not in found:
        problems.append(f"search {query!r}: {SEARCHES[query]} not found")
    if found[: len(pages)] != pages:
        problems.append(f"search {query!r}: history before the guides: {found}")
    return problems


def problems(measures: dict[str, Any], window: str, text_px: float | None) -> list[str]:
    """What fails on one page in one window: anything wider than its column or the window
    (code lines aside, which scroll on a phone), text cut off, words of titles and tables
    broken over two lines, and figures that do not link to their full size; on the desktop,
    a code block that scrolls sideways and figure text (``text_px`` at the figure's own
    size) under :data:`SMALLEST_FIGURE_TEXT` as shown."""
    found = [f"text cut off: {name}" for name in measures["cut"]]
    found += [f"a word broken over two lines: {word!r}" for word in measures["broken"]]
    found += [f"wider than its column or the window: {name}" for name in measures["wide"]]
    if window == "desktop":
        found += [f"code scrolls sideways: {name}" for name in measures["scrolling"]]
    if measures["page_width"] > measures["width"]:
        found.append(f"the page scrolls sideways ({measures['page_width']} px)")
    for figure in measures["figures"]:
        if not figure["linked"]:
            found.append(f"{figure['src']}: not linked to its full size")
        shown = None if text_px is None else text_px * figure["scale"]
        if window == "desktop" and shown is not None and shown < SMALLEST_FIGURE_TEXT:
            found.append(f"{figure['src']}: text of {shown:.1f} px as shown")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=BUILD, help="the folder to write in")
    parser.add_argument("--no-build", action="store_true", help="use the site in OUT/html")
    parser.add_argument("--check", action="store_true", help="exit with 1 if a measure fails")
    parser.add_argument("--page", action="append", choices=PAGES, help="only these pages")
    args = parser.parse_args(argv)
    chromium = browser()
    site = args.out / "html" if args.no_build else build(args.out)
    shots = args.out / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, page in PAGES.items():
        if args.page and name not in args.page:
            continue
        for window, size in WINDOWS.items():
            measures = measure(chromium, site / page, size)
            target = shots / f"{name}-{window}.png"
            screenshot(chromium, site / page, target, size[0], max(size[1], measures["height"]))
            found = problems(measures, window, None)
            failed += [f"{page} ({window}): {problem}" for problem in found]
            scrolling = len(measures["scrolling"])
            print(
                f"{target}  ({page}, {size[0]} px wide, {measures['height']} px tall, "
                f"{scrolling} code blocks scroll sideways)"
            )
    for query in SEARCHES:
        failed += search_problems(search(chromium, site, query), query)
    print("\n".join(failed) or "no problems measured")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
