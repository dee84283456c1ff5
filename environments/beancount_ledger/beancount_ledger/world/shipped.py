"""The shipped, hand-authored world ``bank_recon_001``, read from the data files beside this module.

``data/bank_recon_001/`` holds the world as text: ``world.csv`` (name, company, period, the bank's
opening balance), ``parties.csv`` (customers and vendors), ``archive_prior_period.csv``,
``books.beancount`` (the opening balances, then the month's true entries in booking order),
``bank_statement.csv`` (the bank's lines) and ``plants.csv`` (which statement line carries which
discrepancy, and its argument). A bank line pairs with the entry carrying its ``bank_ref``; a line
no entry carries (a prior-period cheque clearing) joins the events after the entries of its date.
"""

from __future__ import annotations

import csv
import re
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from beancount_ledger.world.model import BankLine, Entry, Event, Party, Posting, PriorItem, World, money
from beancount_ledger.world.plants import apply_plants

DATA = Path(__file__).resolve().parent / "data"
SHIPPED_WORLDS = ("bank_recon_001",)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_HEADER = re.compile(r'(\d{4}-\d{2}-\d{2}) \* ((?:"(?:[^"\\]|\\.)*" ?){1,2})$')
_META = re.compile(r'  ([a-z_]+): "((?:[^"\\]|\\.)*)"$')
_POSTING = re.compile(r"  (\S+) +(-?\d+\.\d{2}) AUD$")
# How the argument of each plant kind is written in plants.csv.
_ARGUMENTS = {"wrong_amount": money, "transposed_cents": money, "untagged_duplicate": int}


class ShippedWorldError(ValueError):
    """A shipped world's data files are missing or do not describe a world."""


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_entries(text: str) -> list[Entry]:
    """The transactions of `text`, written as `render.entry_text` writes them (``;`` lines are comments)."""
    entries = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line for line in block.splitlines() if not line.startswith(";")]
        if not lines:
            continue
        head = _HEADER.match(lines[0])
        if head is None:
            raise ShippedWorldError(f"not a transaction header: {lines[0]!r}")
        strings = [_unquote(s) for s in _QUOTED.findall(head.group(2))]
        payee, narration = (strings[0], strings[1]) if len(strings) == 2 else ("", strings[0])
        meta, postings = [], []
        for line in lines[1:]:
            if m := _META.match(line):
                meta.append((m.group(1), _unquote(m.group(2))))
            elif p := _POSTING.match(line):
                postings.append(Posting(p.group(1), money(p.group(2))))
            else:
                raise ShippedWorldError(f"not a metadata or posting line: {line!r}")
        entries.append(
            Entry(date.fromisoformat(head.group(1)), payee, narration, tuple(postings), tuple(meta))
        )
    return entries


def _rows(folder: Path, name: str) -> list[dict[str, str]]:
    path = folder / name
    if not path.is_file():
        raise ShippedWorldError(f"{path} is missing")
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _events(entries: list[Entry], lines: list[BankLine]) -> list[Event]:
    by_ref = {line.ref: line for line in lines}
    events = [Event(e, by_ref.pop(e.bank_ref) if e.bank_ref else None) for e in entries]
    for line in sorted(by_ref.values(), key=lambda b: (b.date, b.ref)):
        at = next((i for i, e in enumerate(events) if e.entry and e.entry.date > line.date), len(events))
        events.insert(at, Event(None, line))
    return events


@lru_cache(maxsize=len(SHIPPED_WORLDS))
def load(name: str) -> World:
    """The shipped world `name`, from its data files."""
    if name not in SHIPPED_WORLDS:
        raise ShippedWorldError(f"no shipped world {name!r}; the shipped worlds are {SHIPPED_WORLDS}")
    folder = DATA / name
    about = {row["field"]: row["value"] for row in _rows(folder, "world.csv")}
    parties = _rows(folder, "parties.csv")
    party = lambda r: Party(r["id"], r["name"], int(r["terms_days"]), r["account"])  # noqa: E731
    prior = tuple(
        PriorItem(
            date.fromisoformat(r["date"]),
            r["ref"],
            r["type"],
            r["party"],
            r["description"],
            money(r["amount"]),
            r["status"],
        )
        for r in _rows(folder, "archive_prior_period.csv")
    )
    opening, *entries = parse_entries((folder / "books.beancount").read_text())
    lines = [
        BankLine(date.fromisoformat(r["date"]), r["ref"], r["description"], money(r["amount"]))
        for r in _rows(folder, "bank_statement.csv")
    ]
    events = _events(entries, lines)
    index = {e.bank.ref: i for i, e in enumerate(events) if e.bank}
    plants = []
    for r in _rows(folder, "plants.csv"):
        if r["ref"] not in index:
            raise ShippedWorldError(f"{name}: plant {r['kind']} names no bank line {r['ref']!r}")
        arg = _ARGUMENTS.get(r["kind"], str)(r["argument"]) if r["argument"] else None
        plants.append((r["kind"], index[r["ref"]], arg))
    booked, planted = apply_plants(events, plants)
    return World(
        about["world_id"],
        about["company"],
        date.fromisoformat(about["start"]),
        date.fromisoformat(about["end"]),
        tuple(party(r) for r in parties if r["role"] == "customer"),
        tuple(party(r) for r in parties if r["role"] == "vendor"),
        prior,
        opening,
        tuple(events),
        booked,
        planted,
        bank_opening=money(Decimal(about["bank_opening"])),
    )


def bank_recon_001() -> World:
    """The hand-authored task: Harbour Trading Pty Ltd, March 2024, five planted discrepancies."""
    return load("bank_recon_001")
