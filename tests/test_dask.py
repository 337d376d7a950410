"""Dask: every op builds a graph of per-chunk tasks, computes nothing, and is exact.

The ``dask`` backend of the ``xp`` fixture runs the whole suite on chunked arrays with
every computation during a call made an error (backends.py). This module covers what it
cannot: the graph's size and its pruning where index values are on the host, value errors
raised when the graph runs, and a real ``distributed`` cluster of two worker processes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from helpers import ROW_GATHER, ROW_SCATTER

import indexops

pytestmark = pytest.mark.backends("dask")


def _no_compute(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("computed while building the graph")


def chunked(a: np.ndarray, chunks: Any = None) -> Any:
    return da.from_array(a, chunks=chunks or tuple(max(1, n // 2) for n in a.shape))


def scatter_add(x: Any, rows: Any, updates: Any, **kwargs: Any) -> Any:
    with dask.config.set(scheduler=_no_compute):
        return indexops.scatter(x, rows, updates, **ROW_SCATTER, update_computation="add", **kwargs)


def steps(result: Any) -> int:
    """The per-(chunk, update block) tasks of a row scatter's graph."""
    return sum("scatter-rows-" in str(key) and "-step" in str(key) for key in result.dask)


TABLE = np.arange(40.0).reshape(20, 2)
ROWS = np.array([[3], [19], [3], [-1], [20], [7], [0], [12]])  # duplicates, out of bounds
UPDATES = np.arange(16.0).reshape(8, 2) + 100


@pytest.mark.parametrize("mode", ["drop", "drop_window", "clip"])
def test_scatter_graph_has_one_task_per_chunk_and_update_block(mode):
    x = chunked(TABLE, (5, 2))  # 4 chunks
    result = scatter_add(x, chunked(ROWS, (2, 1)), chunked(UPDATES, (2, 2)), mode=mode)
    assert steps(result) == 4 * 4  # no pair can be ruled out without reading the rows
    assert result.chunks == x.chunks
    expected = indexops.scatter(
        TABLE, ROWS, UPDATES, **ROW_SCATTER, update_computation="add", mode=mode
    )
    np.testing.assert_array_equal(result.compute(scheduler="sync"), expected)


def test_numpy_indices_leave_out_pairs_that_cannot_meet():
    x = chunked(TABLE, (5, 2))
    rows = np.array([[0], [1], [2], [3], [19], [18], [30], [-4]])  # blocks of 2 rows
    result = scatter_add(x, rows, chunked(UPDATES, (2, 2)))
    # block 0 and 1 meet chunk 0, block 2 meets chunk 3, block 3 drops both rows
    assert steps(result) == 3
    expected = indexops.scatter(TABLE, rows, UPDATES, **ROW_SCATTER, update_computation="add")
    np.testing.assert_array_equal(result.compute(scheduler="sync"), expected)


def unaligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` one byte past an aligned address, as ``distributed`` can hand a task
    an array that came from another worker."""
    out = np.zeros(a.nbytes + 1, np.uint8)[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("update_computation", ["add", None])
def test_unaligned_chunks_give_the_same_values_and_stay_unwritten(update_computation):
    table, rows, updates = unaligned(TABLE), unaligned(ROWS), unaligned(UPDATES)
    kwargs = {"update_computation": update_computation} if update_computation else {}
    with dask.config.set(scheduler=_no_compute):
        result = indexops.scatter(
            chunked(table, (5, 2)), chunked(rows, (3, 1)), chunked(updates, (3, 2)),
            **ROW_SCATTER, **kwargs,
        )  # fmt: skip
    expected = indexops.scatter(TABLE, ROWS, UPDATES, **ROW_SCATTER, **kwargs)
    np.testing.assert_array_equal(result.compute(scheduler="sync"), expected)
    np.testing.assert_array_equal(table, TABLE)


def test_a_chain_result_arriving_unaligned_is_copied_once_and_written_right():
    from indexops._execute.chunked import _apply_piece
    from indexops._validate.combiners import resolve

    chunk = unaligned(TABLE)
    piece = (unaligned(np.array([3, 3, 0])), unaligned(UPDATES[:3]))
    written = _apply_piece(
        chunk, piece, first=False, combiner=resolve("scatter", np, "add"), generic=False
    )
    expected = TABLE.copy()
    np.add.at(expected, piece[0], UPDATES[:3])
    np.testing.assert_array_equal(written, expected)
    assert written.flags.aligned  # later links of the chain write into it at full speed
    assert written.flags.writeable


def test_chunks_along_every_dim_of_a_3d_operand():
    operand = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    starts = np.array([[2, 1], [0, 3], [2, 1], [5, 0]])  # a duplicate and one out of bounds
    updates = np.arange(4 * 2 * 5, dtype=np.int64).reshape(4, 2, 5)
    attrs = {
        "update_window_dims": (1, 2),
        "inserted_window_dims": (0,),
        "scatter_dims_to_operand_dims": (0, 1),
        "index_vector_dim": 1,
    }
    for how in (None, "add", lambda old, new: old * 3 - new):
        expected = indexops.scatter(operand, starts, updates, **attrs, update_computation=how)
        x = chunked(operand, (2, 3, 2))
        with dask.config.set(scheduler=_no_compute):
            result = indexops.scatter(
                x, chunked(starts), chunked(updates), **attrs, update_computation=how
            )
        assert result.chunks == x.chunks
        np.testing.assert_array_equal(result.compute(scheduler="sync"), expected)


def test_copy_false_is_an_error_and_copy_none_copies():
    x = chunked(np.zeros((4, 2)))
    slots, tokens = chunked(np.array([[1, 2]])), chunked(np.ones((2, 2)))
    with pytest.raises(indexops.IndexOpsValueError, match="copy"):
        indexops.scatter_update(x, -2, slots, tokens)  # copy=False is the default
    result = indexops.scatter_update(x, -2, slots, tokens, copy=None)
    assert result is not x
    np.testing.assert_array_equal(x.compute(), np.zeros((4, 2)))
    np.testing.assert_array_equal(result.compute()[1:3], np.ones((2, 2)))


def test_slot_past_the_end_raises_when_computed_with_the_eager_message():
    cache, tokens = np.zeros((6, 2)), np.ones((4, 2))
    bad = np.array([[0, -1], [7, 9]])
    with pytest.raises(indexops.IndexOpsValueError) as eager:
        indexops.scatter_update(cache, -2, bad, tokens, copy=True)
    with dask.config.set(scheduler=_no_compute):
        lazy = indexops.scatter_update(
            chunked(cache), -2, chunked(bad, (1, 1)), chunked(tokens), copy=True
        )
    with pytest.raises(indexops.IndexOpsValueError) as computed:
        lazy.compute(scheduler="sync")
    assert str(computed.value) == str(eager.value)
    with pytest.raises(indexops.IndexOpsValueError) as on_host:  # NumPy slots: at the call
        indexops.scatter_update(chunked(cache), -2, bad, chunked(tokens), copy=True)
    assert str(on_host.value) == str(eager.value)


def test_dask_slice_parameters_are_a_clear_error():
    data = chunked(np.zeros((4, 3)))
    with pytest.raises(indexops.IndexOpsTypeError, match="start='a lazy dask array'"):
        indexops.slice_scatter(
            data, chunked(np.ones((2, 3))), da.from_array(np.array([0])), [2], [1]
        )


def test_empty_updates_return_the_operand_values():
    operand = np.arange(12.0).reshape(4, 3)
    x = chunked(operand)
    with dask.config.set(scheduler=_no_compute):
        results = [
            indexops.dynamic_update_slice(x, chunked(np.zeros((0, 3))), (1, 1)),
            indexops.dynamic_update_slice(
                x, chunked(np.zeros((2, 0))), [da.from_array(np.int64(1)), 1]
            ),
            indexops.slice_scatter(x, chunked(np.zeros((0, 3))), [2], [2], [1]),
            indexops.scatter(
                x, chunked(np.zeros((0, 1), np.int64)), chunked(np.zeros((0, 3))), **ROW_SCATTER
            ),
        ]
    for result in results:
        assert result.chunks == x.chunks
        np.testing.assert_array_equal(result.compute(), operand)


# -- arguments the Dask backend refuses, by name, before any work ---------------------------

TABLE_6 = np.arange(12.0).reshape(6, 2)
ROWS_6 = np.array([[1], [4], [1]])
UPDATES_3 = np.arange(6.0).reshape(3, 2) + 100

# (op in messages, call by argument name, NumPy arguments by the names errors give them)
NAMED_CALLS: list[tuple[str, Callable[..., Any], dict[str, np.ndarray]]] = [
    (
        "scatter",
        lambda input, scatter_indices, updates: indexops.scatter(
            input, scatter_indices, updates, **ROW_SCATTER, update_computation="add"
        ),
        {"input": TABLE_6, "scatter_indices": ROWS_6, "updates": UPDATES_3},
    ),
    (
        "gather",
        lambda operand, start_indices: indexops.gather(
            operand, start_indices, **ROW_GATHER, slice_sizes=(1, 2)
        ),
        {"operand": TABLE_6, "start_indices": ROWS_6},
    ),
    (
        "scatter_update",
        lambda input, index, src: indexops.scatter_update(input, -2, index, src, copy=True),
        {"input": TABLE_6, "index": np.array([[1, 4, 1]]), "src": UPDATES_3},
    ),
    (
        "slice_scatter",
        lambda data, updates: indexops.slice_scatter(data, updates, [0], [3], [1]),
        {"data": TABLE_6, "updates": UPDATES_3},
    ),
    (
        "dynamic_slice",
        lambda operand, start_indices: indexops.dynamic_slice(operand, start_indices, (2, 2)),
        {"operand": TABLE_6, "start_indices": np.array([3, 0])},
    ),
    (
        "dynamic_update_slice",
        lambda operand, update, start_indices: indexops.dynamic_update_slice(
            operand, update, start_indices
        ),
        {"operand": TABLE_6, "update": UPDATES_3, "start_indices": np.array([3, 0])},
    ),
    ("at.get", lambda x, idx: indexops.at(x)[idx, 1].get(), {"x": TABLE_6, "idx": ROWS_6[:, 0]}),
    (
        "at.add",
        lambda x, idx, y: indexops.at(x)[idx].add(y),
        {"x": TABLE_6, "idx": ROWS_6[:, 0], "y": UPDATES_3},
    ),
    ("at.set", lambda x, y: indexops.at(x)[1:4].set(y), {"x": TABLE_6, "y": UPDATES_3}),
]
NAMED_IDS = [call[0] for call in NAMED_CALLS]


def unknown_chunks(a: np.ndarray) -> Any:
    """``a`` as a Dask array whose chunk sizes along dim 0 are unknown (shape ``(nan, ...)``),
    as boolean indexing leaves them."""
    x = chunked(a)
    return x[chunked(np.ones(a.shape[0], bool))]


@pytest.mark.parametrize(("op", "fn", "args"), NAMED_CALLS, ids=NAMED_IDS)
def test_unknown_chunk_sizes_are_named_on_every_call(op, fn, args):
    for name in args:
        given = {k: unknown_chunks(a) if k == name else chunked(a) for k, a in args.items()}
        assert np.isnan(given[name].shape[0])
        for _ in range(2):  # no executor is kept for a shape with nan: the check runs again
            with (
                dask.config.set(scheduler=_no_compute),
                pytest.raises(indexops.IndexOpsValueError) as error,
            ):
                fn(**given)
            assert str(error.value).startswith(f"{op}: {name}.shape=(nan")
            assert f"call {name}.compute_chunk_sizes() first" in str(error.value)
        given[name].compute_chunk_sizes()  # Dask's own fix, as the message says
        with dask.config.set(scheduler=_no_compute):
            result = fn(**given)
        expected = fn(**{k: a.copy() for k, a in args.items()})
        np.testing.assert_array_equal(result.compute(), expected)


INDEX_ARGUMENTS = {"scatter_indices", "start_indices", "index", "idx"}


@pytest.mark.parametrize(("op", "fn", "args"), NAMED_CALLS, ids=NAMED_IDS)
def test_numpy_next_to_dask_only_as_index_arrays(op, fn, args):
    expected = fn(**{k: a.copy() for k, a in args.items()})
    for dask_ones in itertools.product((False, True), repeat=len(args)):
        if not any(dask_ones):
            continue
        given = {k: chunked(a) if d else a for (k, a), d in zip(args.items(), dask_ones)}
        misplaced = [k for k, d in zip(args, dask_ones) if not d and k not in INDEX_ARGUMENTS]
        if not misplaced:
            with dask.config.set(scheduler=_no_compute):
                result = fn(**given)
            assert isinstance(result, da.Array)
            np.testing.assert_array_equal(result.compute(), expected)
            continue
        with pytest.raises(indexops.IndexOpsTypeError) as error:
            fn(**given)
        message = str(error.value)
        named = message.removeprefix(f"{op}: ").split("={")[0].split(", ")
        assert set(named) <= set(misplaced), message  # some are seen later (at, starts)
        assert "'numpy.ndarray'" in message and "'dask.array.core.Array'" in message
        assert "NumPy arrays may stand only for index arrays" in message


# -- a distributed cluster ------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: each xdist worker may start a cluster
            memory_limit="1GiB",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


OPERAND = np.arange(60.0).reshape(20, 3)
ROWS_OUT = np.array([[3], [19], [3], [-2], [25], [0], [11], [11]])
ROW_UPDATES = np.arange(24.0).reshape(8, 3) + 100
SLOTS = np.array([[5, -1, 19], [5, 2, 0]])
TOKENS = np.arange(18.0).reshape(6, 3) + 50

CLUSTER_CALLS: list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...]]] = [
    (
        "gather fill",
        lambda o, i: indexops.gather(o, i, **ROW_GATHER, slice_sizes=(1, 3), mode="fill"),
        (OPERAND, ROWS_OUT),
    ),
    *[
        (
            f"scatter {how}",
            lambda x, i, u, how=how: indexops.scatter(
                x, i, u, **ROW_SCATTER, update_computation=how
            ),
            (OPERAND, ROWS_OUT, ROW_UPDATES),
        )
        for how in (None, "add", "mul", "min", "max")
    ],
    (
        "scatter callable drop_window",
        lambda x, i, u: indexops.scatter(
            x, i, u, **ROW_SCATTER, update_computation=lambda a, b: a * 2 - b, mode="drop_window"
        ),
        (OPERAND, ROWS_OUT, ROW_UPDATES),
    ),
    ("dynamic_slice", lambda o: indexops.dynamic_slice(o, (7, 1), (5, 2)), (OPERAND,)),
    (
        "dynamic_update_slice",
        lambda o, u: indexops.dynamic_update_slice(o, u, (18, 1)),
        (OPERAND, ROW_UPDATES[:4, :2]),
    ),
    (
        "slice_scatter",
        lambda d, u: indexops.slice_scatter(d, u, [-1], [0], [-3]),
        (OPERAND, ROW_UPDATES[:7]),
    ),
    (
        "scatter_update",
        lambda c, i, t: indexops.scatter_update(c, -2, i, t, copy=True),
        (OPERAND, SLOTS, TOKENS),
    ),
    # at with NumPy rows (from the end, outside, repeated), which the graph holds as they are
    ("at get, NumPy rows", lambda x: indexops.at(x)[ROWS_OUT[:, 0]].get(), (OPERAND,)),
    (
        "at add, NumPy rows",
        lambda x, u: indexops.at(x)[ROWS_OUT[:, 0]].add(u),
        (OPERAND, ROW_UPDATES),
    ),
]


@pytest.mark.parametrize(("name", "fn", "args"), CLUSTER_CALLS, ids=[c[0] for c in CLUSTER_CALLS])
def test_every_op_on_a_two_process_cluster(client, name, fn, args):
    expected = fn(*[a.copy() for a in args])
    with dask.config.set(scheduler=_no_compute):
        result = fn(*[chunked(a, tuple(max(1, n // 3) for n in a.shape)) for a in args])
    assert not any(np.isnan(n) for c in result.chunks for n in c)
    computed = client.compute(result).result()
    assert len(client.scheduler_info()["workers"]) == 2
    np.testing.assert_array_equal(computed, expected)


@pytest.mark.parametrize(("name", "fn", "args"), CLUSTER_CALLS, ids=[c[0] for c in CLUSTER_CALLS])
def test_every_op_under_the_threaded_scheduler(name, fn, args):
    """Dask's default scheduler runs a graph's tasks in a pool of threads (the ``xp``
    fixture's tests compute in one thread)."""
    expected = fn(*[a.copy() for a in args])
    result = fn(*[chunked(a, tuple(max(1, n // 3) for n in a.shape)) for a in args])
    np.testing.assert_array_equal(result.compute(scheduler="threads", num_workers=4), expected)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_with_numpy_indices_builds_without_computing(mode):
    operand = np.arange(30.0).reshape(10, 3)
    rows = np.array([[9], [0], [12], [-2], [4]])
    attrs = {**ROW_GATHER, "slice_sizes": (1, 3), "mode": mode}
    x = chunked(operand, (3, 2))
    with dask.config.set(scheduler=_no_compute):
        result = indexops.gather(x, rows, **attrs)
    assert not any(np.isnan(n) for c in result.chunks for n in c)
    np.testing.assert_array_equal(result.compute(), indexops.gather(operand, rows, **attrs))


AT_ROWS = {
    "in range": np.array([3, 9, 0, 7, 9]),
    "from the end": np.array([3, -1, 0, -10, 9]),
    "outside": np.array([3, 12, -11, 7, 3]),
}


@pytest.mark.parametrize("rows", list(AT_ROWS))
@pytest.mark.parametrize(
    ("method", "mode"),
    [("get", "clip"), ("get", "fill"), ("set", "drop"), ("add", "clip"), ("max", "drop")],
)
def test_at_reads_numpy_rows_of_a_dask_x_on_the_host(rows, method, mode):
    """``at`` with a NumPy array of rows of a Dask ``x`` counts them from the end and
    checks their range on the host: NumPy's values (negative rows, rows outside, repeats),
    built without computing, and rows in range (after counting from the end) add no
    layers to the graph to count them or to clamp them (but a filled read's own): they
    reach the op as NumPy's, which prunes by them, and a read of them has as many tasks as
    Dask's own ``x[rows]``."""
    operand = np.arange(30.0).reshape(10, 3)
    updates = np.arange(15.0).reshape(5, 3) - 7
    index = AT_ROWS[rows]

    def call(x: Any, y: Any) -> Any:
        target = indexops.at(x)[index]
        return target.get(mode=mode) if method == "get" else getattr(target, method)(y, mode=mode)

    with dask.config.set(scheduler=_no_compute):
        result = call(chunked(operand, (3, 2)), chunked(updates))
    np.testing.assert_array_equal(result.compute(), call(operand, updates))
    layers = {name.split("-")[0] for name in result.dask.layers}
    counted_or_clamped = layers & {"where", "lt", "add", "maximum", "minimum"}
    if rows != "outside" and mode != "fill":  # (a filled read masks and clamps its own)
        assert not counted_or_clamped, sorted(layers)
    if rows != "outside" and method == "get" and mode == "clip":  # as Dask's own x[rows]
        assert len(dict(result.dask)) == len(dict(chunked(operand, (3, 2))[index].dask))


def test_created_arrays_are_named_by_what_they_hold():
    """The Dask backend names the arrays it creates itself (Dask's own name pickles the
    function it wraps): the same shape, dtype and value give the same name, any other
    gives another, -0.0 and 0.0 included."""
    from indexops._backends import backend_for

    backend = backend_for("test", x=chunked(np.zeros(4)))
    like = chunked(np.zeros(4))
    full = backend.full
    assert full((3,), 1.5, np.float64, like).name == full((3,), 1.5, np.float64, like).name
    names = {
        full(*args, like).name
        for args in [
            ((3,), 0.0, np.float64), ((3,), -0.0, np.float64), ((3,), 0.0, np.float32),
            ((4,), 0.0, np.float64), ((3,), 1, np.int64), ((), 1, np.int64),
        ]
    }  # fmt: skip
    assert len(names) == 6
    negative = full((3,), -0.0, np.float64, like).compute()
    assert np.signbit(negative).all() and negative.dtype == np.float64
    empty = backend.reshape(chunked(np.zeros((0, 3))), (-1,))
    assert empty.shape == (0,) and empty.name.startswith("indexops-empty-")


def test_python_dash_m_indexops_tours_dask_with_values(capsys):
    from indexops.__main__ import CANDIDATES, tour

    assert CANDIDATES["dask"] == "dask.array"  # found and toured where it is installed
    tour(da)
    out = capsys.readouterr().out
    assert "dask.array<" not in out  # the values, computed, not the graph's repr
    assert "[[ 9 10 11]\n     [ 0  1  2]\n     [ 9 10 11]]" in out
