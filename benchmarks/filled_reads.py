"""Element gathers that fill (``mode="fill"``) through each entry point, before and after
the last axis's filled reads got loops of their own.

``python -m benchmarks.filled_reads [--rounds 11] [--backend numpy,torch] [--rows
4096,16384,65536,262144] [--base-package NAME]`` prints, per library, rows and entry
point, the CPU time per call (one thread, numba's kernels loaded first) of a
GatherElements-shaped read along axis 1 of a ``[rows, 64]`` float32 table, sampled
alternately (:mod:`.interleaved`) with the same call of another copy of indexops
importable under ``NAME`` (the source of a base commit) and the library's own expression
of it (the indices clipped, read, and the reads outside replaced by NaN). The indices are
drawn from ``[-64, 72)``: the core form (``indexops.gather``) reads the negative ones as
outside (about half of them, at random: the hardest case for a branch), ``at(x)[rows[:,
None], idx].get(mode="fill")`` counts them from the end (about 1 in 17 outside). See
benchmarks/README.md, "Issue 33: filled reads along the last axis".
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from . import base_package
from .element_paths import GATHER as ELEMENT_GATHER
from .element_paths import WIDTH
from .interleaved import medians


def forms(library: str, rows: int, packages: dict[str, Any]) -> dict[str, Callable[[], object]]:
    """The core form and ``at``'s idiom of each package, and the native expression."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, WIDTH), dtype=np.float32)
    idx = rng.integers(-WIDTH, WIDTH + 8, (rows, WIDTH))
    counting = np.arange(rows)
    if library == "torch":
        import torch

        x, idx, counting = (torch.from_numpy(a) for a in (x, idx, counting))
    found: dict[str, Callable[[], object]] = {}
    for name, package in packages.items():
        found[f"core {name}"] = lambda p=package: p.gather(
            x, idx[..., None], **ELEMENT_GATHER, mode="fill"
        )
        found[f"at {name}"] = lambda p=package: p.at(x)[counting[:, None], idx].get(mode="fill")
    found["native"] = _native(library, x, idx)
    return found


def _native(library: str, x: Any, idx: Any) -> Callable[[], object]:
    """The library's own filled read: the indices clipped, read, the reads outside NaN."""
    if library == "torch":
        import torch

        return lambda: torch.where(
            (idx >= 0) & (idx < WIDTH), torch.gather(x, 1, idx.clamp(0, WIDTH - 1)), float("nan")
        )
    return lambda: np.where(
        (idx >= 0) & (idx < WIDTH), np.take_along_axis(x, np.clip(idx, 0, WIDTH - 1), 1), np.nan
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--backend", default="numpy,torch")
    parser.add_argument("--rows", default="4096,16384,65536,262144")
    args, base = base_package.parse(parser, argv)
    packages = base_package.packages(base, kernels=True)
    for package in packages.values():
        package.set_host_threads(1)
    print("| library | rows | entry | indexops (ms) | / native |" + (" / base |" if base else ""))
    print("|---" * (5 + bool(base)) + "|")
    for library in args.backend.split(","):
        if library == "torch":
            __import__("torch").set_num_threads(1)
        for rows in (int(r) for r in args.rows.split(",")):
            times = medians(forms(library, rows, packages), args.rounds, clock=time.thread_time)
            for entry in ("core", "at"):
                now = times[f"{entry} indexops"]
                ratio = f" {now / times[f'{entry} base']:.2f} |" if base else ""
                print(
                    f"| {library} | {rows} | {entry} | {now * 1e3:.3f} "
                    f"| {now / times['native']:.2f} |{ratio}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
