"""indexops: structured indexing ops written once against the Python Array API standard.

The ops follow StableHLO (``gather``, ``dynamic_slice``, ``scatter``,
``dynamic_update_slice``), OpenVINO SliceScatter-15 (``slice_scatter``) and PyPTO
(``scatter_update``), plus ``at``, NumPy-style index expressions lowered to one gather or
scatter, and ``indexops.onnx``, ONNX's indexing operators lowered onto them; they run on
NumPy, CuPy, PyTorch, JAX, array-api-strict and any other library that implements the
standard.
"""

from . import onnx as onnx  # a module of its own: indexops.onnx.gather, ...
from ._backends._kept_memory import kept_memory, set_kept_memory
from ._backends._loader import compile_host_kernels, load_host_kernels
from ._backends._threads import host_threads, set_host_threads
from ._errors import IndexOpsError, IndexOpsTypeError, IndexOpsValueError
from ._ops.at import At, at
from ._ops.dynamic_slice import dynamic_slice, dynamic_update_slice
from ._ops.gather import gather
from ._ops.scatter import scatter
from ._ops.scatter_update import scatter_update
from ._ops.slice_scatter import slice_scatter

__all__ = [
    "At",
    "IndexOpsError",
    "IndexOpsTypeError",
    "IndexOpsValueError",
    "at",
    "compile_host_kernels",
    "dynamic_slice",
    "dynamic_update_slice",
    "gather",
    "host_threads",
    "kept_memory",
    "load_host_kernels",
    "scatter",
    "scatter_update",
    "set_host_threads",
    "set_kept_memory",
    "slice_scatter",
]

__version__ = "0.1.0"
