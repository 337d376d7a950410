"""aten calls per call of each torch workload: indexops' headline variant against the
fastest-looking native candidate, under ``torch.profiler`` (CPU).

``python -m benchmarks.torch_aten_counts [--sizes 1/16,1/4] [--only TEXT] [--calls 10]``
prints per workload and size the aten calls per call (nested calls included, e.g. the
``aten::copy_`` inside ``aten::clone``) and the most frequent ones, for indexops and for
each native candidate: the per-op overhead that a small size cannot hide. ``--general``
turns torch's element paths off (what element plans cost before them).
"""

from __future__ import annotations

import argparse
import collections
from fractions import Fraction
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

from .backends import make_ctx
from .workloads import build_all


def aten_calls(fn: Any, operand: Any, calls: int) -> collections.Counter[str]:
    """aten calls per call of ``fn(operand)``, by name."""
    fn(operand)  # warm-up: plans and executors made outside the profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            fn(operand)
    counts: collections.Counter[str] = collections.Counter()
    for event in prof.key_averages():
        if event.key.startswith("aten::"):
            counts[event.key] = round(event.count / calls)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1/16,1/4")
    parser.add_argument("--only", default="1 row,2 scatter-add,3 paged,4 element,8 element,9 ,10 ")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument(
        "--general", action="store_true", help="element plans on the general path (as before)"
    )
    args = parser.parse_args()
    if args.general:
        from indexops._backends._torch import TorchBackend

        TorchBackend.gathers_elements = TorchBackend.scatters_elements = False
    ctx = make_ctx("torch")
    only = [part for part in args.only.split(",") if part]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for size in (Fraction(s) for s in args.sizes.split(",")):
        for build in build_all(ctx, False, None, 1, float(size)):
            case = build()
            if not any(part in case.name for part in only):
                continue
            forms = {"indexops": next(iter(case.indexops.values()))}
            forms.update({f"native {k}": v for k, v in case.native.items()})
            for label, fn in forms.items():
                counts = aten_calls(fn, ctx.asarray(case.fresh()), args.calls)
                top = ", ".join(f"{k.removeprefix('aten::')} {v}" for k, v in counts.most_common(6))
                print(f"{size!s:5} {case.name[:40]:40} {label:22} {sum(counts.values()):>4}  {top}")


if __name__ == "__main__":
    main()
