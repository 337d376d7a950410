"""PyPTO ``scatter_update``, transcribed loop by loop from its formulas.

Source: PyPTO docs/api/operation/pypto-scatter_update.md (r0.2.0); negative slots are
padding and skipped (the NPU kernel ``TIndexOutcastMode2``), duplicates resolve to the
last write in row-major ``(i, j)`` order, a slot past the end raises ``IndexError``.
"""

from __future__ import annotations

import numpy as np


def scatter_update(input, index, src):
    """A new NumPy array: ``input`` with the rows of ``src`` written at ``index``."""
    out = np.array(input, copy=True)
    index = np.asarray(index)
    src = np.asarray(src)
    b, s = index.shape
    for i in range(b):
        for j in range(s):
            k = int(index[i, j])
            if k < 0:
                continue
            if out.ndim == 2:
                if k >= out.shape[0]:
                    raise IndexError((i, j, k))
                out[k] = src[i * s + j]
            else:
                block_size = out.shape[1]
                if k // block_size >= out.shape[0]:
                    raise IndexError((i, j, k))
                out[k // block_size, k % block_size, 0] = src[i, j, 0]
    return out
