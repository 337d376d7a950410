"""The runner's JSON as the Markdown tables of benchmarks/README.md.

``python -m benchmarks.tables results/numpy-sizes.json`` prints, for one run of
``benchmarks.run --sizes``: each workload's ratio to the fastest native candidate at every
size measured, with the target and which sizes miss it; the same against onnxruntime where
the run has it; and the small calls (microseconds per call).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

ORT_TARGET = 1.25  # issue 33's target against onnxruntime


def _cell(ratio: float, target: float) -> str:
    return f"**{ratio:.2f}**" if ratio > target else f"{ratio:.2f}"


def _verdict(misses: list[str]) -> str:
    return f"**missed** at {', '.join(misses)}" if misses else "met"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def ratio_rows(results: list[dict[str, Any]], sizes: list[str], against_ort: bool) -> list[str]:
    """One row per workload and variant: the ratio at each size and the verdict."""
    cases: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for result in results:
        if not result["workload"].startswith("7 ") and (
            not against_ort or result.get("ratio_vs_onnxruntime") is not None
        ):
            cases[result["workload"], result["variant"]][result["size"]] = result
    rows = []
    for (workload, variant), by_size in cases.items():
        full = by_size.get("1") or next(iter(by_size.values()))
        if against_ort:
            key, target, baseline = "ratio_vs_onnxruntime", ORT_TARGET, _ms(full["onnxruntime_s"])
        else:
            key, target = "ratio", full["target"]
            baseline = f"`{full['native']}` {_ms(full['native_s'])}"
        cells = [_cell(by_size[s][key], target) if s in by_size else "-" for s in sizes]
        misses = [
            s if s != "1" else "full" for s in sizes if s in by_size and by_size[s][key] > target
        ]
        rows.append(
            f"| {workload} | {variant} | {baseline} | {' | '.join(cells)} | {target:.2f} | "
            f"{_verdict(misses)} |"
        )
    return rows


def small_rows(results: list[dict[str, Any]]) -> list[str]:
    """One row per small call: microseconds per call, the ratio, the verdict."""
    rows = []
    for result in results:
        if result["workload"].startswith("7 "):
            ratio, target = result["ratio"], result["target"]
            verdict = "**missed**" if ratio > target else "met"
            rows.append(
                f"| {result['workload'].removeprefix('7 small: ')} | "
                f"{result['indexops_s'] * 1e6:.1f} us | {result['native_s'] * 1e6:.1f} us | "
                f"{_cell(ratio, target)} | {target:.1f} | {verdict} |"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="a result of benchmarks.run")
    with open(parser.parse_args().json) as file:
        run = json.load(file)
    sizes = run.get("sizes") or ["1"]
    heads = " | ".join("full" if s == "1" else s for s in sizes)
    line = "|---" * (len(sizes) + 5) + "|"
    machine = run["machine"]
    counts = sorted({row["repeats"] for row in run["results"]})
    samples = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else str(run["repeats"])
    print(f"{run['backend']} at {machine['commit']} on {machine['date']}, {samples} samples\n")
    print(f"| workload | variant | native baseline (full size) | {heads} | target | verdict |")
    print(line)
    print("\n".join(ratio_rows(run["results"], sizes, against_ort=False)))
    ort = ratio_rows(run["results"], sizes, against_ort=True)
    if ort:
        print(f"\n| workload | variant | onnxruntime (full size) | {heads} | target | verdict |")
        print(line)
        print("\n".join(ort))
    small = small_rows(run["results"])
    if small:
        print("\n| call | indexops | native | ratio | target | verdict |")
        print("|---|---|---|---|---|---|")
        print("\n".join(small))


if __name__ == "__main__":
    main()
