"""Every benchmark script still imports and answers ``--help``: a refactor that moves a
module breaks them silently otherwise (nothing else runs them)."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))
PROJECT = ("suites", "fixtures", "plugins")  # the packages a script may import from the repo
TIMEOUT_S = 120


def test_there_are_benchmark_scripts():
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_script_imports_and_answers_help(script):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
    assert "--help" in done.stdout


def _bound_names(tree: ast.Module) -> set[str] | None:
    """Names a module binds at top level (``if``/``try``/``with`` blocks included); None
    when it cannot be told statically (``import *`` or a module ``__getattr__``)."""
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            body += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            body += [n for h in getattr(node, "handlers", []) for n in h.body]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _unresolved(module: str, name: str | None) -> str | None:
    """Why ``from module import name`` (or ``import module``) would fail, read from the
    source without running it (so a script's optional dependencies need not be installed)."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError as exc:  # a parent is missing, or is a module, not a package
        return f"no module {module} ({exc})"
    if spec is None or spec.origin is None:
        return f"no module {module}"
    if name is None:
        return None
    if spec.submodule_search_locations is not None:  # a package: ``name`` may be a submodule
        if importlib.util.find_spec(f"{module}.{name}") is not None:
            return None
    bound = _bound_names(ast.parse(Path(spec.origin).read_text(encoding="utf-8")))
    if bound is None or name in bound:
        return None
    return f"{module} has no {name}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_repo_import_of_a_benchmark_script_resolves(script):
    """Imports inside functions too, which ``--help`` never reaches."""
    path = ROOT / "benchmarks" / script
    wanted: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in PROJECT:
                wanted += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            wanted += [
                (node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] in PROJECT
            ]
    broken = [
        f"line {line}: {why}" for line, module, name in wanted if (why := _unresolved(module, name))
    ]
    assert broken == []
