"""Element gathers whose results are streamed past the cache, against the same gathers
stored, at several sizes, alone and followed by a read of their result.

``python -m benchmarks.streamed_gathers [--rounds 11] [--mib 4,8,16,32,64]`` prints, per
result size and entry point, the wall time per call of a GatherElements-shaped read along
axis 1 of a ``[rows, 64]`` float32 table on NumPy (one thread, numba's kernels loaded
first) with its stores streamed (non-temporal) and stored (the threshold,
``_kernels.STREAM_MIN_BYTES``, set out of reach), sampled alternately
(:mod:`.interleaved`): ``indexops.onnx.gather_elements`` with indices in ``[-64, 64)``
(the loop that counts from the end) and the core form with indices in ``[0, 64)`` (the
loop for indices in range), each alone and followed by a sum of its result (what a
consumer of a result still in the cache gains from it). See benchmarks/README.md,
"Issue 33: large gathers streamed past the cache".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops import onnx
from indexops._backends import _host

from .element_paths import GATHER as ELEMENT_GATHER
from .element_paths import WIDTH
from .interleaved import medians, with_setting

NEVER = 2**62


def forms(kernels: Any, rows: int) -> dict[str, Callable[[], object]]:
    """Each entry point streamed and stored, alone and followed by a read."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, WIDTH), dtype=np.float32)
    in_range = rng.integers(0, WIDTH, (rows, WIDTH))
    from_end = np.where(rng.random((rows, WIDTH)) < 0.5, in_range - WIDTH, in_range)
    calls = {
        "onnx": lambda: onnx.gather_elements(x, from_end, axis=1),
        "core": lambda: indexops.gather(x, in_range[..., None], **ELEMENT_GATHER),
    }
    found: dict[str, Callable[[], object]] = {}
    for entry, call in calls.items():
        for how, bound in (("streamed", 0), ("stored", NEVER)):
            found[f"{entry} {how}"] = with_setting(kernels, "STREAM_MIN_BYTES", bound, call)
            found[f"{entry} {how} + read"] = with_setting(
                kernels, "STREAM_MIN_BYTES", bound, lambda call=call: call().sum()
            )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--mib", default="4,8,16,32,64")
    args = parser.parse_args(argv)
    kernels = _host.load_kernels()
    if kernels is None:
        print("numba's kernels did not load (the fast extra): nothing to time")
        return 1
    indexops.set_host_threads(1)
    bound = kernels.STREAM_MIN_BYTES
    print("| result | entry | streamed (ms) | stored (ms) | streamed / stored |")
    print("|---|---|---|---|---|")
    try:
        for mib in (int(m) for m in args.mib.split(",")):
            rows = mib * 2**20 // (4 * WIDTH)
            times = medians(forms(kernels, rows), args.rounds)
            for entry in ("onnx", "core", "onnx + read", "core + read"):
                name, then = entry.split(" ", 1) if " " in entry else (entry, "")
                tail = f" {then}" if then else ""
                streamed, stored = times[f"{name} streamed{tail}"], times[f"{name} stored{tail}"]
                print(
                    f"| {mib} MiB | {entry} | {streamed * 1e3:.2f} | {stored * 1e3:.2f} "
                    f"| {streamed / stored:.2f} |"
                )
    finally:
        kernels.STREAM_MIN_BYTES = bound
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
