"""The README and the docs say what the code does: the new user's path on the first screen,
the exit-code table as ``plugins/verdict/exit_codes.py`` states it, links that resolve,
every page in the table of contents, and CI recipes whose options exist."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from extractbench.plugins.verdict.exit_codes import EXIT_CODES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))  # docs/generate.py
README = (ROOT / "README.md").read_text(encoding="utf-8")
RECIPES = [
    ROOT / ".github/workflows/release-gate.yml",
    ROOT / "ci/gitlab-ci.yml",
    ROOT / "ci/Jenkinsfile",
]
GPU_RECIPES = [ROOT / "ci/github-gpu.yml", ROOT / "ci/gitlab-gpu.yml"]
TEAM_RECIPES = [ROOT / "ci/github-team-gate.yml", ROOT / "ci/gitlab-team-gate.yml"]
# pages linked or listed before the branch that writes them is merged (none at present)
OTHER_BRANCHES: set[str] = set()


def test_the_first_screen_holds_a_new_users_path():
    first_screen = "\n".join(README.splitlines()[:30])
    for command in ('pip install -e ".[dev]"', "pytest suites/ -n 8", "pytest tests/", "git clone"):
        assert command in first_screen, command
    assert len(README.splitlines()) <= 200  # read in five minutes


def test_the_readme_speaks_a_newcomer_s_words():
    """No word only the authors know (the article's team by its nickname, the tables it had
    and this project lacks, label jargon, commit hashes standing for dates), and the install
    time it states is the one measured in docs/performance.md."""
    for word in ("IDP team", "GOST", "gost", "silver"):
        assert word not in README, word
    hashes = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", README)
    assert not hashes, hashes
    said = README[README.index("**Install time**") :][:500]
    times = re.findall(r"\d+ min \d+ s", said)
    performance = (ROOT / "docs/performance.md").read_text(encoding="utf-8")
    assert len(times) == 2 and all(t in performance for t in times), times


def test_the_readme_exit_code_table_is_the_codes():
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \| (.+) \|$", README, flags=re.M)
    assert {int(code) for code, _, _ in rows} == set(EXIT_CODES)
    for code, word, when in rows:
        assert f"{word.strip()}: {when.strip()}" == EXIT_CODES[int(code)]


def _outside_generated_parts(text: str) -> str:
    return re.sub(r"<!-- generated: .*?<!-- end generated -->", "", text, flags=re.S)


def test_the_docs_hold_no_exit_code_table_of_their_own():
    """The docs show the exit codes through the table generated from ``EXIT_CODES``; a
    hand-written copy drifts from the code."""
    pages = [
        ROOT / "README.md",
        *(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts),
    ]
    copies = [
        str(p.relative_to(ROOT))
        for p in pages
        if re.search(
            r"^\| exit \| verdict \|",
            _outside_generated_parts(p.read_text(encoding="utf-8")),
            flags=re.M,
        )
    ]
    assert not copies, copies


def test_the_generated_parts_of_the_pages_are_current():
    """The tables and recipes the code states are written into the Markdown files (so a page
    read as a file shows them); ``python docs/generate.py`` rewrites a stale one."""
    import generate

    assert generate.stale() == []
    pages = {page: (ROOT / page).read_text(encoding="utf-8") for page in generate.PAGES}
    named = {m for text in pages.values() for m in re.findall(r"<!-- generated: (\S+) -->", text)}
    assert {"exit-codes", "suite-options", "run-record-schema"} <= named
    assert {f"file:{p.relative_to(ROOT)}" for p in [*RECIPES, *GPU_RECIPES, *TEAM_RECIPES]} <= named
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = path.read_text(encoding="utf-8")
        assert "{include}" not in text and "{literalinclude}" not in text, path


def test_a_stale_generated_part_is_found_and_rewritten(tmp_path):
    import generate

    page = tmp_path / "page.md"
    old = "Intro\n\n<!-- generated: exit-codes -->\n| exit | verdict | when |\n<!-- end generated -->\n"
    page.write_text(old, encoding="utf-8")
    assert generate.stale((str(page),)) == [f"{page}: exit-codes"]
    new = generate.render(old)
    assert new.startswith(
        "Intro\n\n<!-- generated: exit-codes -->\n| exit | verdict | when |\n|---:|"
    )
    assert "| 7 | CRASHED |" in new and new.endswith("<!-- end generated -->\n")
    page.write_text(new, encoding="utf-8")
    assert generate.stale((str(page),)) == []


def _links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [m for m in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text) if "://" not in m]


@pytest.mark.parametrize(
    "page",
    [
        "README.md",
        *sorted(
            str(p.relative_to(ROOT))
            for p in (ROOT / "docs").rglob("*.md")
            if "_" not in p.parts[-1][:1]
        ),
    ],
)
def test_links_resolve(page):
    path = ROOT / page
    for link in _links(path):
        target = (path.parent / link).resolve()
        stem = (
            target.relative_to((ROOT / "docs").resolve()).with_suffix("").as_posix()
            if target.is_relative_to((ROOT / "docs").resolve())
            else ""
        )
        if not target.exists() and stem in OTHER_BRANCHES:
            continue  # merged with the branch that writes it
        assert target.exists(), f"{page}: link {link} leads nowhere"


def test_every_page_is_in_a_table_of_contents():
    index = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^([a-z][\w/-]+)$", index, flags=re.M))
    pages = {
        p.relative_to(ROOT / "docs").with_suffix("").as_posix()
        for p in (ROOT / "docs").rglob("*.md")
    }
    pages = {p for p in pages if not p.startswith("_") and p != "index"}
    assert pages <= named, f"pages in no table of contents: {sorted(pages - named)}"
    assert {
        "suites/fda",
        "suites/tableqa",
        "suites/strucbench",
        "suites/minea",
        "backends",
        "chat",
    } <= named
    missing = sorted(named - pages - OTHER_BRANCHES)
    assert not missing, f"table of contents names missing pages: {missing}"


def _commands(path: Path) -> list[list[str]]:
    """The pytest and extractbench command lines of a recipe: the ``run`` and ``script``
    entries of a YAML file, the ``sh '...'`` steps of a Jenkinsfile; ``&&`` chains split."""
    import yaml

    text = path.read_text(encoding="utf-8")
    scripts: list[str] = []
    if path.suffix == ".yml":

        def walk(node: object) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("run", "script"):
                        scripts.extend([value] if isinstance(value, str) else value)
                    else:
                        walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(yaml.safe_load(text))
    else:
        scripts = re.findall(r"sh '([^']*)'", text)
    found = []
    for script in scripts:
        for part in re.sub(r"\$\{\{.*?\}\}", "X", script, flags=re.S).split("&&"):
            line = " ".join(part.split())
            if line.startswith(("pytest ", "extractbench ")):
                found.append(shlex.split(line))
    return found


def _options(*command: str) -> set[str]:
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", out))


def test_the_ci_recipes_use_options_that_exist():
    pytest_options = _options(sys.executable, "-m", "pytest", "--help")
    merge_options = _options(
        sys.executable, "-m", "extractbench.plugins.cli.main", "merge", "--help"
    )
    seen = {"pytest": 0, "extractbench": 0}
    for recipe in RECIPES:
        for argv in _commands(recipe):
            seen[argv[0]] += 1
            known = pytest_options if argv[0] == "pytest" else merge_options
            used = {a.split("=")[0] for a in argv if a.startswith("--")}
            assert used <= known, f"{recipe.name}: {' '.join(argv)}: unknown {sorted(used - known)}"
            if argv[0] == "pytest":
                assert "--shard" in used and "--report-json" in used, recipe.name
            else:
                assert argv[1] == "merge" and "--junitxml" in used, recipe.name
    assert seen["pytest"] >= 4 and seen["extractbench"] >= 3, seen


def test_the_gpu_recipes_use_options_that_exist():
    """One GPU runner, no shards: the gate runs every layer offloaded and writes its record;
    the set-up script's extractbench commands exist and doctor comes before the gate."""
    pytest_options = _options(sys.executable, "-m", "pytest", "--help")
    for recipe in GPU_RECIPES:
        commands = _commands(recipe)
        gates = [argv for argv in commands if argv[0] == "pytest"]
        assert len(gates) == 1, recipe.name
        used = {a.split("=")[0] for a in gates[0] if a.startswith("--")}
        assert used <= pytest_options, f"{recipe.name}: unknown {sorted(used - pytest_options)}"
        assert {"--n-gpu-layers", "--report-json"} <= used, recipe.name
        text = recipe.read_text(encoding="utf-8")
        assert text.index("ci/gpu-setup.sh") < text.index("pytest suites/"), recipe.name
    setup = (ROOT / "ci/gpu-setup.sh").read_text(encoding="utf-8")
    for words in re.findall(r"extractbench ([a-z]+(?: [a-z]+)?)", setup):
        command = words.split()
        if command[0] == "server":
            _options(
                sys.executable, "-m", "extractbench.plugins.cli.main", *command, "--help"
            )  # exits 0
        else:
            _options(sys.executable, "-m", "extractbench.plugins.cli.main", command[0], "--help")
    assert "extractbench doctor" in setup


def _package_and_doc_texts() -> dict[str, str]:
    """path -> text of every file of the package (plugins/, fixtures/, suites/) and its
    docs (README.md, docs/)."""
    suffixes = {".py", ".md", ".j2", ".json", ".toml", ".txt", ".html", ".css", ".js"}
    paths = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    for package in ("plugins", "fixtures", "suites"):
        paths += [p for p in (ROOT / package).rglob("*") if p.is_file() and p.suffix in suffixes]
    return {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in paths
        if "_build" not in p.parts and "__pycache__" not in p.parts
    }


def test_the_package_and_its_docs_name_no_workplace_files():
    """A user has no ``../shared`` folder beside the checkout and no ``SOURCES.md``:
    messages and pages point to ``docs/data.md`` and to the data folder a run used."""
    found = [
        f"{path}: {needle}"
        for path, text in _package_and_doc_texts().items()
        for needle in ("../shared", "shared/data", "shared/papers", "SOURCES.md")
        if needle in text
    ]
    assert not found, found


def test_every_pointer_to_docs_data_md_names_one_of_its_sections():
    from extractbench.suites.registry import Registry

    page = (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^\w\- ]", "", title).strip().lower().replace(" ", "-")
        for title in re.findall(r"^#{1,3} (.+)$", page, flags=re.M)
    }
    suites = Registry.installed().suites.values()
    assert all(s.data_source.startswith("docs/data.md#") for s in suites)
    named = {s.data_source.partition("#")[2] for s in suites}
    for text in _package_and_doc_texts().values():
        named |= set(re.findall(r"docs/data\.md#([\w-]+)", text))
    assert named and named <= anchors, sorted(named - anchors)


def test_the_docs_show_path_options_in_the_form_a_pytest_command_takes():
    """Since ``--data-dir DIR`` (a space) moves pytest's rootdir away from a project with
    gates (the test above), no page shows it in a pytest command or the options tables:
    every such place writes ``--data-dir=DIR``."""
    root = Path(__file__).resolve().parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    spaced = re.compile(r"--data-dir (?!or\b|that\b)[^\s`|\]]+")
    found = [
        f"{page.name}:{n}: {line.strip()[:120]}"
        for page in pages
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if spaced.search(line)
        and ("pytest" in line or line.startswith("| `--data-dir"))
        and "such as `--data-dir DIR`" not in line  # the run record's rule, naming the form
    ]
    assert not found, "\n".join(found)
