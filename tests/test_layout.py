"""The code's layout as docs/architecture.md states it: imports go plugins -> fixtures -> suites,
no package imports itself in a circle, only pytest's public API is used, every module is named
in the architecture's map, and the code cites no issue number and no document the repository
lacks."""

from __future__ import annotations

import ast
import graphlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("plugins", "fixtures", "suites")
LAYER = {"plugins": 0, "fixtures": 1, "suites": 2}  # may import only its own or lower layers


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[f"extractbench.{name}"] = path
    return found


def _module_name(path: Path) -> str:
    """The dotted name of a module file of the checkout: ``plugins/run/x.py`` ->
    ``extractbench.plugins.run.x`` (a package's ``__init__.py`` -> the package)."""
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    return f"extractbench.{name}"


def _import_nodes(path: Path, tree: ast.AST) -> list[tuple[ast.AST, int, str, list[ast.alias]]]:
    """``(node, line, module, aliases)`` of every import in ``tree``, at any depth (a function's
    own imports too), a relative one (``from ..x import y``) resolved against ``path``'s
    package, so neither form slips past a rule."""
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node, node.lineno, alias.name, [alias]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node, node.lineno, module, list(node.names)))
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
    for node, _, module, aliases in _import_nodes(path, tree):
        if id(node) in skipped:
            continue
        names.add(module)
        if isinstance(node, ast.ImportFrom):
            names |= {f"{module}.{alias.name}" for alias in aliases}
    return names


def _layer(module: str) -> str:
    """``extractbench.plugins.run.x`` -> ``plugins``; a module outside the package -> its top name."""
    parts = module.split(".")
    return parts[1] if parts[0] == "extractbench" and len(parts) > 1 else parts[0]


def test_the_package_links_to_the_three_folders():
    """``extractbench/plugins`` (and ``fixtures``, ``suites``) is a link to the top-level
    folder, so static tools resolve ``extractbench.*`` to the files of the checkout; a checkout
    without links holds the link's target as text, and the package's ``__path__`` still finds
    the folder."""
    for package in PACKAGES:
        link = ROOT / "extractbench" / package
        if link.is_symlink():
            assert link.resolve() == (ROOT / package).resolve(), link
        else:
            assert link.read_text(encoding="utf-8").strip() == f"../{package}", link
    assert (ROOT / "extractbench" / "py.typed").is_file()


def test_every_module_imports_the_package_by_its_one_name():
    """``plugins``, ``fixtures`` and ``suites`` exist as top-level names only in a checkout; the
    wheel installs them as ``extractbench.*``, so an import of the bare name fails there."""
    bare = [
        f"{name} imports {target}"
        for name, path in _modules().items()
        for target in _imports(path, runtime_only=False)
        if target.split(".")[0] in LAYER
    ]
    assert bare == []


def test_imports_go_from_plugins_to_fixtures_to_suites():
    upward = []
    for name, path in _modules().items():
        layer = LAYER[_layer(name)]
        for target in _imports(path, runtime_only=False):
            top = _layer(target)
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


def _ancestors(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``: the packages Python initialises before the module."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _import_graph(*, runtime_only: bool) -> dict[str, set[str]]:
    """Module -> the package's modules importing it initialises: its imports (``TYPE_CHECKING``
    blocks left out when ``runtime_only``) and the packages (``__init__``) each brings in.
    A module's own parent packages are initialised before it and are left out."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        own = set(_ancestors(name))
        for target in _imports(path, runtime_only=runtime_only):
            brought = {target, *_ancestors(target)} - own - {name}
            graph[name] |= {t for t in brought if t in modules}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle of ``graph``: its strongly connected components of more than one
    module (Tarjan 1972), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_imports_itself_in_a_circle():
    """Each module's runtime imports, with the packages (``__init__``) a target brings in,
    form no cycle (graphlib's CycleError names one): a cycle is a module that fails to
    import alone in a fresh interpreter, whatever order pytest happens to load them in."""
    try:
        graphlib.TopologicalSorter(_import_graph(runtime_only=True)).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_no_module_imports_itself_in_a_circle_even_for_type_checking():
    """The same graph with the ``TYPE_CHECKING`` imports in has no cycle either: a cycle
    there is two modules that each need the other to be read (a type checker, a reader),
    so neither is the lower one (``python tests/test_layout.py`` prints every cycle)."""
    cycles = _cycles(_import_graph(runtime_only=False))
    assert cycles == []


RECORD = "extractbench.plugins.record"
ABOVE_THE_RECORD = ("verdict", "outputs", "run", "cli")  # the stages that make or read a record


def test_the_record_imports_no_stage_that_makes_or_reads_it():
    """The run record's package (its models and the values it holds) sits below the verdict,
    the outputs, the run and the command line: it imports none of them, ``TYPE_CHECKING``
    included, so each of them can import it."""
    above = tuple(f"extractbench.plugins.{stage}" for stage in ABOVE_THE_RECORD)
    found = [
        f"{name} imports {target}"
        for name, path in _modules().items()
        if name == RECORD or name.startswith(RECORD + ".")
        for target in _imports(path, runtime_only=False)
        if target in above or target.startswith(tuple(a + "." for a in above))
    ]
    assert _modules().keys() >= {RECORD, f"{RECORD}.models"} and found == []


MAP_ENTRY = re.compile(r"^(?P<indent>(?:  )*)(?P<folder>[\w.]+)/(?: |$)")


def _module_map() -> dict[str, str]:
    """docs/architecture.md's map of folders: ``{"plugins/run": "its text", ...}``. A line
    starting (at an even indent under 16) with ``NAME/`` opens a folder, nested by its
    indent; the indented lines that follow continue its text."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    block = text.split("## Folders", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    stack: list[str] = []
    current = None
    for line in block.splitlines()[1:]:
        if (m := MAP_ENTRY.match(line)) and len(m["indent"]) < 16:
            stack = [*stack[: len(m["indent"]) // 2], m["folder"]]
            current = "/".join(stack)
            entries[current] = line[m.end() :]
        elif current is not None:
            entries[current] += " " + line.strip()
    return entries


def test_every_module_is_named_in_the_architecture_map():
    """A module is one job named for it (a review rule: no size cap splits a job in two),
    and docs/architecture.md's map says where each one is: every module of the three
    packages is named, by its file name, in its folder's entry of the map."""
    entries = _module_map()
    unnamed = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.name != "__init__.py"
        and not re.search(
            rf"(?<![\w/-]){re.escape(path.stem)}(?![\w-])",
            entries.get(path.parent.relative_to(ROOT).as_posix(), ""),
        )
    ]
    assert unnamed == []


def test_the_architecture_map_names_no_module_that_is_gone():
    """A name the map gives outside parentheses that looks like a module's (snake_case) is a
    module or a subfolder of that folder: a module renamed or merged away leaves no entry."""
    stale = []
    for folder, text in _module_map().items():
        while (plain := re.sub(r"\([^()]*\)", "", text)) != text:
            text = plain
        present = {p.stem for p in (ROOT / folder).glob("*.py")} | {
            p.name for p in (ROOT / folder).iterdir() if p.is_dir()
        }
        stale += [f"{folder}: {word}" for word in re.findall(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b", text)
                  if word not in present]  # fmt: skip
    assert stale == []


# a module the product's code or docs point a reader to, by path or by dotted name
CITED_PATH = re.compile(r"(?<![\w./-])((?:plugins|fixtures|suites)/[\w/]+\.py)\b")
CITED_MODULE = re.compile(r"\bextractbench\.(?:plugins|fixtures|suites)(?:\.[a-z_][a-z0-9_]*)+")
# a docstring's Sphinx cross-reference, written without the package name
CITED_ROLE = re.compile(r":(?:func|mod|class|data|attr|meth|exc):`~?((?:plugins|fixtures|suites)(?:\.\w+)+)`")


def _cited_in_product() -> list[tuple[str, str]]:
    """``(file, reference)`` of every module path and dotted module name cited in the product's
    code (its docstrings' cross-references too), the benchmarks, the README and the docs."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += [p for d in ("plugins", "fixtures", "suites", "benchmarks") for p in sorted((ROOT / d).rglob("*.py"))]
    def reference(m: re.Match[str]) -> str:
        if m.re is CITED_MODULE:
            return m[0]
        return m[1] if m.re is CITED_PATH else f"extractbench.{m[1]}"

    return [(f.relative_to(ROOT).as_posix(), reference(m))
            for f in files for rx in (CITED_PATH, CITED_MODULE, CITED_ROLE)
            for m in rx.finditer(f.read_text(encoding="utf-8"))]  # fmt: skip


def test_every_module_the_code_and_docs_cite_exists():
    """A path (``plugins/run/config.py``) or dotted name (``extractbench.plugins.run.config``)
    that the code or the docs cite names a module or package of the checkout, or an attribute
    of one; placeholders in capitals (``suites/NAME/suite.py``) are not citations."""
    modules = _modules()
    missing = []
    for where, ref in _cited_in_product():
        if ref.endswith(".py"):
            if not re.search(r"/[A-Z]+/", ref) and not (ROOT / ref).is_file():
                missing.append(f"{where}: {ref}")
            continue
        parts = ref.split(".")
        known = next((i for i in range(len(parts), 1, -1) if ".".join(parts[:i]) in modules), None)
        if known is None:
            missing.append(f"{where}: {ref}")
        elif known < len(parts):
            source = modules[".".join(parts[:known])].read_text(encoding="utf-8")
            if not re.search(rf"\b{re.escape(parts[known])}\b", source):
                missing.append(f"{where}: {ref}")
    assert missing == []


PRODUCT = ("plugins", "fixtures", "suites", "benchmarks")
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
# a document the code points a reader to: docs/... or a top-level NAME.md
CITATION = re.compile(r"(?<![\w./-])(docs/[\w./-]+\.md|[A-Z][A-Z_]*\.md)\b")


def test_code_cites_no_issue_number_and_no_file_the_repository_lacks():
    """Comments say why, not when: no issue numbers in the code or its tests; and every
    document the product's code points to (docs/X.md, a top-level NAME.md) is in the
    repository."""
    numbered, missing = [], []
    for path in sorted(ROOT.glob("*.py")) + [
        p for folder in (*PRODUCT, "tests") for p in sorted((ROOT / folder).rglob("*.py"))
    ]:
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT).as_posix()
        numbered += [f"{where}: {m.group()}" for m in ISSUE_NUMBER.finditer(text)]
        if where.split("/")[0] in PRODUCT:
            missing += [
                f"{where}: {m.group(1)}"
                for m in CITATION.finditer(text)
                if not (ROOT / m.group(1)).is_file()
            ]
    assert numbered == [] and missing == []


OPTION_BY_KEY = re.compile(r"\b(?:opts|options)\[[\"']|asdict\((?:opts|options)\b")


def test_suite_options_are_read_by_attribute_never_by_string_key():
    """A suite's options reach its loader and its run as the typed object parsed at
    configure: no code turns them back into a dict (``asdict``) or reads one by key."""
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{n}: {line.strip()}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OPTION_BY_KEY.search(line)
    ]
    assert found == []


MODELS = "fixtures/models"
BACKEND_FOLDERS = tuple(  # each backend's own folder: its kind, options, backend and helpers
    sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / MODELS).glob("*/kind.py"))
)
REGISTRY = f"{MODELS}/registry.py"


def _backend_home(rel: str) -> str | None:
    """The backend folder ``rel`` (a path from the root) lies in, or None."""
    return next((f for f in BACKEND_FOLDERS if rel.startswith(f + "/")), None)


def _folder_of(module: str) -> str | None:
    """The backend folder an imported module lies in, or None."""
    parts = module.split(".")
    if parts[:3] != ["extractbench", "fixtures", "models"] or len(parts) < 4:
        return None
    folder = f"{MODELS}/{parts[3]}"
    return folder if folder in BACKEND_FOLDERS else None


def _backend_imports(path: Path, tree: ast.AST) -> list[tuple[int, str, str]]:
    """``(line, backend folder, name imported)`` of every import from a backend folder,
    relative, function-level and ``TYPE_CHECKING`` imports included."""
    found = []
    for node, line, module, aliases in _import_nodes(path, tree):
        for alias in aliases:
            target = f"{module}.{alias.name}" if isinstance(node, ast.ImportFrom) else module
            folder = _folder_of(target)
            if folder is not None:
                found.append((line, folder, alias.asname or alias.name))
    return found


def _backend_paths_in_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, backend folder)`` of every string naming a module of a backend folder by its
    full dotted path: code a child interpreter imports (``python -c "from ..."``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for module in re.findall(r"extractbench\.fixtures\.models\.\w+", node.value):
                folder = _folder_of(module)
                if folder is not None:
                    found.append((node.lineno, folder))
    return found


def test_the_built_in_backends_each_have_their_folder():
    assert {f.rsplit("/", 1)[1] for f in BACKEND_FOLDERS} >= {"llama_cpp", "hf", "openai", "fake"}


def test_no_module_imports_a_backend_folder_from_outside_it():
    """A backend is its folder (its kind, options, backend and helpers) and its entry point:
    the harness reaches it through the registry's ``BackendKind`` hooks only, so a backend
    another package registers is one as good as the built-in ones."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            named = [(line, folder) for line, folder, _ in _backend_imports(path, tree)]
            for line, folder in named + _backend_paths_in_strings(tree):
                if folder != _backend_home(rel):
                    found.append(f"{rel}:{line}: imports {folder}")
    assert found == []


def test_no_module_checks_isinstance_against_another_backends_classes():
    """``isinstance(spec.settled, LlamaSettled)`` outside llama_cpp/ is the shared code
    knowing a backend: each backend reads its own options and settled state."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            foreign = {name: folder for _, folder, name in _backend_imports(path, tree)
                       if folder != _backend_home(rel)}  # fmt: skip
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance"):
                    continue
                classes = node.args[1] if len(node.args) > 1 else None
                names = {ast.unparse(c).split(".")[0] for c in getattr(classes, "elts", [classes])}
                found += [
                    f"{rel}:{node.lineno}: {n} of {foreign[n]}" for n in names if n in foreign
                ]
    assert found == []


def _compared_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants compared with (``==``, ``!=``, ``in``) or used as a dict key."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                parts = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                found += [(node.lineno, p.value) for p in parts
                          if isinstance(p, ast.Constant) and isinstance(p.value, str)]  # fmt: skip
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, k.value) for k in node.keys
                      if isinstance(k, ast.Constant) and isinstance(k.value, str)]  # fmt: skip
    return found


def test_no_code_but_the_registry_and_the_backends_compares_a_backend_name():
    """What a backend is and does is on its ``BackendKind`` (flags and hooks), so a backend
    another package registers works everywhere: no ``backend == "openai"`` (nor a
    backend's name as a dict key) outside the registry, the backend table and the
    backends' own modules."""
    from extractbench.fixtures.models.registry import backend_names

    names = set(backend_names())
    assert {"llama-cpp", "hf", "openai", "fake"} <= names
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {value!r}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() != REGISTRY
        and _backend_home(path.relative_to(ROOT).as_posix()) is None
        for line, value in _compared_strings(ast.parse(path.read_text(encoding="utf-8")))
        if value in names
    ]
    assert found == []


if __name__ == "__main__":
    for runtime_only in (True, False):
        cycles = _cycles(_import_graph(runtime_only=runtime_only))
        print(f"{'runtime' if runtime_only else 'with TYPE_CHECKING'}: {len(cycles)} cycle(s)")
        for cycle in cycles:
            print("  " + " <-> ".join(cycle))
