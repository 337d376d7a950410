"""The layers of src/indexops (docs/internals.md): no import circle, and each layer imports
only the layers below it."""

from __future__ import annotations

import ast
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
