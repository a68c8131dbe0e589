"""The JSON Schemas the exports and the CI recipes are validated against, fetched from their
registries at test time (never committed): Every Eval Ever's from the PyPI package
``every-eval-ever`` 0.3.0 (MIT; it needs Python 3.12, so only its schema files are used,
through ``pip download``), CTRF's from the npm package ``ctrf`` 0.3.0 (MIT; the reference
implementation's ``ctrf-schema-0.0.json``, through ``npm pack``), and the CI systems'
(SchemaStore's ``github-workflow.json``, Apache-2.0, and GitLab's ``gitlab-ci.json``, MIT) as
the PyPI package ``check-jsonschema`` 0.39.0 vendors them for its ``--builtin-schema``. Each
archive is pinned by its sha256 and kept in the user cache
(``~/.cache/extractbench/third-party``), so the registry is asked once per machine. Without
the registry (no network, no npm) the tests that need a schema are skipped with the reason,
unless ``EXTRACTBENCH_REQUIRE_SCHEMAS`` is set (CI reaches both): then they fail.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs
import pytest

__all__ = ["PINNED", "Unavailable", "schema", "schemas_or_skip"]


@dataclass(frozen=True)
class Pinned:
    """One registry archive: how to fetch it, its sha256, the schema files inside it."""

    registry: str  # "pypi" or "npm"
    package: str
    version: str
    archive: str
    sha256: str
    members: dict[str, str]  # schema name -> path inside the archive
    license: str


PINNED = {
    "every-eval-ever": Pinned(
        "pypi", "every-eval-ever", "0.3.0", "every_eval_ever-0.3.0-py3-none-any.whl",
        "564b8bc624c1f822f749a769dc69dc058a736e83d920cbeb147c3a30d3152317",
        {"eval": "every_eval_ever/schemas/eval.schema.json",
         "instance": "every_eval_ever/schemas/instance_level_eval.schema.json"},
        "MIT (every_eval_ever-0.3.0.dist-info/licenses/LICENSE)",
    ),
    "ctrf": Pinned(
        "npm", "ctrf", "0.3.0", "ctrf-0.3.0.tgz",
        "e3ca219a2236c53c6cf0463c635161264b0a9f46dc9e285b7827d40f7551e8b6",
        {"ctrf": "package/dist/ctrf-schema-0.0.json"},
        "MIT (package/LICENSE)",
    ),
    "check-jsonschema": Pinned(
        "pypi", "check-jsonschema", "0.39.0", "check_jsonschema-0.39.0-py3-none-any.whl",
        "14ce5c94871c551268ea948ffe21e9f1464dc48fb20bf9a4c13deeaaf756cf9b",
        {"github-workflow": "check_jsonschema/builtin_schemas/vendor/github-workflows.json",
         "gitlab-ci": "check_jsonschema/builtin_schemas/vendor/gitlab-ci.json"},
        "Apache-2.0 (the tool); the schemas: SchemaStore's Apache-2.0, GitLab's MIT "
        "(check_jsonschema/builtin_schemas/vendor/licenses/)",
    ),
}  # fmt: skip


class Unavailable(Exception):
    """The registry could not be reached (the message says which and why)."""


def _fetch(pin: Pinned, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if pin.registry == "pypi":
        command = [sys.executable, "-m", "pip", "download", f"{pin.package}=={pin.version}",
                   "--no-deps", "--python-version", "3.12", "--only-binary=:all:", "-d", str(folder)]  # fmt: skip
    else:
        if shutil.which("npm") is None:
            raise Unavailable(f"npm is not installed (needed for the {pin.package} schema)")
        command = ["npm", "pack", f"{pin.package}@{pin.version}", "--pack-destination", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    path = folder / pin.archive
    if done.returncode != 0 or not path.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise Unavailable(f"{' '.join(command[:4])}: {tail[0]}")
    return path


def _archive(pin: Pinned) -> bytes:
    folder = Path(platformdirs.user_cache_dir("extractbench")) / "third-party"
    path = folder / pin.archive
    if not path.exists():
        path = _fetch(pin, folder)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        path.unlink()
        raise AssertionError(f"{path}: sha256 {digest}, pinned {pin.sha256} (fetch again)")
    return data


def schema(name: str, member: str) -> dict:
    """The JSON Schema ``member`` of the pinned package ``name``.

    Raises:
        Unavailable: the registry could not be reached.
    """
    pin = PINNED[name]
    data = _archive(pin)
    if pin.archive.endswith(".whl"):
        text = zipfile.ZipFile(io.BytesIO(data)).read(pin.members[member])
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            handle = tar.extractfile(pin.members[member])
            assert handle is not None
            text = handle.read()
    return json.loads(text)


def schemas_or_skip(wanted: dict[str, tuple[str, str]], what: str) -> dict[str, dict]:
    """``key -> (package, member)`` as :func:`schema` gives each; without the registry the
    calling test is skipped, saying why, or fails where ``EXTRACTBENCH_REQUIRE_SCHEMAS`` is
    set (CI: a schema check must never be skipped there)."""
    import os

    from extractbench.suites.suite_options import truthy

    try:
        return {key: schema(package, member) for key, (package, member) in wanted.items()}
    except Unavailable as exc:
        if truthy(os.environ.get("EXTRACTBENCH_REQUIRE_SCHEMAS", "")):
            pytest.fail(f"EXTRACTBENCH_REQUIRE_SCHEMAS is set and {what} cannot be fetched: {exc}")
        pytest.skip(f"{what} cannot be fetched here: {exc}")
