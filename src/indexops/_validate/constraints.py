"""StableHLO attribute checks shared by gather and scatter.

Each raises the one error style of indexops, with the constraint's label (e.g. C7).
"""

from __future__ import annotations

from .._errors import value_error


def check_window_rank(op: str, name: str, value: tuple[int, ...], rank: int, rule: str) -> None:
    """Each entry of the attribute ``value`` must be a dim in ``[0, rank)``."""
    bad = [d for d in value if not 0 <= d < rank]
    if bad:
        raise value_error(op, name, value, f"every entry must be in [0, {rank})", rule)


def check_sorted(op: str, name: str, value: tuple[int, ...], rule: str) -> None:
    if list(value) != sorted(value):
        raise value_error(op, name, value, "must be sorted ascending", rule)


def check_unique(op: str, name: str, value: tuple[int, ...], rule: str) -> None:
    if len(set(value)) != len(value):
        raise value_error(op, name, value, "must not repeat a dim", rule)


def check_rank_sum(op: str, names: str, groups: tuple, rank: int, operand: str, rule: str) -> None:
    """The window, dropped and batching dims together must name every operand dim."""
    if rank != sum(len(group) for group in groups):
        raise value_error(
            op, names, groups, f"their sizes must add up to rank({operand}) = {rank}", rule
        )


def check_index_vector_dim(op: str, index_vector_dim: int, index_rank: int, rule: str) -> None:
    if not 0 <= index_vector_dim <= index_rank:
        raise value_error(
            op, "index_vector_dim", index_vector_dim, f"must be in [0, {index_rank}]", rule
        )


def check_start_map_size(
    op: str,
    name: str,
    start_map: tuple[int, ...],
    index_shape: tuple[int, ...],
    index_vector_dim: int,
    index_name: str,
    rule: str,
) -> None:
    """One start map entry per component of the index vector."""
    in_range = index_vector_dim < len(index_shape)
    vector_size = index_shape[index_vector_dim] if in_range else 1
    if len(start_map) != vector_size:
        raise value_error(
            op,
            name,
            start_map,
            f"its size must equal the index vector size {vector_size} "
            f"(dim {index_vector_dim} of {index_name} with shape {index_shape})",
            rule,
        )


def check_batching_dims(
    op: str,
    names: tuple[str, str, str, str],
    operand_dims: tuple[int, ...],
    index_dims: tuple[int, ...],
    operand_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    index_vector_dim: int,
    rules: tuple[str, str, str, str, str],
) -> None:
    """The index-side batching constraints, shared by gather (C13-C17) and scatter (C14-C18).

    ``names`` are (operand, index array, operand batching attr, index batching attr).
    """
    operand, index_array, operand_attr, index_attr = names
    check_unique(op, index_attr, index_dims, rules[0])
    check_window_rank(op, index_attr, index_dims, len(index_shape), rules[1])
    if index_vector_dim in index_dims:
        raise value_error(
            op,
            index_attr,
            index_dims,
            f"must not contain index_vector_dim={index_vector_dim}",
            rules[2],
        )
    if len(operand_dims) != len(index_dims):
        raise value_error(
            op,
            index_attr,
            index_dims,
            f"must have the size of {operand_attr}={operand_dims}",
            rules[3],
        )
    for operand_dim, index_dim in zip(operand_dims, index_dims):
        if operand_shape[operand_dim] != index_shape[index_dim]:
            raise value_error(
                op,
                index_attr,
                index_dims,
                f"dim {index_dim} of {index_array} has size {index_shape[index_dim]} but "
                f"{operand} batching dim {operand_dim} has size {operand_shape[operand_dim]}",
                rules[4],
            )


def check_at_most_one(
    op: str, name: str, dims: tuple[int, ...], slice_sizes: tuple[int, ...], rule: str
) -> None:
    """Each dim in ``dims`` has a slice size of 0 or 1 (gather C9, C12)."""
    for d in dims:
        if slice_sizes[d] > 1:
            raise value_error(
                op,
                "slice_sizes",
                slice_sizes,
                f"slice_sizes[{d}] must be 0 or 1 because dim {d} is in {name}",
                rule,
            )
