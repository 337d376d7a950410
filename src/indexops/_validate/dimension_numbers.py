"""``dimension_numbers=``: ``jax.lax``'s attribute objects, read by their field names.

Any object with the fields of ``jax.lax.GatherDimensionNumbers`` or
``ScatterDimensionNumbers`` will do (JAX is not imported); the batching fields, which older
JAX versions lack, default to ``()``. JAX takes the last dim of the indices as the index
vector, so ``index_vector_dim`` defaults to it, unless the object has that field too
(StableHLO's) or the call names it.
"""

from __future__ import annotations

from typing import Any

from .._errors import type_error, value_error

# (our attribute, JAX's field): the last two are the batching dims
GATHER_FIELDS = (
    ("offset_dims", "offset_dims"),
    ("collapsed_slice_dims", "collapsed_slice_dims"),
    ("start_index_map", "start_index_map"),
    ("operand_batching_dims", "operand_batching_dims"),
    ("start_indices_batching_dims", "start_indices_batching_dims"),
)
SCATTER_FIELDS = (
    ("update_window_dims", "update_window_dims"),
    ("inserted_window_dims", "inserted_window_dims"),
    ("scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims"),
    ("input_batching_dims", "operand_batching_dims"),
    ("scatter_indices_batching_dims", "scatter_indices_batching_dims"),
)
_OPTIONAL = 2  # the batching fields


def window_attributes(
    op: str,
    fields: tuple[tuple[str, str], ...],
    given: tuple[Any, ...],
    numbers: Any,
    index_vector_dim: Any,
    indices: Any,
) -> tuple[tuple[Any, ...], Any]:
    """The attributes of a call (in the order of ``fields``) and its ``index_vector_dim``:
    read from ``dimension_numbers=numbers`` where the call passed it, else those ``given``,
    of which the ones before the batching dims are needed."""
    if numbers is None:
        # by identity (an array's == is elementwise), unrolled: a generator costs more
        first, second, third = given[:-_OPTIONAL]
        if index_vector_dim is None or first is None or second is None or third is None:
            _check_given(op, fields, given, index_vector_dim)
        return given, index_vector_dim
    index_rank = getattr(indices, "ndim", None)  # not an array: validation names it later
    last = None if index_rank is None else index_rank - 1
    return _from_dimension_numbers(op, numbers, fields, given, index_vector_dim, last)


def _from_dimension_numbers(
    op: str,
    numbers: Any,
    fields: tuple[tuple[str, str], ...],
    given: tuple[Any, ...],
    index_vector_dim: Any,
    last: int | None,
) -> tuple[tuple[Any, ...], Any]:
    """The attributes and ``index_vector_dim`` held by ``numbers``; ``given`` are the
    attributes the call passed too, each of which must be left out (``None`` or ``()``)."""
    clash = [name for (name, _), value in zip(fields, given) if _passed(value)]
    if clash:
        raise value_error(
            op,
            "dimension_numbers",
            numbers,
            f"either dimension_numbers or the attributes, not both (also given: {clash})",
        )
    attributes = []
    for k, (_, field) in enumerate(fields):
        value = getattr(numbers, field, None)
        if value is None and k < len(fields) - _OPTIONAL:
            jax_fields = tuple(field for _, field in fields)
            raise type_error(
                op,
                "dimension_numbers",
                numbers,
                f"an object with jax.lax's fields {jax_fields}; it has no {field}",
            )
        attributes.append(() if value is None else value)
    if index_vector_dim is None:
        index_vector_dim = getattr(numbers, "index_vector_dim", last)
    return tuple(attributes), index_vector_dim


def _check_given(
    op: str, fields: tuple[tuple[str, str], ...], given: tuple[Any, ...], index_vector_dim: Any
) -> None:
    """Without ``dimension_numbers``, the attributes before the batching ones and
    ``index_vector_dim`` are needed."""
    for (name, _), value in zip(fields[: len(fields) - _OPTIONAL], given):
        if value is None:
            raise type_error(
                op, name, None, "a sequence of ints (or pass jax.lax's dimension_numbers=)"
            )
    if index_vector_dim is None:
        raise type_error(
            op,
            "index_vector_dim",
            None,
            "an int (with dimension_numbers= it defaults to the last dim, as in jax.lax)",
        )


def _passed(value: Any) -> bool:
    return value is not None and not (type(value) in (tuple, list) and len(value) == 0)
