"""Skip doctests that import a package this environment lacks.

The docs show torch, jax and other optional backends next to NumPy; a nox session installs
only one backend, so a doctest item (a Markdown file or a docstring) whose examples import a
missing package is skipped with the package named, instead of failing on the import.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import sys

import pytest


def imported_packages(test: doctest.DocTest) -> list[str]:
    """Top-level names of the packages that the examples of ``test`` import."""
    names: list[str] = []
    for example in test.examples:
        if example.options.get(doctest.SKIP):
            continue
        try:
            tree = ast.parse(example.source)
        except SyntaxError:  # the doctest itself reports it
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module.split(".")[0])
    return names


# Backend modules import their library; without it, their docstrings cannot be collected.
collect_ignore = [
    f"src/indexops/_backends/_{module}.py"
    for name, module in (
        ("torch", "torch"),
        ("jax", "jax"),
        ("dask", "dask"),
        ("dask", "dask_graph"),
    )
    if importlib.util.find_spec(name) is None
]
# The Sphinx configuration, its extensions (which import Sphinx) and the build's outputs are
# not documentation to test; the pages and the figure scripts are.
collect_ignore += ["docs/conf.py", "docs/_ext", "docs/_build", "docs/_generated"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test = getattr(item, "dtest", None)  # set on pytest's doctest items only
        if not isinstance(test, doctest.DocTest):
            continue
        names = dict.fromkeys(imported_packages(test))
        missing = [name for name in names if importlib.util.find_spec(name) is None]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            reason = f"needs {', '.join(missing)}, which {verb} not installed"
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_sessionfinish() -> None:
    """Drop torch.compile's caches while the interpreter still runs: at exit, Dynamo's
    weak-reference callbacks print KeyErrors for globals already gone."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "_dynamo"):
        torch._dynamo.reset()
