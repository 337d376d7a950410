"""Slices with a negative step on torch (which has none), through each entry point.

``python -m benchmarks.strided_reads [--rounds 15] [--size 1/16,1/4,1]
[--base-package NAME]`` prints, per size of the runner's workload 11 (a [262144, 64]
float32 table at full size, the slice ``[::-2, 1:60:3]``), the wall time per call on one
torch thread of ``at(x)[::-2, 1:60:3].get()``, ``indexops.onnx.slice``, ``at``'s ``set``
and ``indexops.onnx.slice_scatter`` through the same slice (updates of its shape; each into
a copy of the table), each sampled alternately (:mod:`.interleaved`) with torch's own
flip and slice (the peer of the reads) and the same call of another copy of indexops
importable under ``NAME``. See
benchmarks/README.md, "Strided reads on torch".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import torch

import indexops

from . import base_package
from .interleaved import medians

STARTS, ENDS, AXES, STEPS = [-1, 1], [-(2**62), 60], [0, 1], [-2, 3]
READS = ("at get", "onnx.slice")


def forms(package: Any, x: Any, updates: Any) -> dict[str, Callable[[], object]]:
    """The entry points of ``package`` on ``x`` (``updates`` of the slice's shape)."""
    return {
        "at get": lambda: package.at(x)[::-2, 1:60:3].get(),
        "onnx.slice": lambda: package.onnx.slice(x, STARTS, ENDS, AXES, STEPS),
        "at set": lambda: package.at(x)[::-2, 1:60:3].set(updates),
        "onnx.slice_scatter": lambda: package.onnx.slice_scatter(
            x, updates, STARTS, ENDS, AXES, STEPS
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--size", default="1/16,1/4,1")
    args, base = base_package.parse(parser, argv)
    torch.set_num_threads(1)
    print("| size | form | indexops (ms) | " + ("base (ms) | indexops / base | " if base else "")
          + "indexops / torch's flip and slice |")  # fmt: skip
    for size in args.size.split(","):
        n = int(262144 * Fraction(size))
        rng = np.random.default_rng(0)
        x = torch.from_numpy(rng.standard_normal((n, 64), dtype=np.float32))
        updates = torch.from_numpy(rng.standard_normal(((n + 1) // 2, 20), dtype=np.float32))
        native = lambda x=x: x[:, 1:60:3].flip(0)[::2].contiguous()  # noqa: E731
        mine = forms(indexops, x, updates)
        theirs = forms(base, x, updates) if base is not None else {}
        for name, call in mine.items():  # each form beside its own peers only
            timed = {"indexops": call, "native": native}
            if name in theirs:
                timed["base"] = theirs[name]
            times = medians(timed, args.rounds)
            now = times["indexops"]
            cells = f"{now * 1e3:.3f}"
            if "base" in times:
                cells += f" | {times['base'] * 1e3:.3f} | {now / times['base']:.2f}"
            read = name in READS  # (torch's flip and slice is the peer of the reads only)
            peer = f"{now / times['native']:.2f}" if read else "-"
            print(f"| {size} | {name} | {cells} | {peer} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
