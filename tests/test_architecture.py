"""The layers of src/indexops (docs/internals.md): no import circle, and each layer imports
only the layers below it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "indexops"

# what each part of the package may import from the rest of it (besides itself)
FOUNDATION = {"indexops._errors", "indexops._typing"}
ALLOWED = {
    "indexops._backends": FOUNDATION | {"indexops._plan.cache", "indexops._validate.combiners"},
    "indexops._validate": FOUNDATION | {"indexops._backends", "indexops._plan.cache"},
    "indexops._plan": FOUNDATION | {"indexops._backends", "indexops._validate"},
    "indexops._execute": FOUNDATION
    | {"indexops._backends", "indexops._validate", "indexops._plan"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The indexops modules ``path`` imports (function-level imports too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package[: len(package) - node.level + 1])
            if node.module:
                found.add(f"{base}.{node.module}")
            else:  # from . import a_module
                found.update(f"{base}.{alias.name}" for alias in node.names)
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    return {name for name in found if name in modules}


GRAPH = {module_name(path): imports(path) for path in PACKAGE.rglob("*.py")}


def test_no_import_circle():
    state: dict[str, str] = {}

    def visit(module: str, trail: tuple[str, ...]) -> None:
        state[module] = "open"
        for target in GRAPH[module]:
            if state.get(target) == "open":
                raise AssertionError(f"import circle: {' -> '.join((*trail, module, target))}")
            if target not in state:
                visit(target, (*trail, module))
        state[module] = "done"

    for module in GRAPH:
        if module not in state:
            visit(module, ())


@pytest.mark.parametrize("layer", list(ALLOWED))
def test_each_layer_imports_only_below_it(layer):
    for module, targets in GRAPH.items():
        if module != layer and not module.startswith(f"{layer}."):
            continue
        for target in targets:
            inside = target == layer or target.startswith(f"{layer}.")
            below = any(target == a or target.startswith(f"{a}.") for a in ALLOWED[layer])
            assert inside or below, f"{module} imports {target}, above its layer"


def test_numpy_calls_import_no_other_array_library():
    # a library's modules are imported once its arrays are seen, never with indexops
    code = (
        "import sys, numpy as np, indexops\n"
        "rows = dict(update_window_dims=(1,), inserted_window_dims=(0,),\n"
        "            scatter_dims_to_operand_dims=(0,), index_vector_dim=1)\n"
        "indexops.scatter(np.zeros((3, 2)), np.array([[1]]), np.ones((1, 2)), **rows)\n"
        "indexops.at(np.zeros(4))[[1, 1]].add(1.0)\n"
        "print(sorted({'dask', 'torch', 'jax', 'cupy'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
