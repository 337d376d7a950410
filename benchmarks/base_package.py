"""Before and after in one process: another copy of indexops, importable under another name
(the source of a base commit: ``git archive <commit> src/indexops``, unpacked and renamed
on ``PYTHONPATH``), timed beside this one by the benchmarks that take ``--base-package``."""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--base-package NAME``."""
    parser.add_argument("--base-package", default=None, help="another copy of indexops")


def imported(name: str | None) -> ModuleType | None:
    """The copy named by ``--base-package``, or ``None`` where none was."""
    return importlib.import_module(name) if name else None
