"""onnxruntime as a peer of the ops users port from ONNX models (GatherElements, ScatterND,
Slice): one-node models run on the CPU, on NumPy arrays.

onnxruntime and onnx are benchmark-only (the ``bench`` extra); without them every peer is
``None`` and the workloads run without it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

Fn = Callable[[Any], Any]
OPSET = 18  # ScatterND's min and max reductions
# onnxruntime 1.32's ScatterND with repeated rows gave wrong sums and maxima on 2 threads
# (the runner's check caught it): the peer runs on one
THREADS = 1


def available() -> bool:
    """Whether onnxruntime and onnx are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def one_node(
    op: str,
    data: np.ndarray,
    inputs: dict[str, np.ndarray],
    threads: int,
    **attributes: Any,
) -> Fn | None:
    """``op(data, *inputs)`` as an onnxruntime session on ``threads`` threads, as a function
    of the data (a NumPy array); the other inputs are fed on every call (never constants
    the runtime could fold). ``None`` without onnxruntime."""
    if not available():
        return None
    import onnx
    import onnxruntime
    from onnx import helper

    def info(name: str, array: np.ndarray) -> Any:
        element = helper.np_dtype_to_tensor_dtype(array.dtype)
        return helper.make_tensor_value_info(name, element, list(array.shape))

    node = helper.make_node(op, ["data", *inputs], ["out"], **attributes)
    out = helper.make_tensor_value_info(
        "out", helper.np_dtype_to_tensor_dtype(data.dtype), [None] * data.ndim
    )
    graph = helper.make_graph(
        [node],
        op,
        [info("data", data), *(info(name, array) for name, array in inputs.items())],
        [out],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda x: session.run(None, {"data": x, **inputs})[0]
