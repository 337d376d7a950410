"""Writing rows with a combiner: the value semantics of every scatter, on every backend.

Every op writes rows of a 2-D view. Duplicate rows resolve as if the updates were applied
one by one in order: replace keeps the last, named combiners accumulate, a callable is
applied once per occurrence, in order. Entries with ``keep`` False are skipped (dropped
out-of-bounds updates, padding slots).

Two algorithms, chosen by where the row numbers are:

* **on the host** (NumPy, torch on the CPU, eager): values may steer the work; skipped
  entries are cut out, and duplicate handling is skipped when no row repeats;
* **on a device or traced** (everything else): value-independent array operations only,
  no host read: the last writer of each row is found with a max-scatter of positions (or
  a stable sort), and the backend's ``set_rows`` leaves out the entries not kept.

Named combiners are the backend's ``combine_rows``: one native scatter where the library
has one, else pass by pass (``Backend.combine_by_passes``), as callables always are.
"""

from __future__ import annotations

from .._backends import Backend
from .._backends._base import combine_identity
from .._backends._signed_zeros import MIN_MAX, has_signed_zeros, wins
from .._typing import Array
from .._validate.combiners import Combiner, Named

# Up to this many target rows per written row, the last writer of each row is found with
# scratch arrays of one entry per target row (a few passes over memory) instead of sorting.
SCRATCH_ROWS_PER_UPDATE = 64


def table_with_rows(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    *,
    keep: Array | None = None,
    unique: bool = False,
    source: Array | None = None,
    signed_zeros: bool | None = None,
) -> Array:
    """Write ``values[k]`` into row ``rows[k]`` of the 2-D ``table`` with ``combiner``.

    Writes into ``table`` where the backend can and returns it, else returns a new array.
    ``source``, where given, holds the table's values before the call, in any shape of
    the table's size, and is not written (``table`` is a copy of it, or the backend
    writes into new arrays). ``signed_zeros``, where given, is
    :func:`signed_zero_fixes` of the table's dtype and ``combiner``, decided once by the
    caller.
    """
    if 0 in (rows.shape[0], *table.shape):
        return table
    if signed_zeros is None:
        signed_zeros = signed_zero_fixes(backend, table.dtype, combiner)
    return put_rows(backend, table, rows, values, combiner, keep, unique, source, signed_zeros)


def put_rows(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    keep: Array | None,
    unique: bool,
    source: Array | None,
    signed_zeros: bool,
) -> Array:
    """:func:`table_with_rows` where its static questions are answered (a
    :class:`~indexops._execute.writes.RowWriter` answers them once): some row and
    element to write, and ``signed_zeros``. The host's way or the device's, by where the
    values of ``rows`` are."""
    if backend.values_on_host(rows):
        return _put_on_host(
            backend, table, rows, values, combiner, keep, unique, source, signed_zeros
        )
    return _put_on_device(backend, table, rows, values, combiner, keep, unique, signed_zeros)


def signed_zero_fixes(backend: Backend, dtype: object, combiner: Combiner) -> bool:
    """Whether ``combiner`` is min or max, whose zero results need the signs of IEEE-754
    ``minimum``/``maximum`` fixed after the backend's own scatter, in ``dtype`` (a real
    float type with a negative zero): a fact of the dtype and combiner alone."""
    fixes = combiner.named in MIN_MAX and not backend.min_max_ieee
    return fixes and has_signed_zeros(backend, dtype)


def _put_on_host(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    keep: Array | None,
    unique: bool,
    source: Array | None = None,
    signed_zeros: bool = False,
) -> Array:
    xp = backend.xp
    if keep is not None and not bool(xp.all(keep)):
        rows, values = rows[keep], values[keep]
        if rows.shape[0] == 0:  # every update dropped
            return backend.keeps_graph(table, values)
    if combiner.replaces or combiner.named is not None:  # one pass in order, where it runs
        written = backend.apply_rows_in_order(table, rows, values, combiner.named)
        if written is not None:
            return written
    if combiner.replaces:
        last = None if unique else _last_occurrences_on_host(backend, rows, table.shape[0])
        if last is not None:  # only duplicates cost a copy of values
            rows, values = backend.take_rows(rows, last), backend.take_rows(values, last)
        return backend.set_rows(table, rows, values)
    if combiner.named is not None:
        return _combine_rows(
            backend, table, rows, values, combiner.named, unique=unique, source=source,
            fixes=signed_zeros,
        )  # fmt: skip
    groups = [None] if unique else _occurrence_groups_on_host(backend, rows)
    for group in groups:
        group_rows = rows if group is None else backend.take_rows(rows, group)
        group_values = values if group is None else backend.take_rows(values, group)
        new = _combined(backend, combiner, backend.take_rows(table, group_rows), group_values)
        table = backend.set_rows(table, group_rows, new)
    return table


def _last_occurrences_on_host(backend: Backend, rows: Array, n: int) -> Array | None:
    """Positions in ``rows`` (entries in ``[0, n)``) of the last occurrence of each row,
    or ``None`` when no row repeats."""
    xp = backend.xp
    m = rows.shape[0]
    if backend.rows_increase(rows):  # a mask's positions, sorted distinct rows
        return None
    if n <= SCRATCH_ROWS_PER_UPDATE * m:
        if backend.count_distinct_rows(rows, n) == m:
            return None
        if backend.native_combine:
            return xp.nonzero(_latest_writers(backend, rows, None, n))[0]
    is_last = _last_in_runs(backend, rows, None, n)
    return None if bool(xp.all(is_last)) else xp.nonzero(is_last)[0]


def _occurrence_groups_on_host(backend: Backend, rows: Array) -> list[Array]:
    """Positions grouped by occurrence: group ``p`` holds every ``p``-th repeat of a row,
    in order, so applying the groups one after another keeps the sequential order."""
    rank = backend.occurrence_rank(rows, None, 0)
    return [backend.xp.nonzero(rank == p)[0] for p in range(int(backend.xp.max(rank)) + 1)]


def _put_on_device(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    keep: Array | None,
    unique: bool,
    signed_zeros: bool = False,
) -> Array:
    n = table.shape[0]
    if combiner.replaces:
        if not unique:  # of each row's writers, keep the last
            keep = _last_writers(backend, rows, keep, n)
        return backend.set_rows(table, rows, values, keep=keep)
    if combiner.named is not None:
        return _combine_rows(
            backend, table, rows, values, combiner.named, keep, unique, fixes=signed_zeros
        )
    return backend.apply_rows(
        table,
        rows,
        values,
        lambda old, new: _combined(backend, combiner, old, new),
        keep=keep,
        unique=unique,
    )


def _combined(backend: Backend, combiner: Combiner, old: Array, new: Array) -> Array:
    """A callable ``combiner(old, new)``, in the dtype of ``old`` (it may promote)."""
    assert combiner.fn is not None
    return backend.xp.astype(combiner.fn(old, new), old.dtype)


def _combine_rows(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    how: Named,
    keep: Array | None = None,
    unique: bool = False,
    source: Array | None = None,
    fixes: bool = False,
) -> Array:
    """``backend.combine_rows``, with the signed zeros of StableHLO's min and max
    (IEEE-754 ``minimum``/``maximum``) on every backend.

    Native min and max scatters get everything right but the sign of a zero result where
    zeros of both signs meet (NumPy and torch keep one or the other by argument order).
    The fix costs passes over the updates or the result, and reads values on the host only
    where they are there (to skip work): a zero result takes the winning sign
    (:func:`~indexops._backends._signed_zeros.wins`) where the value there before or a
    kept update had it; on the host only the updates that hold a zero can. Those elements
    are set by a second native scatter of the same combiner on the table's bits seen as
    signed integers, where -0.0 is the smallest value (min turns +0.0 into it) and +0.0
    is 0, above -0.0 (max turns -0.0 into it); the other entries write the combiner's
    identity. Where no integer type has the dtype's width (float4, float6), pass by pass.

    ``source``, where given, holds the table's values before the call (in any shape of
    the table's size) and is not written (a write into a copy): with at least
    :data:`RESULT_SCAN_MIN_UPDATES` updates per table row, the zeros are looked for in the
    result instead of the updates, a smaller pass. ``fixes`` is
    :func:`signed_zero_fixes` of the table's dtype and ``how``.
    """
    # a zero result of the wrong sign needs zeros of both signs, one of them an update
    on_host = fixes and backend.values_on_host(values)
    many = values.shape[0] >= RESULT_SCAN_MIN_UPDATES * table.shape[0]
    in_result = on_host and keep is None and many and source is not None
    zero_rows = None  # on the host: the rows with a zero update, the only ones to fix
    if on_host and not in_result:
        zero_rows = backend.zero_rows(values)
        fixes = zero_rows is not None
    if not fixes:
        return backend.combine_rows(table, rows, values, how, keep=keep, unique=unique)
    bits = backend.signed_view(table)  # native combines write into table: bits sees them
    if bits is None:  # no integer type of the dtype's width
        return backend.combine_by_passes(table, rows, values, how, keep=keep, unique=unique)
    if in_result and source is not None:
        return _combine_then_fix_zero_results(backend, bits, table, rows, values, how, source)
    all_rows, all_values, all_keep = rows, values, keep
    if zero_rows is not None:
        rows, values = rows[zero_rows], values[zero_rows]
        keep = None if keep is None else keep[zero_rows]
    before = backend.take_rows(table, rows)
    written = backend.combine_rows(table, all_rows, all_values, how, keep=all_keep, unique=unique)
    return _fix_signed_zeros(backend, bits, written, rows, values, keep, before, how)


# Updates per table row from which, writing into a copy on the host, the zeros of min
# and max are looked for in the result rather than in the updates
RESULT_SCAN_MIN_UPDATES = 2


def _combine_then_fix_zero_results(
    backend: Backend,
    bits: Array,
    table: Array,
    rows: Array,
    values: Array,
    how: Named,
    source: Array,
) -> Array:
    """:func:`_combine_rows` on the host, for a ``table`` that is a copy of ``source``
    (``bits`` its signed view): combine, find the result's rows that hold a zero, and fix
    the signs there from the updates into those rows and the values of ``source``."""
    written = backend.combine_rows(table, rows, values, how)
    zero_rows = backend.zero_rows(written)  # ascending
    if zero_rows is None:
        return written
    xp = backend.xp
    marked = backend.full((table.shape[0],), False, xp.bool, rows)
    marked[zero_rows] = True  # a host array: NumPy's or torch's
    into_zero_rows = xp.nonzero(backend.take_rows(marked, rows))[0]
    if into_zero_rows.shape[0] == 0:
        return written
    rows, values = rows[into_zero_rows], values[into_zero_rows]
    before = backend.take_rows(backend.reshape(source, table.shape), rows)
    return _fix_signed_zeros(backend, bits, written, rows, values, None, before, how)


def _fix_signed_zeros(
    backend: Backend,
    bits: Array,
    written: Array,
    rows: Array,
    values: Array,
    keep: Array | None,
    before: Array,
    how: Named,
) -> Array:
    """``written`` with the winning zero where it holds a zero and the value before
    (``before``, the rows of the table at ``rows``) or a kept update in ``values`` was
    that zero: written into ``bits``, the signed integer view of the table the backend
    wrote into.

    Where autograd records, the backend wrote a new array, which min's and max's
    backward keep: the signs go into a copy of it instead, through which the gradient
    passes unchanged (the backward finds the same ties whatever the sign of a zero).
    """
    if backend.records_gradient(written):
        written = backend.copy(written)
        bits = backend.signed_view(written)
    xp = backend.xp
    updated = wins(xp, how, values)
    if keep is not None:
        updated = updated & keep[:, None]
    fix = (backend.take_rows(written, rows) == 0) & (wins(xp, how, before) | updated)
    if backend.values_on_host(fix):  # only the entries with something to fix
        some = xp.any(fix, axis=1)
        rows, fix = rows[some], fix[some]
    identity = combine_identity(backend, how, bits.dtype)
    zero_bits = backend.iinfo(bits.dtype).min if how is Named.MIN else 0
    fix_bits = xp.where(
        fix,
        backend.full((), zero_bits, bits.dtype, bits),
        backend.full((), identity, bits.dtype, bits),
    )
    backend.combine_rows(bits, rows, fix_bits, how)
    return written


def _last_writers(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array:
    """Per entry: whether it is the last kept entry that writes its row."""
    if backend.native_combine and n <= SCRATCH_ROWS_PER_UPDATE * rows.shape[0]:
        return _latest_writers(backend, rows, keep, n)
    return _last_in_runs(backend, rows, keep, n)


def _latest_writers(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array:
    """:func:`_last_writers` by a native max-scatter of positions into one scratch entry
    per row."""
    xp = backend.xp
    m = rows.shape[0]
    position_type = xp.int32 if m < 2**31 else xp.int64
    positions = backend.arange(m, position_type, rows)
    written = positions if keep is None else backend.where(keep, positions, -1)
    latest = backend.full((n, 1), -1, position_type, rows)
    latest = backend.combine_rows(latest, rows, written[:, None], Named.MAX)
    return backend.take_rows(latest[:, 0], rows) == positions


def _last_in_runs(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array:
    """:func:`_last_writers` by a stable sort: the last of each run of equal rows."""
    xp = backend.xp
    order, ordered = backend.sort_rows(rows, keep, n)
    last = xp.concat([ordered[1:] != ordered[:-1], backend.full((1,), True, xp.bool, rows)])
    if keep is not None:
        last = last & (ordered < n)
    return backend.take_rows(last, xp.argsort(order))  # back to the entries' own order
