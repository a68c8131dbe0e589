"""The CI recipes: each validates against its CI system's published JSON Schema (SchemaStore's
``github-workflow.json``, GitLab's ``gitlab-ci.json``: ``tests/third_party_schemas.py``), and
the team recipes gate what a team releases: every suite its project configures, the candidate
model from an input with its checksum (or an endpoint with its key from secrets), the last
release's record as the baseline, a pinned extractbench, the compiled llama-cpp-python wheel
and the data cached, JUnit in the CI's test view, the reports kept, the time stated.
``ci/try-team-gate.py`` runs the GitHub recipe's steps on this machine (docs/ci.md)."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.third_party_schemas import schemas_or_skip

ROOT = Path(__file__).resolve().parent.parent
GITHUB = [*sorted((ROOT / ".github/workflows").glob("*.yml")), *sorted((ROOT / "ci").glob("github-*.yml"))]  # fmt: skip
GITLAB = sorted((ROOT / "ci").glob("gitlab-*.yml"))
TEAM = {"github": ROOT / "ci/github-team-gate.yml", "gitlab": ROOT / "ci/gitlab-team-gate.yml"}


def _try_script():
    """``ci/try-team-gate.py`` as a module (its YAML 1.2 loader: GitHub's and GitLab's reading)."""
    spec = importlib.util.spec_from_file_location("try_team_gate", ROOT / "ci/try-team-gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Yaml12Loader = _try_script().Yaml12Loader


def _load(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Yaml12Loader)  # noqa: S506


@pytest.fixture(scope="module")
def ci_schemas() -> dict[str, jsonschema.Draft7Validator]:
    found = schemas_or_skip(
        {"github": ("check-jsonschema", "github-workflow"), "gitlab": ("check-jsonschema", "gitlab-ci")},
        "the CI systems' published schemas",
    )  # fmt: skip
    return {key: jsonschema.Draft7Validator(value) for key, value in found.items()}


@pytest.mark.parametrize("path", [*GITHUB, *GITLAB], ids=lambda p: str(p.relative_to(ROOT)))
def test_each_recipe_validates_against_its_ci_system_s_schema(path, ci_schemas):
    validator = ci_schemas["gitlab" if path.name.startswith("gitlab") else "github"]
    errors = sorted(validator.iter_errors(_load(path)), key=str)
    assert not errors, [f"{e.json_path}: {e.message[:200]}" for e in errors[:5]]
    assert TEAM["github"] in GITHUB and TEAM["gitlab"] in GITLAB


def test_a_recipe_that_breaks_the_schema_is_found(ci_schemas):
    """The check can fail: a misspelt key is an error in either file."""
    github = _load(TEAM["github"])
    github["jobs"]["gate"]["step"] = github["jobs"]["gate"].pop("steps")
    assert list(ci_schemas["github"].iter_errors(github))
    gitlab = _load(TEAM["gitlab"])
    gitlab["extractbench-gate"]["artifact"] = gitlab["extractbench-gate"].pop("artifacts")
    assert list(ci_schemas["gitlab"].iter_errors(gitlab))


def _scripts(path: Path) -> list[str]:
    """Every shell script of a recipe: GitHub's ``run`` steps, GitLab's ``script`` lines."""
    doc, found = _load(path), []
    for job in doc.get("jobs", doc).values():
        if isinstance(job, dict):
            found += [s["run"] for s in job.get("steps", []) if "run" in s]
            found += list(job.get("script", []))
    return found


def _commands(script: str) -> list[list[str]]:
    """The ``pytest`` and ``extractbench`` command lines of a script (continuations joined,
    the shell's arrays and variables as placeholders)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith(("pytest ", "extractbench ")):
            found.append(shlex.split(re.sub(r'"\$\{\w+\[@\]\}"', "", line).replace("$", "")))
    return found


def _options(*command: str) -> set[str]:
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", out))


@pytest.mark.parametrize("system", TEAM)
def test_the_team_recipe_gates_what_the_team_releases(system):
    recipe = TEAM[system]
    text = recipe.read_text(encoding="utf-8")
    commands = [c for script in _scripts(recipe) for c in _commands(script)]
    (gate,) = [c for c in commands if c[0] == "pytest"]
    # every suite the project configures, its own items (kv) included
    assert gate[1:3] == ["--pyargs", "extractbench.suites"], gate
    used = {a.split("=")[0] for a in gate if a.startswith("--")}
    known = _options(sys.executable, "-m", "pytest", "--help") | {
        "--junitxml"
    }  # --junit-xml's alias
    assert used <= known, sorted(used - known)
    assert {"--offline", "--data-dir", "--report-json", "--junitxml", "--html"} <= used
    (fetch,) = [c for c in commands if c[:3] == ["extractbench", "data", "fetch"]]
    assert "--dest" in fetch
    assert "--dest" in _options(sys.executable, "-m", "extractbench.plugins.cli.main", "data", "fetch", "--help")  # fmt: skip
    # a pinned extractbench without an index of the team's own; llama-cpp-python's wheel cached
    assert re.search(r'EXTRACTBENCH: "extractbench @ git\+https://\S+@v\d', text)
    assert re.search(r'LLAMA_CPP_PYTHON: "\d+\.\d+\.\d+"', text)
    assert "--only-binary llama-cpp-python" in text and '"$CMAKE_ARGS"' in text
    # the candidate: a GGUF checked against its SHA-256, or an endpoint with its key
    assert "sha256sum --check --strict" in text and "--model=$path" in text
    assert "--backend=openai" in text and "OPENAI_API_KEY" in text
    # the last release's record as the baseline; no release without it passes unchecked
    assert "--baseline=baseline/extractbench-run.json" in text and "--max-regression=" in text
    # the per-push time, measured, next to the recipe
    assert "MEASURED_PER_PUSH" not in text
    assert re.search(r"measured .* on a 2-core", text, flags=re.S), "the per-push job's time"


def test_github_shows_junit_as_a_check_and_caches_by_key():
    doc = _load(TEAM["github"])
    steps = doc["jobs"]["gate"]["steps"]
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    junit = uses["mikepenz/action-junit-report"]
    assert junit["if"] == "always()" and junit["with"]["report_paths"] == "reports/junit.xml"
    assert doc["permissions"]["checks"] == "write"
    keys = [s["with"]["key"] for s in steps if s.get("uses", "").startswith("actions/cache")]
    assert any("steps.data.outputs.sha256" in k for k in keys)  # the manifest's digest
    assert any("steps.keys.outputs.build" in k for k in keys)  # version, flags, Python, CPU
    upload = uses["actions/upload-artifact"]
    assert upload["if"] == "always()" and upload["with"]["path"] == "reports/"
    assert doc["jobs"]["publish"]["needs"] == "gate"  # only a passing release's record


def test_gitlab_shows_junit_in_its_test_report():
    job = _load(TEAM["gitlab"])["extractbench-gate"]
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == "reports/junit.xml"
    assert any("llama-cpp-python" in c["key"] for c in job["cache"])


@pytest.mark.parametrize("system", TEAM)
def test_per_push_the_team_s_suites_nightly_the_public_ones_the_model_by_digest(system):
    """Per push the command names only the whole package (the project's ``suites``); the
    public suites are added by package name for a scheduled or release run; an internal
    GGUF URL is fetched with a bearer token from a secret into a cache keyed by its digest;
    an endpoint installs no llama-cpp-python and takes its concurrency as an input."""
    recipe = TEAM[system]
    text = recipe.read_text(encoding="utf-8")
    (gate,) = [c for script in _scripts(recipe) for c in _commands(script) if c[0] == "pytest"]
    assert gate[1:3] == ["--pyargs", "extractbench.suites"] and "-n" in gate
    assert "workers" in gate[gate.index("-n") + 1]  # not a hard-coded count
    assert '"${public[@]}"' in text and "schedule" in text
    # per push the early stop; a scheduled or release run whole (the next baseline)
    assert (
        "early=(--stop-when-decided)" in text
        and '"${model[@]}" "${baseline[@]}" "${early[@]}"' in text
    )
    assert re.search(r"public <<< \"\$PUBLIC_SUITES\";?\s*\}?\s*early=\(\)", text), (
        "full when public"
    )
    public = re.search(r'PUBLIC_SUITES: "([^"]+)"', text).group(1).split()
    assert public and all(p.startswith("extractbench.suites.") and p != "extractbench.suites.kv"
                          for p in public)  # fmt: skip
    assert "Authorization: Bearer $MODEL_TOKEN" in text
    assert re.search(r"path=\.cache/candidate/\$\w*MODEL_SHA256\.gguf", text)
    assert re.search(r"key: candidate-.*MODEL_SHA256", text)
    assert "--no-deps" in text and 'not r.startswith("llama-cpp-python")' in text
    assert '"--concurrency=$CONCURRENCY"' in text
