"""Every host fast path called from many threads at once gives the serial results."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import NamedTuple

import numpy as np
import pytest
from helpers import ROW_GATHER, ROW_SCATTER, map_in_threads

import indexops


class RowNumbers(NamedTuple):
    """jax.lax's fields of a gather's numbers of rows."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]


class RowScatterNumbers(NamedTuple):
    """jax.lax's fields of a scatter's numbers of rows."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]


ROW_NUMBERS = RowNumbers((1,), (0,), (0,))


def calls(make):
    """Calls that take the host fast paths (by size and dtype), each a function of its
    own arrays; ``make`` turns NumPy arrays into the library's."""
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 512, 4096)
    skewed = np.minimum(rng.zipf(1.5, 4096) - 1, 511)  # one row a thousand times or more
    floats, ints = rng.random((4096, 16)), np.ones((4096, 64), np.int64)
    cases = {  # table, rows, values, combiner
        "float add, sparse product": (np.zeros((512, 16)), rows, floats, "add"),
        "float add, complex pairs": (np.zeros((8192, 16)), rows, floats, "add"),
        "int add by row sums": (np.zeros((512, 64), np.int64), rows, ints, "add"),
        "small add on rows": (np.zeros((16, 8)), rows[:8] % 16, np.ones((8, 8)), "add"),
        "min with zeros": (np.zeros((512, 4)), rows, -floats[:, :4], "min"),
        "max by runs, skewed rows": (np.zeros((512, 64)), skewed, rng.random((4096, 64)), "max"),
        "replace with duplicates": (np.zeros((512, 8)), rows, floats[:, :8], None),
    }
    out = {}
    for name, (table, targets, values, how) in cases.items():

        def scatter(table=table, targets=targets, values=values, how=how):
            return indexops.scatter(
                make(table), make(targets[:, None]), make(values), **ROW_SCATTER,
                update_computation=how,
            )  # fmt: skip

        out[name] = scatter
    table = rng.random((512, 8))
    out["row gather"] = lambda: indexops.gather(
        make(table), make(rows[:, None]), **ROW_GATHER, slice_sizes=(1, 8)
    )
    # a few rows clipped: torch's executor reads at once until a row is outside (the
    # same signature for both)
    few_starts, starts_past = rows[:8, None] % 512, np.append(rows[:7] % 512, 600)[:, None]
    out["few rows gather"] = lambda: indexops.gather(
        make(table), make(few_starts), **ROW_GATHER, slice_sizes=(1, 8)
    )
    out["few rows gather, one outside"] = lambda: indexops.gather(
        make(table), make(starts_past), **ROW_GATHER, slice_sizes=(1, 8)
    )
    # jax.lax's dimension numbers (named tuples): the same object, and an equal new one
    out["few rows gather by dimension_numbers"] = lambda: indexops.gather(
        make(table), make(few_starts), dimension_numbers=ROW_NUMBERS, slice_sizes=(1, 8)
    )
    out["few rows add by new dimension_numbers"] = lambda: indexops.scatter(
        make(table), make(starts_past), make(floats[:8, :8]), update_computation="add",
        dimension_numbers=RowScatterNumbers((1,), (0,), (0,)),
    )  # fmt: skip
    out["at add"] = lambda: indexops.at(make(table))[make(rows), 1:5].add(1.0)
    # one index array on the rows: the core's executor kept by at's lowering
    out["at rows get fill"] = lambda: indexops.at(make(table))[make(rows - 8)].get(mode="fill")
    out["at rows set"] = lambda: indexops.at(make(table))[make(rows)].set(make(floats[:, :8]))
    # NumPy's checked take: negative rows from the end, and rows outside (the gather clips)
    out["at rows get from the end"] = lambda: indexops.at(make(table))[make(rows - 8)].get()
    out["at rows get, some outside"] = lambda: indexops.at(make(table))[make(rows + 8)].get()
    # int64 rows in range: repeated calls go straight to the core's row writer
    small, few = rng.random((16, 8)), rng.permutation(16)[:8]  # distinct rows, a list's worth
    out["at few rows max in place"] = lambda: indexops.at(make(small))[make(few)].max(
        make(floats[:8, :8]), copy=False
    )
    out["at few rows set of x itself"] = lambda: (
        lambda x: indexops.at(x)[make(few)].set(x[8:], copy=None)
    )(make(small))
    out["at rows add in place"] = lambda: indexops.at(make(table))[make(rows)].add(
        make(floats[:, :8]), copy=False
    )
    # few rows and elements read by the library's indexing, whose signature switches to
    # reading values first once a read finds one outside (the same signatures here)
    few_rows = rng.integers(-16, 16, 8)
    out["at few rows get"] = lambda: indexops.at(make(small))[make(few_rows)].get()
    rows_past = np.append(few_rows[:7], 20)
    out["at few rows get, one outside"] = lambda: indexops.at(make(small))[make(rows_past)].get()
    counting, few_columns = np.arange(16)[:, None], rng.integers(-8, 8, (16, 3))
    out["at elements get"] = lambda: indexops.at(make(small))[
        make(counting), make(few_columns)
    ].get()
    columns_past = np.where(np.arange(48).reshape(16, 3) == 40, 9, few_columns)
    out["at elements get, one outside"] = lambda: indexops.at(make(small))[
        make(counting), make(columns_past)
    ].get()
    columns = rng.integers(-1, 9, (512, 6, 1))  # some outside: clipped, or dropped
    elements = {"offset_dims": (), "collapsed_slice_dims": (1,), "slice_sizes": (1, 1)}
    out["element gather"] = lambda: indexops.gather(
        make(table), make(columns), **elements, start_index_map=(1,), index_vector_dim=2,
        operand_batching_dims=(0,), start_indices_batching_dims=(0,),
    )  # fmt: skip
    out["element scatter max"] = lambda: indexops.scatter(
        make(table), make(columns), make(floats[:512, :6] + 0.5), update_computation="max",
        update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
        index_vector_dim=2, input_batching_dims=(0,), scatter_indices_batching_dims=(0,),
    )  # fmt: skip
    out["at slices max"] = lambda: indexops.at(make(table))[::-2, 1:5].max(0.5)  # own slicing
    wide, mask = rng.random((64, 32)), rng.random(64) < 0.5  # NumPy: its own boolean indexing
    out["at row mask add"] = lambda: indexops.at(make(wide))[make(mask)].add(1.5)
    out["replace of increasing rows"] = lambda: indexops.scatter(
        make(table), make(np.arange(0, 512, 2)[:, None]), make(floats[:256, :8]), **ROW_SCATTER
    )
    return out


def numpy_arrays(a):
    return np.array(a)


def torch_arrays(a):
    import torch

    return torch.from_numpy(np.array(a))


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(numpy_arrays, id="numpy", marks=pytest.mark.backends("numpy")),
        pytest.param(torch_arrays, id="torch", marks=pytest.mark.backends("torch")),
    ],
)
def test_fast_paths_from_many_threads(make):
    work = calls(make)
    serial = {name: np.asarray(call()) for name, call in work.items()}

    def run(seed: int) -> list[str]:
        names = list(work)
        np.random.default_rng(seed).shuffle(names)
        return [name for name in names * 3 if not np.array_equal(work[name](), serial[name])]

    found = map_in_threads(run, range(16), threads=8, switch=1e-5)
    wrong = [name for names in found for name in names]
    assert wrong == []


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(numpy_arrays, id="numpy", marks=pytest.mark.backends("numpy")),
        pytest.param(torch_arrays, id="torch", marks=pytest.mark.backends("torch")),
    ],
)
def test_at_executors_first_built_by_many_threads_at_once(make):
    """Threads that meet a new signature together each build at's lowering and the core
    executors it keeps; every result is the serial one."""
    rng = np.random.default_rng(1)
    shape = (int(rng.integers(1000, 100000)), 3)  # a shape no other test uses
    table = rng.random(shape)
    rows = rng.integers(-shape[0], shape[0] + 5, 64)  # negative, and some out of range
    values = rng.random((64, 3))
    expected_get = table[np.clip(np.where(rows < 0, rows + shape[0], rows), 0, shape[0] - 1)]
    expected_add = table.copy()
    inside = rows < shape[0]
    np.add.at(expected_add, rows[inside], values[inside])
    start = threading.Barrier(8)

    def run(_: int) -> bool:
        start.wait()
        target = indexops.at(make(table))[make(rows)]
        got_add, got_get = target.add(make(values)), target.get()
        return bool(np.allclose(np.asarray(got_add), expected_add)) and bool(
            np.array_equal(np.asarray(got_get), expected_get)
        )

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(run, range(8)))
