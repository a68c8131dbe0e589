"""Two needle generators with one output format (MINEA Section 5.2.1, Appendix B2).

- :func:`template_needles`: deterministic and offline; templates plus Faker, seeded. Used by
  CI and the default run. Needles are invented entities in the haystacks' domain (in-vitro
  diagnostic device submissions); every keyword occurs in the paragraph, which names the
  entity.
- :func:`llm_needles`: the paper's way: a (strong) model invents needles that fit a document
  (prompt after Appendix B2, Figure 6, whose exact wording is an image in the paper; ours
  asks for the same content: new entities of one type relevant to the document, each with
  a paragraph, name, description and keywords). Run once; compare many models on its file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from faker import Faker

from extractbench.suites import safe_json
from extractbench.suites.minea.needle_templates import GENERATORS
from extractbench.suites.minea.needles import Needle
from extractbench.suites.minea.schema import Schema
from extractbench.suites.model import Backend

__all__ = [
    "template_header",
    "template_needles",
    "llm_needles",
    "LLM_NEEDLE_PROMPT",
    "NEEDLE_GRAMMAR",
]


# 2: every keyword drawn per needle (version 1 had 3-4 fixed keywords per type); 3: an
# event's date drawn from a fixed window (2 drew it relative to the day of the run)
TEMPLATES_VERSION = 3


def template_header(schema: Schema, per_type: int, seed: int) -> dict[str, object]:
    """The needle-set header of a template set (what makes two sets the same)."""
    return {
        "generator": "template",
        "templates": TEMPLATES_VERSION,
        "seed": seed,
        "per_type": per_type,
        "types": list(schema.types),
    }


def template_needles(schema: Schema, per_type: int, seed: int = 0) -> list[Needle]:
    """Deterministic needles: ``per_type`` of every schema type, unique names.

    Types without a template of their own (a user's extended schema) use the ``Thing``
    template with their type name. The same (schema, per_type, seed) gives the same list
    on every machine (Faker and ``random.Random`` seeded per type).

    Raises:
        ValueError: ``per_type < 1``, or unique names cannot be found (tiny vocabularies).
    """
    if per_type < 1:
        raise ValueError(f"per_type must be at least 1, got {per_type}")
    needles: list[Needle] = []
    names: set[str] = set()
    for t_index, type_name in enumerate(schema.types):
        fake = Faker("en_US")
        fake.seed_instance(seed * 1000 + t_index)
        rng = random.Random(f"{seed}/{type_name}")
        make = GENERATORS.get(type_name, GENERATORS["Thing"])
        tries = 0
        count = 0
        while count < per_type:
            name, description, keywords, paragraph = make(fake, rng)
            tries += 1
            if tries > per_type * 50:
                raise ValueError(f"cannot find {per_type} unique {type_name} needle names")
            if name.lower() in names:
                continue
            names.add(name.lower())
            needles.append(
                Needle(
                    id=f"{type_name}-{count:03d}",
                    type=type_name,
                    name=name,
                    description=description,
                    keywords=tuple(dict.fromkeys(keywords)),
                    paragraph=paragraph,
                )
            )
            count += 1
    return needles


LLM_NEEDLE_PROMPT = """You are given a document. Think out {count} new, original entities of type '{type}' that are relevant to the scope of the document but do not appear in it.
For each entity write a short paragraph (2-3 sentences) introducing it as if it were part of the document, and give its name, a one-sentence description and 6 keywords that occur in the paragraph.

Document:
{document}

Answer with a JSON array of objects with the keys "paragraph", "name", "description", "keywords".
"""

NEEDLE_GRAMMAR = r"""root ::= "[" ws needle ("," ws needle)* ws "]"
needle ::= "{" ws "\"paragraph\":" ws string "," ws "\"name\":" ws string "," ws "\"description\":" ws string "," ws "\"keywords\":" ws "[" string ("," ws string)* "]" ws "}"
string ::= "\"" ([^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt])* "\""
ws ::= [ \t\n]*
"""


def llm_needles(
    model: Backend,
    schema: Schema,
    documents: Sequence[str],
    per_type: int,
    *,
    max_tokens: int = 1536,
    max_document_chars: int = 6000,
) -> tuple[list[Needle], list[str]]:
    """Ask ``model`` for ``per_type`` needles of every type, fitting ``documents`` in turn.

    Args:
        model: a backend (a strong instruction-following model is advised).
        schema: types to generate.
        documents: texts the needles should fit; type ``i`` uses ``documents[i % len]``.
        per_type: needles asked for per type (one call per type).
        max_tokens: generation budget per call.
        max_document_chars: the document is cut to this many characters in the prompt.

    Returns:
        (needles, problems): valid needles with unique names, and one line per answer or
        entry that could not be used (not JSON, missing fields, duplicate name).
    """
    needles: list[Needle] = []
    problems: list[str] = []
    names: set[str] = set()
    for t_index, type_name in enumerate(schema.types):
        document = documents[t_index % len(documents)][:max_document_chars]
        prompt = LLM_NEEDLE_PROMPT.format(count=per_type, type=type_name, document=document)
        text = model.generate(prompt, max_tokens=max_tokens, grammar=NEEDLE_GRAMMAR).text
        try:
            rows = safe_json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{type_name}: answer is not JSON ({exc.msg})")
            continue
        if not isinstance(rows, list):
            problems.append(f"{type_name}: answer is not a JSON array")
            continue
        count = 0
        for row in rows:
            try:
                needle = Needle.from_json(
                    {**row, "id": f"{type_name}-{count:03d}", "type": type_name}, type_name
                )
            except Exception as exc:  # DataError, or a row that is not an object
                problems.append(f"{type_name}: unusable entry ({exc})")
                continue
            if needle.name.lower() in names:
                problems.append(f"{type_name}: duplicate name {needle.name!r}")
                continue
            names.add(needle.name.lower())
            needles.append(needle)
            count += 1
    return needles, problems
