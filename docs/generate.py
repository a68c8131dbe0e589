"""The parts of the README and the docs that the code states, written into the Markdown files
themselves, so a page read as a file (on a code host, in an editor) shows them.

Each part sits between two markers in its page::

    <!-- generated: exit-codes -->
    | exit | verdict | when |
    ...
    <!-- end generated -->

and is one of :data:`GENERATORS` (the exit-code table from
``plugins/verdict/exit_codes.py``, the suites' option tables from their typed options, the
run record's JSON Schema from its models), or ``file:PATH``: a file of the repository (a CI
recipe) in a fenced code block. Run from the repository's root::

    python docs/generate.py          # rewrite every stale part
    python docs/generate.py --check  # exit 1 naming each stale part (CI, tests/test_docs.py)

The Sphinx build (``docs/conf.py``) fails on a stale part too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/usage.md", "docs/ci.md", "docs/schema.md")
_BLOCK = re.compile(
    r"(?P<open><!-- generated: (?P<name>[^ ]+) -->\n)(?P<body>.*?)(?P<close><!-- end generated -->)",
    re.S,
)
_LANGUAGES = {".yml": "yaml", ".yaml": "yaml", ".sh": "bash", ".json": "json", ".toml": "toml",
              ".py": "python", "Jenkinsfile": "groovy"}  # fmt: skip


def _exit_codes() -> str:
    from extractbench.plugins.verdict.exit_codes import EXIT_CODES

    rows = ["| exit | verdict | when |", "|---:|---|---|"]
    for code, text in sorted(EXIT_CODES.items()):
        word, _, when = text.partition(": ")
        rows.append(f"| {code} | {word} | {when.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def _suite_options() -> str:
    from extractbench.plugins.cli.suites import options_markdown
    from extractbench.suites.registry import Registry

    return options_markdown(Registry.installed()).rstrip("\n") + "\n"


def _record_schema() -> str:
    from extractbench.plugins.record import record_schema

    return "```json\n" + json.dumps(record_schema(), indent=1) + "\n```\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "exit-codes": _exit_codes,
    "suite-options": _suite_options,
    "run-record-schema": _record_schema,
}


def _file_block(relative: str) -> str:
    path = ROOT / relative
    language = _LANGUAGES.get(path.suffix) or _LANGUAGES.get(path.name, "")
    text = path.read_text(encoding="utf-8")
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}\n"


def content(name: str) -> str:
    """What the part ``name`` holds: a generator's output, or ``file:PATH``'s file fenced.

    Raises:
        KeyError: no generator of that name.
        OSError: the file of ``file:PATH`` cannot be read.
    """
    if name.startswith("file:"):
        return _file_block(name.removeprefix("file:"))
    return GENERATORS[name]()


def render(text: str) -> str:
    """``text`` with every generated part rewritten."""
    return _BLOCK.sub(lambda m: m["open"] + content(m["name"]) + m["close"], text)


def stale(pages: tuple[str, ...] = PAGES) -> list[str]:
    """``page: part`` for every generated part whose text differs from what the code gives
    (a page without parts is no error)."""
    found = []
    for page in pages:
        text = (ROOT / page).read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            if match["body"] != content(match["name"]):
                found.append(f"{page}: {match['name']}")
    return found


def main(argv: list[str] | None = None) -> int:
    """Rewrite the stale parts (0), or with ``--check`` name them (1 when any)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale parts")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    old = stale()
    if args.check:
        for part in old:
            print(f"stale: {part} (python docs/generate.py rewrites it)", file=sys.stderr)
        return 1 if old else 0
    for page in PAGES:
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
