"""The layout rules of docs/architecture.md, checked on the source: no import circle among
mcptask's modules, each package imports only the layers below it, and no module is over 400
lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import mcptask

PACKAGE = Path(mcptask.__file__).parent

ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "protocol": {"errors", "mcptask"},
    "transport": {"errors", "protocol"},
    "store": {"errors"},
    "auth": {"errors", "store", "transport"},
    "client": {"errors", "protocol", "transport"},
    "operations": {"errors", "protocol", "client"},
    "output": {"errors", "protocol", "operations", "store"},
    "cli": {
        "errors",
        "protocol",
        "transport",
        "auth",
        "client",
        "operations",
        "output",
        "store",
        "mcptask",
    },
    "reference_server": {"errors", "protocol", "mcptask"},
}
"""What each package may import at module level (besides itself)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path, name: str) -> Iterator[str]:
    """The mcptask modules `path` imports when it is loaded: not those imported inside a
    function, nor those under `if TYPE_CHECKING:`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                yield from (alias.name for alias in inner.names)
            elif isinstance(inner, ast.ImportFrom):
                base = inner.module or ""
                if inner.level:
                    anchor = package.split(".")[: len(package.split(".")) - inner.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                yield base
                yield from (f"{base}.{alias.name}" for alias in inner.names)


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {dep for dep in top_level_imports(path, name) if dep in paths and dep != name}
        for name, path in paths.items()
    }


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_no_module_imports_a_layer_above_it() -> None:
    wrong = sorted(
        f"{module} imports {dep}"
        for module, deps in import_graph().items()
        for dep in deps
        if layer(module) in ALLOWED
        and layer(dep) != layer(module)
        and layer(dep) not in ALLOWED[layer(module)]
    )
    assert wrong == []


def test_there_is_no_import_circle() -> None:
    graph = import_graph()
    done: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            circles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for dep in sorted(graph[module]):
            visit(dep, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert circles == []


def test_no_module_is_over_400_lines() -> None:
    # docs/architecture.md: a module has one job; past 400 lines it is split, or trimmed.
    long = {
        module_name(path): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}
