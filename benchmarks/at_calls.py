"""``at`` per call, against array-api-extra's ``at`` and the library's own expression.

``python -m benchmarks.at_calls [--rounds 15] [--backend numpy,torch] [--threads N] [--cpu]
[--calls set,add,...] [--kernels off] [--base-package NAME]`` prints one table per backend:
for each method on a small call (8 rows of a [64, 16] float64 table; ``get``, ``set`` and
``add`` also of rows three of which count from the end; ``get``, ``add``, ``set`` and
``max`` of NumPy's ``take_along_axis`` idiom ``x[arange(64)[:, None], idx]``, 3 columns
per row) and for a strided read (``[::-2, 1:60:3]`` of a [262144, 64] table), the median
time per call of ``indexops.at``, of array-api-extra's ``at`` (``copy=True``, where it has
the method) and of the native expression, and the ratio of ``at`` to each, sampled
alternately (:mod:`.interleaved`). ``--cpu`` times in CPU time (``time.thread_time``);
``--calls`` keeps the named calls only; numba's kernels are loaded first (what a process
has after a large call: small calls never start their load, but use them once loaded),
or, with ``--kernels off``, kept off (a process before its first large call, or without
numba); ``--base-package`` adds the ``at`` of another copy of indexops importable under
that name (the source of a base commit, for before/after in one process).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import array_api_extra as xpx
import numpy as np

import indexops

from . import base_package
from .interleaved import medians

Forms = dict[str, Callable[[], object]]


def small_calls(xp: Any, library: str, base: Any = None) -> dict[str, Forms]:
    """The methods on 8 rows of a [64, 16] float64 table: at, array-api-extra, native;
    ``base``'s ``at`` beside them where given."""
    table = xp.asarray(np.arange(64 * 16, dtype=np.float64).reshape(64, 16))
    rows = xp.asarray(np.array([3, 17, 5, 60, 33, 8, 41, 22]))
    from_end = xp.asarray(np.array([3, -17, 5, -4, 33, 8, -23, 22]))  # (NumPy's: from the end)
    y = xp.asarray(np.ones((8, 16)))
    # NumPy's idiom for take_along_axis: 3 columns of each of the 64 rows (some repeat)
    counting = xp.asarray(np.arange(64)[:, None])
    columns = xp.asarray(np.random.default_rng(0).integers(0, 16, (64, 3)))
    z = xp.asarray(np.ones((64, 3)))

    def native_set() -> object:
        out = _copy(table, library)
        out[rows] = y
        return out

    def native_add() -> object:
        out = _copy(table, library)
        if library == "torch":
            return out.index_add_(0, rows, y)
        np.add.at(out, rows, y)
        return out

    cases: dict[str, Forms] = {
        "get": {
            "at": lambda: indexops.at(table)[rows].get(),
            "native": lambda: table[rows],
        },
        "get from the end": {
            "at": lambda: indexops.at(table)[from_end].get(),
            "native": lambda: table[from_end],
        },
        "set": {
            "at": lambda: indexops.at(table)[rows].set(y),
            "array-api-extra": lambda: xpx.at(table)[rows].set(y, copy=True),
            "native": native_set,
        },
        "add": {
            "at": lambda: indexops.at(table)[rows].add(y),
            "array-api-extra": lambda: xpx.at(table)[rows].add(y, copy=True),
            "native": native_add,
        },
        "set [8:16] (own slicing)": {
            "at": lambda: indexops.at(table)[8:16].set(y),
            "array-api-extra": lambda: xpx.at(table)[8:16].set(y, copy=True),
            "native": lambda: _sliced_set(table, y, library),
        },
        "add [8:16] (own slicing)": {
            "at": lambda: indexops.at(table)[8:16].add(y),
            "array-api-extra": lambda: xpx.at(table)[8:16].add(y, copy=True),
        },
        "get [counting, idx] (take_along_axis)": {
            "at": lambda: indexops.at(table)[counting, columns].get(),
            "native": lambda: _along_axis(table, columns, library),
        },
        "add [counting, idx]": {
            "at": lambda: indexops.at(table)[counting, columns].add(z),
            "array-api-extra": lambda: xpx.at(table)[counting, columns].add(z, copy=True),
            "native": lambda: _added_along_axis(table, counting, columns, z, library),
        },
        "set [counting, idx]": {
            "at": lambda: indexops.at(table)[counting, columns].set(z),
            "array-api-extra": lambda: xpx.at(table)[counting, columns].set(z, copy=True),
        },
        "max [counting, idx]": {
            "at": lambda: indexops.at(table)[counting, columns].max(z),
            "array-api-extra": lambda: xpx.at(table)[counting, columns].max(z, copy=True),
            "native": lambda: _maxed_along_axis(table, counting, columns, z, library),
        },
    }
    for method in ("subtract", "multiply", "min", "max"):
        cases[method] = {
            "at": _method(indexops, table, rows, y, method),
            "array-api-extra": _extra_method(table, rows, y, method),
        }
    for method in ("set", "add"):
        cases[f"{method} from the end"] = {
            "at": _method(indexops, table, from_end, y, method),
            "array-api-extra": _extra_method(table, from_end, y, method),
        }
    if base is not None:
        for method in ("get", "set", "add", "subtract", "multiply", "min", "max"):
            cases[method]["base"] = _method(base, table, rows, y, method)
            if f"{method} from the end" in cases:
                cases[f"{method} from the end"]["base"] = _method(base, table, from_end, y, method)
        for name in ("get [counting, idx] (take_along_axis)", "add [counting, idx]",
                     "set [counting, idx]", "max [counting, idx]"):  # fmt: skip
            idiom = (counting, columns)
            cases[name]["base"] = _method(base, table, idiom, z, name.split()[0])
    return cases


def _method(package: Any, table: Any, rows: Any, y: Any, method: str) -> Callable[[], object]:
    """``package.at(table)[rows].method(y)`` (``get()`` for get)."""
    if method == "get":
        return lambda: package.at(table)[rows].get()
    return lambda: getattr(package.at(table)[rows], method)(y)


def _extra_method(table: Any, rows: Any, y: Any, method: str) -> Callable[[], object]:
    return lambda: getattr(xpx.at(table)[rows], method)(y, copy=True)


def strided_read(xp: Any, library: str) -> Forms:
    """``x[::-2, 1:60:3]`` of a [262144, 64] float64 table, as a new array."""
    table = xp.asarray(np.ones((262144, 64)))
    if library == "torch":
        import torch

        return {
            "at": lambda: indexops.at(table)[::-2, 1:60:3].get(),
            "native": lambda: torch.flip(table[1::2, 1:60:3], (0,)),
        }
    return {
        "at": lambda: indexops.at(table)[::-2, 1:60:3].get(),
        "native": lambda: table[::-2, 1:60:3].copy(),
    }


def _along_axis(table: Any, columns: Any, library: str) -> Any:
    if library == "torch":
        import torch

        return torch.gather(table, 1, columns)
    return np.take_along_axis(table, columns, axis=1)


def _added_along_axis(table: Any, counting: Any, columns: Any, z: Any, library: str) -> Any:
    out = _copy(table, library)
    if library == "torch":
        return out.scatter_add_(1, columns, z)
    np.add.at(out, (counting, columns), z)
    return out


def _maxed_along_axis(table: Any, counting: Any, columns: Any, z: Any, library: str) -> Any:
    out = _copy(table, library)
    if library == "torch":
        return out.scatter_reduce_(1, columns, z, "amax")
    np.maximum.at(out, (counting, columns), z)
    return out


def _sliced_set(table: Any, y: Any, library: str) -> Any:
    out = _copy(table, library)
    out[8:16] = y
    return out


def _copy(x: Any, library: str) -> Any:
    return x.clone() if library == "torch" else x.copy()


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--backend", default="numpy,torch")
    parser.add_argument(
        "--threads", type=int, default=0, help="torch's intra-op threads (0: torch's default)"
    )
    parser.add_argument("--cpu", action="store_true", help="time in CPU time (thread_time)")
    parser.add_argument("--calls", default="", help="the calls to time (default: all)")
    base_package.add_kernels_option(parser)
    args, base = base_package.parse(parser, argv)
    with base_package.kernels_as(args.kernels, base):
        _tables(args, base)
    return 0


def _tables(args: argparse.Namespace, base: Any) -> None:
    """Print the table of each library of ``args.backend``."""
    clock = time.thread_time if args.cpu else time.perf_counter
    chosen = set(args.calls.split(",")) if args.calls else None
    if args.threads and "torch" in args.backend:
        import torch

        torch.set_num_threads(args.threads)
    for library in args.backend.split(","):
        xp = _namespace(library)
        cases = small_calls(xp, library, base)
        if chosen is None or "strided read" in chosen:
            cases["strided read"] = strided_read(xp, library)
        print(f"\n{library}: median of {args.rounds} interleaved rounds (kernels {args.kernels})")
        print(
            "| call | at | array-api-extra | native | base | at / array-api-extra "
            "| at / native | at / base |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, forms in cases.items():
            if chosen is not None and name not in chosen:
                continue
            times = medians(forms, args.rounds, clock=clock)
            others = [times.get(form) for form in ("array-api-extra", "native", "base")]
            ratios = " | ".join(f"{times['at'] / t:.2f}" if t else "-" for t in others)
            cells = " | ".join(_us(t) for t in [times["at"], *others])
            print(f"| {name} | {cells} | {ratios} |")


def _namespace(library: str) -> Any:
    if library == "torch":
        import torch

        return torch
    return np


if __name__ == "__main__":
    raise SystemExit(main())
