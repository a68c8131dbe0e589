"""The code's layout holds what DESIGN.md says: imports go plugins -> fixtures -> suites,
no package imports itself in a circle, only pytest's public API is used, and no module
(data tables aside) grows past about 300 lines."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("plugins", "fixtures", "suites")
LAYER = {"plugins": 0, "fixtures": 1, "suites": 2}  # may import only its own or lower layers
MAX_LINES = 320  # "about 300"
DATA_TABLES = {"suites/strucbench/hscore_reference.py"}  # a reference transcription, kept whole


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def _imports(path: Path, *, runtime_only: bool) -> set[str]:
    """Modules ``path`` imports (``TYPE_CHECKING`` blocks left out when ``runtime_only``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    names = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_imports_go_from_plugins_to_fixtures_to_suites():
    upward = []
    for name, path in _modules().items():
        layer = LAYER[name.split(".")[0]]
        for target in _imports(path, runtime_only=False):
            top = target.split(".")[0]
            if top in LAYER and LAYER[top] < layer:
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_only_pytests_public_api_is_imported():
    private = [
        f"{name} imports {target}"
        for name, path in _modules().items()
        for target in _imports(path, runtime_only=False)
        if target.split(".")[0] == "_pytest"
    ]
    assert private == []


def _module_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_module_imports_itself_in_a_circle():
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        graph[name] |= {t for t in _imports(path, runtime_only=True) if t in modules and t != name}
    assert _module_cycles(graph) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_longer_than_about_300_lines(package):
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / package).rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and str(path.relative_to(ROOT)) not in DATA_TABLES
    }
    assert long == {}
