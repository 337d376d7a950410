"""ONNX's indexing operators, one call each, lowered onto indexops' ops.

Each function is ONNX's operator with its inputs in ONNX's order and its attributes as
keywords of the same name (``axis``, ``batch_dims``, ``reduction``), and ONNX's exact
semantics on every Array API library:

* negative indices count from the end, each index component along its own data dim;
* an index outside ``[-s, s - 1]`` is an error, as in onnxruntime: an
  :class:`~indexops.IndexOpsValueError` raised before any work where the index values are
  on the host (NumPy; torch on the CPU, eager). Where they are not (``jax.jit`` and eager
  JAX, ``torch.compile``, GPUs, Dask, array-api-strict), the check runs the library's way
  (``checkify`` for JAX, a device-side assert for torch, an error when a Dask result is
  computed; none for other libraries) and nothing outside ``data`` is read or written:
  a gather reads the fill value of ``indexops.gather(mode="fill")`` there, a scatter skips
  the update;
* ``reduction="add"`` and ``"mul"`` on bool data are OR and AND (onnxruntime), ``"max"``
  and ``"min"`` are OR and AND too;
* duplicate targets with ``reduction="none"`` (which ONNX leaves unspecified) resolve as
  in :func:`indexops.scatter`: the last update in row-major order wins;
* Slice clamps starts and ends by the ONNX specification (see :func:`slice`).

The lowering is exact and thin: Gather, GatherND and GatherElements are one
:func:`indexops.gather`, ScatterND and ScatterElements one :func:`indexops.scatter`, Slice a
basic slice (and a flip for negative steps), Slice as a write one
:func:`indexops.slice_scatter`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from ._backends import Backend, backend_for, for_indices
from ._errors import type_error, value_error
from ._execute.targets import to_index
from ._ops.gather import gather as _gather
from ._ops.scatter import named_refused
from ._ops.scatter import scatter as _scatter
from ._ops.slice_scatter import SlicePlan, slice_plan
from ._ops.slice_scatter import slice_scatter as _slice_scatter
from ._plan.cache import static_cache
from ._typing import Array
from ._validate.arguments import as_int, check_integer_array, check_same_dtype, index_ints
from ._validate.combiners import Named

__all__ = [
    "gather",
    "gather_elements",
    "gather_nd",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "slice_scatter",
]

REDUCTIONS = ("none", "add", "mul", "max", "min")

# bool reductions as max and min on {0, 1}: add and max are OR, mul and min are AND
_BOOL_REDUCTIONS = {"add": "max", "max": "max", "mul": "min", "min": "min"}


class Lowering(NamedTuple):
    """A static lowering of one call: the index components and the StableHLO attributes.

    ``sizes`` holds the data dim each index component counts in (one entry for ops whose
    every index element is one component); ``coordinates`` the dims of ``data`` whose
    coordinate is each element's own position in ``indices`` (ops on elements whose index
    tensor is smaller than ``data`` there), stacked before the index itself.
    """

    sizes: tuple[int, ...]
    dims: tuple[int, ...]  # the data dim of each entry of ``sizes``
    coordinates: tuple[int, ...]
    attributes: dict[str, Any]


# -- the gathers -------------------------------------------------------------------------


def gather(data: Array, indices: Array, axis: int = 0) -> Array:
    """ONNX ``Gather``: the entries of ``data`` along ``axis`` at ``indices``.

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype.
    indices : array
        Integer, any rank ``q`` (0-d included); each entry in ``[-s, s - 1]`` where
        ``s = data.shape[axis]``.
    axis : int, default 0
        In ``[-r, r - 1]``.

    Returns
    -------
    array
        Shape ``data.shape[:axis] + indices.shape + data.shape[axis + 1:]``.

    Raises
    ------
    IndexOpsValueError
        A bad ``axis`` or rank, or an index out of range (see the module's notes).
    IndexOpsTypeError
        Non-integer ``indices``.

    Notes
    -----
    One :func:`indexops.gather` with ``collapsed_slice_dims=(axis,)``,
    ``start_index_map=(axis,)``, the implicit index vector dim ``q`` and
    ``slice_sizes`` equal to ``data.shape`` with ``min(1, s)`` at ``axis``.

    Examples
    --------
    The first example of the ONNX operator:

    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]])
    >>> ionnx.gather(data, np.array([[0, 1], [1, 2]]))
    array([[[1. , 1.2],
            [2.3, 3.4]],
    <BLANKLINE>
           [[2.3, 3.4],
            [4.5, 5.7]]])
    >>> ionnx.gather(data, np.array(-1), axis=1)
    array([1.2, 3.4, 5.7])
    """
    op = "onnx.gather"
    backend = _backend(op, data, indices)
    lowering = _gather_lowering(
        op, tuple(data.shape), tuple(indices.shape), as_int(op, "axis", axis)
    )
    return _gathered(op, backend, data, indices, lowering, vector=False)


@static_cache()
def _gather_lowering(
    op: str, shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int
) -> Lowering:
    rank, q = len(shape), len(index_shape)
    axis = _axis(op, axis, shape)
    _check_reachable(op, shape, (axis,), index_shape)
    return Lowering(
        sizes=(shape[axis],),
        dims=(axis,),
        coordinates=(),
        attributes=dict(
            offset_dims=(*range(axis), *range(axis + q, rank + q - 1)),
            collapsed_slice_dims=(axis,),
            start_index_map=(axis,),
            index_vector_dim=q,
            slice_sizes=_slice_sizes(shape, (axis,)),
        ),
    )


def gather_elements(data: Array, indices: Array, axis: int = 0) -> Array:
    """ONNX ``GatherElements``: one entry of ``data`` per entry of ``indices``.

    ``out[i][j][k] = data[indices[i][j][k]][j][k]`` for ``axis=0`` (torch's ``gather``,
    NumPy's ``take_along_axis`` without broadcasting).

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype.
    indices : array
        Integer, rank ``r``; along every dim but ``axis`` at most as long as ``data``
        (onnxruntime's rule), each entry in ``[-s, s - 1]`` with ``s = data.shape[axis]``.
    axis : int, default 0
        In ``[-r, r - 1]``.

    Returns
    -------
    array
        Shape ``indices.shape``.

    Raises
    ------
    IndexOpsValueError
        A bad ``axis``, rank or shape, or an index out of range.
    IndexOpsTypeError
        Non-integer ``indices``.

    Notes
    -----
    One :func:`indexops.gather` with ``collapsed_slice_dims=(axis,)``, every other dim a
    pair of batching dims (``operand_batching_dims`` = ``start_indices_batching_dims``),
    and windows of one element. Along a dim where ``indices`` is shorter than ``data``
    (where batching dims would break StableHLO's C17), the element's own coordinate
    becomes an index component instead.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> ionnx.gather_elements(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 0]]), axis=1)
    array([[1, 1],
           [4, 3]])
    >>> data = np.arange(1, 10).reshape(3, 3)
    >>> ionnx.gather_elements(data, np.array([[-1, 0]]), axis=0)   # indices shorter on dim 1
    array([[7, 2]])
    """
    op = "onnx.gather_elements"
    backend = _backend(op, data, indices)
    lowering = _elements_lowering(
        op, tuple(data.shape), tuple(indices.shape), as_int(op, "axis", axis), None
    )
    if not lowering.coordinates and backend.values_on_host(indices):
        # one pass that wraps, checks and reads, where the backend has one
        taken = backend.take_along_axis_wrapped(data, indices, lowering.dims[0])
        if taken is not None:
            return _checked_in_the_loop(op, backend, indices, lowering, False, *taken)
    return _gathered(op, backend, data, indices, lowering, vector=False)


def _checked_in_the_loop(
    op: str,
    backend: Backend,
    indices: Array,
    lowering: Lowering,
    vector: bool,
    result: Array,
    bad: int,
) -> Array:
    """The result of a one-pass kernel that checked each index as it went, or ONNX's
    named error for the one at flat position ``bad`` of ``indices`` (where ``bad >= 0``)."""
    if bad >= 0:
        value = int(backend.to_numpy(indices).reshape(-1)[bad])
        raise _index_error(op, tuple(indices.shape), lowering, vector, bad, value)
    return result


def gather_nd(data: Array, indices: Array, batch_dims: int = 0) -> Array:
    """ONNX ``GatherND``: slices of ``data`` at the index tuples in ``indices``' last dim.

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype.
    indices : array
        Integer, rank ``q >= 1``; its last dim holds tuples of ``m`` indices into data dims
        ``b, ..., b + m - 1`` (``0 <= m <= r - b``; ONNX says ``1 <=``, onnxruntime takes
        0 too: whole slices), each component ``k`` in
        ``[-s, s - 1]`` with ``s = data.shape[b + k]``; its first ``b`` dims equal
        ``data``'s.
    batch_dims : int, default 0
        ``b``, the number of leading batch dims, ``0 <= b < min(q, r)``.

    Returns
    -------
    array
        Shape ``indices.shape[:-1] + data.shape[b + m:]``.

    Raises
    ------
    IndexOpsValueError
        Bad ranks, shapes or ``batch_dims``, or an index out of range.
    IndexOpsTypeError
        Non-integer ``indices``.

    Notes
    -----
    One :func:`indexops.gather` with ``index_vector_dim=q - 1``, ``start_index_map`` and
    ``collapsed_slice_dims`` ``b, ..., b + m - 1``, the leading ``b`` dims as batching dims
    and the trailing ``r - b - m`` dims of ``data`` as whole windows.

    Examples
    --------
    The second and fifth examples of the ONNX operator:

    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> ionnx.gather_nd(np.array([[0, 1], [2, 3]]), np.array([[1], [0]]))
    array([[2, 3],
           [0, 1]])
    >>> data = np.arange(8).reshape(2, 2, 2)
    >>> ionnx.gather_nd(data, np.array([[1], [0]]), batch_dims=1)
    array([[2, 3],
           [4, 5]])
    """
    op = "onnx.gather_nd"
    backend = _backend(op, data, indices)
    lowering = _nd_lowering(
        op, tuple(data.shape), tuple(indices.shape), as_int(op, "batch_dims", batch_dims), None
    )
    return _gathered(op, backend, data, indices, lowering, vector=True)


def _backend(op: str, data: Array, indices: Array, updates: Array | None = None) -> Backend:
    """The backend of the call's arrays, which must be arrays of one library, with integer
    ``indices`` and ``updates`` of ``data``'s dtype."""
    arrays = {"data": data, "indices": indices}
    if updates is not None:
        arrays["updates"] = updates
    backend = backend_for(op, **arrays)
    check_integer_array(op, "indices", indices)
    if updates is not None:
        check_same_dtype(op, "updates", updates, "data", data)
    return backend


def _gathered(
    op: str, backend: Backend, data: Array, indices: Array, lowering: Lowering, vector: bool
) -> Array:
    """One :func:`indexops.gather` of ``lowering`` at the checked, wrapped ``indices``."""
    starts, checked = _starts(op, backend, indices, lowering, vector)
    mode = "promise_in_bounds" if checked else "fill"
    return _gather(data, starts, mode=mode, **lowering.attributes)


# -- the scatters ------------------------------------------------------------------------


def scatter_elements(
    data: Array, indices: Array, updates: Array, axis: int = 0, reduction: str = "none"
) -> Array:
    """ONNX ``ScatterElements``: ``data`` with one entry per entry of ``updates`` written.

    ``out[indices[i][j]][j] = f(out[indices[i][j]][j], updates[i][j])`` for ``axis=0``
    (torch's ``scatter``/``scatter_reduce``).

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype; not modified.
    indices : array
        Integer, rank ``r``; along every dim but ``axis`` at most as long as ``data``,
        each entry in ``[-s, s - 1]`` with ``s = data.shape[axis]``.
    updates : array
        Of ``indices``' shape and ``data``'s dtype.
    axis : int, default 0
        In ``[-r, r - 1]``.
    reduction : {"none", "add", "mul", "max", "min"}
        How an update meets the value there. ``"none"`` replaces; where a target repeats
        the last update in row-major order wins. On bool data ``"add"``/``"max"`` are OR,
        ``"mul"``/``"min"`` AND.

    Returns
    -------
    array
        A new array of ``data``'s shape, dtype and namespace.

    Raises
    ------
    IndexOpsValueError
        A bad ``axis``, rank, shape or ``reduction``, or an index out of range (nothing is
        written then).
    IndexOpsTypeError
        Non-integer ``indices`` or ``updates`` of another dtype than ``data``.

    Notes
    -----
    One :func:`indexops.scatter`, laid out as :func:`gather_elements` is.

    Examples
    --------
    The examples of the ONNX operator:

    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> ionnx.scatter_elements(np.zeros((3, 3)), np.array([[1, 0, 2], [0, 2, 1]]),
    ...                        np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]))
    array([[2. , 1.1, 0. ],
           [1. , 0. , 2.2],
           [0. , 2.1, 1.2]])
    >>> ionnx.scatter_elements(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), np.array([[1, 3]]),
    ...                        np.array([[1.1, 2.1]]), axis=1)
    array([[1. , 1.1, 3. , 2.1, 5. ]])
    >>> ionnx.scatter_elements(np.array([[1, 2, 3, 4, 5]]), np.array([[1, 1]]),
    ...                        np.array([[10, 20]]), axis=1, reduction="add")
    array([[ 1, 32,  3,  4,  5]])
    """
    op = "onnx.scatter_elements"
    backend = _backend(op, data, indices, updates)
    lowering = _elements_lowering(
        op,
        tuple(data.shape),
        tuple(indices.shape),
        as_int(op, "axis", axis),
        tuple(updates.shape),
    )
    return _scattered(op, backend, data, indices, updates, lowering, reduction, vector=False)


def scatter_nd(data: Array, indices: Array, updates: Array, reduction: str = "none") -> Array:
    """ONNX ``ScatterND``: ``data`` with slices at the index tuples of ``indices`` written.

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype; not modified.
    indices : array
        Integer, rank ``q >= 1``; its last dim holds tuples of ``k <= r`` indices into the
        leading dims of ``data``, component ``i`` in ``[-s, s - 1]`` with
        ``s = data.shape[i]``.
    updates : array
        Shape ``indices.shape[:-1] + data.shape[k:]``, ``data``'s dtype.
    reduction : {"none", "add", "mul", "max", "min"}
        As in :func:`scatter_elements`.

    Returns
    -------
    array
        A new array of ``data``'s shape, dtype and namespace.

    Raises
    ------
    IndexOpsValueError
        Bad ranks, shapes or ``reduction``, or an index out of range (nothing is written
        then).
    IndexOpsTypeError
        Non-integer ``indices`` or ``updates`` of another dtype than ``data``.

    Notes
    -----
    One :func:`indexops.scatter` with ``index_vector_dim=q - 1``,
    ``scatter_dims_to_operand_dims`` and ``inserted_window_dims`` ``0, ..., k - 1`` and
    the trailing ``r - k`` dims of ``data`` as whole windows.

    Examples
    --------
    The first example of the ONNX operator, then a bool ``"add"``, which is OR:

    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> ionnx.scatter_nd(np.arange(1, 9), np.array([[4], [3], [1], [7]]),
    ...                  np.array([9, 10, 11, 12]))
    array([ 1, 11,  3, 10,  9,  6,  7, 12])
    >>> ionnx.scatter_nd(np.zeros(3, bool), np.array([[1], [1], [-1]]),
    ...                  np.array([True, False, False]), reduction="add")
    array([False,  True, False])
    """
    op = "onnx.scatter_nd"
    backend = _backend(op, data, indices, updates)
    lowering = _nd_lowering(op, tuple(data.shape), tuple(indices.shape), 0, tuple(updates.shape))
    return _scattered(op, backend, data, indices, updates, lowering, reduction, vector=True)


def _scattered(
    op: str,
    backend: Backend,
    data: Array,
    indices: Array,
    updates: Array,
    lowering: Lowering,
    reduction: str,
    vector: bool,
) -> Array:
    """One :func:`indexops.scatter` of ``lowering`` at the checked, wrapped ``indices``."""
    if reduction not in REDUCTIONS:
        raise value_error(op, "reduction", reduction, f"one of {REDUCTIONS}")
    _check_reduction_of(op, backend, data, reduction)
    if (
        lowering.sizes
        and not lowering.coordinates
        and backend.values_on_host(indices)
        and backend.may_compile(data, math.prod(updates.shape))
    ):  # one pass over a copy that wraps, checks and writes, where the backend has one
        how = None if reduction == "none" else Named(reduction)
        done = (
            backend.scatter_tuples_from_end(data, indices, updates, how)
            if vector
            else backend.scatter_along_axis_in_order(
                data, lowering.dims[0], indices, updates, how, wrap=True, outside="stop", copy=True
            )
        )
        if done is not None:
            return _checked_in_the_loop(op, backend, indices, lowering, vector, *done)
    starts, checked = _starts(op, backend, indices, lowering, vector)
    mode = "promise_in_bounds" if checked else "drop"
    combiner = None if reduction == "none" else reduction
    if combiner is not None and backend.has_kind(data.dtype, "bool"):
        as_bits = backend.xp.uint8
        written = _scatter(
            backend.astype(data, as_bits),
            starts,
            backend.astype(updates, as_bits),
            update_computation=_BOOL_REDUCTIONS[combiner],
            mode=mode,
            **lowering.attributes,
        )
        return backend.astype(written, backend.xp.bool)
    return _scatter(
        data, starts, updates, update_computation=combiner, mode=mode, **lowering.attributes
    )


def _check_reduction_of(op: str, backend: Backend, data: Array, reduction: str) -> None:
    """Raise for a ``reduction`` that ``data``'s dtype has none of (as ``scatter``'s
    combiners: :func:`~indexops._ops.scatter.named_refused`; bool data has every one),
    naming the reductions it has."""
    if reduction == "none" or backend.has_kind(data.dtype, "bool"):
        return
    if named_refused(backend, data.dtype, Named(reduction)) is None:
        return
    taken = [r for r in REDUCTIONS[1:] if named_refused(backend, data.dtype, Named(r)) is None]
    raise type_error(
        op, "reduction", reduction, f"one of {('none', *taken)} for data of dtype {data.dtype}"
    )


# -- the static lowerings ------------------------------------------------------------------


@static_cache()
def _elements_lowering(
    op: str,
    shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    axis: int,
    updates_shape: tuple[int, ...] | None,
) -> Lowering:
    """GatherElements and ScatterElements: batching dims where ``indices`` is as long as
    ``data``, the element's coordinate as an index component where it is shorter."""
    rank = len(shape)
    axis = _axis(op, axis, shape)
    if len(index_shape) != rank:
        raise value_error(op, "indices.shape", index_shape, f"rank {rank}, the rank of data")
    for d, (n, dim) in enumerate(zip(index_shape, shape)):
        if d != axis and n > dim:
            raise value_error(
                op,
                "indices.shape",
                index_shape,
                f"at most data's length ({shape}) along every dim but axis {axis}; "
                f"dim {d} is longer",
            )
    if updates_shape is not None and updates_shape != index_shape:
        raise value_error(op, "updates.shape", updates_shape, f"indices' shape {index_shape}")
    _check_reachable(op, shape, (axis,), index_shape)
    batching = tuple(d for d in range(rank) if d != axis and index_shape[d] == shape[d])
    coordinates = tuple(d for d in range(rank) if d != axis and d not in batching)
    start_map = (*coordinates, axis)
    inserted = tuple(sorted(start_map))
    if updates_shape is None:
        attributes: dict[str, Any] = dict(
            offset_dims=(),
            collapsed_slice_dims=inserted,
            start_index_map=start_map,
            operand_batching_dims=batching,
            start_indices_batching_dims=batching,
            slice_sizes=_slice_sizes(shape, tuple(range(rank))),
        )
    else:
        attributes = dict(
            update_window_dims=(),
            inserted_window_dims=inserted,
            scatter_dims_to_operand_dims=start_map,
            input_batching_dims=batching,
            scatter_indices_batching_dims=batching,
        )
    attributes["index_vector_dim"] = rank
    return Lowering((shape[axis],), (axis,), coordinates, attributes)


@static_cache()
def _nd_lowering(
    op: str,
    shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    batch_dims: int,
    updates_shape: tuple[int, ...] | None,
) -> Lowering:
    """GatherND (``updates_shape`` None) and ScatterND (``batch_dims`` 0)."""
    rank, q = len(shape), len(index_shape)
    if rank == 0:
        raise value_error(op, "data.shape", shape, "rank >= 1")
    if q == 0:
        raise value_error(op, "indices.shape", index_shape, "rank >= 1")
    if not 0 <= batch_dims < min(q, rank):
        raise value_error(
            op, "batch_dims", batch_dims, f"in [0, min(q, r) - 1] = [0, {min(q, rank) - 1}]"
        )
    if index_shape[:batch_dims] != shape[:batch_dims]:
        raise value_error(
            op,
            "indices.shape",
            index_shape,
            f"the first batch_dims={batch_dims} dims of data's shape {shape}",
        )
    m = index_shape[-1]
    if not 0 <= m <= rank - batch_dims:  # 0, which onnxruntime takes too: whole slices
        raise value_error(
            op,
            "indices.shape[-1]",
            m,
            f"in [0, {rank - batch_dims}] (rank of data less batch_dims)",
        )
    indexed = tuple(range(batch_dims, batch_dims + m))
    _check_reachable(op, shape, indexed, index_shape[:-1])
    batch = tuple(range(batch_dims))
    window = rank - batch_dims - m
    if updates_shape is None:
        attributes: dict[str, Any] = dict(
            offset_dims=tuple(range(q - 1, q - 1 + window)),
            collapsed_slice_dims=indexed,
            start_index_map=indexed,
            operand_batching_dims=batch,
            start_indices_batching_dims=batch,
            slice_sizes=_slice_sizes(shape, batch + indexed),
        )
    else:
        expected = index_shape[:-1] + shape[m:]
        if updates_shape != expected:
            raise value_error(
                op,
                "updates.shape",
                updates_shape,
                f"indices.shape[:-1] + data.shape[k:] = {expected}",
            )
        attributes = dict(
            update_window_dims=tuple(range(q - 1, q - 1 + window)),
            inserted_window_dims=indexed,
            scatter_dims_to_operand_dims=indexed,
        )
    attributes["index_vector_dim"] = q - 1
    return Lowering(tuple(shape[d] for d in indexed), indexed, (), attributes)


def _axis(op: str, axis: int, shape: tuple[int, ...]) -> int:
    rank = len(shape)
    if rank == 0:
        raise value_error(op, "data.shape", shape, "rank >= 1")
    if not -rank <= axis < rank:
        raise value_error(op, "axis", axis, f"in [{-rank}, {rank - 1}] (data has rank {rank})")
    return axis % rank


def _check_reachable(
    op: str, shape: tuple[int, ...], dims: tuple[int, ...], batch_shape: tuple[int, ...]
) -> None:
    """An index into a dim of size 0 is out of range whatever its value: known statically."""
    empty = [d for d in dims if shape[d] == 0]
    if empty and math.prod(batch_shape) > 0:
        raise value_error(
            op,
            "indices",
            f"an array of shape {batch_shape} indexing data dim {empty[0]}",
            f"no index at all: data.shape[{empty[0]}] is 0 ({shape}), so every index is out "
            "of range",
        )


def _slice_sizes(shape: tuple[int, ...], single: tuple[int, ...]) -> tuple[int, ...]:
    """``shape``, with windows of one element (``min(1, d)``: none on an empty dim) on
    ``single``."""
    return tuple(min(1, n) if d in single else n for d, n in enumerate(shape))


# -- index values: wrapped, and checked where they are known --------------------------------


def _starts(
    op: str, backend: Backend, indices: Array, lowering: Lowering, vector: bool
) -> tuple[Array, bool]:
    """The start indices of the lowering (negative indices wrapped, coordinates stacked in
    front) and whether every index was checked in range on the host.

    An index outside ``[-s, s - 1]`` raises here where the values are on the host; elsewhere
    it is reported the library's way (:meth:`Backend.check_on_device`, a lazy error on
    Dask) and stays out of range, where the op's mode fills or drops it.
    """
    on = for_indices(backend, indices)
    xp = on.xp
    wide = to_index(on, indices)
    if not lowering.sizes:  # empty index tuples (GatherND, ScatterND): nothing to check
        return wide, True
    if not lowering.coordinates:
        counted = _few_counted(on, wide, lowering.sizes, vector)
        if counted is not None:  # nothing outside: the starts are the indices, counted
            return counted, True
    columns = [wide[..., k] for k in range(len(lowering.sizes))] if vector else [wide]
    outside = [(c < -size) | (c >= size) for c, size in zip(columns, lowering.sizes)]
    wrapped = [on.where(c < 0, c + size, c) for c, size in zip(columns, lowering.sizes)]
    if lowering.coordinates:
        shape = tuple(indices.shape)
        wrapped = [_coordinate(on, shape, d, wide) for d in lowering.coordinates] + wrapped
    starts = xp.stack(wrapped, axis=-1) if len(wrapped) > 1 or vector else wrapped[0]
    bad = xp.stack(outside, axis=-1) if vector else outside[0]  # of the shape of indices
    on_host = on.values_on_host(wide)
    if math.prod(bad.shape) == 0:
        return starts, on_host
    if on_host:
        if bool(xp.any(bad)):
            raise _out_of_range(op, on, indices, lowering, bad, vector)
        return starts, True
    span = "[-s, s - 1] (s: the size of its data dim)"
    on.check_on_device(
        ~xp.any(bad),
        f"{op}: indices has an entry outside {span}; nothing outside data was read or written",
    )
    error = _lazy_error(op, tuple(indices.shape), lowering, vector)
    flat_bad, culprits = xp.reshape(bad, (-1,)), xp.reshape(wide, (-1,))
    return on.raise_lazily(starts, flat_bad, culprits, error), False


def _few_counted(
    backend: Backend, wide: Array, sizes: tuple[int, ...], vector: bool
) -> Array | None:
    """A few indices ``wide`` (index tuples along the last dim where ``vector``), read on
    the host as one list (:meth:`Backend.few_on_host`), where each lies in ``[-s, s)`` of
    its data dim: themselves where none is negative, else a new array of them with the
    negative ones counted from the end; ``None`` where not shown."""
    if vector and wide.shape[-1] != len(sizes):
        return None
    dims = sizes if vector else sizes[:1]
    if len(dims) == 1:  # (the common case: the backend's list read counts them)
        found = backend.few_rows_from_end(wide, dims[0])
        return None if found is None else found[0]
    values = backend.few_on_host(wide)
    if not values:
        return None if values is None else wide
    spans = [dims[k % len(dims)] for k in range(len(values))]
    if not all(-s <= v < s for v, s in zip(values, spans)):
        return None
    if min(values) >= 0:
        return wide
    counted = [v + s if v < 0 else v for v, s in zip(values, spans)]
    found = backend.xp.asarray(counted, dtype=wide.dtype, device=backend.device(wide))
    return backend.reshape(found, tuple(wide.shape))


def _coordinate(backend: Backend, shape: tuple[int, ...], d: int, like: Array) -> Array:
    """Each element's position along dim ``d`` of an array of ``shape``."""
    xp = backend.xp
    positions = backend.arange(shape[d], like.dtype, like)
    along = tuple(n if k == d else 1 for k, n in enumerate(shape))
    return xp.broadcast_to(xp.reshape(positions, along), shape)


def _out_of_range(
    op: str, backend: Backend, indices: Array, lowering: Lowering, bad: Array, vector: bool
) -> Exception:
    """The error for the first index out of range (values on the host)."""
    position = int(backend.xp.nonzero(backend.xp.reshape(bad, (-1,)))[0][0])
    value = int(backend.to_numpy(indices).reshape(-1)[position])  # uint64 values too
    return _index_error(op, tuple(indices.shape), lowering, vector, position, value)


def _lazy_error(
    op: str, shape: tuple[int, ...], lowering: Lowering, vector: bool
) -> Callable[[int, int], Exception]:
    def error(position: int, value: int) -> Exception:
        return _index_error(op, shape, lowering, vector, position, value)

    return error


def _index_error(
    op: str, shape: tuple[int, ...], lowering: Lowering, vector: bool, position: int, value: int
) -> Exception:
    """The error for the index at flat ``position`` of ``indices`` (of ``shape``)."""
    where = _unravel(position, shape)
    component = where[-1] if vector else 0
    size, dim = lowering.sizes[component], lowering.dims[component]
    return value_error(
        op,
        f"indices[{', '.join(map(str, where))}]",
        value,
        f"an index in [{-size}, {size - 1}] (data.shape[{dim}] = {size}); nothing was done",
    )


def _unravel(position: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    where = []
    for n in reversed(shape):
        position, k = divmod(position, n)
        where.append(k)
    return tuple(reversed(where))


# -- slices ---------------------------------------------------------------------------------

_SLICE_NAMES = ("starts", "ends", "steps", "axes")


def slice(data: Array, starts: Any, ends: Any, axes: Any = None, steps: Any = None) -> Array:
    """ONNX ``Slice``: a strided slice of ``data``, read.

    Parameters
    ----------
    data : array
        Rank ``r >= 1``, any dtype.
    starts, ends : sequence of int or 1-D int array
        One entry per sliced axis. Negative entries count from the end; entries past either
        end are clamped, so ``INT64_MAX`` (``INT64_MIN``) means "to the end" forwards
        (backwards).
    axes : sequence of int or 1-D int array, optional
        The sliced axes, unique after counting negative ones from the end. Default
        ``0, ..., len(starts) - 1``.
    steps : sequence of int or 1-D int array, optional
        Non-zero; negative steps slice backwards. Default all 1.

    Returns
    -------
    array
        The slice, a new array or a view, of ``data``'s namespace and dtype.

    Raises
    ------
    IndexOpsValueError
        Entries of unequal lengths or longer than the rank, a zero step, an axis out of
        range or repeated.
    IndexOpsTypeError
        Non-integer entries, or arrays whose values are not known when the op is called
        (under ``jax.jit``): they set the result's shape.

    Notes
    -----
    Clamping follows the ONNX specification, as :func:`indexops.slice_scatter` does: a
    negative start or end gets the dim ``d`` added; for ``step > 0`` both are clamped to
    ``[0, d]``, for ``step < 0`` start to ``[0, d - 1]`` and end to ``[-1, d - 1]``. So an
    end of ``INT64_MAX`` with a negative step selects nothing. onnxruntime reads it as "to
    the start" instead; pass ``INT64_MIN`` for that, which both read the same.

    Examples
    --------
    The examples of the ONNX operator, then a backward slice:

    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    >>> ionnx.slice(data, [1, 0], [2, 3], axes=[0, 1], steps=[1, 2])
    array([[5, 7]])
    >>> ionnx.slice(data, [0, 1], [-1, 1000])
    array([[2, 3, 4]])
    >>> ionnx.slice(data, [-1], [np.iinfo(np.int64).min], axes=[1], steps=[-1])
    array([[4, 3, 2, 1],
           [8, 7, 6, 5]])
    """
    op = "onnx.slice"
    backend = backend_for(op, data=data)
    plan = _slice_plan(op, data, starts, ends, axes, steps)
    sliced = data[plan.slices]
    if plan.flip_axes:
        sliced = backend.flipped(sliced, plan.flip_axes)
    return sliced


def slice_scatter(
    data: Array, updates: Array, starts: Any, ends: Any, axes: Any = None, steps: Any = None
) -> Array:
    """ONNX ``Slice`` as the target of a write: ``data`` with the slice set to ``updates``.

    What exporters emit as ``ScatterND`` on the indices of a ``Slice``; the inputs in
    ONNX's order (``axes`` before ``steps``, ``steps`` optional). The slice is the one
    :func:`slice` reads.

    Parameters
    ----------
    data : array
        Rank ``r >= 1``; not modified.
    updates : array
        Exactly the slice's shape, ``data``'s dtype.
    starts, ends : sequence of int or 1-D int array
        As in :func:`slice`.
    axes, steps : sequence of int or 1-D int array, optional
        As in :func:`slice`.

    Returns
    -------
    array
        A new array.

    Raises
    ------
    IndexOpsValueError, IndexOpsTypeError
        Bad ``starts``, ``ends``, ``axes`` or ``steps`` (as :func:`slice`), ``updates``
        not of the slice's shape; else as :func:`indexops.slice_scatter`, which it calls.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops.onnx as ionnx
    >>> ionnx.slice_scatter(np.zeros((2, 4), int), np.array([[1, 2]]), [1, 0], [2, 3],
    ...                     axes=[0, 1], steps=[1, 2])
    array([[0, 0, 0, 0],
           [1, 0, 2, 0]])
    """
    op = "onnx.slice_scatter"
    plan = _slice_plan(op, data, starts, ends, axes, steps)  # (ONNX's names in its errors)
    if tuple(updates.shape) != plan.shape:
        raise value_error(
            op, "updates.shape", tuple(updates.shape), f"exactly the slice's shape {plan.shape}"
        )
    if steps is None:
        steps = (1,) * len(index_ints(op, "starts", starts))
    return _slice_scatter(data, updates, starts, ends, steps, axes)


def _slice_plan(op: str, data: Array, starts: Any, ends: Any, axes: Any, steps: Any) -> SlicePlan:
    first = index_ints(op, "starts", starts)
    return slice_plan(
        op,
        _SLICE_NAMES,
        tuple(int(d) for d in data.shape),
        first,
        index_ints(op, "ends", ends),
        (1,) * len(first) if steps is None else index_ints(op, "steps", steps),
        None if axes is None else index_ints(op, "axes", axes),
    )
