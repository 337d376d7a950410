"""Before and after in one process: another copy of indexops, importable under another name
(the source of a base commit: ``git archive <commit> src/indexops``, unpacked and renamed
on ``PYTHONPATH``), timed beside this one by the benchmarks that take ``--base-package``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from types import ModuleType
from typing import Any

from .interleaved import medians

Forms = dict[str, Callable[[], object]]


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


def add_kernels_option(parser: argparse.ArgumentParser) -> None:
    """``--kernels loaded`` (the default: numba's kernels loaded first, what a process
    has after a large call) or ``--kernels off`` (none runs: a process before its first
    large call, or without numba)."""
    parser.add_argument("--kernels", choices=("loaded", "off"), default="loaded")


@contextlib.contextmanager
def kernels_as(choice: str, base: ModuleType | None) -> Iterator[dict[str, ModuleType]]:
    """:func:`packages` with their kernels loaded first, or kept off within the block
    (``choice``: the value of ``--kernels``)."""
    found = packages(base, kernels=choice == "loaded")
    with contextlib.ExitStack() as kept_off:
        for package in found.values() if choice == "off" else ():
            testing = importlib.import_module(f"{package.__name__}._testing")
            kept_off.enter_context(testing.without_kernels())
        yield found


def entry_table(
    argv: list[str] | None,
    description: str,
    cases: Callable[[str, float, dict[str, Any]], dict[str, tuple[Forms, Forms]]],
) -> int:
    """Print, per library, case, size and entry point, the CPU time per call of this
    indexops and its ratio to the native expression and to the ``--base-package`` copy.

    ``cases(library, size, packages)`` gives per case the calls of each entry point of
    each package, named ``"<entry> <package name>"``, sampled alternately, and the native
    calls (``"native"``), sampled apart (:func:`.interleaved.medians`, 11 rounds unless
    ``--rounds``; one thread of torch; numba's kernels loaded first, unless ``--kernels
    off``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--backend", default="numpy,torch")
    parser.add_argument("--size", default="1/16,1/4,1")
    add_kernels_option(parser)
    args, base = parse(parser, argv)
    with kernels_as(args.kernels, base) as found:
        _entry_rows(args, base, found, cases)
    return 0


def _entry_rows(
    args: argparse.Namespace,
    base: ModuleType | None,
    found: dict[str, ModuleType],
    cases: Callable[[str, float, dict[str, Any]], dict[str, tuple[Forms, Forms]]],
) -> None:
    """:func:`entry_table`'s table."""
    print("| library | case | size | entry | indexops (ms) | / native |"
          + (" / base |" if base else ""))  # fmt: skip
    print("|---" * (6 + bool(base)) + "|")
    for library in args.backend.split(","):
        if library == "torch":
            __import__("torch").set_num_threads(1)
        for size in args.size.split(","):
            for label, (ours, native) in cases(library, float(Fraction(size)), found).items():
                times = medians(ours, args.rounds, clock=time.thread_time)
                times |= medians(native, args.rounds, clock=time.thread_time)
                for form in (f for f in ours if f.endswith(" indexops")):
                    entry, now = form.removesuffix(" indexops"), times[form]
                    ratio = f" {now / times[f'{entry} base']:.2f} |" if base else ""
                    print(f"| {library} | {label} | {size} | {entry} | {now * 1e3:.3f} | "
                          f"{now / times['native']:.2f} |{ratio}")  # fmt: skip
