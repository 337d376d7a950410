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
"""

from __future__ import annotations

from types import ModuleType

from .._backends import Backend
from .._backends._base import combine_identity
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
) -> Array:
    """Write ``values[k]`` into row ``rows[k]`` of the 2-D ``table`` with ``combiner``.

    Writes into ``table`` where the backend can and returns it, else returns a new array.
    """
    if 0 in (rows.shape[0], *table.shape):
        return table
    if backend.values_on_host(rows):
        return _put_on_host(backend, table, rows, values, combiner, keep, unique)
    return _put_on_device(backend, table, rows, values, combiner, keep, unique)


def _put_on_host(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    keep: Array | None,
    unique: bool,
) -> Array:
    xp = backend.xp
    if keep is not None and not bool(xp.all(keep)):
        rows, values = rows[keep], values[keep]
        if rows.shape[0] == 0:
            return table
    if combiner.replaces:
        last = None if unique else _last_occurrences_on_host(backend, rows, table.shape[0])
        if last is not None:  # only duplicates cost a copy of values
            rows, values = backend.take_rows(rows, last), backend.take_rows(values, last)
        return backend.set_rows(table, rows, values)
    if combiner.named is not None:
        written = _combine_rows(backend, table, rows, values, combiner.named)
        if written is not None:
            return written
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
    if n <= SCRATCH_ROWS_PER_UPDATE * m:
        if backend.count_distinct_rows(rows, n) == m:
            return None
        is_last = _latest_writers(backend, rows, None, n)
        if is_last is not None:
            return xp.nonzero(is_last)[0]
    is_last = _last_in_runs(backend, rows, None, n)
    return None if bool(xp.all(is_last)) else xp.nonzero(is_last)[0]


def _occurrence_groups_on_host(backend: Backend, rows: Array) -> list[Array]:
    """Positions grouped by occurrence: group ``p`` holds every ``p``-th repeat of a row,
    in order, so applying the groups one after another keeps the sequential order."""
    rank = _occurrence_rank(backend, rows, None, 0)
    return [backend.xp.nonzero(rank == p)[0] for p in range(int(backend.xp.max(rank)) + 1)]


def _put_on_device(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    combiner: Combiner,
    keep: Array | None,
    unique: bool,
) -> Array:
    n = table.shape[0]
    if combiner.replaces:
        if not unique:  # of each row's writers, keep the last
            keep = _last_writers(backend, rows, keep, n)
        return backend.set_rows(table, rows, values, keep=keep)
    if combiner.named is not None:
        combined = _combine_rows(backend, table, rows, values, combiner.named, keep, unique)
        if combined is not None:
            return combined
    if unique:
        rank = backend.full(rows.shape, 0, backend.index_dtype(), rows)
        if keep is not None:
            rank = backend.where(keep, rank, -1)
    else:
        rank = _occurrence_rank(backend, rows, keep, n)

    def one_pass(table: Array, p: int) -> Array:
        new = _combined(backend, combiner, backend.take_rows(table, rows), values)
        return backend.set_rows(table, rows, new, keep=rank == p)

    return backend.repeat(backend.xp.max(rank) + 1, one_pass, table)


def _combined(backend: Backend, combiner: Combiner, old: Array, new: Array) -> Array:
    """``combiner(old, new)`` in the dtype of ``old`` (a callable may promote); for min
    and max the zero of IEEE-754 ``minimum``/``maximum`` (see :func:`_combine_rows`)."""
    assert combiner.fn is not None
    xp = backend.xp
    combined = xp.astype(combiner.fn(old, new), old.dtype)
    how = combiner.named
    if how not in _MIN_MAX or not _has_signed_zeros(backend, old.dtype):
        return combined
    zero = combined == 0  # xp.minimum/maximum return one of the two: a zero of either sign
    winner = _wins(xp, how, old) | _wins(xp, how, new)
    return xp.where(zero & winner, _winning_zero(xp, how, combined), combined)


_MIN_MAX = (Named.MIN, Named.MAX)


def _has_signed_zeros(backend: Backend, dtype: object) -> bool:
    return backend.has_kind(dtype, "real floating") and backend.holds(dtype, -0.0)


def _wins(xp: ModuleType, how: Named, x: Array) -> Array:
    """Where ``x`` has the sign that IEEE-754 ``minimum`` (-) or ``maximum`` (+) gives a
    zero result when any of its arguments has it: min(-0.0, +0.0) is -0.0, max is +0.0."""
    negative = xp.signbit(x)
    return negative if how is Named.MIN else xp.logical_not(negative)


def _winning_zero(xp: ModuleType, how: Named, zeros: Array) -> Array:
    """``zeros`` (of either sign) with the sign of :func:`_wins`."""
    positive = xp.abs(zeros)
    return xp.negative(positive) if how is Named.MIN else positive


def _combine_rows(
    backend: Backend,
    table: Array,
    rows: Array,
    values: Array,
    how: Named,
    keep: Array | None = None,
    unique: bool = False,
) -> Array | None:
    """``backend.combine_rows``, with the signed zeros of StableHLO's min and max
    (IEEE-754 ``minimum``/``maximum``) on every backend.

    Native min and max scatters get everything right but the sign of a zero result where
    zeros of both signs meet (NumPy and torch keep one or the other by argument order).
    The fix costs passes over the updates, not the table, and reads values on the host
    only where they are there (to skip work): a zero result takes the winning sign
    (:func:`_wins`) where the value there before or a kept update had it; those elements
    are set by a second native scatter of the same combiner on the table's bits seen as
    signed integers, where -0.0 is the smallest value (min turns +0.0 into it) and +0.0
    is 0, above -0.0 (max turns -0.0 into it); the other entries write the combiner's
    identity. Where no integer type has the dtype's
    width (float4, float6), ``None``: the caller then combines pass by pass.
    """
    # a zero result of the wrong sign needs zeros of both signs, one of them an update
    fixes = how in _MIN_MAX and not backend.min_max_ieee
    fixes = fixes and _has_signed_zeros(backend, table.dtype)
    zero_rows = None  # on the host: the rows with a zero update, the only ones to fix
    if fixes and backend.values_on_host(values):
        zero_rows = backend.zero_rows(values)
        fixes = zero_rows is not None
    if not fixes:
        return backend.combine_rows(table, rows, values, how, keep=keep, unique=unique)
    bits = backend.signed_view(table)  # native combines write into table: bits sees them
    if bits is None:  # no integer type of the dtype's width: the caller goes pass by pass
        return None
    xp = backend.xp
    all_rows, all_values, all_keep = rows, values, keep
    if zero_rows is not None:
        rows, values = rows[zero_rows], values[zero_rows]
        keep = None if keep is None else keep[zero_rows]
    before = backend.take_rows(table, rows)
    written = backend.combine_rows(table, all_rows, all_values, how, keep=all_keep, unique=unique)
    if written is None:
        return None
    updated = _wins(xp, how, values)
    if keep is not None:
        updated = updated & keep[:, None]
    fix = (backend.take_rows(written, rows) == 0) & (_wins(xp, how, before) | updated)
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
    if n <= SCRATCH_ROWS_PER_UPDATE * rows.shape[0]:
        latest = _latest_writers(backend, rows, keep, n)
        if latest is not None:
            return latest
    return _last_in_runs(backend, rows, keep, n)


def _latest_writers(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array | None:
    """:func:`_last_writers` by a max-scatter of positions into one scratch entry per row;
    ``None`` where the backend has no native max-scatter."""
    xp = backend.xp
    m = rows.shape[0]
    position_type = xp.int32 if m < 2**31 else xp.int64
    positions = backend.arange(m, position_type, rows)
    written = positions if keep is None else backend.where(keep, positions, -1)
    latest = backend.full((n, 1), -1, position_type, rows)
    latest = backend.combine_rows(latest, rows, written[:, None], Named.MAX)
    if latest is None:
        return None
    return backend.take_rows(latest[:, 0], rows) == positions


def _sorted_keys(backend: Backend, rows: Array, keep: Array | None, n: int) -> tuple[Array, Array]:
    """A stable sort of the rows (skipped entries as ``n``, after every real row): the
    order and the sorted keys."""
    xp = backend.xp
    keys = rows if keep is None else backend.where(keep, rows, n)
    order = xp.argsort(keys, stable=True)
    return order, backend.take_rows(keys, order)


def _last_in_runs(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array:
    """:func:`_last_writers` by a stable sort: the last of each run of equal rows."""
    xp = backend.xp
    order, ordered = _sorted_keys(backend, rows, keep, n)
    last = xp.concat([ordered[1:] != ordered[:-1], backend.full((1,), True, xp.bool, rows)])
    if keep is not None:
        last = last & (ordered < n)
    return backend.take_rows(last, xp.argsort(order))  # back to the entries' own order


def _occurrence_rank(backend: Backend, rows: Array, keep: Array | None, n: int) -> Array:
    """Per entry: how many kept entries before it write the same row (-1 if skipped)."""
    xp = backend.xp
    order, ordered = _sorted_keys(backend, rows, keep, n)
    firsts = xp.searchsorted(ordered, ordered, side="left")
    rank = backend.arange(rows.shape[0], firsts.dtype, rows) - firsts
    rank = backend.take_rows(rank, xp.argsort(order))
    return rank if keep is None else backend.where(keep, rank, -1)
