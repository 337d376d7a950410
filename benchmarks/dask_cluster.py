"""Scatter-add on a ``dask.distributed`` cluster: indexops against hand-written Dask.

``python -m benchmarks.dask_cluster`` scatters ``--rows`` rows of ``--width`` float32 into a
``[--table-rows, --width]`` table of ``--chunk-mb`` chunks (default: 8M rows, a 2M-row table:
2 GB of updates into 512 MB in 64 MB chunks), on a ``LocalCluster`` of 1 and then 2 worker
processes with one thread each. Each (variant, workers) pair gets a fresh cluster: the
inputs are generated on the workers and persisted, then the op alone is timed (persist and
wait). Reported: seconds, the CPU seconds the worker processes spent (the work done,
whatever else the machine runs), the task count of the op's graph as the scheduler gets it
(optimized: elementwise index arithmetic fused; inputs excluded), and the peak
resident memory of each worker process (``ru_maxrss``: inputs included).

With ``--stream`` the inputs are not persisted: they are generated inside the op's graph,
so no worker needs to hold them whole, and the time includes generating them.

The hand-written candidates are what a Dask user would write: per update block, sort the
rows to the table chunk they hit (one task), then per table chunk one task that applies all
its pieces with ``np.add.at``, on rows or on flat element indices. The fastest is the
baseline. Results go to ``benchmarks/results/dask-<tag>.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from .run import source_commit

RESULTS = Path(__file__).parent / "results"
ROW_SCATTER = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}
FLAT_PIECE_ROWS = 1024  # rows per np.add.at call on flat indices (a cache-sized index)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_cluster", description=__doc__)
    parser.add_argument("--rows", type=int, default=8 * 2**20, help="update rows")
    parser.add_argument("--table-rows", type=int, default=2 * 2**20)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--chunk-mb", type=int, default=64, help="table and update chunks")
    parser.add_argument("--workers", default="1,2", help="cluster sizes, comma-separated")
    parser.add_argument("--memory-limit", default="10GiB", help="per worker")
    parser.add_argument("--only", default="", help="variants whose name contains this")
    parser.add_argument(
        "--stream",
        action="store_true",
        help="generate the inputs inside the op's graph (not persisted first); time both",
    )
    parser.add_argument("--tag", default="full")
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args(argv)


# -- inputs, generated on the workers -------------------------------------------------------


def inputs(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Table (zeros), row indices (uniform over the table) and updates (normal)."""
    import dask.array as da

    chunk_rows = args.chunk_mb * 2**20 // (4 * args.width)
    table = da.zeros(
        (args.table_rows, args.width), dtype=np.float32, chunks=(chunk_rows, args.width)
    )
    rng = da.random.default_rng(0)
    rows = rng.integers(0, args.table_rows, (args.rows, 1), chunks=(chunk_rows, 1))
    updates = rng.standard_normal(
        (args.rows, args.width), dtype=np.float32, chunks=(chunk_rows, args.width)
    )
    return table, rows, updates


# -- the variants ---------------------------------------------------------------------------


def with_indexops(table: Any, rows: Any, updates: Any) -> Any:
    import indexops

    return indexops.scatter(table, rows, updates, **ROW_SCATTER, update_computation="add")


def _split_to_chunks(rows: np.ndarray, values: np.ndarray, bounds: np.ndarray) -> list[Any]:
    """The rows of one update block sorted to the table chunks (local row numbers)."""
    rows = rows.reshape(-1)
    chunk_of = np.searchsorted(bounds, rows, side="right") - 1
    order = np.argsort(chunk_of, kind="stable")
    cuts = np.searchsorted(chunk_of[order], np.arange(len(bounds)))
    rows, values = rows[order], values[order]
    return [
        (rows[a:b] - bounds[c], values[a:b]) for c, (a, b) in enumerate(itertools.pairwise(cuts))
    ]


def _add_rows(chunk: np.ndarray, *pieces: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    out = chunk.copy()
    for rows, values in pieces:
        np.add.at(out, rows, values)
    return out


def _add_flat(chunk: np.ndarray, *pieces: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    out = chunk.copy()
    flat, columns = out.reshape(-1), np.arange(out.shape[1])
    for rows, values in pieces:
        for start in range(0, rows.shape[0], FLAT_PIECE_ROWS):
            part = slice(start, start + FLAT_PIECE_ROWS)
            elements = (rows[part, None] * out.shape[1] + columns).reshape(-1)
            np.add.at(flat, elements, values[part].reshape(-1))
    return out


def hand_written(apply: Callable[..., np.ndarray]) -> Callable[[Any, Any, Any], Any]:
    """Sort each update block to the table chunks, then one task per chunk applies its
    pieces: the formulation a Dask user writes with ``dask.delayed``."""

    def scatter_add(table: Any, rows: Any, updates: Any) -> Any:
        import dask
        import dask.array as da

        chunk_rows = table.chunks[0]
        bounds = np.cumsum((0, *chunk_rows))
        row_blocks = rows.rechunk((updates.chunks[0], 1)).to_delayed().reshape(-1)
        value_blocks = updates.to_delayed().reshape(-1)
        split = dask.delayed(_split_to_chunks, nout=len(chunk_rows), pure=True)
        pieces = [split(r, v, bounds) for r, v in zip(row_blocks, value_blocks)]
        outs = [
            da.from_delayed(
                dask.delayed(apply, pure=True)(block, *[p[c] for p in pieces]),
                shape=(n, table.shape[1]),
                dtype=table.dtype,
            )
            for c, (block, n) in enumerate(zip(table.to_delayed().reshape(-1), chunk_rows))
        ]
        return da.concatenate(outs)

    return scatter_add


VARIANTS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "indexops.scatter": with_indexops,
    "hand: sort to chunks + np.add.at rows": hand_written(_add_rows),
    "hand: sort to chunks + np.add.at flat": hand_written(_add_flat),
}


# -- one measurement ------------------------------------------------------------------------


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _cpu_seconds() -> float:
    """CPU time of this worker process: the work done, whatever else runs on the machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(args: argparse.Namespace, name: str, workers: int) -> dict[str, Any]:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        table, rows, updates = inputs(args)
        if not args.stream:
            table, rows, updates = client.persist([table, rows, updates])
            wait([table, rows, updates])
        before = client.run(_peak_rss_bytes)
        result = VARIANTS[name](table, rows, updates)
        (optimized,) = dask.optimize(result)  # what the scheduler gets: blockwise ops fused
        given = set(_keys(table, rows, updates))
        own_tasks = sum(1 for key in optimized.__dask_graph__() if key not in given)
        load_before = os.getloadavg()[0]
        cpu_before = client.run(_cpu_seconds)
        start = time.perf_counter()
        (done,) = client.persist([result])
        wait(done)
        seconds = time.perf_counter() - start
        cpu = sum(client.run(_cpu_seconds).values()) - sum(cpu_before.values())
        after = client.run(_peak_rss_bytes)
        checksum = float(da.sum(done.astype(np.float64)).compute())
        sample = np.asarray(done[:: max(1, args.table_rows // 64)][:64].compute())
    return {
        "variant": name,
        "workers": workers,
        "seconds": seconds,
        "worker_cpu_seconds": cpu,
        "tasks": own_tasks,
        "peak_rss_before_op_gb": [v / 2**30 for v in before.values()],
        "peak_rss_gb": [v / 2**30 for v in after.values()],
        "checksum": checksum,
        "sample": sample.astype(np.float64).round(4).tolist(),
        "loadavg_1min_before_op": load_before,
        "loadavg_1min_after_op": os.getloadavg()[0],
    }


def _keys(*arrays: Any) -> list[Any]:
    return [key for a in arrays for key in a.__dask_graph__()]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    chunk_rows = args.chunk_mb * 2**20 // (4 * args.width)
    sizes = {
        "rows": args.rows,
        "table_rows": args.table_rows,
        "width": args.width,
        "chunk_rows": chunk_rows,
        "table_gb": args.table_rows * args.width * 4 / 2**30,
        "updates_gb": args.rows * args.width * 4 / 2**30,
        "table_chunks": -(-args.table_rows // chunk_rows),
        "update_blocks": -(-args.rows // chunk_rows),
        "memory_limit": args.memory_limit,
        "stream": args.stream,
    }
    print(json.dumps(sizes))
    rows: list[dict[str, Any]] = []
    path = args.out / f"dask-{args.tag}.json"
    for workers in (int(w) for w in args.workers.split(",")):
        for name in VARIANTS:
            if args.only and args.only not in name:
                continue
            row = measure(args, name, workers)
            rows.append(row)
            peak = max(row["peak_rss_gb"])
            print(f"{workers} workers  {name:40s} {row['seconds']:7.2f} s  "
                  f"{row['worker_cpu_seconds']:7.2f} cpu-s  "
                  f"{row['tasks']:5d} tasks  peak {peak:.2f} GB/worker")  # fmt: skip
            _check(rows)
            report = {
                "sizes": sizes,
                "machine": _machine(),
                "results": [{k: v for k, v in r.items() if k != "sample"} for r in rows],
            }
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(report, indent=1) + "\n")


def _check(rows: list[dict[str, Any]]) -> None:
    """Every variant gives the same table (float32 sums in another order: close)."""
    first = rows[0]
    for row in rows[1:]:
        np.testing.assert_allclose(row["sample"], first["sample"], rtol=1e-4, atol=1e-3)
        assert abs(row["checksum"] - first["checksum"]) <= 1e-5 * (1 + abs(first["checksum"]))


def _machine() -> dict[str, Any]:
    import dask
    import distributed

    return {
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": source_commit(),
    }


if __name__ == "__main__":
    main()
