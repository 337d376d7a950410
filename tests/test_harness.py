"""The test harness itself (conftest.py, tests/conftest.py, tests/backends.py): a narrowed
run collects only its backends' tests and fails when a test imports another library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def pytest_run(
    tmp_path: Path, backends: str, *args: str, cwd: Path = ROOT
) -> subprocess.CompletedProcess:
    """pytest in a child process on ``backends``, ``tmp_path`` and this checkout's sources
    and tests first on its path."""
    paths = [str(tmp_path), str(ROOT / "tests"), str(ROOT / "src"), str(ROOT / "emulator")]
    env = {
        **os.environ,
        "INDEXOPS_BACKENDS": backends,
        "PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_narrowed_collection_leaves_out_the_tests_of_other_libraries(tmp_path):
    """Under torch alone, no test of another library is collected, so none imports it."""
    pytest.importorskip("torch")
    files = ["tests/test_torch_modes.py", "tests/test_element_paths.py"]
    done = pytest_run(tmp_path, "torch", "--collect-only", *files)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_under_torch_compile" in done.stdout
    assert "test_element_paths_are_taken[torch]" in done.stdout
    for other in ("test_jax_error", "test_dask_error", "test_element_paths_are_taken[numpy]"):
        assert other not in done.stdout


def test_an_import_of_a_library_not_selected_fails_the_run_under_xdist(tmp_path):
    """The workers' imports reach the controller, which fails the run (a library stands in
    for cupy: installed, and no GPU)."""
    pytest.importorskip("xdist")
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text("")
    test = tmp_path / "test_stray.py"
    test.write_text("def test_stray():\n    import cupy  # noqa: F401\n")
    # tests/conftest.py as a plugin (no conftest applies outside tests/), run where the
    # root's conftest.py is not the first on the path
    done = pytest_run(tmp_path, "numpy", "-n", "1", "-p", "conftest", cwd=tmp_path)
    assert "1 passed" in done.stdout
    assert "ERROR: imported cupy without running its backends" in done.stdout
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
