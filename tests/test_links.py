"""Messages written for an installed package: documentation links to the published pages
(the package's ``Project-URL: Documentation``, the one place the address is written), extras
named as ``pip install 'extractbench[EXTRA]'``, and the command that runs the suites from
where the user is (``pytest --pyargs extractbench.suites`` outside a checkout)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from extractbench.fixtures.models.hf.doctor import HFFacts, lines
from extractbench.suites.links import docs_url, in_checkout, install_command, run_command

ROOT = Path(__file__).resolve().parent.parent
DOCS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Documentation"]


def test_the_package_metadata_names_the_published_documentation():
    urls = dict(u.split(", ", 1) for u in metadata.metadata("extractbench").get_all("Project-URL"))
    assert urls["Documentation"] == DOCS and DOCS.startswith("https://")
    base = DOCS.rstrip("/")
    assert docs_url("docs/data.md#fda") == f"{base}/data.html#fda"
    assert docs_url("suites/kv.md") == f"{base}/suites/kv.html"


def test_every_page_a_message_links_exists():
    """``docs_url('docs/PAGE.md')`` in the code names a page of docs/ (the published page is
    its Sphinx build)."""
    named = set()
    for package in ("plugins", "fixtures", "suites"):
        for path in (ROOT / package).rglob("*.py"):
            named |= set(re.findall(r"docs_url\(['\"](?:docs/)?([\w/-]+\.md)", path.read_text()))
    assert named and all((ROOT / "docs" / page).is_file() for page in named), named


def test_extras_and_the_run_command_for_an_installed_package(tmp_path):
    assert install_command("hf") == "pip install 'extractbench[hf]'"
    assert not in_checkout(tmp_path) and in_checkout(ROOT)
    assert run_command("kv", tmp_path) == "pytest --pyargs extractbench.suites.kv"
    assert run_command(None, tmp_path) == "pytest --pyargs extractbench.suites"
    assert run_command("kv", ROOT) == "pytest suites/kv"
    said = lines(HFFacts())  # torch not installed
    assert "  torch: not installed (pip install 'extractbench[hf]')" in said
    assert not any("pip install -e" in line for line in said)


def test_help_links_the_published_pages(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "--help"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    text = " ".join(done.stdout.split())
    assert f"{DOCS.rstrip('/')}/usage.html" in text and "docs/usage.md" not in text
