"""The deterministic scorer: a written ledger against the world's key, no judge.

1. **Refusal** (`refusal`): `plugin` and `include` directives and any `option` other than the
   allowed ones are refused from the text alone, before beancount ever loads it (a plugin is
   Python code). A carriage return counts as a line start (beancount skips it as whitespace).
2. **Parse gate**: beancount's `load_string` must return no errors at all, else the score is 0;
   nor may any transaction leave units unbalanced in a currency (a residual beancount's
   tolerance accepted, or one hidden by a price or a cost: a one-legged plug).
3. **Components**: `balances` = share of chart accounts whose balance at the period end is
   exactly the expected Decimal (compared exactly, so beancount's ±0.01 assertion tolerance
   never matters) and that no penalised change touches (a plug, an edited or removed record,
   a `pad`: a balance reached that way earns nothing); `resolved` = share of planted
   discrepancies corrected by exactly one new transaction dated on its bank line, tagged
   ``bank_ref: "<ref>"``, whose postings net to the planted fix.
4. **Penalties**, 0.1 each: an original record (transaction or `open`) changed or removed
   (its edited copy, recognised by its `bank_ref`, or by its date when it has none, is not
   charged again); a new transaction that
   corrects no planted discrepancy: one without a planted line's `bank_ref`, or one of the
   entries carrying a planted ref that together do not net to its fix; a new directive other
   than `balance`/`note`; an opened account outside the chart.

reward = max(0, 0.5 * balances + 0.5 * resolved - 0.1 * penalties).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any

from beancount import loader
from beancount.core import data
from beancount.parser import printer

from beancount_ledger.render import ALLOWED_OPTIONS

PENALTY = Decimal("0.1")
_DIRECTIVE = re.compile(r"^[ \t]*(plugin|include|option)\b(.*)$", re.MULTILINE)
_OPTION_NAME = re.compile(r'^\s*"([^"]*)"')
_ALLOWED_NEW = (data.Balance, data.Note)


def refusal(text: str) -> str | None:
    """Why `text` must never be loaded (a plugin, an include, a disallowed option), else None."""
    # Beancount's lexer skips a carriage return as whitespace: a directive may start right after one.
    for match in _DIRECTIVE.finditer(text.replace("\r", "\n")):
        keyword, rest = match.group(1), match.group(2)
        if keyword != "option":
            return f"`{keyword}` directives are not allowed (line: {match.group(0).strip()[:80]!r})"
        name = _OPTION_NAME.match(rest)
        if name is None or name.group(1) not in ALLOWED_OPTIONS:
            allowed = ", ".join(f'"{o}"' for o in ALLOWED_OPTIONS)
            return f"only options {allowed} are allowed (line: {match.group(0).strip()[:80]!r})"
    return None


@dataclass(frozen=True)
class Key:
    """What the scorer compares against, all derivable from the world."""

    original: str
    balances: dict[str, str]
    fixes: list[dict[str, Any]]
    end: date

    @property
    def accounts(self) -> list[str]:
        return list(self.balances)


@dataclass
class Score:
    reward: float = 0.0
    refused: str | None = None
    written: bool = False
    loaded: bool = False
    errors: list[str] = field(default_factory=list)
    balances_hit: int = 0
    balances_total: int = 0
    resolved: list[str] = field(default_factory=list)
    plants: int = 0
    damaged: int = 0
    fabricated: int = 0
    invented: int = 0

    def metrics(self) -> dict[str, float]:
        return {
            "written": float(self.written),
            "loaded": float(self.loaded),
            "refused": float(self.refused is not None),
            "balances_hit": self.balances_hit / self.balances_total if self.balances_total else 0.0,
            "discrepancies_resolved": len(self.resolved) / self.plants if self.plants else 0.0,
            "penalty_damaged": float(self.damaged),
            "penalty_fabricated": float(self.fabricated),
            "penalty_invented": float(self.invented),
        }


def _meta(entry: Any) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (k, str(v))
            for k, v in (entry.meta or {}).items()
            if k not in ("filename", "lineno") and not k.startswith("__")
        )
    )


def _fingerprint(entry: Any) -> tuple:
    if isinstance(entry, data.Open):
        return ("open", entry.date, entry.account)
    postings = tuple(sorted((p.account, p.units.number, p.units.currency) for p in entry.postings))
    return ("txn", entry.date, entry.flag, entry.payee or "", entry.narration or "", _meta(entry), postings)


def _recorded(entries: list[Any]) -> list[Any]:
    """Transactions and opens as written: beancount's padding, synthesized at a `pad` directive's line,
    is excluded (a transaction merely *flagged* ``P`` by its author is not)."""
    pads = {(e.meta.get("filename"), e.meta.get("lineno")) for e in entries if isinstance(e, data.Pad)}

    def synthesized(e: Any) -> bool:
        return e.flag == "P" and (e.meta.get("filename"), e.meta.get("lineno")) in pads

    return [
        e
        for e in entries
        if isinstance(e, data.Open) or (isinstance(e, data.Transaction) and not synthesized(e))
    ]


def unbalanced(entries: list[Any]) -> list[str]:
    """Transactions whose units do not net to zero in every currency."""
    out = []
    for e in entries:
        if isinstance(e, data.Transaction):
            units: dict[str, Decimal] = defaultdict(Decimal)
            for p in e.postings:
                units[p.units.currency] += p.units.number
            if residual := {c: v for c, v in units.items() if v != 0}:
                out.append(f"{e.date} {e.narration!r}: units do not balance, residual {residual}")
    return out


@lru_cache(maxsize=64)
def _original(text: str) -> tuple[Counter, frozenset[type]]:
    entries, errors, _ = loader.load_string(text)
    assert not errors, "the original ledger must load cleanly"
    return Counter(_fingerprint(e) for e in _recorded(entries)), frozenset(type(e) for e in entries)


def _net(txns: list[data.Transaction]) -> dict[str, Decimal]:
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for txn in txns:
        for p in txn.postings:
            totals[p.account] += p.units.number
    return {a: v for a, v in totals.items() if v != 0}


def _within(entry: data.Transaction, end: date) -> set[str]:
    """The accounts `entry` moves by the period end (none when it is dated after)."""
    return {p.account for p in entry.postings} if entry.date <= end else set()


def score(text: str | None, key: Key) -> Score:
    """Score ledger `text` (None: nothing was ever written) against `key`. Never raises on bad input."""
    result = Score(balances_total=len(key.balances), plants=len(key.fixes))
    if text is None:
        return result
    result.written = True
    result.refused = refusal(text)
    if result.refused:
        return result
    entries, errors, options = loader.load_string(text)
    if errors or options.get("plugin") or options.get("include"):
        result.errors = [printer.format_error(e).strip()[:300] for e in errors[:10]]
        return result
    if problems := unbalanced(entries):
        result.errors = problems[:10]
        return result
    result.loaded = True

    totals: dict[str, Decimal] = defaultdict(Decimal)
    for entry in entries:
        if isinstance(entry, data.Transaction) and entry.date <= key.end:
            for p in entry.postings:
                totals[p.account] += p.units.number

    original, _ = _original(key.original)
    recorded = [(e, _fingerprint(e)) for e in _recorded(entries)]
    seen = Counter(fp for _, fp in recorded)
    removed = original - seen
    result.damaged = sum(removed.values())
    # Accounts a penalised change touches: their balances earn no credit, however right.
    tainted = {account for fp in removed if fp[0] == "txn" for account, _, _ in fp[6]}
    tainted |= {
        a
        for e in entries
        if isinstance(e, data.Pad) and e.date <= key.end
        for a in (e.account, e.source_account)
    }
    # A changed record reappears as a new one with its bank_ref: one penalty (damage), not two.
    # One new record per changed one, never every entry that borrows the ref.
    # A record without a bank_ref is recognised by its date.
    replaced: Counter[str] = Counter()
    for fp, n in removed.items():
        if fp[0] == "txn":
            replaced[dict(fp[5]).get("bank_ref") or f"date:{fp[1]}"] += n
    # A record appearing more often than in the original: only the surplus copies are new.
    surplus = seen - original
    fresh: list[Any] = []
    for entry, fp in reversed(recorded):
        if surplus[fp] > 0:
            surplus[fp] -= 1
            fresh.append(entry)
    fresh.reverse()

    chart = set(key.accounts)
    result.invented = sum(1 for e in fresh if isinstance(e, data.Open) and e.account not in chart)
    result.fabricated = sum(
        1 for e in entries if not isinstance(e, (data.Transaction, data.Open, *_ALLOWED_NEW))
    )
    groups: dict[str, list[data.Transaction]] = defaultdict(list)
    refs = {fix["ref"] for fix in key.fixes}
    for entry in fresh:
        if isinstance(entry, data.Transaction):
            ref = str((entry.meta or {}).get("bank_ref", ""))
            if ref in refs:
                groups[ref].append(entry)
            else:
                tainted |= _within(entry, key.end)
                if replaced[ref or f"date:{entry.date}"] > 0:
                    replaced[ref or f"date:{entry.date}"] -= 1
                else:
                    result.fabricated += 1
    for fix in key.fixes:
        group = groups.get(fix["ref"], [])
        wanted = {a: Decimal(v) for a, v in fix["fix"].items()}
        if _net(group) != wanted:
            # Entries carrying the line's ref that do not net to its fix correct nothing.
            result.fabricated += max(0, len(group) - replaced[fix["ref"]])
            tainted |= {a for e in group for a in _within(e, key.end)}
        elif len(group) == 1 and group[0].date.isoformat() == fix["date"]:
            result.resolved.append(fix["ref"])

    result.balances_hit = sum(totals[a] == Decimal(v) and a not in tainted for a, v in key.balances.items())
    value = (
        Decimal("0.5") * Decimal(result.balances_hit) / Decimal(result.balances_total)
        + Decimal("0.5") * Decimal(len(result.resolved)) / Decimal(result.plants)
        - PENALTY * (result.damaged + result.fabricated + result.invented)
    )
    result.reward = float(max(Decimal(0), value).quantize(Decimal("0.000001")))
    return result
