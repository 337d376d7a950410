"""The fixed cost of a small core-op call, against the floor a prepared call would reach.

``python -m benchmarks.call_floors [--rounds 31] [--backend numpy,torch] [--cpu]
[--base-package NAME]`` prints, per op on 8 rows of a [64, 16] float32 table (``gather``
of the rows, ``scatter`` replace, a ``dynamic_slice`` of 8 rows, ``scatter_update`` of a
[2, 4] index, a ``dynamic_update_slice`` of 8 rows into a table of its own, in place),
the median time per call of the forms below, and how far the call and the bare form are
above native (us):

* ``call``: the op as users call it;
* ``prepared``: its executor from the table of call signatures, called directly (no
  keyword parsing, attributes, signature or lookup): the floor of a prepared call;
* ``prepared + check``: the same after checking the arrays' types, shapes, dtypes and
  devices against those it was prepared for, which a prepared call must keep;
* ``bare``: the least a pure-Python call of the same parameters can do and keep the
  promises on a few rows: the keyword call, the arrays' signature (types, shapes, dtypes,
  devices) looked up in a dict, the rows read as one list and checked in range (and
  distinct, for writes), then the native expression (:class:`Bare`: no other case, no
  errors, no autograd, tracing or device questions; a floor, not a library);
* ``native``: the library's own expression;
* ``base``, with ``--base-package``: the op of another copy of indexops importable under
  that name (the source of a base commit, for before/after in one process).

Forms are sampled alternately (:mod:`.interleaved`); ``--cpu`` times them in CPU time
(``time.thread_time``), which a loaded machine's scheduling disturbs less than wall time.
See benchmarks/README.md, "Issue 35: the core ops' fixed cost per call".
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops._plan import executors

from . import base_package, interleaved

GATHER_ROWS = dict(
    offset_dims=(1,),
    collapsed_slice_dims=(0,),
    start_index_map=(0,),
    index_vector_dim=1,
    slice_sizes=(1, 16),
)
SCATTER_ROWS = dict(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0,),
    index_vector_dim=1,
)

# an op: (the call, given the package; the executor's arguments; the native expression)
Op = tuple[Callable[[Any], Any], tuple[Any, ...], Callable[[], Any]]


def ops(xp: Any, library: str) -> dict[str, Op]:
    """The five small calls on ``xp``'s arrays."""
    table = xp.asarray(np.arange(64 * 16, dtype=np.float32).reshape(64, 16))
    rows = xp.asarray(np.array([3, 17, 5, 60, 33, 8, 41, 22]))
    starts, slots = xp.reshape(rows, (8, 1)), xp.reshape(rows, (2, 4))
    y = xp.asarray(np.ones((8, 16), np.float32))

    def copy(x: Any) -> Any:
        return x.clone() if library == "torch" else x.copy()

    written = copy(table)  # the in-place write's own table

    def native_set() -> Any:
        out = copy(table)
        out[rows] = y
        return out

    def native_window_set(x: Any, block: Any) -> Any:
        x[3:11] = block
        return x

    return {
        "gather": (
            lambda io: io.gather(table, starts, **GATHER_ROWS),
            (table, starts, None),
            lambda: table[rows],
        ),
        "scatter": (
            lambda io: io.scatter(table, starts, y, **SCATTER_ROWS),
            (table, starts, y, True),
            native_set,
        ),
        "dynamic_slice": (
            lambda io: io.dynamic_slice(table, (3, 0), (8, 16)),
            (table, (3, 0)),
            lambda: copy(table[3:11]),
        ),
        "scatter_update": (
            lambda io: io.scatter_update(table, -2, slots, y, copy=True),
            (table, slots, y, True),
            native_set,
        ),
        "dynamic_update_slice": (  # in place: every form writes the same rows again
            lambda io: io.dynamic_update_slice(written, y, (3, 0), copy=False),
            (written, y, (3, 0), False),
            lambda: native_window_set(written, y),
        ),
    }


class Bare:
    """The five ops at the least a pure-Python call does (see the module's docstring):
    each call's signature finds what the first call with it noted (the operand's shape);
    the rows of ``scatter`` and ``scatter_update`` are read as one list and checked,
    ``gather``'s clamped as NumPy's ``take`` reads them (torch: checked as one list, then
    ``index_select``); ``dynamic_slice`` and ``dynamic_update_slice`` clamp their starts
    (the latter asks neither whether ``operand`` can be written nor whether ``update``
    views it). Calls these forms do not serve raise :class:`NotImplementedError`."""

    def __init__(self, library: str) -> None:
        self._torch = library == "torch"
        self._copy = (lambda x: x.clone()) if self._torch else (lambda x: x.copy())
        self._noted: dict[Any, Any] = {}

    def _noted_for(self, static: tuple[Any, ...], *arrays: Any) -> Any:
        key = (*static, *[(type(a), a.shape, a.dtype, getattr(a, "device", None)) for a in arrays])
        found = self._noted.get(key)
        if found is None:  # the first call with this signature (a warm-up: not timed)
            found = self._noted[key] = tuple(arrays[0].shape)
        return found

    @staticmethod
    def _listed(rows: Any, high: int, distinct: bool) -> Any:
        listed = rows.tolist()
        if min(listed) < 0 or max(listed) > high or (distinct and len(set(listed)) < len(listed)):
            raise NotImplementedError("rows outside or repeated")
        return rows

    def gather(
        self,
        operand: Any,
        start_indices: Any,
        *,
        offset_dims: Any = None,
        collapsed_slice_dims: Any = None,
        start_index_map: Any = None,
        index_vector_dim: Any = None,
        slice_sizes: Any = None,
        operand_batching_dims: Any = (),
        start_indices_batching_dims: Any = (),
        dimension_numbers: Any = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        fill_value: Any = None,
    ) -> Any:
        static = (offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim)
        shape = self._noted_for((*static, slice_sizes, mode), operand, start_indices)
        rows = start_indices.reshape(-1)
        if self._torch:  # rows shown in range need no clamp
            return operand.index_select(0, self._listed(rows, shape[0] - 1, distinct=False))
        return operand.take(rows, axis=0, mode="clip")  # (clamps as it reads)

    def scatter(
        self,
        input: Any,
        scatter_indices: Any,
        updates: Any,
        *,
        update_window_dims: Any = None,
        inserted_window_dims: Any = None,
        scatter_dims_to_operand_dims: Any = None,
        index_vector_dim: Any = None,
        input_batching_dims: Any = (),
        scatter_indices_batching_dims: Any = (),
        dimension_numbers: Any = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        update_computation: Any = None,
        mode: Any = "drop",
        copy: bool | None = True,
    ) -> Any:
        static = (update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                  index_vector_dim, update_computation, mode, unique_indices)  # fmt: skip
        shape = self._noted_for(static, input, scatter_indices, updates)
        rows = self._listed(scatter_indices.reshape(-1), shape[0] - 1, distinct=True)
        out = self._copy(input)
        out[rows] = updates
        return out

    def dynamic_slice(self, operand: Any, start_indices: Any, slice_sizes: Any) -> Any:
        shape = self._noted_for((tuple(slice_sizes),), operand)
        window = []
        for start, dim, size in zip(start_indices, shape, slice_sizes):
            first = min(max(start, 0), dim - size)
            window.append(slice(first, first + size))
        return operand[tuple(window)]

    def dynamic_update_slice(
        self, operand: Any, update: Any, start_indices: Any, *, copy: bool | None = True
    ) -> Any:
        shape = self._noted_for((len(start_indices),), operand, update)
        window = []  # (dynamic_slice's loop inline: a helper's call would raise the floor)
        for start, dim, size in zip(start_indices, shape, update.shape):
            first = min(max(start, 0), dim - size)
            window.append(slice(first, first + size))
        out = self._copy(operand) if copy else operand
        out[tuple(window)] = update
        return out

    def scatter_update(
        self, input: Any, dim: int, index: Any, src: Any, *, copy: bool | None = False
    ) -> Any:
        shape = self._noted_for((dim,), input, index, src)
        rows = self._listed(index.reshape(-1), shape[0] - 1, distinct=True)
        out = self._copy(input) if copy else input
        out[rows] = src
        return out


def forms(op: Op, base: Any | None, bare: Bare) -> dict[str, Callable[[], object]]:
    """The forms of one op to time (its executor taken from a fresh table)."""
    call, args, native = op
    executors._EXECUTORS.clear()
    call(indexops)
    (prepared,) = executors._EXECUTORS.values()
    arrays = [a for a in args if hasattr(a, "shape")]
    facts = executors.signature((), *arrays)

    def checked() -> object:
        if executors.signature((), *arrays) != facts:
            raise ValueError("arrays unlike those the call was prepared for")
        return prepared(*args)

    for form in (call(indexops), call(bare)):  # (the bare form's first call notes its table)
        np.testing.assert_array_equal(np.asarray(form), np.asarray(native()))
    out: dict[str, Callable[[], object]] = {
        "call": lambda: call(indexops),
        "prepared": lambda: prepared(*args),
        "prepared + check": checked,
        "bare": lambda: call(bare),
        "native": native,
    }
    if base is not None:
        out["base"] = lambda: call(base)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--backend", default="numpy,torch")
    parser.add_argument("--cpu", action="store_true", help="time in CPU time (thread_time)")
    args, base = base_package.parse(parser, argv)
    clock = time.thread_time if args.cpu else time.perf_counter
    names = ["call", "prepared", "prepared + check", "bare", "native"] + (["base"] if base else [])
    extra = ["prepared + check / call", "call - native", "bare - native"]
    print("| op | " + " | ".join(names + extra) + " |")
    print("|---" * (len(names) + len(extra) + 1) + "|")
    for library in args.backend.split(","):
        xp = importlib.import_module(library)
        if library == "torch":
            xp.set_num_threads(1)
        bare = Bare(library)
        for name, op in ops(xp, library).items():
            times = interleaved.medians(forms(op, base, bare), args.rounds, clock=clock)
            cells = " | ".join(f"{times[n] * 1e6:.2f}" for n in names)
            ratio = times["prepared + check"] / times["call"]
            above = [(times[n] - times["native"]) * 1e6 for n in ("call", "bare")]
            print(f"| {library} {name} | {cells} | {ratio:.2f} | {above[0]:.2f} | {above[1]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
