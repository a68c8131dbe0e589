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
from collections.abc import Callable, Sequence

from faker import Faker

from suites.minea.needles import Needle
from suites.minea.schema import Schema
from suites.model import Backend

__all__ = [
    "template_header",
    "template_needles",
    "llm_needles",
    "LLM_NEEDLE_PROMPT",
    "NEEDLE_GRAMMAR",
]

_ANALYTES = [
    "troponin I",
    "ferritin",
    "procalcitonin",
    "cortisol",
    "lactate",
    "D-dimer",
    "hemoglobin A1c",
    "cystatin C",
    "bilirubin",
    "lipase",
    "homocysteine",
    "fibrinogen",
]
_SPECIMENS = ["capillary whole blood", "serum", "plasma", "urine", "saliva", "venous blood"]
_METHODS = [
    "chemiluminescence",
    "immunoturbidimetry",
    "flow cytometry",
    "electrochemistry",
    "fluorescence polarization",
    "microfluidic immunoassay",
    "mass spectrometry",
]
_SETTINGS = ["point-of-care", "central laboratory", "emergency department", "home use"]
_GREEK = ["Alpha", "Beta", "Gamma", "Delta", "Kappa", "Sigma", "Omega", "Theta", "Zeta"]
_PREFIX = ["Vero", "Luma", "Cyta", "Nexa", "Quora", "Hema", "Sero", "Tria", "Ocula", "Meda"]
_SUFFIX = ["lin", "zyme", "tide", "xin", "plex", "sol", "mab", "gen", "trin", "stat"]
_ORGANS = ["hepatic", "renal", "cardiac", "pulmonary", "thyroid", "pancreatic", "splenic"]
_ROLES = [
    "regulatory affairs director",
    "clinical chemist",
    "quality engineer",
    "laboratory director",
    "biostatistician",
    "assay development scientist",
]
_EVENTS = ["Symposium", "Workshop", "Summit", "Consensus Meeting", "Forum"]
_TOPICS = [
    "Assay Harmonization",
    "Point-of-Care Quality",
    "Calibrator Traceability",
    "Reference Interval",
    "Interference Testing",
    "Sample Stability",
]
_THINGS = ["calibration cartridge", "sample rotor", "reagent pack", "cuvette tray", "lancet guide"]
_MATERIALS = ["polycarbonate", "borosilicate glass", "medical-grade silicone", "polystyrene"]
_MARKETS = [
    "rural clinics",
    "veterinary laboratories",
    "pharmacy testing",
    "home monitoring",
    "sports medicine",
    "long-term care",
]
_DRIVERS = [
    "ageing populations",
    "reimbursement changes",
    "decentralised testing",
    "shorter turnaround",
    "workforce shortages",
]


def _name_word(r: random.Random) -> str:
    return r.choice(_PREFIX) + r.choice(_SUFFIX)


def _person(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name, role, company = f.name(), r.choice(_ROLES), f.company()
    analyte, city = r.choice(_ANALYTES), f.city()
    kw = [role, company, analyte, city, "validation study", "method comparison"]
    para = (
        f"{name}, a {role} at {company} in {city}, led the validation study of the new "
        f"{analyte} assay. {name.split()[-1]} designed the method comparison against the "
        f"predicate device and signed the final report."
    )
    return name, f"{role} at {company} who led a {analyte} validation study", kw, para


def _organization(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"{f.last_name()} {r.choice(['Diagnostics', 'Biosystems', 'Laboratories'])}"
    city, year, method = f.city(), r.randint(1985, 2015), r.choice(_METHODS)
    kw = [city, str(year), method, "contract manufacturer", "reagents", "ISO 13485"]
    para = (
        f"{name}, founded in {year} and based in {city}, is the contract manufacturer of "
        f"the reagents. The company works under ISO 13485 and specialises in {method}."
    )
    return name, f"contract manufacturer of reagents based in {city}", kw, para


def _product(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"{_name_word(r)} {r.choice(['Analyzer', 'Reader', 'Test System', 'Meter'])} {r.randint(2, 9)}"
    analyte, specimen, method = r.choice(_ANALYTES), r.choice(_SPECIMENS), r.choice(_METHODS)
    setting, maker = r.choice(_SETTINGS), f.company()
    kw = [analyte, specimen, method, setting, maker, "test strip"]
    para = (
        f"The {name}, made by {maker}, measures {analyte} in {specimen} using {method}. "
        f"It is intended for {setting} use and reads a single-use test strip in minutes."
    )
    return name, f"{setting} device measuring {analyte} in {specimen}", kw, para


def _event(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    topic = r.choice(_TOPICS)
    name = f"{f.city()} {topic} {r.choice(_EVENTS)}"
    date, org = f.date_between("-8y", "-1y").strftime("%B %Y"), f.company()
    kw = [topic.lower(), date, org, "clinical laboratories", "manufacturers", "recommendations"]
    para = (
        f"The {name}, held in {date} and organised by {org}, brought together clinical "
        f"laboratories and manufacturers to discuss {topic.lower()}. Its recommendations "
        f"shaped the study design described here."
    )
    return name, f"meeting on {topic.lower()} organised by {org}", kw, para


def _legislation(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    topic = r.choice(["Diagnostic Accuracy", "Laboratory Data", "Test Labeling", "Assay Recall"])
    year = r.randint(1995, 2020)
    name = f"{f.state()} {topic} Act of {year}"
    kw = [topic.lower(), str(year), "state law", "labeling", "reporting", "penalties"]
    para = (
        f"The {name} is a state law that sets labeling and reporting duties for "
        f"{topic.lower()}, with penalties for late reports, in force since {year}."
    )
    return name, f"state law of {year} on {topic.lower()}", kw, para


def _medical_condition(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    organ = r.choice(_ORGANS)
    name = f"{f.last_name()}-{r.choice(_GREEK)} {organ} syndrome"
    analyte, symptom = r.choice(_ANALYTES), r.choice(["fatigue", "jaundice", "oedema", "fever"])
    kw = [organ, symptom, analyte, "rare disorder", "false positives", "interference"]
    para = (
        f"{name} is a rare disorder of {organ} tissue with {symptom}. Patients with it "
        f"show raised {analyte}, a known source of interference and false positives."
    )
    return name, f"rare {organ} disorder that raises {analyte}", kw, para


def _substance(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"{_name_word(r)}-{r.randint(10, 99)} buffer"
    ph, salt = f"pH {r.randint(6, 8)}.{r.randint(0, 9)}", r.choice(["HEPES", "Tris", "MOPS"])
    kw = [salt, ph, "stabiliser", "preservative", "reagent diluent", "shelf life"]
    para = (
        f"{name} is the reagent diluent: a {salt} solution at {ph} with a stabiliser and "
        f"a preservative that extends the shelf life of the kit."
    )
    return name, f"{salt} reagent diluent at {ph}", kw, para


def _biochem(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"{_name_word(r).capitalize()} kinase {r.choice(_GREEK).lower()}"
    organ, analyte = r.choice(_ORGANS), r.choice(_ANALYTES)
    kw = ["enzyme", organ, analyte, "biomarker", "monoclonal antibody", "cross-reactivity"]
    para = (
        f"{name} is a {organ} enzyme studied as a biomarker. The monoclonal antibody of "
        f"the kit showed no cross-reactivity with it when measuring {analyte}."
    )
    return name, f"{organ} enzyme checked for cross-reactivity", kw, para


def _project(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"Project {r.choice(_GREEK)} {f.last_name()}"
    analyte, sponsor, year = r.choice(_ANALYTES), f.company(), r.randint(2005, 2022)
    kw = [sponsor, analyte, str(year), "multicenter", "reference method", "enrolment"]
    para = (
        f"{name}, a multicenter programme sponsored by {sponsor} since {year}, compares "
        f"{analyte} results with a reference method and completed enrolment last spring."
    )
    return name, f"multicenter {analyte} programme sponsored by {sponsor}", kw, para


def _insight(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    analyte, specimen = r.choice(_ANALYTES), r.choice(_SPECIMENS)
    minutes = r.choice([15, 30, 45, 60, 90])
    name = f"{analyte.capitalize()} drift after {minutes} minutes"
    kw = [analyte, specimen, f"{minutes} minutes", "room temperature", "bias", "sample handling"]
    para = (
        f"An internal review found a lesson for sample handling: {analyte} in {specimen} "
        f"left at room temperature shows a bias after {minutes} minutes ({name.lower()})."
    )
    return name, f"{analyte} in {specimen} drifts after {minutes} minutes", kw, para


def _opportunity(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    market, driver, analyte = r.choice(_MARKETS), r.choice(_DRIVERS), r.choice(_ANALYTES)
    name = f"{analyte.capitalize()} testing in {market}"
    kw = [market, driver, analyte, "growth", "unmet need", "distribution partners"]
    para = (
        f"{name} is seen as a growth area: {driver} create an unmet need, and the "
        f"company seeks distribution partners for {market}."
    )
    return name, f"growth area for {analyte} tests in {market}", kw, para


def _thing(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    thing, material = r.choice(_THINGS), r.choice(_MATERIALS)
    name = f"{_name_word(r).capitalize()} {thing}"
    kw = [thing, material, "single-use", "barcode", "lot number", "accessory"]
    para = (
        f"The {name} is a single-use accessory made of {material}; a barcode on it "
        f"carries the lot number that the instrument reads before each run."
    )
    return name, f"single-use {material} accessory", kw, para


def _place(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f"{f.city()} Clinical Research Park"
    state, use = f.state(), r.choice(["method comparison", "precision testing", "field trials"])
    kw = [state, use, "laboratory", "campus", "site", "clinical samples"]
    para = (
        f"{name}, a laboratory campus in {state}, was the site for {use}; the clinical "
        f"samples were collected and tested there."
    )
    return name, f"laboratory campus in {state} used for {use}", kw, para


def _country(f: Faker, r: random.Random) -> tuple[str, str, list[str], str]:
    name = f.country()
    city, analyte = f.city(), r.choice(_ANALYTES)
    kw = [city, analyte, "export", "registration", "distributor", "market authorisation"]
    para = (
        f"{name} granted market authorisation for the {analyte} kit after its "
        f"registration; a distributor in {city} handles export and supply there."
    )
    return name, f"country that authorised the {analyte} kit", kw, para


GENERATORS: dict[str, Callable[[Faker, random.Random], tuple[str, str, list[str], str]]] = {
    "Person": _person, "Organization": _organization, "Product": _product, "Event": _event,
    "Legislation": _legislation, "MedicalCondition": _medical_condition,
    "Substance": _substance, "BioChemEntity": _biochem, "Project": _project,
    "Insight": _insight, "OpportunityArea": _opportunity, "Thing": _thing, "Place": _place,
    "Country": _country,
}  # fmt: skip


def template_header(schema: Schema, per_type: int, seed: int) -> dict[str, object]:
    """The needle-set header of a template set (what makes two sets the same)."""
    return {
        "generator": "template",
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
        make = GENERATORS.get(type_name, _thing)
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
            rows = json.loads(text)
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
