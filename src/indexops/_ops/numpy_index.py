"""NumPy index expressions as StableHLO window geometry: the lowering behind ``at``.

An index expression (ints, slices, ``None``, ``...``, integer and boolean arrays, and
tuples of them) picks the elements of ``x[idx]``. It becomes the attributes of one gather
(or scatter) whose result (updates) has the shape of ``x[idx]``:

* a slice with step 1 is a window along its dim at a constant start (none if it covers
  the dim);
* an int, an integer array and a slice with another step collapse their dim and give one
  column of the start indices: the int a constant, the array its values (negative ones
  counted from the end), the slice an iota along its own result dim;
* ``None`` is a result dim of size 1 that only the start indices have;
* the integer arrays broadcast together into the advanced dims, placed where NumPy places
  them: where the first advanced index stands if the advanced indices (ints count as
  advanced once there is an array) are next to each other in ``idx``, else first.

Boolean arrays become integer arrays of their true positions when the call is made: the
result's shape depends on their values, so these must be readable then. A Python bool (or a
0-d boolean array, read) is NumPy's 0-d mask: an advanced index of shape ``(1,)`` (True) or
``(0,)`` (False) that takes no dim of ``x``.

Everything except the arrays' values is static: a :class:`IndexPlan` is made once per
shape and static index parts; per call only the start indices are built from it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
import operator
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

import numpy as np

from .._backends import Backend, ValuesUnknown, backend_for, is_array
from .._errors import type_error, value_error
from .._execute.targets import to_index
from .._plan.cache import static_cache
from .._plan.slices import directed_slice, positive_slice
from .._typing import Array

ALLOWED = (
    "ints, slices, None, ..., integer or boolean arrays, sequences of ints or bools, "
    "or a tuple of these"
)


@dataclass(frozen=True)
class IntPart:
    """A Python int (or NumPy integer scalar): static, checked against the dim."""

    value: int

    def __repr__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class SlicePart:
    start: int | None
    stop: int | None
    step: int | None

    def __repr__(self) -> str:
        text = ":".join("" if v is None else str(v) for v in (self.start, self.stop))
        return text if self.step is None else f"{text}:{self.step}"


@dataclass(frozen=True)
class ArrayPart:
    """An integer array, known by its shape; its values come with each call."""

    shape: tuple[int, ...]
    may_be_negative: bool  # False for unsigned dtypes and boolean arrays' positions

    def __repr__(self) -> str:
        return f"array(shape={self.shape})"


@dataclass(frozen=True)
class BoolPart:
    """A Python bool or the value of a 0-d boolean array: an advanced index of shape
    ``(1,)`` (True) or ``(0,)`` (False) that takes no dim of ``x`` (NumPy's rule)."""

    value: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return (int(self.value),)

    def __repr__(self) -> str:
        return str(self.value)


Part = IntPart | SlicePart | ArrayPart | BoolPart | EllipsisType | None
_ADVANCED_PARTS = (ArrayPart, BoolPart)
_MASK = "mask"  # the part of a boolean array, before its positions are known


# -- per call: the index expression split into static parts and arrays ---------------------


def parse_index(
    op: str, backend: Backend, x: Array, idx: Any
) -> tuple[tuple[Part, ...], list[Array]]:
    """The static parts of ``idx`` and its integer arrays, in order.

    Boolean arrays are replaced by the integer arrays of their true positions (read now:
    an error where their values are unknown, e.g. under ``jax.jit``).
    """
    if type(idx) is type(x) and backend.has_kind(idx.dtype, "integral"):  # the common case
        return (ArrayPart(tuple(idx.shape), _may_be_negative(backend, idx)),), [idx]
    items = idx if type(idx) is tuple else (idx,)
    classified = [_classify(op, backend, x, item) for item in items]
    widths = [_width(part, array) for part, array in classified]
    starts = first_dims(op, len(x.shape), widths, idx)
    parts: list[Part] = []
    arrays: list[Array] = []
    for (part, array), start in zip(classified, starts):
        if array is None:
            parts.append(part)
        elif part is _MASK and array.ndim == 0:
            parts.append(BoolPart(_bool_value(op, backend, x, array)))
        elif part is _MASK:
            for positions in _true_positions(op, backend, x, array, start):
                parts.append(ArrayPart(tuple(positions.shape), False))
                arrays.append(positions)
        else:
            parts.append(part)
            arrays.append(array)
    return tuple(parts), arrays


def _classify(op: str, backend: Backend, x: Array, item: Any) -> tuple[Any, Array | None]:
    """(static part, None) for ints, slices, None and ...; (part, array) for arrays."""
    if item is None or item is Ellipsis:
        return item, None
    if isinstance(item, slice):
        return SlicePart(
            *(_slice_entry(op, backend, x, item, v) for v in (item.start, item.stop, item.step))
        ), None
    if isinstance(item, (bool, np.bool_)):
        return BoolPart(bool(item)), None
    if isinstance(item, numbers.Integral):
        return IntPart(int(item)), None
    if isinstance(item, (list, tuple, range)):
        item = _sequence_array(op, backend, x, list(item) if type(item) is range else item)
        if isinstance(item, SequenceMask):
            return _MASK, item
    if not is_array(item):
        return IntPart(_index_of(op, item)), None
    if type(item) is not type(x):
        backend_for(op, x=x, idx=item)  # index arrays belong to x's library
    if backend.has_kind(item.dtype, "integral"):
        return ArrayPart(tuple(item.shape), _may_be_negative(backend, item)), item
    if backend.has_kind(item.dtype, "bool"):
        return _MASK, item
    raise type_error(op, "idx", f"an array of dtype {item.dtype}", ALLOWED)


def _index_of(op: str, item: Any) -> int:
    """An object that is no array but has ``__index__`` as the int it stands for (NumPy
    takes such objects as ints); anything else is an error."""
    try:
        return operator.index(item)
    except TypeError:
        raise type_error(op, "idx", _short(item), ALLOWED) from None


def _slice_entry(op: str, backend: Backend, x: Array, item: slice, value: Any) -> int | None:
    """A slice bound as an int: None, or anything with ``__index__`` but a bool (a NumPy
    integer, a 0-d integer array whose value can be read). As in NumPy, arrays of another
    shape or dtype are refused, also where their library gives them an ``__index__``
    (torch's and Dask's arrays of one element, torch's bools)."""
    if value is None:
        return None
    if type(value) is int:
        return value
    if not isinstance(value, (bool, np.bool_)) and _integer_scalar(op, backend, x, value):
        try:
            return operator.index(value)
        except Exception:  # a traced array raises its library's own error
            pass
    raise type_error(
        op,
        "idx",
        _short(item),
        "slices of ints, None or integers with __index__ (NumPy integers, 0-d integer "
        "arrays whose value is known when at is called)",
    )


def _integer_scalar(op: str, backend: Backend, x: Array, value: Any) -> bool:
    """Whether ``value`` is no array, or a 0-d array of an integer dtype."""
    if not is_array(value):
        return True
    reader = backend if type(value) is type(x) else backend_for(op, idx=value)
    return value.ndim == 0 and reader.has_kind(value.dtype, "integral")


@dataclass(frozen=True)
class SequenceMask:
    """A (nested) sequence of bools: a mask whose values are known without reading an
    array, so it works under ``jax.jit`` and ``torch.compile`` too."""

    shape: tuple[int, ...]
    values: tuple[bool, ...]  # in row-major order

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def positions(self) -> list[list[int]]:
        """Per dim, the coordinates of the true entries in row-major order."""
        true = [
            at
            for at, value in zip(itertools.product(*map(range, self.shape)), self.values)
            if value
        ]
        return [[at[d] for at in true] for d in range(self.ndim)]


def _sequence_array(op: str, backend: Backend, x: Array, item: Any) -> Array | SequenceMask:
    """A (nested) list or tuple of Python ints as an array of ``x``'s library, or of
    bools as a :class:`SequenceMask`.

    Plain Python (no NumPy object array), so that ``torch.compile`` traces it."""
    nested = _nested(item)
    if nested is None:
        raise value_error(op, "idx", _short(item), "sequences of equal-length rows")
    shape, leaves = nested
    bools = [isinstance(v, (bool, np.bool_)) for v in leaves]
    ints = [isinstance(v, numbers.Integral) and not b for v, b in zip(leaves, bools)]
    if leaves and all(bools):
        return SequenceMask(shape, tuple(bool(v) for v in leaves))
    if not all(ints):
        raise type_error(op, "idx", _short(item), "sequences of ints only or of bools only")
    return _index_array(backend, x, [int(v) for v in leaves], shape)


def _index_array(backend: Backend, x: Array, values: list[int], shape: tuple[int, ...]) -> Array:
    """Python ints as an index array of ``x``'s library and device, of ``shape``. An int
    beyond the index dtype (JAX's int32 without x64; 2**63 and up) becomes its nearest
    bound: both lie outside every dim of ``x`` on the same side, which each mode treats
    alike."""
    dtype = backend.index_dtype()  # (int32 or int64: ints of int32 need no look)
    if values and (min(values) < -(2**31) or max(values) >= 2**31):
        bounds = backend.xp.iinfo(dtype)
        values = [min(max(v, bounds.min), bounds.max) for v in values]
    return backend.xp.reshape(backend.ints(values, dtype, x), shape)


def _nested(item: Any) -> tuple[tuple[int, ...], list[Any]] | None:
    """The shape of a (nested) sequence and its leaves in row-major order, or None where
    rows of one level differ in length or depth."""
    if not isinstance(item, (list, tuple)):
        return (), [item]
    rows = [_nested(row) for row in item]
    known = [row for row in rows if row is not None]
    if len(known) < len(rows) or len({shape for shape, _ in known}) > 1:
        return None
    inner = known[0][0] if known else ()
    return (len(known), *inner), [leaf for _, leaves in known for leaf in leaves]


def _may_be_negative(backend: Backend, x: Array) -> bool:
    return not backend.has_kind(x.dtype, "unsigned integer")


def _width(part: Any, array: Array | None) -> int | None:
    """How many dims of ``x`` an index item takes (``None`` for ``...``)."""
    if part is Ellipsis:
        return None
    if array is not None and part is _MASK:
        return int(array.ndim)
    return 0 if part is None or isinstance(part, BoolPart) else 1


def _mask_backend(op: str, backend: Backend, x: Array, mask: Array) -> Backend:
    """The backend that reads ``mask``: x's, or NumPy's for a NumPy mask of a Dask ``x``."""
    return backend if type(mask) is type(x) else backend_for(op, idx=mask)


def _bool_value(op: str, backend: Backend, x: Array, mask: Array) -> bool:
    """The value of the 0-d boolean array ``mask``, read now (it sets the result's shape)."""
    reader = _mask_backend(op, backend, x, mask)
    try:
        return bool(reader.host_ints(reader.xp.reshape(mask, (1,)))[0])
    except ValuesUnknown as reason:
        raise _unknown_mask(op, f"a 0-d boolean array ({reason})") from None


def _unknown_mask(op: str, what: str) -> Exception:
    return type_error(
        op,
        "idx",
        what,
        "boolean arrays whose values are known when at is called (they set the shape of "
        "the result); pass the integer positions instead",
    )


def _true_positions(
    op: str, backend: Backend, x: Array, mask: Array, start: int
) -> tuple[Array, ...]:
    """The integer arrays of the true positions of the boolean ``mask`` at dim ``start``.

    Its shape must be that of the dims it indexes, except that, as in NumPy and JAX, a
    mask dim of size 0 matches any size (the mask is empty: it selects nothing)."""
    expected = tuple(x.shape[start : start + mask.ndim])
    if any(m not in (n, 0) for m, n in zip(mask.shape, expected)):
        raise value_error(
            op,
            "idx",
            f"a boolean array of shape {tuple(mask.shape)}",
            f"a boolean array must have the shape of the dims it indexes, {expected} "
            f"(x dims {start}..{start + mask.ndim - 1} of {tuple(x.shape)}; a dim of "
            "size 0 matches any size)",
        )
    if isinstance(mask, SequenceMask):
        return tuple(_index_array(backend, x, p, (len(p),)) for p in mask.positions())
    reader = _mask_backend(op, backend, x, mask)
    unknown = "a boolean array whose values are unknown"
    try:  # an empty read: it fails where values cannot be read (tracers, meta tensors)
        reader.host_ints(reader.xp.reshape(mask, (-1,))[:0])
    except ValuesUnknown as reason:
        unknown = f"a boolean array ({reason})"
    else:
        positions = tuple(reader.xp.nonzero(mask))
        if all(isinstance(n, int) for p in positions for n in p.shape):
            return positions
    raise _unknown_mask(op, unknown)


def _short(x: Any) -> Any:
    """``x`` itself for the error message, or the start of its repr if that is long."""
    text = repr(x)
    return x if len(text) <= 60 else text[:57] + "..."


# -- static: dims and the plan ---------------------------------------------------------------


def first_dims(op: str, rank: int, widths: list[int | None], idx: Any) -> list[int]:
    """The first dim of ``x`` that each item takes (``None`` in ``widths`` marks ``...``).

    Raises for a second ``...`` and for more indices than ``x`` has dims.
    """
    taken = sum(w for w in widths if w is not None)
    if widths.count(None) > 1:
        raise value_error(op, "idx", _short(idx), "at most one ... (Ellipsis)")
    if taken > rank:
        raise value_error(
            op,
            "idx",
            _short(idx),
            f"at most {rank} indices for x of rank {rank} (this one indexes {taken} dims)",
        )
    starts, dim = [], 0
    for width in widths:
        starts.append(dim)
        dim += rank - taken if width is None else width
    return starts


@dataclass(frozen=True)
class Column:
    """How one column of the start indices is made, shaped to broadcast to the batch.

    ``"array"``: the ``source``-th index array, negative values plus ``wrap`` (unless
    ``None``), reshaped to ``shape``; ``"constant"``: ``start``; ``"iota"``: ``start +
    step * k`` for ``k`` along the one axis where ``shape`` is not 1.
    """

    kind: str
    shape: tuple[int, ...] = ()
    source: int = 0
    wrap: int | None = None
    start: int = 0
    step: int = 1


@dataclass(frozen=True)
class IndexPlan:
    """The gather/scatter attributes of an index expression on one shape."""

    result_shape: tuple[int, ...]  # the shape of x[idx]
    batch_shape: tuple[int, ...]  # the start indices' shape without the index vector
    offset_dims: tuple[int, ...]  # the result dims that are windows, in x's dim order
    collapsed_dims: tuple[int, ...]
    start_map: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    columns: tuple[Column, ...]  # one per start_map entry
    empty_dims: tuple[int, ...]  # dims of size 0 that index arrays collapse: gather cannot
    # (x dim, batch axis): index arrays that count along one batch axis (see with_batching)
    batching_pairs: tuple[tuple[int, int], ...] = ()

    @property
    def result_size(self) -> int:
        return math.prod(self.result_shape)

    @property
    def selects_once(self) -> bool:
        """Whether every element is selected once at most: no index array (ints, slices,
        ``None`` and ``...`` never repeat a position), so a scatter's indices are unique."""
        return all(column.kind != "array" for column in self.columns)

    @property
    def index_vector_dim(self) -> int:
        return len(self.batch_shape)

    @property
    def gather_attributes(self) -> tuple[Any, ...]:
        """The attributes of ``gather_executor``, in its order."""
        dims = (self.offset_dims, self.collapsed_dims, self.start_map, self.index_vector_dim)
        return (*dims, self.slice_sizes, self.operand_batching_dims, self.index_batching_dims)

    @property
    def scatter_attributes(self) -> tuple[Any, ...]:
        """The attributes of ``scatter_executor``, in its order."""
        return (
            self.offset_dims,
            self.collapsed_dims,
            self.start_map,
            self.index_vector_dim,
            self.operand_batching_dims,
            self.index_batching_dims,
        )

    @property
    def operand_batching_dims(self) -> tuple[int, ...]:
        return tuple(dim for dim, _ in self.batching_pairs)

    @property
    def index_batching_dims(self) -> tuple[int, ...]:
        return tuple(axis for _, axis in self.batching_pairs)


# the kinds of result dims while a plan is made: a window of x, or a batch dim of the
# start indices (from None, a strided slice, or the advanced indices)
_WINDOW, _NEW, _STRIDED, _ADVANCED = "window", "new", "strided", "advanced"


@static_cache()
def index_plan(op: str, shape: tuple[int, ...], parts: tuple[Part, ...]) -> IndexPlan:
    """Check the static parts of an index expression against ``x.shape`` and lower them."""
    arrays = [p for p in parts if isinstance(p, ArrayPart)]
    advanced = [p for p in parts if isinstance(p, _ADVANCED_PARTS)]
    advanced_shape = _broadcast_shapes(op, [a.shape for a in advanced])
    positions = [i for i, p in enumerate(parts) if isinstance(p, (*_ADVANCED_PARTS, IntPart))]
    advanced_first = bool(advanced) and positions != list(range(positions[0], positions[-1] + 1))
    result: list[tuple[str, int, int]] = []  # (kind, size, x dim or -1)
    sizes = list(shape)
    constants: dict[int, Column] = {}  # x dim -> a constant start column
    strided: dict[int, Column] = {}  # x dim -> an iota column, its shape set below
    array_dims: list[int] = []
    if advanced_first:
        result += [(_ADVANCED, n, -1) for n in advanced_shape]
    placed = advanced_first or not advanced
    for part, dim in _per_dim(op, shape, parts):
        if part is None:
            result.append((_NEW, 1, -1))
            continue
        if not placed and isinstance(part, (*_ADVANCED_PARTS, IntPart)):
            result += [(_ADVANCED, n, -1) for n in advanced_shape]
            placed = True
        if isinstance(part, BoolPart):
            continue  # its dim is among the advanced ones; it takes none of x
        if isinstance(part, IntPart):
            constants[dim] = Column("constant", start=_int_in_range(op, parts, shape, dim, part))
            sizes[dim] = 1
        elif isinstance(part, ArrayPart):
            array_dims.append(dim)
            sizes[dim] = 1
        else:
            start, step, size = _slice_of(op, shape[dim], part)
            if step == 1 or size <= 1:
                result.append((_WINDOW, size, dim))
                sizes[dim] = size
                if size < shape[dim]:
                    constants[dim] = Column("constant", start=start)
            else:
                result.append((_STRIDED, size, dim))
                strided[dim] = Column("iota", start=start, step=step)
                sizes[dim] = 1
    return _plan_of(shape, result, sizes, constants, strided, array_dims, arrays, advanced_shape)


def _per_dim(op: str, shape: tuple[int, ...], parts: tuple[Part, ...]) -> list[tuple[Any, int]]:
    """(part, x dim) with ``...`` and the missing trailing indices as full slices; ``None``
    and bool parts come with the dim that follows them."""
    rank = len(shape)
    widths = [_width(p, None) for p in parts]
    first_dims(op, rank, widths, parts)
    missing = rank - sum(w for w in widths if w is not None)
    full = SlicePart(None, None, None)
    expanded: list[Any] = []
    for part in parts:
        expanded += [full] * missing if part is Ellipsis else [part]
    if not any(part is Ellipsis for part in parts):
        expanded += [full] * missing
    dims, dim = [], 0
    for part in expanded:
        dims.append((part, dim))
        dim += part is not None and not isinstance(part, BoolPart)
    return dims


def _int_in_range(
    op: str, parts: tuple[Part, ...], shape: tuple[int, ...], dim: int, part: IntPart
) -> int:
    n = shape[dim]
    if not -n <= part.value < n:
        raise value_error(
            op,
            "idx",
            parts if len(parts) > 1 else part,
            f"the int {part.value} on dim {dim} (size {n}) must be in [{-n}, {n}) "
            "(ints are checked like NumPy's; pass an integer array for the out-of-bounds "
            "behaviour of mode)",
        )
    return part.value + n if part.value < 0 else part.value


def _slice_of(op: str, n: int, part: SlicePart) -> tuple[int, int, int]:
    """(start, step, size) of a slice on a dim of size ``n``; start 0 when empty."""
    if part.step == 0:
        raise value_error(op, "idx", part, "slice steps other than 0")
    start, stop, step = slice(part.start, part.stop, part.step).indices(n)
    size = len(range(start, stop, step))
    return (start if size else 0), step, size


def _broadcast_shapes(op: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of the index arrays' shapes, or a clear error."""
    rank = max([0, *[len(s) for s in shapes]])  # (Dynamo takes no default= in max)
    result = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise value_error(
                op,
                "idx",
                f"index arrays of shapes {', '.join(map(str, shapes))}",
                "integer arrays (and boolean arrays' positions) that broadcast together",
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _plan_of(
    shape: tuple[int, ...],
    result: list[tuple[str, int, int]],
    sizes: list[int],
    constants: dict[int, Column],
    strided: dict[int, Column],
    array_dims: list[int],
    arrays: list[ArrayPart],
    advanced_shape: tuple[int, ...],
) -> IndexPlan:
    """The plan from the result dims in order: batch axes, column shapes, attributes."""
    batch = [(kind, size, dim) for kind, size, dim in result if kind != _WINDOW]
    batch_rank = len(batch)
    kinds = [kind for kind, _, _ in batch]
    columns = dict(constants)
    for axis, (kind, size, dim) in enumerate(batch):
        if kind == _STRIDED:
            iota_shape = tuple(size if a == axis else 1 for a in range(batch_rank))
            columns[dim] = Column(
                "iota", iota_shape, start=strided[dim].start, step=strided[dim].step
            )
    if arrays:
        first = kinds.index(_ADVANCED) if advanced_shape else 0
        after = batch_rank - first - len(advanced_shape)
        for source, (dim, part) in enumerate(zip(array_dims, arrays)):
            lead = first + len(advanced_shape) - len(part.shape)
            array_shape = (1,) * lead + part.shape + (1,) * after
            wrap = shape[dim] if part.may_be_negative else None
            columns[dim] = Column("array", array_shape, source, wrap)
    start_map = tuple(sorted(columns))
    window_dims = {dim for kind, _, dim in result if kind == _WINDOW}
    return IndexPlan(
        result_shape=tuple(size for _, size, _ in result),
        batch_shape=tuple(size for _, size, _ in batch),
        offset_dims=tuple(i for i, (kind, _, _) in enumerate(result) if kind == _WINDOW),
        collapsed_dims=tuple(d for d in range(len(shape)) if d not in window_dims),
        start_map=start_map,
        slice_sizes=tuple(sizes),
        columns=tuple(columns[d] for d in start_map),
        empty_dims=tuple(d for d in range(len(shape)) if d not in window_dims and not shape[d]),
    )


# -- basic expressions as the library's own slicing -------------------------------------------


@dataclass(frozen=True)
class BasicIndex:
    """A basic index expression (ints, slices, ``None``, ``...``) as the library's own
    key: ``x[key]``, flipped along ``flips`` (result dims), is ``x[idx]``. ``flips`` holds
    the dims of slices with a negative step where the library takes none (torch): the key
    has the same elements in increasing order. The key's slices have in-range bounds and
    steps (:mod:`indexops._plan.slices`): torch overflows on steps near ``2**63``."""

    key: tuple[Any, ...]
    flips: tuple[int, ...]


def basic_index(
    op: str, shape: tuple[int, ...], parts: tuple[Part, ...], negative_steps: bool
) -> BasicIndex | None:
    """``parts`` as a :class:`BasicIndex`, or None where they hold arrays or bools."""
    if any(isinstance(p, _ADVANCED_PARTS) for p in parts):
        return None
    key: list[Any] = []
    flips: list[int] = []
    for part, dim in _per_dim(op, shape, parts):
        if part is None or isinstance(part, IntPart):
            key.append(part if part is None else part.value)
            continue
        first, step, size = _slice_of(op, shape[dim], part)
        if step > 0 or size <= 1 or negative_steps:
            key.append(directed_slice(first, size, step))
            continue
        flips.append(sum(1 for k in key if not isinstance(k, int)))  # its result dim
        key.append(positive_slice(first, size, step))  # the same elements, increasing
    return BasicIndex((*key, Ellipsis), tuple(flips))  # ...: a 0-d array, never a scalar


# -- per call: the start indices ------------------------------------------------------------


def counting_dims(
    backend: Backend, plan: IndexPlan, arrays: list[Array], like: Array
) -> tuple[int, ...]:
    """The dims of ``x`` (``like``) whose index array, in this call, counts ``0, 1, ...``
    along one batch axis of that dim's size and is broadcast over the others: ``rows`` in
    NumPy's idiom ``x[rows[:, None], idx]`` for ``take_along_axis``. Each is a batching
    dim of the gather or scatter (:func:`with_batching`), whose start vectors then lack
    its column: an element gather or scatter instead of a stack of the columns.

    Looked for only where the backend reads index values on the host for its compiled
    kernels (:meth:`~indexops._backends.Backend.counts_up`), in plans of several columns;
    one column always stays a start column."""
    if len(plan.columns) < 2:
        return ()
    found = []
    for dim, column in zip(plan.start_map, plan.columns):
        axes = [axis for axis, size in enumerate(column.shape) if size != 1]
        if (
            column.kind == "array"
            and len(axes) == 1
            and column.shape[axes[0]] == like.shape[dim]
            and backend.counts_up(arrays[column.source], plan.result_size)
        ):
            found.append(dim)
    return tuple(found[:-1] if len(found) == len(plan.columns) else found)


@static_cache()
def with_batching(plan: IndexPlan, dims: tuple[int, ...]) -> IndexPlan:
    """``plan`` with the columns of ``dims`` (index arrays that count along one batch
    axis each, :func:`counting_dims`) as batching dims paired with those axes: the same
    result, read or written at the same positions in the same order."""
    pairs = []
    for dim, column in zip(plan.start_map, plan.columns):
        if dim in dims:
            pairs.append((dim, next(a for a, size in enumerate(column.shape) if size != 1)))
    kept = [(dim, column) for dim, column in zip(plan.start_map, plan.columns) if dim not in dims]
    return dataclasses.replace(
        plan,
        collapsed_dims=tuple(d for d in plan.collapsed_dims if d not in dims),
        start_map=tuple(dim for dim, _ in kept),
        columns=tuple(column for _, column in kept),
        batching_pairs=tuple(pairs),
    )


def start_indices(
    backend: Backend, plan: IndexPlan, arrays: list[Array], like: Array, from_end: bool = True
) -> tuple[Array, bool]:
    """The start indices of ``plan`` for this call's index arrays, ``[*batch_shape, k]``,
    and whether the host found every one in range (each index array's values in ``[0,
    n)``: constants and strides are in range by construction), so that no bounds work
    is left. ``from_end=False`` leaves the negative entries of index arrays as they are
    (the gather counts them from the end, ``gather_executor(from_end=True)``) and
    checks nothing."""
    xp = backend.xp
    batch = plan.batch_shape
    made = [_column(backend, column, arrays, like, from_end) for column in plan.columns]
    columns = [column for column, _ in made]
    in_range = all(inside for _, inside in made)
    if len(columns) == 1 and tuple(columns[0].shape) == batch:  # e.g. one index array
        if _kept_on_host(backend, columns[0]):  # the op prunes by NumPy's values
            return columns[0].reshape((*batch, 1)), in_range
        return backend.reshape(columns[0], (*batch, 1)), in_range
    columns = [xp.asarray(c) if isinstance(c, np.ndarray) else c for c in columns]
    if not columns:
        return backend.full((*batch, 0), 0, backend.index_dtype(), like), True
    return xp.stack([xp.broadcast_to(c, batch) for c in columns], axis=-1), in_range


def _index_column(
    backend: Backend, column: Column, values: Array, from_end: bool
) -> tuple[Array, bool]:
    """:func:`_column` of an index array ``values`` of ``backend``'s library."""
    values = to_index(backend, values)
    if not from_end:
        return backend.reshape(values, column.shape), False
    in_range = column.wrap is not None and (  # negative indices count from the end
        backend.values_on_host(values) and backend.all_in_range(values, column.wrap - 1)
    )  # (on the host, one reduction tells whether any is negative or too large)
    if column.wrap is not None and not in_range:
        values = backend.where(values < 0, values + column.wrap, values)
    return backend.reshape(values, column.shape), in_range


def _kept_on_host(backend: Backend, values: Array) -> bool:
    """Whether ``values`` is a NumPy index array of a Dask ``x``: counted from the end and
    checked on the host, where its values are, and kept there (no graph layers for that,
    none to clamp them where they are in range once counted, and the op's graph pruned
    by their values)."""
    return backend.name == "dask" and isinstance(values, np.ndarray)


def _column(
    backend: Backend, column: Column, arrays: list[Array], like: Array, from_end: bool
) -> tuple[Array, bool]:
    xp = backend.xp
    if column.kind == "array":
        values = arrays[column.source]
        if _kept_on_host(backend, values):
            host = backend_for("at", index=values)
            made, in_range = _index_column(host, column, values, from_end)
            if from_end and column.wrap is not None and not in_range:
                in_range = host.all_in_range(made, column.wrap - 1)
            return made, in_range
        if type(values) is not type(like):  # (an array of x's library, concrete under jit)
            values = xp.asarray(values)
        return _index_column(backend, column, values, from_end)
    if column.kind == "iota":
        steps = (
            backend.arange(math.prod(column.shape), backend.index_dtype(), like) * column.step
            + column.start
        )
        return xp.reshape(steps, column.shape), True
    return backend.full((), column.start, backend.index_dtype(), like), True
