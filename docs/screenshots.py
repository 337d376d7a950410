"""Build the site and screenshot a few pages in headless Chromium, to look at them.

    python docs/screenshots.py [--no-build] [--width 1400] [--height 1000]

builds the site as ``nox -s docs`` does (into docs/_build/html) and writes PNGs of the
landing page, an API page, a guide and a page of figures into ``docs/_build/screenshots``
(ignored by git), each at a wide and a narrow window. It is for a person to look at the
site as a reader meets it, not a test: CI does not run it, and nothing compares pixels.

Needs Chromium (Debian: ``apt-get install chromium``; elsewhere set ``CHROMIUM`` to the
browser's path) and the ``docs`` extra. The browser runs headless with a fresh profile and
no network access of its own beyond the local files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
HTML = DOCS / "_build" / "html"
OUT = DOCS / "_build" / "screenshots"

PAGES = {
    "landing": "index.html",
    "api": "reference/generated/indexops.scatter_update.html",
    "guide": "scatter_update.html",
    "figures": "gather_scatter.html",
    "install": "install.html",
}
"""Screenshot name and the page it shows."""

NARROW = (820, 1000)
"""A laptop window split in two: the narrow layout (no side bars)."""

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def browser() -> str:
    """The Chromium to run: ``$CHROMIUM``, else the first of its usual names on PATH."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return str(shutil.which(name))
    raise SystemExit("no Chromium found: apt-get install chromium, or set CHROMIUM")


def build() -> None:
    """The site, as ``nox -s docs`` builds it (warnings are errors)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT / "emulator"), env.get("PYTHONPATH", "")]
    )
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q"]
    subprocess.run([*command, "-b", "html", str(DOCS), str(HTML)], check=True, env=env)


def screenshot(chromium: str, page: str, target: Path, size: tuple[int, int]) -> None:
    """One page at one window size, into ``target``."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                f"--screenshot={target}",
                (HTML / page).as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="use the site built last")
    parser.add_argument("--width", type=int, default=1400, help="of the wide window, in px")
    parser.add_argument("--height", type=int, default=1000, help="of both windows, in px")
    args = parser.parse_args(argv)
    chromium = browser()
    if not args.no_build:
        build()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, page in PAGES.items():
        for size, label in (((args.width, args.height), "wide"), (NARROW, "narrow")):
            target = OUT / f"{name}-{label}.png"
            screenshot(chromium, page, target, (size[0], args.height))
            print(f"{target}  ({page} at {size[0]}x{args.height})")


if __name__ == "__main__":
    main()
