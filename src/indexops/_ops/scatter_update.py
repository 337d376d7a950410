"""``scatter_update``: PyPTO's row scatter into a 2-D table or a paged KV cache.

The op writes whole rows of ``d`` elements, one per token, so it lowers directly to one
:func:`~indexops._execute.rows.write_rows` call with the replace combiner: the 4-D cache
``[blockNum, blockSize, 1, d]`` is the 2-D table ``[blockNum * blockSize, d]`` and slot
``k`` is its row ``k`` (``k // blockSize`` is the block, ``k % blockSize`` the offset).
"""

from __future__ import annotations

import functools
import math

from .._backends import Backend, backend_for, for_indices
from .._errors import value_error
from .._execute.targets import to_index
from .._execute.writes import RowWriter, few_rows_first
from .._plan.cache import static_cache
from .._plan.executors import Executor, executor, signature
from .._typing import Array
from .._validate.arguments import as_int, check_integer_array, check_same_dtype, writes_in_place
from .._validate.combiners import REPLACE

OP = "scatter_update"
HEADS = (
    "dim 2 must be 1; a cache of H heads, [blockNum, blockSize, H, d] (vLLM's NHD layout), "
    "goes in as its view [blockNum, blockSize, 1, H*d], with src as [b, s, 1, H*d]"
)
"""What a 4-D cache with heads breaks, and how to pass it."""


def scatter_update(
    input: Array, dim: int, index: Array, src: Array, *, copy: bool | None = False
) -> Array:
    """Write the rows of ``src`` into ``input`` at the slots given by ``index`` (PyPTO).

    Parameters
    ----------
    input : array
        The table ``[rows, d]`` (2-D) or the paged cache ``[blockNum, blockSize, 1, d]``
        (4-D). Any dtype.
    dim : int
        Must be ``-2`` (the only value PyPTO defines).
    index : array
        Integer ``[b, s]``: the slot of each token. A negative slot is padding and is
        skipped; a slot past the end is an error. A 1-D ``[s]`` (vLLM's ``slot_mapping``)
        is read as ``[1, s]``; PyPTO itself takes 2-D only.
    src : array
        ``[b * s, d]`` (2-D) or ``[b, s, 1, d]`` (4-D), with the dtype of ``input``.
    copy : bool or None, keyword-only
        ``False`` (default, as on the NPU): write into ``input`` and return it; an error
        for arrays that cannot be written (JAX, read-only NumPy). ``True``: return a new
        array and leave ``input`` untouched. ``None``: in place where possible.

    Returns
    -------
    array
        ``input`` itself (in place) or a new array, with
        ``out[index[i, j]] = src[i * s + j]`` (2-D) or
        ``out[k // blockSize, k % blockSize, 0] = src[i, j, 0]`` for ``k = index[i, j]``
        (4-D). Where a slot repeats, the last token in row-major ``(i, j)`` order wins.

    Raises
    ------
    IndexOpsValueError
        ``dim`` other than -2, wrong ranks or shapes, a slot past the end (nothing is
        written then), or ``copy=False`` on an array that cannot be written.
    IndexOpsTypeError
        A non-integer ``index`` or ``src`` of another dtype than ``input``.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> cache = np.zeros((2, 3, 1, 2), dtype=np.int32)
    >>> slots, tokens = np.array([[4, -1]]), np.ones((1, 2, 1, 2), np.int32)
    >>> out = indexops.scatter_update(cache, -2, slots, tokens)
    >>> out is cache, cache[1, :, 0].tolist()
    (True, [[0, 0], [1, 1], [0, 0]])

    vLLM's 1-D slot mapping, as ``[1, s]``:

    >>> table = np.zeros((4, 2), np.int32)
    >>> indexops.scatter_update(table, -2, np.array([3, -1]),
    ...                         np.array([[7, 7], [9, 9]], np.int32))
    array([[0, 0],
           [0, 0],
           [0, 0],
           [7, 7]], dtype=int32)
    """
    key = signature((OP, dim), input, index, src) if type(dim) is int else None
    run = executor(key, lambda: _prepare(input, dim, index, src))
    return run(input, index, src, copy)


def _prepare(input: Array, dim: int, index: Array, src: Array) -> Executor:
    """Validate a call: its executor."""
    backend = backend_for(OP, input=input, index=index, src=src)
    dim = as_int(OP, "dim", dim)
    if dim != -2:
        raise value_error(OP, "dim", dim, "must be -2 (the only dim PyPTO defines)")
    rows_shape = _plan(tuple(input.shape), tuple(index.shape), tuple(src.shape))
    check_integer_array(OP, "index", index)
    check_same_dtype(OP, "src", src, "input", input)
    count = math.prod(index.shape)
    writer = RowWriter(backend, input.dtype, rows_shape, count, REPLACE, input.shape)
    run = functools.partial(_execute, backend, rows_shape, writer)
    if writer.few and for_indices(backend, index) is backend:
        return functools.partial(few_rows_first, OP, backend, writer, run)
    return run


@static_cache()
def _plan(
    shape: tuple[int, ...], index_shape: tuple[int, ...], src_shape: tuple[int, ...]
) -> tuple[int, int]:
    """Validate ranks and shapes; return the 2-D row view ``(slots, d)`` of input."""
    if len(shape) not in (2, 4):
        raise value_error(
            OP, "input.shape", shape, "rank 2 [rows, d] or 4 [blockNum, blockSize, 1, d]"
        )
    if len(index_shape) not in (1, 2):
        raise value_error(OP, "index.shape", index_shape, "rank 2 [b, s] (or 1 [s], as [1, s])")
    d = shape[-1]
    expected = expected_src_shape(shape, index_shape)
    if len(shape) == 2:
        layout = "[b*s, d] for input [rows, d] and index [b, s]"
    else:
        if shape[2] != 1:
            raise value_error(OP, "input.shape", shape, f"[blockNum, blockSize, 1, d]: {HEADS}")
        layout = "[b, s, 1, d] for input [blockNum, blockSize, 1, d] and index [b, s]"
    if src_shape != expected:
        hint = _padded_tokens_hint(index_shape, src_shape, expected)
        raise value_error(OP, "src.shape", src_shape, f"{expected}, i.e. {layout}{hint}")
    slots = shape[0] if len(shape) == 2 else shape[0] * shape[1]
    return (slots, d)


def _padded_tokens_hint(
    index_shape: tuple[int, ...], src_shape: tuple[int, ...], expected: tuple[int, ...]
) -> str:
    """How to pass tokens padded past a 1-D index (vLLM V1 pads ``key`` for CUDA graphs
    and writes only ``slot_mapping.size(0)`` tokens), or ``""`` for another mismatch."""
    tokens = 0 if len(expected) == 2 else 1
    padded = (
        len(index_shape) == 1
        and len(src_shape) == len(expected)
        and src_shape[tokens] > expected[tokens]
        and all(n == m for i, (n, m) in enumerate(zip(src_shape, expected)) if i != tokens)
    )
    if not padded:
        return ""
    first = f"src[{':, ' * tokens}:{expected[tokens]}]"
    return (
        f"; src has {src_shape[tokens]} tokens for the {index_shape[0]} slots of index "
        f"(as vLLM pads key for CUDA graphs): pass {first}, or "
        "key[:slot_mapping.shape[0]] before the reshape"
    )


def expected_src_shape(
    input_shape: tuple[int, ...], index_shape: tuple[int, ...]
) -> tuple[int, ...]:
    """The shape ``src`` must have: ``[b*s, d]`` for a 2-D input, ``[b, s, 1, d]`` for 4-D.

    ``input_shape`` has rank 2 or 4 and ``index_shape`` is ``[b, s]`` or ``[s]`` (read as
    ``[1, s]``).

    Examples
    --------
    >>> from indexops._ops.scatter_update import expected_src_shape
    >>> expected_src_shape((256, 128, 1, 576), (8, 4)), expected_src_shape((1000, 64), (8, 4))
    ((8, 4, 1, 576), (32, 64))
    >>> expected_src_shape((256, 128, 1, 576), (4,))
    (1, 4, 1, 576)
    """
    b, s = (1, *index_shape) if len(index_shape) == 1 else index_shape
    d = input_shape[-1]
    return (b * s, d) if len(input_shape) == 2 else (b, s, 1, d)


def _execute(
    backend: Backend,
    rows_shape: tuple[int, int],
    write: RowWriter,
    input: Array,
    index: Array,
    src: Array,
    copy: bool | None,
) -> Array:
    """Each token's row into its slot's row; padding and bad slots are skipped. Large
    writes go first to the writer's one pass, which skips the padding and refuses a slot
    past the end before it writes anything; the host's checks name that slot."""
    in_place = writes_in_place(backend, OP, input, copy)
    if write.one_pass is not None:
        rows = backend.reshape(to_index(backend, index), (-1,))
        values = backend.reshape(src, (rows.shape[0], rows_shape[1]))
        try:
            written = write.in_one_pass(input, rows, values, in_place, outside="padding")
        except IndexError:  # a slot past the end, nothing written: _slots names it
            written = None
        if written is not None:
            return written
    rows, keep, distinct = _slots(for_indices(backend, index), index, rows_shape[0])
    values = backend.reshape(src, (rows.shape[0], rows_shape[1]))
    return write(input, rows, values, in_place=in_place, keep=keep, unique=distinct)


def _slots(backend: Backend, index: Array, slots: int) -> tuple[Array, Array | None, bool]:
    """The slots as rows in range, which are written (``None``: all of them), and
    whether the host found them distinct (False where not shown).

    A negative slot is padding. A slot past the end is an error raised before any write
    where the slots are on the host; elsewhere the backend reports it its own way (see
    :meth:`Backend.check_on_device`) and the token is skipped, so nothing is ever written
    outside ``input``.
    """
    xp = backend.xp
    rows = backend.reshape(to_index(backend, index), (-1,))
    if rows.shape[0] == 0:
        return rows, None, False
    if backend.values_on_host(rows):
        distinct = backend.distinct_in_range(rows, slots - 1)
        if distinct is not None:
            return rows, None, distinct  # the common case costs one read
        if bool(xp.any(rows >= slots)):
            raise _past_the_end(backend, index, rows, slots)
        return rows, rows >= 0, False  # (none past the end: the rest is padding)
    below_end = rows < slots
    backend.check_on_device(
        xp.all(below_end),
        f"{OP}: index has a slot past the end of input (>= {slots}); "
        "its token was skipped, nothing was written outside input",
    )
    error = functools.partial(_slot_error, tuple(index.shape), slots)
    rows = backend.raise_lazily(rows, ~below_end, xp.reshape(index, (-1,)), error)
    return backend.clip(rows, 0, max(slots - 1, 0)), (rows >= 0) & below_end, False


def _past_the_end(backend: Backend, index: Array, rows: Array, slots: int) -> Exception:
    """The error for the first slot past the end (values on the host)."""
    position = int(backend.xp.nonzero(rows >= slots)[0][0])
    slot = int(backend.to_numpy(index).reshape(-1)[position])  # uint64 too
    return _slot_error(tuple(index.shape), slots, position, slot)


def _slot_error(shape: tuple[int, ...], slots: int, position: int, slot: int) -> Exception:
    """The error for the slot at flat ``position`` of an index ``[b, s]`` or ``[s]``."""
    where = divmod(position, shape[1]) if len(shape) == 2 else (position,)
    return value_error(
        OP,
        f"index[{', '.join(map(str, where))}]",
        slot,
        f"a slot below {slots} (the rows of input), or negative for padding; nothing was written",
    )
