"""The test harness itself (conftest.py, tests/conftest.py, tests/backends.py): a narrowed
run collects only its backends' tests and fails when a test imports another library (under
xdist too), an xdist worker ends quickly, jax_jit compiles again where a call differs, JAX
compiles as the root conftest says, and the API pages' examples run in a fresh namespace."""

from __future__ import annotations

import doctest
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
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


PROBE = """
import gc
import os
from pathlib import Path

def pytest_unconfigure(config):  # in a worker: after it told the controller it is done
    if "PYTEST_XDIST_WORKER" in os.environ:  # the objects left for its final collections
        (Path(__file__).parent / "objects.txt").write_text(str(len(gc.get_objects())))
"""

TESTS = """
import sys

def test_stray():
    import cupy  # noqa: F401

def test_heap():  # as a library's caches: kept by a module
    sys.modules["numpy"].kept_by_the_test = [[] for _ in range(300_000)]
"""


@pytest.fixture(scope="module")
def xdist_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess]:
    """A run on one xdist worker of a test that imports a library that is not selected (a
    package stands in for cupy: installed, and no GPU) and of one that leaves 300000
    objects behind: its folder and output."""
    pytest.importorskip("xdist")
    folder = tmp_path_factory.mktemp("xdist")
    (folder / "cupy").mkdir()
    (folder / "cupy" / "__init__.py").write_text("")
    (folder / "probe.py").write_text(PROBE)
    (folder / "test_worker.py").write_text(TESTS)
    # tests/conftest.py as a plugin (no conftest applies outside tests/), run where the
    # root's conftest.py is not the first on the path
    done = pytest_run(folder, "numpy", "-n", "1", "-p", "conftest", "-p", "probe", cwd=folder)
    assert "2 passed" in done.stdout, done.stdout + done.stderr
    return folder, done


def test_an_import_of_a_library_not_selected_fails_the_run_under_xdist(xdist_run):
    """The workers' imports reach the controller, which fails the run."""
    _, done = xdist_run
    assert "ERROR: imported cupy without running its backends" in done.stdout
    assert done.returncode == pytest.ExitCode.TESTS_FAILED


def test_a_worker_leaves_its_final_collections_little_to_walk(xdist_run):
    """Those collections once walked the whole heap, and a worker still at them 5 s after
    the controller asked it to stop got a SIGINT (a KeyboardInterrupt traceback)."""
    folder, done = xdist_run
    assert int((folder / "objects.txt").read_text()) < 30_000
    assert "KeyboardInterrupt" not in done.stdout + done.stderr


@pytest.mark.backends("jax_jit")
def test_jitted_calls_trace_again_for_another_test_path_or_static_value():
    """A compiled call is reused only for equal static values (``-0.0`` is not ``0.0``)
    and the same test path; within ``generic_only()`` the op runs eagerly."""
    import jax
    from backends import jitted

    from indexops._testing import active_variant, device_paths, generic_only

    calls = []

    def op(x, y):
        calls.append((active_variant(), isinstance(x, jax.core.Tracer)))
        return x * y

    call = jitted(op)
    ones = jax.numpy.ones(1)
    assert not np.signbit(call(ones, 0.0)[0])
    assert np.signbit(call(ones, -0.0)[0])
    with device_paths():
        call(ones, 0.0)
    with generic_only():
        call(ones, 0.0)
    assert calls == [(None, True), (None, True), ("device", True), ("generic", False)]


@pytest.mark.backends("jax")
def test_jax_reads_the_compile_setting_of_the_root_conftest(request):
    """The root conftest sets JAX_DISABLE_MOST_OPTIMIZATIONS and XLA's flag of its older CPU
    emitters (unless the variable is given) before jax is imported: JAX's flag holds what
    the variable says, and XLA's flags hold the emitters' where the conftest set them."""
    import jax

    wanted = os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] not in ("0", "false", "False")
    assert jax.config.read("jax_disable_most_optimizations") is wanted
    (root_conftest,) = (
        plugin
        for plugin in request.config.pluginmanager.get_plugins()
        if getattr(plugin, "__file__", None) == str(ROOT / "conftest.py")
    )
    if root_conftest.COMPILES_FOR_SPEED:
        assert root_conftest.FAST_COMPILE_XLA_FLAG in os.environ["XLA_FLAGS"].split()


def test_the_api_pages_examples_run_in_a_fresh_namespace():
    """A docstring of indexops or indexops_npu (an API page's example) runs as pasted into
    a fresh interpreter, without its module's names; a doc page keeps the globals pytest
    gives it."""
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    module_names = {"np": np, "__name__": "indexops.gather"}
    parser = doctest.DocTestParser()
    docstring, page = (
        parser.get_doctest(">>> np.zeros(1)", dict(module_names), name, None, 0)
        for name in ("indexops._ops.gather.gather", "gather.md")
    )
    items = [SimpleNamespace(dtest=docstring), SimpleNamespace(dtest=page)]
    root_conftest.pytest_collection_modifyitems(SimpleNamespace(), items)  # type: ignore[arg-type]
    assert docstring.globs == {"__name__": "__main__"}
    assert page.globs == module_names


# 448 + 48 in float8_e4m3fn: 496, the tie past the type's largest finite value (448)
FLOAT8_PAST_ITS_LARGEST = """
import jax, jax.numpy as jnp, ml_dtypes, numpy as np, indexops
f8 = ml_dtypes.float8_e4m3fn
add = jax.jit(lambda x, u: indexops.scatter(
    x, jnp.array([[0]]), u, update_computation="add", update_window_dims=(),
    inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1))
total = repr(np.asarray(add(jnp.array([448.0], f8), jnp.array([48.0], f8))).astype(float)[0])
"""


def float8_sum_past_its_largest(xla_flags: str) -> str:
    """``repr`` of 448 + 48 as indexops' jitted float8_e4m3fn scatter gives it in a child
    process whose XLA runs with ``xla_flags``."""
    env = {**os.environ, "XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    code = FLOAT8_PAST_ITS_LARGEST + "print(total)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.backends("jax")
def test_float8_past_its_largest_is_nan_but_under_the_older_xla_emitters():
    """XLA's default CPU emitters (what users run) give NaN for a float8_e4m3fn scatter-add
    that reaches 496; the older emitters the tests compile with give -0.0, for which
    tests/helpers.py rejects a drawn case (where this fails, XLA changed and the helper
    can go). One of the two runs here, the other in a child process."""
    import helpers

    legacy = helpers.LEGACY_XLA_EMITTERS in os.environ.get("XLA_FLAGS", "").split()
    names: dict = {}
    exec(FLOAT8_PAST_ITS_LARGEST, names)
    other = float8_sum_past_its_largest("" if legacy else helpers.LEGACY_XLA_EMITTERS)
    default, older = (other, names["total"]) if legacy else (names["total"], other)
    assert (default, older) == ("np.float64(nan)", "np.float64(-0.0)")
