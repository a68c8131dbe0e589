#!/usr/bin/env python3
"""Write a model team's project like ``tests/data/team-invoices``, with as many invoices as
asked: the README's team example at a size where ``--stop-when-decided`` can stop early.

The 15 fields of the checked-in example are too few for any anytime-valid decision before
the end (docs/early-stop.md, "How many items a decision needs"); a team's real set is larger.
This script invents ``--invoices`` invoices (fictitious sellers and buyers; five layouts in
English, German, Italian, British and US style, with their own number and date formats), and
for each three of its fields as ``items.jsonl`` lines: the value as the document writes it
first, then the other spellings the metric accepts (``5343.75`` beside ``5 343.75``). The project's ``pyproject.toml`` is the example's, with
its gates (``kv/accuracy:ci_low >= 0.15``, ``kv/missing_labels <= 0``). The same seed writes
the same files, byte for byte.

    python benchmarks/team_invoices.py OUT --invoices 200 [--seed 0]

then, in OUT: ``pytest --pyargs extractbench.suites -n 2 [--stop-when-decided] [--baseline
B.json --max-regression 0.05]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path

KEYS = ("invoice id", "seller", "buyer", "amount due", "payment deadline")
FIELDS_PER_INVOICE = 3

_FIRST = (
    "Nordlys", "Brightwater", "Kestrel", "Harbor & Pine", "Marigold", "Fjellvik", "Hollis",
    "Cedar Row", "Bellavista", "Alder", "Silverbirch", "Ostara", "Quayside", "Lindqvist",
    "Rosenthal", "Valmora", "Greystone", "Juniper", "Halcyon", "Eastfield", "Morrow",
    "Sandvik", "Tidewater", "Larkspur", "Oakhurst", "Castellan", "Wrenfield", "Birchmoor",
)  # fmt: skip
_TRADE = (
    "Office Supply", "Catering", "Labortechnik", "Web Services", "Dental Clinic", "Bakery",
    "Architects", "Print Works", "Logistics", "Consulting", "Optics", "Joinery", "Electrics",
    "Translation", "Cleaning Services", "Garden Design", "Bookbinding", "Software",
)  # fmt: skip
_ITEMS = (
    ("Printer paper A4, 500 sheets", 54.0), ("Toner cartridge", 899.0), ("Consulting hours", 120.0),
    ("Working lunch per guest", 22.0), ("Website hosting, monthly", 45.0), ("Delivery", 35.0),
    ("Lab gloves, box of 100", 18.5), ("Translation per page", 31.0), ("Oak shelf", 249.0),
    ("Software licence, per seat", 79.0), ("Cleaning visit", 140.0), ("Photo retouching", 16.0),
)  # fmt: skip
_MONTHS_EN = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_MONTHS_IT = (
    "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
    "settembre", "ottobre", "novembre", "dicembre",
)  # fmt: skip
PYPROJECT = """\
# A model team's repository as extractbench sees it, written by benchmarks/team_invoices.py:
# the README's team example with {n} invoices.
[project]
name = "acme-invoice-model"
version = "2.3.0"

[tool.pytest.ini_options]
addopts = "--dist loadgroup"    # a document's items on one worker: its prefix is reused

[tool.extractbench]
suites = ["kv"]

[tool.extractbench.options.kv]
path = "items.jsonl"            # {fields} fields of the {n} invoices in invoices/

[tool.extractbench.gates]
"kv/accuracy:ci_low" = ">= 0.15"
"kv/missing_labels" = "<= 0"
"""


def _grouped(amount: float, thousands: str, decimal: str) -> str:
    """``1234.5`` as ``1{thousands}234{decimal}50``."""
    whole, cents = f"{amount:,.2f}".split(".")
    return whole.replace(",", thousands) + decimal + cents


def _company(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_TRADE)}"


def _lines(rng: random.Random) -> tuple[list[tuple[str, int, float]], float]:
    picked = rng.sample(_ITEMS, rng.randint(1, 3))
    lines = [(name, rng.randint(1, 20), price) for name, price in picked]
    return lines, round(sum(q * p for _, q, p in lines), 2)


def _norwegian(
    rng: random.Random, number: int, seller: str, buyer: str, issued: date, due: date
) -> tuple[str, dict[str, list[str]]]:
    lines, net = _lines(rng)
    total = round(net * 1.25, 2)
    rows = "\n".join(
        f"{name:<34}{qty:>5}{_grouped(price, ' ', '.'):>12}{_grouped(qty * price, ' ', '.'):>13}"
        for name, qty, price in lines
    )
    text = (
        f"{seller.upper()} AS\nStorgata {rng.randint(1, 90)}, 0155 Oslo, Norway\n\nINVOICE\n\n"
        f"Invoice number: {number}\nInvoice date: {issued.day} {_MONTHS_EN[issued.month - 1]} "
        f"{issued.year}\nDue date: {due.day} {_MONTHS_EN[due.month - 1]} {due.year}\n"
        f"Customer: {buyer}\n\nDescription                           Qty  Unit price       Amount\n"
        f"{rows}\n\nSubtotal{_grouped(net, ' ', '.'):>56}\nVAT 25%"
        f"{_grouped(total - net, ' ', '.'):>57}\nTotal due (NOK){_grouped(total, ' ', '.'):>49}\n"
    )
    due_text = f"{due.day} {_MONTHS_EN[due.month - 1]} {due.year}"
    return text, {
        "invoice id": [str(number)],
        "amount due": [_grouped(total, " ", "."), f"{total:.2f}"],
        "payment deadline": [due_text, due.isoformat()],
    }


def _german(
    rng: random.Random, number: int, seller: str, buyer: str, issued: date, due: date
) -> tuple[str, dict[str, list[str]]]:
    lines, net = _lines(rng)
    total = round(net * 1.19, 2)
    ident = f"{seller[:2].upper()}-{number}"
    rows = "\n".join(
        f"Pos. {i}  {name:<34} je {_grouped(price, '.', ','):>9} EUR {_grouped(q * price, '.', ','):>10} EUR"
        for i, (name, q, price) in enumerate(lines, 1)
    )
    text = (
        f"RECHNUNG\n\n{seller} GmbH - Am Hafen {rng.randint(1, 40)} - 28217 Bremen\n\n"
        f"Rechnungsnummer: {ident}\nRechnungsdatum: {issued:%d.%m.%Y}\nKunde: {buyer}\n"
        f"Zahlbar bis: {due:%d.%m.%Y}\n\n{rows}\n\nNettobetrag{_grouped(net, '.', ','):>58} EUR\n"
        f"zzgl. 19 % MwSt.{_grouped(total - net, '.', ','):>53} EUR\n"
        f"Rechnungsbetrag{_grouped(total, '.', ','):>54} EUR\n"
    )
    return text, {
        "invoice id": [ident],
        "amount due": [_grouped(total, ".", ","), _grouped(total, "", ","), f"{total:.2f}"],
        "payment deadline": [f"{due:%d.%m.%Y}", due.isoformat()],
    }


def _italian(
    rng: random.Random, number: int, seller: str, buyer: str, issued: date, due: date
) -> tuple[str, dict[str, list[str]]]:
    lines, net = _lines(rng)
    total = round(net * 1.22, 2)
    ident = f"{number}/{issued.year}"
    rows = "\n".join(
        f"{name:<42} € {_grouped(q * price, '.', ','):>10}" for name, q, price in lines
    )
    deadline = f"{due.day} {_MONTHS_IT[due.month - 1]} {due.year}"
    text = (
        f"{seller} S.r.l.\nVia dei Servi {rng.randint(1, 60)}, 50122 Firenze\n\n"
        f"FATTURA N. {ident}\nData: {issued.day} {_MONTHS_IT[issued.month - 1]} {issued.year}\n"
        f"Cliente: {buyer}\n\nServizio{'Importo':>45}\n{rows}\n\n"
        f"Imponibile{_grouped(net, '.', ','):>45}\nIVA 22%{_grouped(total - net, '.', ','):>48}\n"
        f"Totale fattura € {_grouped(total, '.', ',')}\n\nPagamento: bonifico bancario entro il "
        f"{deadline}\n"
    )
    return text, {
        "invoice id": [ident, str(number)],
        "amount due": [_grouped(total, ".", ","), _grouped(total, "", ","), f"{total:.2f}"],
        "payment deadline": [deadline, due.isoformat()],
    }


def _british(
    rng: random.Random, number: int, seller: str, buyer: str, issued: date, due: date
) -> tuple[str, dict[str, list[str]]]:
    lines, net = _lines(rng)
    total = round(net * 1.2, 2)
    ident = f"{''.join(w[0] for w in seller.split())[:3].upper()}-{number:04d}"
    rows = "\n".join(f"{name:<48}£ {q * price:>9,.2f}" for name, q, price in lines)
    text = (
        f"{seller} Ltd\n{rng.randint(1, 90)} Mill Lane, Leeds LS2 7QT\n\nTax invoice no. {ident}\n"
        f"Date of issue: {issued:%d/%m/%Y}\nBill to: {buyer}, 5 Quay Street, Manchester M3 3JE\n\n"
        f"{rows}\n\nNet amount{'':<38}£ {net:>9,.2f}\nVAT at 20%{'':<38}£ {total - net:>9,.2f}\n"
        f"Amount payable{'':<34}£ {total:>9,.2f}\n\nPayment due by {due:%d/%m/%Y}.\n"
    )
    return text, {
        "invoice id": [ident],
        "amount due": [f"{total:,.2f}", f"{total:.2f}"],
        "payment deadline": [f"{due:%d/%m/%Y}", due.isoformat()],
    }


def _american(
    rng: random.Random, number: int, seller: str, buyer: str, issued: date, due: date
) -> tuple[str, dict[str, list[str]]]:
    lines, total = _lines(rng)
    rows = "\n".join(f"  {name:<46}$ {q * price:>9,.2f}" for name, q, price in lines)
    deadline = f"{_MONTHS_EN[due.month - 1]} {due.day}, {due.year}"
    text = (
        f"{seller} LLC\n{rng.randint(100, 2000)} Alder Street, Portland, OR 97204\n\n"
        f"INVOICE #{number}\nIssued: {_MONTHS_EN[issued.month - 1]} {issued.day}, {issued.year}\n"
        f"Due: {deadline}\n\nBilled to:\n{buyer}\n\n{rows}\n\nTotal{'':<43}$ {total:>9,.2f}\n"
    )
    return text, {
        "invoice id": [str(number)],
        "amount due": [f"{total:,.2f}", f"${total:,.2f}", f"{total:.2f}"],
        "payment deadline": [deadline, due.isoformat()],
    }


LAYOUTS = (_norwegian, _german, _italian, _british, _american)


def invoice(rng: random.Random, number: int) -> tuple[str, dict[str, list[str]]]:
    """One invoice's text and each of :data:`KEYS` -> its accepted spellings, the first as
    the text writes it."""
    seller, buyer = _company(rng), _company(rng)
    while buyer == seller:
        buyer = _company(rng)
    issued = date(2025, 1, 1) + timedelta(days=rng.randrange(300))
    due = issued + timedelta(days=rng.choice((14, 30, 45)))
    text, values = rng.choice(LAYOUTS)(rng, number, seller, buyer, issued, due)
    values["seller"] = [seller]
    values["buyer"] = [buyer]
    return text, values


def write_project(out: Path, invoices: int, seed: int = 0) -> int:
    """Write the project into ``out`` (created; must not hold an ``items.jsonl``): its
    ``pyproject.toml``, ``invoices/inv-NNNN.txt`` and ``items.jsonl`` with
    :data:`FIELDS_PER_INVOICE` fields per invoice. Returns the number of items.

    Raises:
        FileExistsError: ``out`` already holds a project.
        ValueError: a value's spelling is not in its document (a bug of a layout).
    """
    if (out / "items.jsonl").exists():
        raise FileExistsError(f"{out}: already holds items.jsonl")
    rng = random.Random(seed)
    (out / "invoices").mkdir(parents=True, exist_ok=True)
    lines = []
    numbers = rng.sample(range(1000, 9999), invoices)
    for number in numbers:
        text, values = invoice(rng, number)
        name = f"invoices/inv-{number}.txt"
        (out / name).write_text(text, encoding="utf-8")
        for key in rng.sample(KEYS, FIELDS_PER_INVOICE):
            accepted = values[key]
            if accepted[0].lower() not in text.lower():
                raise ValueError(f"{name}: {key} {accepted[0]!r} not in the text")
            value = accepted[0] if len(accepted) == 1 else accepted
            lines.append(
                json.dumps({"document": name, "key": key, "value": value}, ensure_ascii=False)
            )
    (out / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "pyproject.toml").write_text(
        PYPROJECT.format(n=invoices, fields=len(lines)), encoding="utf-8"
    )
    return len(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the project folder to write (created)")
    parser.add_argument("--invoices", type=int, default=200, help="how many (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    args = parser.parse_args(argv)
    if args.invoices < 1:
        parser.error("--invoices must be at least 1")
    try:
        n = write_project(args.out, args.invoices, args.seed)
    except (FileExistsError, ValueError) as exc:
        print(f"team_invoices: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {args.invoices} invoices, {n} items")
    return 0


if __name__ == "__main__":
    sys.exit(main())
