"""Before and after in one process: another copy of indexops, importable under another name
(the source of a base commit: ``git archive <commit> src/indexops``, unpacked and renamed
on ``PYTHONPATH``), timed beside this one by the benchmarks that take ``--base-package``."""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType


def parse(
    parser: argparse.ArgumentParser, argv: list[str] | None
) -> tuple[argparse.Namespace, ModuleType | None]:
    """``argv`` parsed with ``--base-package NAME`` added to ``parser``'s options, and the
    copy it names (``None`` where none was)."""
    parser.add_argument("--base-package", default=None, help="another copy of indexops")
    args = parser.parse_args(argv)
    return args, importlib.import_module(args.base_package) if args.base_package else None


def packages(base: ModuleType | None, *, kernels: bool = False) -> dict[str, ModuleType]:
    """This indexops and ``base`` (where given), by name; with ``kernels``, each with its
    compiled kernels loaded first (numba's start-up kept out of the timings)."""
    import indexops

    found = {"indexops": indexops, **({"base": base} if base else {})}
    for package in found.values() if kernels else ():
        package.load_host_kernels()
    return found
