"""Dask: lazy arrays that cannot be written; the generic algorithms build the graph."""

from __future__ import annotations

from .._typing import Array
from ._base import Backend


class DaskBackend(Backend):
    name = "dask"

    def writable(self, x: Array) -> bool:
        return False
