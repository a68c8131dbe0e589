"""MINEA's own ``extractbench`` command: ``extractbench needles OUT.jsonl`` writes a needle
set (template: deterministic and offline; llm: a model invents needles fitting the
haystacks, MINEA Appendix B2) that ``--needles OUT.jsonl`` or
``--suite-option minea.needles=OUT.jsonl`` uses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extractbench.suites.protocol import CommandTools

__all__ = ["add_commands", "needles"]

USAGE_ERROR = 4  # the exit status of a usage error, as pytest's


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add ``needles`` to the ``extractbench`` command's sub-commands."""
    ndl = subparsers.add_parser(
        "needles",
        help="write a MINEA needle set (JSONL) for --suite-option minea.needles=PATH",
        description="Write a MINEA needle set. 'template' is deterministic and offline (the "
        "default set of a run with the same --seed/--per-type); 'llm' asks a model to invent "
        "needles fitting the haystacks (MINEA Appendix B2) - use a strong model, once, and "
        "compare many models on the file.",
    )
    ndl.add_argument("out", metavar="OUT.jsonl", help="needle-set file to write")
    ndl.add_argument("--generator", choices=("template", "llm"), default="template",
                     help="template (default, offline) or llm")  # fmt: skip
    ndl.add_argument("--per-type", type=int, default=50, metavar="K",
                     help="needles per schema type (default 50)")  # fmt: skip
    ndl.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    ndl.add_argument("--schema", metavar="PATH", help="schema JSON (default: the shipped one)")
    ndl.add_argument("--model", metavar="GGUF", help="llm: model file (default: Gemma 3 270M)")
    ndl.add_argument("--data-dir", metavar="DIR", help="llm: data folder with minea/haystacks/")
    ndl.set_defaults(func=needles)


def needles(args: argparse.Namespace, tools: CommandTools) -> int:
    """``extractbench needles``: write a needle set; the exit status (0, 1 when the model
    gave no usable needle, 4 on bad input with one line on stderr). ``tools`` loads the
    model and finds the data folder (the ``extractbench`` command gives them)."""
    if args.per_type < 1:
        print("extractbench needles: --per-type must be at least 1", file=sys.stderr)
        return USAGE_ERROR
    from extractbench.suites.item import DataError
    from extractbench.suites.minea.needlegen import llm_needles, template_header, template_needles
    from extractbench.suites.minea.needles import write_needles
    from extractbench.suites.minea.schema import load_schema

    try:
        schema = load_schema(args.schema)
    except DataError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    out = Path(args.out)
    if args.generator == "template":
        found = template_needles(schema, args.per_type, args.seed)
        sha = write_needles(out, template_header(schema, args.per_type, args.seed), found)
        print(f"wrote {out}: {len(found)} needles, sha256 {sha}")
        return 0
    from extractbench.suites.model import ModelError

    try:
        data_dir = tools.data_dir(args.data_dir)
    except DataError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    documents = sorted((data_dir / "minea" / "haystacks").glob("*.md")) if data_dir else []
    if not documents:
        print(
            "extractbench: no haystacks: pass --data-dir DIR (holding minea/haystacks/)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        model, name = tools.load_model(args.model, args.seed, 8192)
        found, problems = llm_needles(
            model, schema, [p.read_text(encoding="utf-8") for p in documents], args.per_type
        )
    except ModelError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    for line in problems:
        print(f"skipped: {line}", file=sys.stderr)
    header = {"generator": "llm", "model": name, "per_type": args.per_type,
              "seed": args.seed, "types": list(schema.types)}  # fmt: skip
    if not found:
        print("extractbench: the model gave no usable needle", file=sys.stderr)
        return 1
    sha = write_needles(out, header, found)
    print(f"wrote {out}: {len(found)} needles ({len(problems)} skipped), sha256 {sha}")
    return 0
