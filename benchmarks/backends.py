"""The array library a benchmark runs on: conversion from NumPy, copies and syncs."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Ctx:
    """One backend on one device: how to move NumPy data there and wait for results."""

    name: str  # "numpy", "torch", "cupy" or "jax"
    device: str  # "cpu" or "cuda"
    xp: ModuleType

    def asarray(self, a: np.ndarray) -> Any:
        """A copy of the NumPy array ``a`` on this backend (int32 indices on JAX)."""
        if self.name == "numpy":
            return np.array(a)
        if self.name == "torch":
            return self.xp.from_numpy(np.array(a)).to(self.device)
        if self.name == "jax":
            import jax

            if a.dtype == np.int64:
                a = a.astype(np.int32)
            return jax.device_put(a, self.jax_device())
        return self.xp.asarray(a)

    def to_numpy(self, x: Any) -> np.ndarray:
        """The values of ``x`` as a NumPy array on the host."""
        if self.name == "torch":
            return x.detach().cpu().numpy()
        if self.name == "cupy":
            return self.xp.asnumpy(x)
        return np.asarray(x)

    def ones(self, n: int) -> Any:
        """``n`` float32 ones made on this backend's device (no host copy of big buffers)."""
        if self.name == "torch":
            return self.xp.ones(n, dtype=self.xp.float32, device=self.device)
        if self.name == "jax":
            return self.xp.ones(n, dtype=self.xp.float32, device=self.jax_device())
        return self.xp.ones(n, dtype=self.xp.float32)

    def copy(self, x: Any) -> Any:
        """A new array with the values of ``x`` (the native functional baseline's copy)."""
        return x.clone() if self.name == "torch" else x.copy()

    def jax_device(self) -> Any:
        """The JAX device this context runs on (the first GPU for ``cuda``)."""
        import jax

        return jax.devices("cpu" if self.device == "cpu" else "gpu")[0]

    def sync(self, result: Any) -> None:
        """Wait until ``result`` (and all queued work) is computed."""
        if self.name == "jax":
            import jax

            jax.block_until_ready(result)
        elif self.name == "torch" and self.device != "cpu":
            self.xp.cuda.synchronize(self.device)
        elif self.name == "cupy":
            self.xp.cuda.Device().synchronize()

    def device_info(self) -> dict[str, Any]:
        """The GPU's name and CUDA versions (empty on the CPU), for the results' JSON."""
        if self.name == "torch" and self.device != "cpu":
            torch = self.xp
            return {"gpu": torch.cuda.get_device_name(self.device), "cuda": torch.version.cuda}
        if self.name == "jax" and self.device != "cpu":
            return {"gpu": self.jax_device().device_kind}
        if self.name == "cupy":
            runtime = self.xp.cuda.runtime
            name = runtime.getDeviceProperties(self.xp.cuda.Device().id)["name"]
            return {
                "gpu": name.decode() if isinstance(name, bytes) else str(name),
                "cuda_runtime": runtime.runtimeGetVersion(),
                "cuda_driver": runtime.driverGetVersion(),
            }
        return {}


def make_ctx(name: str, device: str = "cpu") -> Ctx:
    """The :class:`Ctx` for ``name`` (numpy, torch, cupy, jax) on ``device``."""
    if name == "numpy":
        return Ctx("numpy", "cpu", np)
    if name == "torch":
        import torch

        if torch.device(device).type == "cuda" and not torch.cuda.is_available():
            raise SystemExit(f"torch {torch.__version__}: CUDA is not available")
        return Ctx("torch", device, torch)
    if name == "cupy":
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise SystemExit("cupy: no GPU")
        return Ctx("cupy", "cuda", cupy)
    if name == "jax":
        return _jax(device)
    raise ValueError(f"unknown backend {name!r}")


def _jax(device: str) -> Ctx:
    """JAX on the CPU (other platforms off) or on the first GPU (``cuda``)."""
    import jax

    if device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    else:
        try:
            jax.devices("gpu")
        except RuntimeError as exc:
            raise SystemExit(f"jax {jax.__version__}: no GPU ({exc})") from None
    import jax.numpy as jnp

    return Ctx("jax", "cpu" if device == "cpu" else "cuda", jnp)


def jax_ctx() -> Ctx | None:
    """The JAX peer (CPU), or None where JAX is not installed."""
    if importlib.util.find_spec("jax") is None:
        return None
    return make_ctx("jax")
