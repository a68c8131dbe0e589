"""The model spec's part of the generation-cache key: every field of ``ModelSpec`` is in
the fingerprint unless the field itself says why not, composed in one place from the
fields (the backend adds only its identity part), so a field added to the spec gets its
own cached answers without fingerprint code."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field

from extractbench.fixtures.models import ModelSpec
from extractbench.fixtures.models.backend_options import NOT_IN_FINGERPRINT, BackendOptions
from extractbench.fixtures.models.chat import ChatSetup
from extractbench.fixtures.models.registry import SettledState


class StyleOptions(BackendOptions):
    style: str = Field("plain", description="how the toy answers")


class RepackedOff(SettledState):
    def fingerprint_tag(self, spec: ModelSpec) -> str:
        return ":repack=off"


BASE = ModelSpec("fake", None, 0, 1)

# a value of each spec field in the key that the key must tell apart from the field's
# value in BASE
CHANGED: dict[str, Any] = {
    "seed": 1,
    "model_name": "judge",
    "settled": RepackedOff(),
    "chat": True,
    "chat_setup": ChatSetup("on", True, None, "asked", system_prompt="Be brief."),
    "options": StyleOptions(style="loud"),
}


def key_problems(cls: type[ModelSpec]) -> list[str]:
    """One line per field of ``cls`` that is neither in the key (changing it changes the
    fingerprint) nor declares why not."""
    problems = []
    base = cls("fake", None, 0, 1)
    for spec_field in dataclasses.fields(cls):
        name, why = spec_field.name, spec_field.metadata.get(NOT_IN_FINGERPRINT)
        if why is not None:
            if not (isinstance(why, str) and why.strip()):
                problems.append(f"{cls.__name__}.{name}: its 'fingerprint' reason is empty")
            continue
        if name not in CHANGED:
            problems.append(
                f"{cls.__name__}.{name} is in the cache key (it declares no reason not to "
                "be): add a value of it that changes answers to CHANGED in "
                "tests/test_spec_fingerprint.py, or, if it cannot change an answer, declare "
                f"field(metadata={{{NOT_IN_FINGERPRINT!r}: '<why not>'}})"
            )
        elif replace(base, **{name: CHANGED[name]}).fingerprint() == base.fingerprint():
            problems.append(f"{cls.__name__}.{name}: changing it keeps {base.fingerprint()!r}")
    return problems


def test_every_field_of_the_model_spec_is_in_the_cache_key_unless_it_says_why_not():
    assert key_problems(ModelSpec) == []
    excluded = {f.name for f in dataclasses.fields(ModelSpec) if NOT_IN_FINGERPRINT in f.metadata}
    # named by the backend's identity part (the file's sha256, a served program), or
    # unable to change an answer (threads, where the path came from)
    assert excluded == {"backend", "path", "n_threads", "default", "served", "server"}
    every = replace(BASE, **CHANGED).fingerprint()
    assert every.startswith("fake-lookup:seed=1:judge:repack=off:chat=True:template=unreported:")
    assert every.endswith(":style=loud")


def test_a_field_added_to_the_spec_changes_the_key_without_fingerprint_code():
    """A frozen dataclass is extended by a subclass: its new fields come after the spec's,
    read by the same ``ModelSpec.fingerprint``."""

    @dataclass(frozen=True)
    class WithTemperature(ModelSpec):
        temperature: float = 0.0
        progress: bool = field(default=False, metadata={NOT_IN_FINGERPRINT: "display only"})

    plain = WithTemperature("fake", None, 0, 1)
    assert plain.fingerprint() == BASE.fingerprint() == "fake-lookup:seed=0"  # defaults kept
    warm = replace(plain, temperature=0.7)
    assert warm.fingerprint() == "fake-lookup:seed=0:temperature=0.7"
    assert replace(plain, progress=True).fingerprint() == plain.fingerprint()
    # the field-by-field check names the new field and what to do about it
    problems = key_problems(WithTemperature)
    assert len(problems) == 1 and problems[0].startswith("WithTemperature.temperature is in")
    assert "add a value of it that changes answers to CHANGED" in problems[0]
