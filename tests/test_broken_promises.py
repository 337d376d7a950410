"""Every host fast path with broken promises, in a child process.

``mode="promise_in_bounds"`` with rows far outside the table, and ``unique_indices=True``
with duplicates, may give any value or raise an ordinary exception, but never read or
write outside an array: a crash (abort, segfault, heap corruption) takes the whole child
down, so the sweep runs in one child per backend and the test checks its exit status.
The sizes pick each route of the host backends (spies count them), and the same calls
with ``mode="drop"`` check that the entries in bounds are written right.

Run as a script (``python test_broken_promises.py numpy|torch``) this file is the child:
it prints one JSON report on its last line.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

ROW_SCATTER = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}
ROW_GATHER = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
# GatherElements / ScatterElements along axis 1 of the table, an index [n, 3, 1]
ELEMENT_GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip
ELEMENT_SCATTER = {
    "update_window_dims": (), "inserted_window_dims": (1,), "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2, "input_batching_dims": (0,), "scatter_indices_batching_dims": (0,),
}  # fmt: skip

# index dtype: values outside every table below (uint8's 255 is outside all but one)
BAD_ROWS = {
    "int64": (2**63 - 1, -(2**63), 2**31 - 1, -1),
    "int32": (2**31 - 1, -(2**31), -1),
    "uint64": (2**64 - 1, 2**63),
    "uint32": (2**32 - 1, 2**31),
    "uint8": (255,),
}
TABLE_DTYPES = (
    "bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "float32", "float64",
    "complex64",
)  # fmt: skip
# the sweep again with the compiled kernels (numba) taking every write and element gather
# they take: a dtype of each way they see one (bits moved, integers that wrap, IEEE
# floats, complex numbers as pairs of floats), few, as each compiles on first use
KERNEL_DTYPES = ("bool", "int64", "float64", "complex128")
# ... on rows of several columns and of one (the loops the kernels have), and on rows the
# child counts as wide (a replace copies them whole: 512 bytes of int64 and float64)
KERNEL_SHAPES = ((16, 4, 8), (1000, 1, 300), (8, 64, 24))

# (table rows n, row width d, updates k), each picking a route of NumPy's combine and
# torch's row gather: ufunc.at on the rows (k*d <= 256), element indices (odd d), column
# pairs (even d), rows combined by runs (d >= 32: integer add, and min and max, whose
# size threshold the child lowers), the sparse product (k*d >= 2**15, d >= 3,
# n <= k; also torch's gather through NumPy's take, k*d > 2**15), a 1-D flat ufunc.at,
# and float min and max into a copy with zeros looked for in the result (k >= 2n)
SHAPES = (
    (16, 4, 8), (64, 5, 64), (64, 8, 64), (64, 32, 64), (256, 160, 256), (1000, 1, 300),
    (16, 4, 64),
)  # fmt: skip

COMBINERS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}

# every route a sweep must take at least once (counted by the child's spies)
ROUTES = {
    "numpy": (
        "ufunc.at on rows", "ufunc.at on elements", "column pairs", "add by runs",
        "min or max by runs",
        "sparse product", "fancy set", "take", "take clipped", "count_distinct",
        "take along axis", "zeros found in the result", "distinct rows written directly",
        "few rows asked in one layer", "checked take", "last writes of repeated rows",
        "few rows counted from the end", "element steps",
    ),
    # where numba is installed
    "numpy kernels": (
        "compiled rows", "compiled element gather", "compiled element gather streamed",
        "compiled on threads", "compiled rows asked for ahead", "compiled row gather",
        "compiled index tuples", "compiled element scatter", "compiled rows unchecked",
        "compiled rows copied whole",
    ),
    "torch kernels": (
        "compiled rows", "compiled element gather", "compiled element gather streamed",
        "compiled on threads", "compiled rows asked for ahead",
        "compiled index tuples", "compiled element scatter", "compiled rows unchecked",
        "compiled rows copied whole",
    ),
    "torch": (
        "index_add_", "scatter_reduce_", "index_copy_", "index_select", "NumPy take",
        "count_distinct", "index_fill_ bitmap", "gather", "scatter_",
        "zeros found in the result", "distinct rows written directly",
        "few rows asked in one layer", "last writes of repeated rows", "checked take",
        "few rows counted from the end", "element steps",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    "library", ["numpy", pytest.param("torch", marks=pytest.mark.backends("torch"))]
)
def test_every_host_fast_path_survives_broken_promises(library):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    child = subprocess.run(
        [sys.executable, __file__, library], capture_output=True, text=True, env=env, timeout=600
    )
    assert child.returncode == 0, f"the child crashed ({child.returncode}):\n{child.stderr[-3000:]}"
    report = json.loads(child.stdout.splitlines()[-1])
    print(json.dumps(report["raised"], indent=1))  # which cases raised what (pytest -s)
    assert report["cases"] > 1000
    assert report["unexpected"] == [], report["unexpected"][:20]
    assert report["wrong in bounds"] == [], report["wrong in bounds"][:20]
    assert report["half written"] == [], report["half written"][:20]
    routes = ROUTES[library] + (ROUTES.get(f"{library} kernels", ()) if report["kernels"] else ())
    missing = [route for route in routes if not report["routes"].get(route)]
    assert missing == [], report["routes"]


# -- the child -----------------------------------------------------------------------------


class Sweep:
    """Runs cases, records what each raised and which routes ran."""

    def __init__(self, library: str) -> None:
        import indexops

        self.library = library
        self.allowed = (indexops.IndexOpsError, IndexError, ValueError, RuntimeError)
        self.cases = 0
        self.raised: collections.Counter[str] = collections.Counter()
        self.unexpected: list[str] = []
        self.wrong: list[str] = []
        self.half_written: list[str] = []
        self.routes: collections.Counter[str] = collections.Counter()

    def run(self, name: str, call: Callable[[], Any]) -> Any:
        """``call()``; an exception is recorded (by type) instead of raised."""
        self.cases += 1
        try:
            return call()
        except self.allowed as error:
            self.raised[f"{name}: {type(error).__name__}"] += 1
        except Exception as error:  # reported, and the test fails on it
            self.unexpected.append(f"{name}: {type(error).__name__}: {error}")
        return None

    def report(self) -> dict[str, Any]:
        from indexops._backends._host import load_kernels

        return {
            "kernels": load_kernels() is not None,
            "cases": self.cases,
            "raised": dict(sorted(self.raised.items())),
            "unexpected": self.unexpected,
            "wrong in bounds": self.wrong,
            "half written": self.half_written,
            "routes": dict(self.routes),
        }


def spy(owner: Any, name: str, routes: collections.Counter[str], route: Any) -> None:
    """Count ``route(*args)`` (a route name or None) on each call of ``owner.name``."""
    function = getattr(owner, name)

    def spied(*args: Any, **kwargs: Any) -> Any:
        found = route(*args, **kwargs)
        if found:
            routes[found] += 1
        return function(*args, **kwargs)

    setattr(owner, name, spied)


class _CountedUfunc:
    """A ufunc whose ``at`` on a 2-D table counts as the route on rows."""

    def __init__(self, ufunc: np.ufunc, routes: collections.Counter[str]) -> None:
        self.ufunc, self.routes = ufunc, routes

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.ufunc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # reduceat and the rest: the ufunc's own
        return getattr(self.ufunc, name)

    def at(self, table: Any, *args: Any) -> None:
        self.routes["ufunc.at on rows" if table.ndim == 2 else "ufunc.at on elements"] += 1
        self.ufunc.at(table, *args)


def spy_rows(routes: collections.Counter[str]) -> None:
    """The routes of the backend-independent row writer (``_execute/rows.py``)."""
    from indexops._execute import rows, writes

    spy(rows, "_combine_then_fix_zero_results", routes, lambda *a: "zeros found in the result")
    spy(writes.RowWriter, "_distinct", routes, lambda *a: "distinct rows written directly")
    spy(writes.RowWriter, "write_few", routes, lambda *a: "few rows asked in one layer")
    spy(writes.RowWriter, "_last_writes", routes, _last_writes_route)
    from indexops._backends._host import HostKernels

    spy(HostKernels, "few_rows_from_end", routes, _from_end_route)


def _from_end_route(backend: Any, rows: Any, n: int) -> str | None:
    listed = backend.few_on_host(rows)
    counted = listed and min(listed) < 0 and -n <= min(listed) and max(listed) < n
    return "few rows counted from the end" if counted else None


def _last_writes_route(writer: Any, rows: Any, values: Any) -> str | None:
    listed = writer.backend.few_on_host(rows)
    repeated = listed is not None and len(set(listed)) < len(listed)
    return "last writes of repeated rows" if repeated else None


def spy_numpy(routes: collections.Counter[str]) -> None:
    from indexops._backends import _numpy

    spy_rows(routes)
    _numpy.UFUNCS = {how: _CountedUfunc(f, routes) for how, f in _numpy.UFUNCS.items()}
    _numpy._MIN_MAX_RUNS_MIN_ELEMENTS = 2**11  # the [64, 32] shape's min and max by runs
    _numpy._ELEMENT_BLOCK = 8  # element gathers block by block
    spy(_numpy, "_combine_by_runs", routes, _runs_route)
    spy(_numpy, "_add_by_sparse_product", routes, lambda *a: "sparse product")
    spy(_numpy, "_as_elements", routes, lambda values, pair: pair is not None and "column pairs")
    spy(_numpy, "count_distinct", routes, lambda *a: "count_distinct")
    backend = _numpy.NumpyBackend
    spy(backend, "_set", routes, lambda *a: "fancy set")
    spy(backend, "take_rows", routes, lambda *a: "take")
    spy(backend, "take_rows_clipped", routes, lambda *a: "take clipped")
    spy(backend, "take_rows_checked", routes, lambda *a, **k: "checked take")
    spy(backend, "take_along_axis", routes, lambda *a: "take along axis")
    spy_element_steps(backend, routes)


def spy_element_steps(backend: Any, routes: collections.Counter[str]) -> None:
    """at's index tuples of few elements: the library's own element steps."""
    for name in ("take_elements", "combine_elements"):
        spy(backend, name, routes, lambda *a, **k: "element steps")


def _runs_route(table: Any, rows: Any, values: Any, ufunc: Any) -> str:
    return "add by runs" if ufunc.ufunc is np.add else "min or max by runs"


def spy_torch(routes: collections.Counter[str]) -> None:
    import torch

    from indexops._backends import _torch

    spy_rows(routes)
    spy(_torch, "count_distinct", routes, lambda *a: "count_distinct")
    for method, route in [
        ("index_add_", "index_add_"),
        ("scatter_reduce_", "scatter_reduce_"),
        ("index_copy_", "index_copy_"),
        ("index_select", "index_select"),
        ("index_fill_", "index_fill_ bitmap"),
        ("scatter_", "scatter_"),
    ]:
        spy(torch.Tensor, method, routes, lambda *a, route=route, **k: route)
    spy(torch, "gather", routes, lambda *a, **k: "gather")
    # (NumPy's take on the tensors' memory, or the compiled row gather: its name in _torch)
    spy(_torch, "take_large_rows", routes, lambda *a, **k: "NumPy take")
    spy(_torch.TorchBackend, "take_rows_checked", routes, lambda *a: "checked take")
    spy_element_steps(_torch.TorchBackend, routes)


def rows_with(bad: tuple[int, ...], index_dtype: str, n: int, k: int, seed: int) -> np.ndarray:
    """``k`` rows in ``[0, n)`` (repeating), ``bad`` values at a few places, as ``[k, 1]``."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, min(n, np.iinfo(index_dtype).max + 1), size=k).astype(object)
    for j, value in enumerate(bad):
        rows[(j * 7 + 1) % k] = value
    return np.array(rows.tolist(), dtype=index_dtype)[:, None]


def spy_kernels(routes: collections.Counter[str]) -> None:
    """The compiled kernels from the first element on, counted where they ran; calls of
    the larger shape split between two threads (counted where they were)."""
    import indexops
    from indexops._backends import _host, _threads
    from indexops._execute import writes

    compiled = _host.load_kernels()
    _host.KERNEL_MIN_ELEMENTS, _host.ELEMENT_STEPS_MAX_ELEMENTS = 0, 0  # (kernels only)
    _threads.THREAD_MIN_ELEMENTS = 2**8  # the second of KERNEL_SHAPES: few calls to split
    compiled.COPY_ROW_MIN_BYTES, compiled.COPY_TABLE_MIN_BYTES = 512, 0  # the third's rows
    compiled.STREAM_MIN_BYTES = 2**10  # the second shape's element gathers stream
    compiled.PREFETCH_MIN_BYTES = 2**10  # the larger tables' row writes ask for rows ahead
    _host.LARGE_ROW_TAKE_MIN_ELEMENTS = 0  # (and their wide rows are read by the row gather)
    compiled.ROW_GATHER_MIN_RESULT_BYTES = 0
    indexops.set_host_threads(2)
    copied_whole = compiled._copied_whole

    def spied_copied_whole(dtype: Any, shape: tuple[int, ...]) -> bool:
        whole = copied_whole(dtype, shape)
        routes["compiled rows copied whole"] += whole
        return whole

    compiled._copied_whole = spied_copied_whole
    prefetch_ahead = compiled._prefetch_ahead

    def spied_prefetch_ahead(table: Any) -> int:
        ahead = prefetch_ahead(table)
        routes["compiled rows asked for ahead"] += ahead > 0
        return ahead

    compiled._prefetch_ahead = spied_prefetch_ahead
    split = compiled.run_parts

    def spied_split(task: Any, count: int, parts: int) -> Any:
        routes["compiled on threads"] += len(_threads.split(count, parts)) > 1
        return split(task, count, parts)

    compiled.run_parts = spied_split
    one_pass = writes.RowWriter.in_one_pass

    def spied_one_pass(*args: Any, **kwargs: Any) -> Any:
        written = one_pass(*args, **kwargs)
        routes["compiled rows unchecked"] += written is not None  # (no range check first)
        return written

    writes.RowWriter.in_one_pass = spied_one_pass  # type: ignore[method-assign]
    for owner, name, route in (
        (compiled.RowPlan, "__call__", "compiled rows"),  # (every row write's, prepared or not)
        (compiled, "take_along_axis", "compiled element gather"),
        (compiled, "scatter_tuples", "compiled index tuples"),
        (compiled, "take_rows", "compiled row gather"),
        (compiled, "scatter_along_axis", "compiled element scatter"),
    ):
        run = getattr(owner, name)

        def spied(*args: Any, run: Any = run, route: str = route, **kwargs: Any) -> Any:
            result = run(*args, **kwargs)
            if result is not None:  # else it declined the arrays
                routes[route] += 1
                if route == "compiled element gather":
                    streamed = result[0].nbytes >= compiled.STREAM_MIN_BYTES
                    routes["compiled element gather streamed"] += streamed
            return result

        setattr(owner, name, spied)


def sweep_numpy_like(
    sweep: Sweep,
    convert: Callable[[np.ndarray], Any],
    dtypes: tuple[str, ...] = TABLE_DTYPES,
    shapes: tuple[tuple[int, int, int], ...] = SHAPES,
) -> None:
    """Every op on every table dtype, shape and kind of broken row index."""
    import indexops

    for n, d, k in shapes:
        for dtype in dtypes:
            rng = np.random.default_rng(n + d)
            table = rng.integers(1, 3, size=(n, d)).astype(dtype)
            updates = rng.integers(1, 3, size=(k, d)).astype(dtype)
            for index_dtype, bad in BAD_ROWS.items():
                rows = rows_with(bad, index_dtype, n, k, seed=k)
                where = f"[{n}, {d}] {dtype} rows {index_dtype}"
                broken_promises(sweep, convert, where, table, rows, updates)
                in_place_as_it_was(sweep, convert, where, table, rows, updates)
                in_bounds_of_drop(sweep, convert, where, table, rows, updates)
            duplicates = convert(rows_with((), "int64", n, k, seed=1))
            for how in (None, *COMBINERS):
                sweep.run(
                    f"scatter {how} unique_indices=True with duplicates",
                    functools.partial(
                        indexops.scatter, convert(table), duplicates, convert(updates),
                        update_computation=how, unique_indices=True, **ROW_SCATTER,
                    ),
                )  # fmt: skip
            from_end = convert(rows_with((-1, -n), "int64", n, k, seed=2)[:, 0])  # in range
            target = indexops.at(convert(table))[from_end]
            for method in ("set", "add", "max"):
                update = functools.partial(getattr(target, method), convert(updates))
                sweep.run(f"at {method} rows from the end", update)


def broken_promises(
    sweep: Sweep, convert: Callable, where: str, table: Any, rows: Any, updates: Any
) -> None:
    """Each op with ``mode="promise_in_bounds"`` (or its own bad input) and bad ``rows``."""
    import indexops
    from indexops import onnx

    x, r, u, flat = convert(table), convert(rows), convert(updates), convert(rows[:, 0])
    pairs = convert(np.concatenate([rows[::-1], rows], axis=1))  # (row, column) tuples
    width = table.shape[1]
    calls = {
        **{
            f"scatter {how}": lambda how=how: indexops.scatter(
                x, r, u, update_computation=how, mode="promise_in_bounds", **ROW_SCATTER
            )
            for how in (None, *COMBINERS)
        },
        **{
            f"gather {mode}": lambda mode=mode: indexops.gather(
                x, r, **ROW_GATHER, index_vector_dim=1, slice_sizes=(1, width), mode=mode
            )
            for mode in ("promise_in_bounds", "clip")
        },
        **element_calls(convert, table, rows, updates),
        # ONNX's ScatterND: its own check names the first index outside (negatives wrap);
        # one loop for every combiner in the kernels: two of them (each compiles)
        "onnx scatter_nd": lambda: onnx.scatter_nd(x, r, u),
        "onnx scatter_nd pairs": lambda: onnx.scatter_nd(x, pairs, u[:, 0], reduction="add"),
        "at get": lambda: indexops.at(x)[flat].get(mode="promise_in_bounds"),
        "at add": lambda: indexops.at(x)[flat].add(1, mode="promise_in_bounds", copy=False),
        "at set": lambda: indexops.at(x)[flat].set(u, mode="promise_in_bounds"),
        # a second call of a signature: the core executor that at's lowering keeps
        **{
            f"at {method} kept": lambda method=method: [
                getattr(indexops.at(x)[flat], method)(u, mode="promise_in_bounds") for _ in range(2)
            ]
            for method in ("set", "add", "max", "multiply")
        },
        "at get kept": lambda: [
            indexops.at(x)[flat].get(mode="promise_in_bounds") for _ in range(2)
        ],
        # basic expressions run as the library's own slicing: no index value at all
        "at slices add": lambda: indexops.at(x)[::-1, 1:].add(1, mode="promise_in_bounds"),
        "at slices get": lambda: indexops.at(x)[-1, ::-2].get(unique_indices=True),
        "scatter_update": lambda: indexops.scatter_update(x, -2, convert(rows.T), u),
        "dynamic_slice": lambda: indexops.dynamic_slice(x, (r[1, 0], r[0, 0]), (1, width)),
        "dynamic_update_slice": lambda: indexops.dynamic_update_slice(x, u[:1], (r[1, 0], r[0, 0])),
    }
    for name, call in calls.items():
        sweep.run(f"{name} {where}", call)


def in_place_as_it_was(
    sweep: Sweep, convert: Callable, where: str, table: Any, rows: Any, updates: Any
) -> None:
    """Each write in place with ``mode="promise_in_bounds"`` and bad ``rows``: where it
    raises, the input is as it was (nothing a user passes in is half-written)."""
    from helpers import to_numpy

    import indexops

    n = table.shape[0]
    element_rows = np.resize(rows[:, 0], (n, 3, 1))
    element_updates = np.resize(updates.reshape(-1), (n, 3))
    promise = {"mode": "promise_in_bounds", "copy": False}
    writes = {
        **{
            f"scatter {how}": lambda x, how=how: indexops.scatter(
                x, convert(rows), convert(updates), update_computation=how, **ROW_SCATTER,
                **promise,
            )
            for how in (None, *COMBINERS)
        },
        **{
            f"element scatter {how}": lambda x, how=how: indexops.scatter(
                x, convert(element_rows), convert(element_updates), update_computation=how,
                unique_indices=how is None, **ELEMENT_SCATTER, **promise,
            )
            for how in (None, *COMBINERS)
        },
        **{
            f"at {method}": lambda x, method=method: getattr(
                indexops.at(x)[convert(rows[:, 0])], method
            )(convert(updates), **promise)
            for method in ("set", "add", "max", "multiply")
        },
        **{
            f"at idiom {method}": lambda x, method=method: getattr(indexops.at(x)[
                convert(np.arange(n)[:, None]), convert(element_rows[..., 0])
            ], method)(convert(element_updates), **promise)
            for method in ("add", "set", "max")
        },
    }  # fmt: skip
    for name, write in writes.items():
        x = convert(table.copy())
        raised = sweep.run(f"{name} in place {where}", functools.partial(write, x)) is None
        if raised and not np.array_equal(to_numpy(x), table):
            sweep.half_written.append(f"{name} in place {where}")


def element_calls(convert: Callable, table: Any, rows: Any, updates: Any) -> dict[str, Callable]:
    """Element gathers and scatters along the table's rows, at the bad ``rows`` (and
    rows past the row width); replace promises unique indices, so that it takes the
    element path too."""
    import indexops
    from indexops import onnx

    n = table.shape[0]
    x = convert(table)
    indices = convert(np.resize(rows[:, 0], (n, 3, 1)))
    values = convert(np.resize(updates.reshape(-1), (n, 3)))
    gathers = {
        f"element gather {mode}": lambda mode=mode: indexops.gather(
            x, indices, **ELEMENT_GATHER, mode=mode
        )
        for mode in ("promise_in_bounds", "clip", "fill")
    }
    # ONNX's check names the first index outside (negative ones wrap first)
    gathers["onnx gather_elements"] = lambda: onnx.gather_elements(x, indices[..., 0], axis=1)
    # NumPy's take_along_axis idiom, an element gather or scatter by a batching dim
    counting = convert(np.arange(n)[:, None])
    idiom = indexops.at(x)[counting, indices[..., 0]]
    gathers |= {  # negative indices counted from the end in the loop, then the mode
        f"at idiom get {mode}": lambda mode=mode: idiom.get(mode=mode)
        for mode in ("promise_in_bounds", "clip", "fill")
    }
    gathers["at idiom add"] = lambda: idiom.add(values, mode="promise_in_bounds")
    gathers["at idiom set"] = lambda: idiom.set(values, mode="promise_in_bounds")
    gathers["at idiom max"] = lambda: idiom.max(values, mode="promise_in_bounds")
    scatter = functools.partial(indexops.scatter, x, indices, values, **ELEMENT_SCATTER)
    scatters = {
        f"element scatter {how} {mode}": functools.partial(
            scatter, update_computation=how, mode=mode, unique_indices=how is None
        )
        for how in (None, *COMBINERS)
        for mode in ("promise_in_bounds", "drop")
    }
    return {**gathers, **scatters}


def in_bounds_of_drop(
    sweep: Sweep, convert: Callable, where: str, table: Any, rows: Any, updates: Any
) -> None:
    """Each combiner with ``mode="drop"``: the entries in bounds are applied, exactly."""
    from helpers import to_numpy

    import indexops

    inside = (rows[:, 0] >= 0) & (rows[:, 0] < table.shape[0])
    for how, ufunc in COMBINERS.items():
        # indexops refuses named combiners on bool, and ordering complex numbers
        refused = table.dtype == bool or (table.dtype.kind == "c" and how in ("min", "max"))
        expected = table.copy()
        with np.errstate(all="ignore"):
            if not refused:
                ufunc.at(expected, rows[inside, 0].astype(np.int64), updates[inside])
            result = sweep.run(
                f"drop {how} {where}",
                lambda how=how: indexops.scatter(
                    convert(table), convert(rows), convert(updates), update_computation=how,
                    mode="drop", **ROW_SCATTER,
                ),
            )  # fmt: skip
        got = None if result is None else to_numpy(result)
        if not refused and not np.array_equal(got, expected, equal_nan=True):
            sweep.wrong.append(f"drop {how} {where}")


def torch_bitmap_case(sweep: Sweep) -> None:
    """Replace into more than 2**20 rows on two threads: torch's index_fill_ bitmap."""
    import torch

    import indexops

    n, k = 2**20 + 8, 2**14 + 1
    rows = rows_with(BAD_ROWS["int64"], "int64", n, k, seed=3)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for mode in ("promise_in_bounds", "drop"):
            sweep.run(
                f"torch bitmap replace {mode}",
                lambda mode=mode: indexops.scatter(
                    torch.zeros(n, 1), torch.from_numpy(rows), torch.ones(k, 1),
                    mode=mode, **ROW_SCATTER,
                ),
            )  # fmt: skip
    finally:
        torch.set_num_threads(before)


def main(library: str) -> None:
    sweep = Sweep(library)
    if library == "numpy":
        from indexops._backends._host import load_kernels
        from indexops._testing import without_kernels

        spy_numpy(sweep.routes)
        with without_kernels():
            sweep_numpy_like(sweep, np.asarray)
        if load_kernels() is not None:
            spy_kernels(sweep.routes)
            sweep_numpy_like(sweep, np.asarray, KERNEL_DTYPES, KERNEL_SHAPES)
    else:
        import torch

        from indexops._backends._host import load_kernels
        from indexops._testing import without_kernels

        spy_torch(sweep.routes)
        torch.set_num_threads(1)  # torch's gather through NumPy's take
        with without_kernels():
            sweep_numpy_like(sweep, torch.from_numpy)
            torch_bitmap_case(sweep)
        if load_kernels() is not None:
            spy_kernels(sweep.routes)
            sweep_numpy_like(sweep, torch.from_numpy, KERNEL_DTYPES, KERNEL_SHAPES)
    print(json.dumps(sweep.report()))


if __name__ == "__main__":
    main(sys.argv[1])
