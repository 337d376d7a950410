"""The sharded JAX example of docs/beyond_one_machine.md runs and prints what the page shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent.parent / "docs" / "examples" / "jax_sharded_scatter.py"


@pytest.mark.backends("jax")
def test_scatter_and_gather_on_four_sharded_cpu_devices():
    import jax  # noqa: F401

    source = str(Path(__file__).parent.parent / "src")
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("XLA_FLAGS", None)
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "4 devices: ['cpu', 'cpu', 'cpu', 'cpu']"
    assert lines[1] == "table sharding: P('rows',), result sharding: P('rows',)"
    assert lines[2] == "rows per device: [256, 256, 256, 256]"
    assert "values match NumPy: True" in lines[3]
