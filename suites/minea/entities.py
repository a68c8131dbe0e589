"""Entities from a model's extraction answer: parsing (a JSON array of objects, salvaged
when cut off) and the text of an entity's values (what needle matching reads)."""

from __future__ import annotations

import json
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.answers import json_in_answer

__all__ = ["parse_entities", "parse_answer", "entity_text", "entity_values"]


def _normalise(obj: Any) -> dict[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    entity = {str(k): v for k, v in obj.items()}
    keywords = entity.get("keywords", [])
    if isinstance(keywords, str):
        keywords = [k.strip() for k in keywords.split(",") if k.strip()]
    entity["keywords"] = [str(k) for k in keywords] if isinstance(keywords, list) else []
    for key in ("type", "name", "description"):
        value = entity.get(key, "")
        entity[key] = value if isinstance(value, str) else json.dumps(value)
    return entity


def parse_entities(text: str) -> tuple[list[dict[str, Any]], bool]:
    """Entities from a model answer (:func:`parse_answer` without the reason).

    Returns:
        (entities, parsed): ``parsed`` is False when the answer was not valid JSON as a
        whole (a parse failure, counted by the suite), even if objects were salvaged.
    """
    entities, problem = parse_answer(text)
    return entities, not problem


def parse_answer(text: str) -> tuple[list[dict[str, Any]], str]:
    """Entities from a model answer, and why it failed to parse.

    Accepts a JSON array of objects (or ``{"entities": [...]}``). An answer cut off by the
    token budget keeps its complete objects; one nested deeper than
    :data:`suites.safe_json.MAX_DEPTH` yields none. Keywords given as one string are split
    at commas; type, name and description become strings.

    Returns:
        (entities, problem): ``problem`` is "" when the answer was valid JSON as a whole,
        else one line saying why not (``no JSON array or object``, ``not valid JSON:
        ...``, ``nested deeper than 100 levels``), even if objects were salvaged.
    """
    data, body, problem = json_in_answer(text)
    if not body or problem.startswith("nested deeper than"):
        return [], problem  # nothing to salvage: no bracket, or nested past the limit
    if isinstance(data, dict) and isinstance(data.get("entities"), list):
        data = data["entities"]
    if isinstance(data, list):
        return [e for e in map(_normalise, data) if e is not None], ""
    if isinstance(data, dict):
        entity = _normalise(data)
        return ([entity] if entity else []), ""
    if data is not None:
        problem = "not a JSON array or object"
    entities: list[dict[str, Any]] = []
    pos = 1 if body.startswith("[") else 0
    while pos < len(body):
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(body) or body[pos] != "{":
            break
        try:
            obj, pos = safe_json.raw_decode(body, pos)
        except json.JSONDecodeError:
            break
        entity = _normalise(obj)
        if entity is not None:
            entities.append(entity)
    return entities, problem


def entity_values(entity: dict[str, Any]) -> list[str]:
    """Every non-empty property value of an entity as its own string: each item of a list
    (keywords) separately, a nested object as JSON."""
    values: list[str] = []
    for value in entity.values():
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, dict):
                values.append(json.dumps(part, ensure_ascii=False))
            elif part is not None and str(part):
                values.append(str(part))
    return values


def entity_text(entity: dict[str, Any]) -> str:
    """All property values of an entity as one line of text (keywords joined by ", ")."""
    parts = []
    for value in entity.values():
        if isinstance(value, list):
            parts.append(", ".join(str(v) for v in value))
        elif isinstance(value, dict):
            parts.append(json.dumps(value, ensure_ascii=False))
        elif value is not None:
            parts.append(str(value))
    return " ".join(p for p in parts if p)
