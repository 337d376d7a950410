"""Time every workload for indexops, the fastest native expression and ``jax.lax``.

``python -m benchmarks.run --backend numpy [--quick]``; ``--backend torch --device cuda``
and ``--backend cupy`` on a GPU machine. Prints a table of medians and ratios and writes
``benchmarks/results/<backend>.json`` and ``ratios_<backend>.png``. ``--scale N`` makes
workloads 1 and 3 N times bigger (tag ``<backend>-xN``), e.g. to be bandwidth-bound on a GPU.
``--sizes`` runs workloads 1-6 at 1/16, 1/4 and the full size (tag ``<backend>-sizes``), so
that a path chosen by size is measured on both sides of its threshold.
``--backend jax`` times workloads 1-6 under ``jax.jit`` instead: jit(indexops op) against
jit(``jax.lax`` op) on the same arrays (``benchmarks/jit_workloads.py``; ``--device cuda``
where jax has CUDA).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .backends import Ctx, jax_ctx, make_ctx
from .jit_workloads import build_jit
from .workloads import Case, build_all

RESULTS = Path(__file__).parent / "results"
JAX_LABEL = "jax.lax"
ONNX_LABEL = "onnxruntime"
AFTER = (JAX_LABEL,)  # sampled in a block after the others (XLA's threads spin after a call)
# Each callable runs this many times before its samples, or fewer where that takes longer
# than WARM_UP_S (at least 3): the first dozen calls of a small op take 1.1-3.5x its steady
# time (scatter_update at 1/16: 139, 86, 70, 47, ... 39 us), which one call of warm-up left
# in the 11 one-call samples of a size (README, "Warm-up and the JAX block").
WARM_UP_CALLS, WARM_UP_S = 20, 0.25
# A block whose slowest sample takes less than SHORT_S gets more samples, as many as take
# about SHORT_BUDGET_S each, up to MOST_SAMPLES: medians of 11 one-call samples of the 1/16
# rows (0.04-0.3 ms) moved by 0.1-0.3 between runs (README, "Warm-up and the JAX block").
SHORT_S, SHORT_BUDGET_S, MOST_SAMPLES = 1e-3, 0.03, 101
SWEEP = "1/16,1/4,1"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--backend", choices=("numpy", "torch", "cupy", "jax"), default="numpy")
    parser.add_argument("--device", default="cpu", help="torch or jax device, e.g. cuda")
    parser.add_argument("--quick", action="store_true", help="small sizes, under a minute")
    parser.add_argument("--repeats", type=int, default=None, help="samples per callable")
    parser.add_argument(
        "--only",
        default="",
        help="run workloads whose name contains this (or, comma-separated, any of these)",
    )
    parser.add_argument(
        "--scale", type=int, default=1, help="multiply the sizes of workloads 1 and 3 by this"
    )
    parser.add_argument(
        "--sizes",
        nargs="?",
        const=SWEEP,
        default=None,
        type=_fractions,
        help=f"fractions of the full size for workloads 1-6 (no value: {SWEEP})",
    )
    parser.add_argument("--no-jax", action="store_true", help="skip the jax.lax peer")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--no-plot", action="store_true", help="write the JSON only")
    args = parser.parse_args(argv)
    if args.scale < 1:
        parser.error("--scale must be 1 or more")
    if args.scale != 1 and args.backend == "jax":
        parser.error("--scale is for numpy, torch and cupy (the jit workloads have one size)")
    if args.sizes is not None and args.backend == "jax":
        parser.error("--sizes is for numpy, torch and cupy (the jit workloads have one size)")
    return args


def _fractions(text: str) -> list[Fraction]:
    """``"1/16,1/4,1"`` as fractions, each in (0, 1]."""
    try:
        sizes = [Fraction(part.strip()) for part in text.split(",") if part.strip()]
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not fractions: {text!r}") from None
    if not sizes or not all(0 < size <= 1 for size in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be fractions in (0, 1], got {text!r}")
    return sizes


def median_time(fn: Callable[[Any], Any], operand: Any, ctx: Ctx, calls: int) -> float:
    """Seconds per call of one sample of ``calls`` calls, result synced."""
    start = time.perf_counter()
    for _ in range(calls):
        out = fn(operand)
    ctx.sync(out)
    return (time.perf_counter() - start) / calls


def warm_up(fn: Callable[[Any], Any], operand: Any, ctx: Ctx) -> float:
    """Call ``fn`` until its time is steady: :data:`WARM_UP_CALLS` calls, or at least 3
    and as many as :data:`WARM_UP_S` allows (JAX compiles in the first). Returns the
    seconds of the last call."""
    start = last = time.perf_counter()
    for k in range(WARM_UP_CALLS):
        last = time.perf_counter()
        ctx.sync(fn(operand))
        if k >= 2 and time.perf_counter() - start > WARM_UP_S:
            break
    return time.perf_counter() - last


def samples_for(sample_s: float, repeats: int) -> int:
    """How many samples a block takes whose slowest sample takes ``sample_s`` seconds:
    ``repeats``, more for short ones (:data:`SHORT_S`)."""
    if sample_s >= SHORT_S:
        return repeats
    return min(MOST_SAMPLES, max(repeats, int(SHORT_BUDGET_S / max(sample_s, 1e-6))))


Entry = tuple[Callable[[Any], Any], Any, Ctx]


def entries(case: Case, ctx: Ctx, jx: Ctx | None) -> dict[str, Entry]:
    """Every callable of ``case`` with its own fresh operand on its own backend."""
    out: dict[str, Entry] = {}
    for name, fn in case.indexops.items():
        out[f"indexops {name}".strip()] = (fn, ctx.asarray(case.fresh()), ctx)
    for name, fn in case.native.items():
        out[f"native {name}"] = (fn, ctx.asarray(case.fresh()), ctx)
    if case.jax is not None and jx is not None:
        out[JAX_LABEL] = (case.jax, jx.asarray(case.fresh()), jx)
    if case.onnxruntime is not None and ctx.device == "cpu":
        out[ONNX_LABEL] = (case.onnxruntime, case.fresh(), make_ctx("numpy"))
    return out


def check(case: Case, table: dict[str, Entry]) -> None:
    """Run every callable once on a fresh operand; each must give the expected result."""
    for label, (fn, _, ctx) in table.items():
        got = ctx.to_numpy(fn(ctx.asarray(case.fresh())))
        if case.exact:
            ok = got.shape == case.expected.shape and np.array_equal(got, case.expected)
        else:
            ok = np.allclose(got, case.expected, rtol=1e-4, atol=1e-4)
        if not ok:
            raise AssertionError(f"{case.name}: {label} differs from the expected result")


def sample(table: dict[str, Entry], calls: int, repeats: int) -> dict[str, list[float]]:
    """``repeats`` samples of each callable, alternating (a new order each round).

    indexops, the native candidates and onnxruntime alternate with each other, and the
    callables of one array library pass their operands round: each runs on each operand
    equally often, so where one operand's memory happens to be faster (huge pages, cache
    placement) no callable gets it for good. Each round's order is a seeded shuffle, so no
    callable always runs after the same one (a rotation did that: the callable after one
    that churns memory, such as a native candidate with float64 temporaries, paid for it in
    every sample). onnxruntime, on one thread, runs among them: sampled in a block of its
    own, it ran on caches no other call had disturbed while the others did not (2-3x
    apart at 1/16). The JAX peer is warmed up and sampled in a block of its own
    afterwards, because XLA's CPU threads keep spinning for a while after a call and would
    slow whichever callable came next (warmed up with the others, it slowed their first
    samples 1.5-6x at 1/16). Each callable is warmed up first (:func:`warm_up`), and
    blocks of short calls take more samples (:func:`samples_for`).
    """
    times: dict[str, list[float]] = {label: [] for label in table}
    interleaved = [label for label in table if label not in AFTER]
    after = [label for label in table if label in AFTER]
    gc.collect()
    gc.disable()
    try:
        for labels in (interleaved, after):
            # each block warmed up just before it: no JAX call before the others' samples,
            # whose threads would spin on
            slowest = max([warm_up(*table[label]) for label in labels], default=0.0)
            rotations = _operand_rotations(table, labels)
            order = np.random.default_rng(0)
            for r in range(samples_for(slowest * calls, repeats) if labels else 0):
                for i in order.permutation(len(labels)).tolist():
                    fn, _, ctx = table[labels[i]]
                    operands, place = rotations[labels[i]]
                    operand = operands[(place + r) % len(operands)]
                    times[labels[i]].append(median_time(fn, operand, ctx, calls))
    finally:
        gc.enable()
    return times


def _operand_rotations(
    table: dict[str, Entry], labels: list[str]
) -> dict[str, tuple[list[Any], int]]:
    """For each label, the operands of the callables of its array library (which it takes
    in turn) and its place among them."""
    libraries: dict[str, list[str]] = {}
    for label in labels:
        libraries.setdefault(table[label][2].name, []).append(label)
    return {
        label: ([table[other][1] for other in same], same.index(label))
        for same in libraries.values()
        for label in same
    }


def peak_mib(case: Case, table: dict[str, Entry]) -> dict[str, float]:
    """NumPy only: tracemalloc peak of one call (fresh operand), in MiB."""
    peaks = {}
    for label, (fn, _, ctx) in table.items():
        if ctx.name != "numpy":
            continue
        operand = ctx.asarray(case.fresh())
        gc.collect()
        tracemalloc.start()
        out = fn(operand)
        peaks[label] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        del out
    return peaks


def copy_bandwidth(ctx: Ctx, quick: bool) -> tuple[float, int]:
    """Device-to-device (host memcpy on CPU) copy bandwidth, GB/s of bytes read + written.

    Also returns the buffer size in bytes: 64 or 256 MiB on the CPU, 1 GiB on a GPU (made
    there, not copied from the host), where each sample is 10 copies and one sync.
    """
    gpu = ctx.device != "cpu"
    if ctx.name == "jax" and not gpu:  # the same memory; a jitted copy would time malloc
        return copy_bandwidth(make_ctx("numpy"), quick)
    n = (16 if quick else 256 if gpu else 64) * 2**20  # float32 elements
    src = ctx.ones(n) if gpu else ctx.asarray(np.ones(n, dtype=np.float32))
    dst = ctx.copy(src)

    def copy(x: Any) -> Any:
        if ctx.name == "torch":
            return dst.copy_(x)
        if ctx.name == "jax":  # immutable: each copy is a new array (pooled on a GPU)
            return ctx.xp.copy(x)
        dst[...] = x
        return dst

    ctx.sync(copy(src))
    calls = 10 if gpu else 1
    seconds = statistics.median(median_time(copy, src, ctx, calls) for _ in range(7))
    return 2 * n * 4 / seconds / 1e9, n * 4


def summarise(
    case: Case, times: dict[str, list[float]], peaks: dict[str, float], copy_gbps: float
) -> list[dict[str, Any]]:
    """One result row per indexops variant, against its peer in ``case.peers`` or else the
    fastest native candidate."""
    med = {label: statistics.median(t) for label, t in times.items()}
    natives = {k.removeprefix("native "): v for k, v in med.items() if k.startswith("native ")}
    fastest = min(natives, key=natives.__getitem__)
    jax_s, onnx_s = med.get(JAX_LABEL), med.get(ONNX_LABEL)
    rows = []
    for variant in case.indexops:
        label = f"indexops {variant}".strip()
        best = case.peers.get(variant, fastest)
        seconds = med[label]
        ratio = seconds / natives[best]
        row: dict[str, Any] = {
            "workload": case.name,
            "variant": variant,
            "native": best,
            "indexops_s": seconds,
            "native_s": natives[best],
            "ratio": ratio,
            "target": case.target,
            "meets_target": ratio <= case.target,
            "native_candidates_s": natives,
            "jax_s": jax_s,
            "ratio_vs_jax": None if jax_s is None else seconds / jax_s,
            "onnxruntime_s": onnx_s,
            "ratio_vs_onnxruntime": None if onnx_s is None else seconds / onnx_s,
            "repeats": len(times[label]),
            "calls_per_sample": case.calls,
        }
        if variant in case.notes:
            row["note"] = case.notes[variant]
        if case.calls > 1:
            row["indexops_us_per_call"] = seconds * 1e6
            row["native_us_per_call"] = natives[best] * 1e6
        if case.bytes_moved:
            row["indexops_gbps"] = case.bytes_moved / seconds / 1e9
            row["fraction_of_copy_bw"] = row["indexops_gbps"] / copy_gbps
        if peaks:
            row["peak_mib_indexops"] = peaks.get(label)
            row["peak_mib_native"] = peaks.get(f"native {best}")
        rows.append(row)
    return rows


def run_case(
    case: Case, ctx: Ctx, jx: Ctx | None, repeats: int, copy_gbps: float, size: Fraction
) -> list[dict]:
    """Check, time and (NumPy) measure peak memory of one workload at ``size`` of its full
    size."""
    table = entries(case, ctx, jx)
    check(case, table)
    times = sample(table, case.calls, repeats)
    peaks = peak_mib(case, table) if ctx.name == "numpy" else {}
    rows = summarise(case, times, peaks, copy_gbps)
    for row in rows:
        row["size"], row["size_factor"] = str(size), float(size)
    return rows


def sized_builders(
    ctx: Ctx, jx: Ctx | None, args: argparse.Namespace
) -> list[tuple[Fraction, Callable[[], Case]]]:
    """Every workload's builder at every size, the sizes of one workload one after another
    (so that drift over the run hits each workload's sizes alike)."""
    if ctx.name == "jax":
        return [(Fraction(1), build) for build in build_jit(ctx, args.quick)]
    sizes = args.sizes or [Fraction(1)]
    per_size = [build_all(ctx, args.quick, jx, args.scale, float(size)) for size in sizes]
    return [
        (size, builders[i])
        for i in range(max(map(len, per_size)))
        for size, builders in zip(sizes, per_size)
        if i < len(builders)
    ]


def fmt_time(seconds: float | None) -> str:
    """A duration in ms, or in microseconds below 0.1 ms."""
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-4 else f"{seconds * 1e3:.2f} ms"


def print_table(rows: list[dict[str, Any]]) -> None:
    """The results as a fixed-width table."""
    head = (
        "size",
        "workload",
        "variant",
        "indexops",
        "native (baseline)",
        "ratio",
        "tgt",
        "jax.lax",
        "/jax",
        "onnxrt",
        "/ort",
    )
    print(f"{head[0]:5} {head[1]:44} {head[2]:20} {head[3]:>10} {head[4]:>36} {head[5]:>6} "
          f"{head[6]:>5} {head[7]:>10} {head[8]:>6} {head[9]:>10} {head[10]:>6}")  # fmt: skip
    for r in rows:
        native = f"{r['native']} {fmt_time(r['native_s'])}"
        jax_ratio = "-" if r["ratio_vs_jax"] is None else f"{r['ratio_vs_jax']:.2f}"
        onnx_ratio = r.get("ratio_vs_onnxruntime")
        onnx_ratio = "-" if onnx_ratio is None else f"{onnx_ratio:.2f}"
        mark = "ok" if r["meets_target"] else "MISS"
        print(
            f"{r['size']:5} {r['workload']:44} {r['variant']:20} {fmt_time(r['indexops_s']):>10} "
            f"{native:>36} {r['ratio']:6.2f} {mark:>5} {fmt_time(r['jax_s']):>10} {jax_ratio:>6} "
            f"{fmt_time(r.get('onnxruntime_s')):>10} {onnx_ratio:>6}"
        )


def machine(ctx: Ctx) -> dict[str, Any]:
    """What the numbers were measured on (with the GPU's name off the CPU)."""
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [ln.split(":", 1)[1].strip() for ln in cpuinfo.read_text().splitlines()
                 if ln.startswith("model name")]  # fmt: skip
        info["cpu"] = names[0] if names else platform.processor()
    info["commit"] = source_commit()
    for module in ("torch", "jax", "cupy"):
        if module in sys.modules:
            info[module] = sys.modules[module].__version__
    if "torch" in sys.modules:
        info["torch_threads"] = sys.modules["torch"].get_num_threads()
    return {**info, **ctx.device_info()}


def source_commit() -> str | None:
    """The checkout's commit, ``+dirty`` where src/ has uncommitted changes (None off git)."""
    root = Path(__file__).parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return None
    return commit + ("+dirty" if git("status", "--porcelain", "src") else "")


def plot(rows: list[dict[str, Any]], path: Path, title: str, native: str) -> None:
    """Horizontal bars of indexops/native and indexops/jax.lax, log scale, targets marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = len({r["size"] for r in rows}) > 1
    labels = [
        f"{r['workload']} {r['variant']}".strip() + (f" @{r['size']}" if sweep else "")
        for r in rows
    ]
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(10, 0.38 * len(rows) + 1.5))
    ax.barh(y - 0.2, [r["ratio"] for r in rows], 0.4, label=f"indexops / {native}")
    jax = [r["ratio_vs_jax"] or 0 for r in rows]
    if any(jax):
        ax.barh(y + 0.2, jax, 0.4, label="indexops / jax.lax (jit, CPU)")
    onnx = [r.get("ratio_vs_onnxruntime") or 0 for r in rows]
    if any(onnx):
        ax.barh(y + 0.2, onnx, 0.2, label="indexops / onnxruntime (CPU)")
    ax.scatter([r["target"] for r in rows], y - 0.2, marker="|", color="red", s=200, label="target")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ratio of medians (lower is better)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; write JSON (after every workload, so a cut-off run keeps what it
    measured; ``complete`` says whether it finished) and, at the end, the plot."""
    args = parse_args(argv)
    ctx = make_ctx(args.backend, args.device)
    peer_wanted = not args.no_jax and ctx.device == "cpu" and ctx.name != "jax"
    jx = jax_ctx() if peer_wanted else None
    # jit pairs are close, and XLA's CPU timings spread more: more samples for jax
    repeats = args.repeats or (5 if args.quick else 31 if args.backend == "jax" else 11)
    tag = args.backend if ctx.device == "cpu" else f"{args.backend}-{ctx.device}"
    tag += f"-x{args.scale}" if args.scale != 1 else ""
    tag += "-sizes" if args.sizes is not None else ""
    tag += "-quick" if args.quick else ""
    only = [part.strip() for part in args.only.split(",") if part.strip()] or [""]
    args.out.mkdir(parents=True, exist_ok=True)
    copy_gbps, copy_bytes = copy_bandwidth(ctx, args.quick)
    gpu = ctx.device_info().get("gpu", "")
    print(f"{args.backend} on {ctx.device} {gpu}: copy bandwidth {copy_gbps:.1f} GB/s "
          f"(read + write, {copy_bytes / 2**20:.0f} MiB buffer)", flush=True)  # fmt: skip
    meta = {"backend": args.backend, "device": ctx.device, "quick": args.quick,
            "scale": args.scale, "sizes": [str(s) for s in args.sizes or [1]],
            "repeats": repeats, "copy_gbps": copy_gbps,
            "copy_bytes": copy_bytes, "machine": machine(ctx)}  # fmt: skip
    rows: list[dict[str, Any]] = []
    errors: list[str] = []  # a workload that fails is reported and skipped, not fatal

    def write(complete: bool) -> None:
        results = {**meta, "complete": complete, "errors": errors, "results": rows}
        (args.out / f"{tag}.json").write_text(json.dumps(results, indent=1))

    for number, (size, build) in enumerate(sized_builders(ctx, jx, args), 1):
        started, case = time.perf_counter(), None
        try:
            case = build()
            if not any(part in case.name for part in only):
                continue
            rows.extend(run_case(case, ctx, jx, repeats, copy_gbps, size))
            took = time.perf_counter() - started
            print(f"  done: {case.name} at {size} ({took:.1f} s)", flush=True)
        except Exception as exc:
            traceback.print_exc()
            name = f"{case.name} at {size}" if case else f"workload #{number} at {size}"
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            print(f"  FAILED: {errors[-1]}", flush=True)
        write(complete=False)
        del case
        gc.collect()
    write(complete=True)
    if rows:
        print_table(rows)
    if rows and not args.no_plot:
        native = "jax.lax (both jit)" if ctx.name == "jax" else "native"
        title = f"indexops on {tag} {gpu}".strip()
        if ctx.name == "jax":
            title = f"jit(indexops) against jit(jax.lax) on {ctx.device} {gpu}".strip()
        plot(rows, args.out / f"ratios_{tag}.png", title, native)
    for error in errors:
        print(f"FAILED {error}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
