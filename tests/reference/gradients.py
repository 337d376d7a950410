"""The gradients of a row scatter with each named combiner, element by element.

What torch (the backward of ``index_add``, ``index_copy`` and ``scatter_reduce`` with
``include_self=True``) and JAX (the JVPs of its scatters) define, written as loops. The
values that meet at an element of the table are the table's own and the kept updates into
it, in order:

- add: each of them gets the result's gradient;
- mul: each gets it times the product of the others (the true derivative, at zeros too);
- min, max: the values equal to the result share it evenly (zeros of either sign are
  equal, so they tie), which is what central differences give where two of them tie;
- replace: the last of them gets it (the table's value where no update is kept).
"""

from __future__ import annotations

import math

import numpy as np


def row_scatter_gradients(table, rows, updates, combiner, weights):
    """The gradients of ``sum(weights * result)`` with respect to ``table`` and
    ``updates`` (float64 NumPy arrays), where ``result`` is the 2-D ``table`` with row
    ``updates[k]`` combined into row ``rows[k]`` (``None``: dropped) by ``combiner``
    (``"add"``, ``"mul"``, ``"min"``, ``"max"`` or ``None`` for replace)."""
    table, updates = np.asarray(table, np.float64), np.asarray(updates, np.float64)
    table_grad, updates_grad = np.zeros_like(table), np.zeros_like(updates)
    for row, column in np.ndindex(table.shape):
        # (gradient array, position) of each value that meets here, in order
        meeting = [(table_grad, (row, column))]
        meeting += [(updates_grad, (k, column)) for k, r in enumerate(rows) if r == row]
        values = [table[row, column]] + [updates[k, column] for k, r in enumerate(rows) if r == row]
        weight = weights[row, column]
        if combiner == "add":
            shares = [weight] * len(values)
        elif combiner == "mul":
            shares = [weight * math.prod(values[:i] + values[i + 1 :]) for i in range(len(values))]
        elif combiner in ("min", "max"):
            result = min(values) if combiner == "min" else max(values)
            ties = sum(value == result for value in values)
            shares = [weight / ties if value == result else 0.0 for value in values]
        else:
            shares = [0.0] * (len(values) - 1) + [weight]
        for (grad, position), share in zip(meeting, shares):
            grad[position] += share
    return table_grad, updates_grad
