"""The fixed cost of a small core-op call, against the floor a prepared call would reach.

``python -m benchmarks.call_floors [--rounds 31] [--backend numpy,torch] [--cpu]
[--base-package NAME]`` prints, per op on 8 rows of a [64, 16] float32 table (``gather``
of the rows, ``scatter`` replace, a ``dynamic_slice`` of 8 rows, ``scatter_update`` of a
[2, 4] index), the median time per call of:

* ``call``: the op as users call it;
* ``prepared``: its executor from the table of call signatures, called directly (no
  keyword parsing, attributes, signature or lookup): the floor of a prepared call;
* ``prepared + check``: the same after checking the arrays' types, shapes, dtypes and
  devices against those it was prepared for, which a prepared call must keep;
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

from . import interleaved

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
    """The four small calls on ``xp``'s arrays."""
    table = xp.asarray(np.arange(64 * 16, dtype=np.float32).reshape(64, 16))
    rows = xp.asarray(np.array([3, 17, 5, 60, 33, 8, 41, 22]))
    starts, slots = xp.reshape(rows, (8, 1)), xp.reshape(rows, (2, 4))
    y = xp.asarray(np.ones((8, 16), np.float32))

    def copy(x: Any) -> Any:
        return x.clone() if library == "torch" else x.copy()

    def native_set() -> Any:
        out = copy(table)
        out[rows] = y
        return out

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
    }


def forms(op: Op, base: Any | None) -> dict[str, Callable[[], object]]:
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

    out: dict[str, Callable[[], object]] = {
        "call": lambda: call(indexops),
        "prepared": lambda: prepared(*args),
        "prepared + check": checked,
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
    parser.add_argument("--base-package", default=None, help="another copy of indexops")
    args = parser.parse_args(argv)
    base = importlib.import_module(args.base_package) if args.base_package else None
    clock = time.thread_time if args.cpu else time.perf_counter
    names = ["call", "prepared", "prepared + check", "native"] + (["base"] if base else [])
    print("| op | " + " | ".join(names) + " | prepared + check / call |")
    print("|---" * (len(names) + 2) + "|")
    for library in args.backend.split(","):
        xp = importlib.import_module(library)
        if library == "torch":
            xp.set_num_threads(1)
        for name, op in ops(xp, library).items():
            times = interleaved.medians(forms(op, base), args.rounds, clock=clock)
            cells = " | ".join(f"{times[n] * 1e6:.2f}" for n in names)
            ratio = times["prepared + check"] / times["call"]
            print(f"| {library} {name} | {cells} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
