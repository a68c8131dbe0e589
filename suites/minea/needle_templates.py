"""The needle templates: one per schema type of the default schema (MINEA Section 5.2.1).

Each template invents an entity of its type in the haystacks' domain with Faker and the
pools of :mod:`suites.minea.vocabulary`: a name, a one-sentence description, six keywords
and a one-paragraph introduction that contains the name and every keyword. Every keyword
is drawn (a pool word, a Faker value, a number), none is fixed per type, so two needles of
one type rarely share more than one (Section 5.2.3's keyword criteria would otherwise credit
one for the other).
"""

from __future__ import annotations

import datetime
import random
import string
from collections.abc import Callable

from faker import Faker

from extractbench.suites.minea import vocabulary as V

EVENT_DATES = (datetime.date(2017, 1, 1), datetime.date(2024, 12, 31))  # an event's month

__all__ = ["Template", "GENERATORS"]


def _name_word(r: random.Random) -> str:
    return r.choice(V.PREFIX) + r.choice(V.SUFFIX)


def _code(r: random.Random, letters: int = 2, digits: int = 3) -> str:
    """A made-up identifier such as ``KX-482``."""
    head = "".join(r.choice(string.ascii_uppercase) for _ in range(letters))
    return f"{head}-{r.randrange(10 ** (digits - 1), 10**digits)}"


Template = tuple[str, str, list[str], str]  # name, description, keywords, paragraph


def _person(f: Faker, r: random.Random) -> Template:
    name, role, company = f.name(), r.choice(V.ROLES), f.company()
    analyte, city, study = r.choice(V.ANALYTES), f.city(), r.choice(V.STUDIES)
    year = str(r.randint(2008, 2023))
    kw = [role, company, city, analyte, study, year]
    para = (
        f"{name}, a {role} at {company} in {city}, led the {study} of the new {analyte} "
        f"assay in {year} and signed the final report."
    )
    return name, f"{role} at {company} who led a {analyte} {study}", kw, para


def _organization(f: Faker, r: random.Random) -> Template:
    name = f"{f.last_name()} {r.choice(V.ORG_KINDS)}"
    city, year, method = f.city(), str(r.randint(1985, 2015)), r.choice(V.METHODS)
    founder, product, standard = f.name(), r.choice(V.PRODUCTS), r.choice(V.STANDARDS)
    kw = [city, year, method, founder, product, standard]
    para = (
        f"{name}, founded in {year} by {founder} and based in {city}, is the contract "
        f"manufacturer of the {product}. It works under {standard} and specialises in {method}."
    )
    return name, f"contract manufacturer of {product} based in {city}", kw, para


def _product(f: Faker, r: random.Random) -> Template:
    name = f"{_name_word(r)} {r.choice(V.PRODUCT_KINDS)} {r.randint(2, 9)}"
    analyte, specimen, method = r.choice(V.ANALYTES), r.choice(V.SPECIMENS), r.choice(V.METHODS)
    setting, maker, consumable = r.choice(V.SETTINGS), f.company(), r.choice(V.CONSUMABLES)
    kw = [analyte, specimen, method, setting, maker, consumable]
    para = (
        f"The {name}, made by {maker}, measures {analyte} in {specimen} using {method}. "
        f"It is intended for {setting} use and reads a single-use {consumable} in minutes."
    )
    return name, f"{setting} device measuring {analyte} in {specimen}", kw, para


def _event(f: Faker, r: random.Random) -> Template:
    topic, city = r.choice(V.TOPICS), f.city()
    name = f"{city} {topic} {r.choice(V.EVENTS)}"
    # a fixed window: one relative to today would change the needle set with the calendar
    when = f.date_between(EVENT_DATES[0], EVENT_DATES[1])
    date, org = when.strftime("%B %Y"), f.company()
    audience, outcome = r.choice(V.AUDIENCES), r.choice(V.OUTCOMES)
    kw = [topic.lower(), date, org, city, audience, outcome]
    para = (
        f"The {name}, held in {city} in {date} and organised by {org}, brought {audience} "
        f"together to discuss {topic.lower()}. Its {outcome} shaped the study design."
    )
    return name, f"meeting on {topic.lower()} organised by {org}", kw, para


def _legislation(f: Faker, r: random.Random) -> Template:
    topic, year, state = r.choice(V.LAW_TOPICS), str(r.randint(1995, 2020)), f.state()
    name = f"{state} {topic} Act of {year}"
    duty, sanction, sponsor = r.choice(V.DUTIES), r.choice(V.SANCTIONS), f.last_name()
    kw = [topic.lower(), year, state, duty, sanction, f"Senator {sponsor}"]
    para = (
        f"The {name}, introduced by Senator {sponsor}, sets duties of {duty} for "
        f"{topic.lower()} in {state}, with {sanction} for breaches, in force since {year}."
    )
    return name, f"{state} law of {year} on {topic.lower()}", kw, para


def _medical_condition(f: Faker, r: random.Random) -> Template:
    organ = r.choice(V.ORGANS)
    name = f"{f.last_name()}-{r.choice(V.GREEK)} {organ} syndrome"
    analyte, symptom, gene = r.choice(V.ANALYTES), r.choice(V.SYMPTOMS), _code(r, 3, 2)
    prevalence, clinic = f"1 in {r.randrange(20, 500) * 1000:,}", f"{f.city()} clinic"
    kw = [organ, symptom, analyte, f"gene {gene}", prevalence, clinic]
    para = (
        f"{name} is a rare disorder of {organ} tissue with {symptom}, linked to gene {gene} "
        f"and seen in {prevalence} people; first described at the {clinic}, it raises {analyte}."
    )
    return name, f"rare {organ} disorder that raises {analyte}", kw, para


def _substance(f: Faker, r: random.Random) -> Template:
    name = f"{_name_word(r)}-{r.randint(10, 99)} buffer"
    ph, salt = f"pH {r.randint(6, 8)}.{r.randint(0, 9)}", r.choice(V.SALTS)
    stabiliser, preservative = r.choice(V.STABILISERS), r.choice(V.PRESERVATIVES)
    shelf, supplier = f"{r.randrange(6, 37)} months", f.company()
    kw = [salt, ph, stabiliser, preservative, shelf, supplier]
    para = (
        f"{name}, supplied by {supplier}, is the reagent diluent: a {salt} solution at {ph} "
        f"with {stabiliser} and {preservative} that gives the kit a shelf life of {shelf}."
    )
    return name, f"{salt} reagent diluent at {ph}", kw, para


def _biochem(f: Faker, r: random.Random) -> Template:
    name = f"{_name_word(r).capitalize()} kinase {r.choice(V.GREEK).lower()}"
    organ, analyte, species = r.choice(V.ORGANS), r.choice(V.ANALYTES), r.choice(V.SPECIES)
    clone, weight, lab = f"clone {_code(r)}", f"{r.randrange(18, 250)} kDa", f.last_name()
    kw = [organ, analyte, species, clone, weight, f"{lab} laboratory"]
    para = (
        f"{name} is a {weight} {species} {organ} enzyme described by the {lab} laboratory. "
        f"Antibody {clone} of the kit showed no cross-reactivity with it when measuring {analyte}."
    )
    return name, f"{organ} enzyme checked for cross-reactivity", kw, para


def _project(f: Faker, r: random.Random) -> Template:
    name = f"Project {r.choice(V.GREEK)} {f.last_name()}"
    analyte, sponsor, year = r.choice(V.ANALYTES), f.company(), str(r.randint(2005, 2022))
    design, comparator, sites = r.choice(V.DESIGNS), r.choice(V.COMPARATORS), r.randrange(3, 40)
    kw = [sponsor, analyte, year, design, comparator, f"{sites} sites"]
    para = (
        f"{name}, a {design} programme sponsored by {sponsor} since {year}, compares {analyte} "
        f"results with the {comparator} at {sites} sites."
    )
    return name, f"{design} {analyte} programme sponsored by {sponsor}", kw, para


def _insight(f: Faker, r: random.Random) -> Template:
    analyte, specimen = r.choice(V.ANALYTES), r.choice(V.SPECIMENS)
    minutes, temperature = r.choice([15, 20, 30, 45, 60, 90, 120]), r.choice(V.TEMPERATURES)
    effect, reviewer = r.choice(V.EFFECTS), f.name()
    name = f"{analyte.capitalize()} {effect} after {minutes} minutes"
    kw = [analyte, specimen, f"{minutes} minutes", temperature, effect, reviewer]
    para = (
        f"A review by {reviewer} found a lesson for sample handling: {analyte} in {specimen} "
        f"kept at {temperature} shows {effect} after {minutes} minutes ({name.lower()})."
    )
    return name, f"{analyte} in {specimen} shows {effect} after {minutes} minutes", kw, para


def _opportunity(f: Faker, r: random.Random) -> Template:
    market, driver, analyte = r.choice(V.MARKETS), r.choice(V.DRIVERS), r.choice(V.ANALYTES)
    name = f"{analyte.capitalize()} testing in {market}"
    growth, partner, region = f"{r.randrange(4, 30)}% annual growth", f.company(), f.state()
    kw = [market, driver, analyte, growth, partner, region]
    para = (
        f"{name} is a growth area with {growth} in {region}: {driver} create an unmet need, "
        f"and {partner} is sought as a distribution partner."
    )
    return name, f"growth area for {analyte} tests in {market}", kw, para


def _thing(f: Faker, r: random.Random) -> Template:
    thing, material = r.choice(V.THINGS), r.choice(V.MATERIALS)
    name = f"{_name_word(r).capitalize()} {thing}"
    maker, size, part = f.company(), f"{r.randrange(12, 240)} mm", f"part {_code(r, 3, 4)}"
    colour = f.color_name().lower()
    kw = [thing, material, maker, size, part, colour]
    para = (
        f"The {name} ({part}) is a {size} {colour} accessory made of {material} by {maker}; "
        f"the instrument reads its lot number before each run."
    )
    return name, f"{material} accessory from {maker}", kw, para


def _place(f: Faker, r: random.Random) -> Template:
    city = f.city()
    name = f"{city} Clinical Research Park"
    state, use, director = f.state(), r.choice(V.SITE_USES), f.name()
    opened, rooms = str(r.randint(1990, 2020)), f"{r.randrange(4, 60)} laboratories"
    kw = [state, use, director, opened, rooms, city]
    para = (
        f"{name}, a campus of {rooms} in {state} opened in {opened} and directed by "
        f"{director}, was the site of the {use}."
    )
    return name, f"laboratory campus in {state} used for {use}", kw, para


def _country(f: Faker, r: random.Random) -> Template:
    name = f.country()
    city, analyte, distributor = f.city(), r.choice(V.ANALYTES), f.company()
    year, agency = str(r.randint(2000, 2023)), f"agency file {_code(r, 2, 5)}"
    kw = [city, analyte, distributor, year, agency, "market authorisation"]
    para = (
        f"{name} granted market authorisation for the {analyte} kit in {year} under "
        f"{agency}; {distributor} in {city} distributes it there."
    )
    return name, f"country that authorised the {analyte} kit", kw, para


GENERATORS: dict[str, Callable[[Faker, random.Random], Template]] = {
    "Person": _person, "Organization": _organization, "Product": _product, "Event": _event,
    "Legislation": _legislation, "MedicalCondition": _medical_condition,
    "Substance": _substance, "BioChemEntity": _biochem, "Project": _project,
    "Insight": _insight, "OpportunityArea": _opportunity, "Thing": _thing, "Place": _place,
    "Country": _country,
}  # fmt: skip
