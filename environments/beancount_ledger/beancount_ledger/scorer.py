"""The deterministic scorer: a written ledger against the world's key, no judge.

1. **Gate** (`gate.load`): what beancount's parse recorded decides refusal (an include, a
   plugin, a document, a disallowed option: never booked); then the ledger must load with no
   errors at all, every amount in AUD with no price or cost, and every transaction's units
   netting to exactly zero (a residual beancount's tolerance accepts is still a one-legged
   plug); else the score is 0.
2. **Records** are compared by fingerprint: date, flag, payee, narration, metadata, tags, links
   and postings (each with its flag and metadata) for a transaction; date, account, currencies,
   booking method and metadata for an ``open``.
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

At the low rungs (a key with `located_credit`, whose policy states it) the score is instead
max(0, 0.2 * located + 0.3 * affected + 0.5 * resolved - 0.1 * penalties): `located` = share of
planted discrepancies with a new entry dated on their line and carrying its ref, whatever its
amounts; `affected` = share of the accounts the discrepancies put wrong (whose balance in the given
ledger differs from the expected one) that are exactly right and untouched by a penalised change;
entries carrying a planted ref are never charged. So the books left alone score 0 and locating the
line already earns something.

`score` runs in the caller's process and is what the sandbox worker runs; the reward and the
tools never call it directly on model text (see `isolated.py`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any

from beancount.core import data

from beancount_ledger import gate
from beancount_ledger.answer import Fix, Key
from beancount_ledger.world import HARD_KINDS, Posting, net

PENALTY = Decimal("0.1")
_ALLOWED_NEW = (data.Balance, data.Note)


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
    error: str | None = None
    """Why the ledger could not be scored at all (the sandbox's failure); reward 0."""
    located: list[str] = field(default_factory=list)
    """The planted refs with a new entry dated on their line (scored only under `located_credit`)."""
    affected_hit: int = 0
    affected_total: int = 0

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
            "scorer_error": float(self.error is not None),
            "discrepancies_located": len(self.located) / self.plants if self.plants else 0.0,
            "affected_balances_hit": self.affected_hit / self.affected_total if self.affected_total else 0.0,
        }


SKILL_KINDS = HARD_KINDS
"""Every kind of discrepancy any profile plants: each has its `skill_metrics` on every trace."""


def skill_metrics(result: Score, fixes: Iterable[Fix]) -> dict[str, float]:
    """Per skill, with fixed names whatever the world: ``has_<kind>`` (how many discrepancies of that
    kind were planted), ``resolved_<kind>`` (the share of them resolved as their own entries; 0 when
    none was planted) and ``balances_hit_share`` (the share of expected balances hit)."""
    resolved, planted = set(result.resolved), list(fixes)
    out: dict[str, float] = {}
    for kind in SKILL_KINDS:
        refs = [f.ref for f in planted if f.kind == kind]
        out[f"has_{kind}"] = float(len(refs))
        out[f"resolved_{kind}"] = sum(r in resolved for r in refs) / len(refs) if refs else 0.0
    out["balances_hit_share"] = result.balances_hit / result.balances_total if result.balances_total else 0.0
    return out


def _meta(entry: Any) -> tuple[tuple[str, str], ...]:
    """The metadata the ledger wrote (the gate refuses any reserved key a ledger writes itself)."""
    return tuple(sorted((k, str(v)) for k, v in (entry.meta or {}).items() if not gate.reserved(k)))


def _fingerprint(entry: Any) -> tuple:
    if isinstance(entry, data.Open):
        return (
            "open",
            entry.date,
            entry.account,
            tuple(entry.currencies or ()),
            str(entry.booking),
            _meta(entry),
        )
    # Everything the ledger wrote of a record: a flag, a tag or metadata on a posting changes it too.
    postings = tuple(
        sorted((p.account, p.units.number, p.units.currency, p.flag or "", _meta(p)) for p in entry.postings)
    )
    marks = (tuple(sorted(entry.tags or ())), tuple(sorted(entry.links or ())))
    return (
        "txn",
        entry.date,
        entry.flag,
        entry.payee or "",
        entry.narration or "",
        _meta(entry),
        postings,
        marks,
    )


def _recorded(loaded: gate.Loaded) -> list[Any]:
    """Transactions and opens as the ledger wrote them. Provenance is the gate's, by identity
    (`gate.Loaded.written`): beancount's padding is left out whatever it looks like, and an entry the
    ledger wrote is kept whatever it looks like (a flag ``P``, metadata, a pad's date)."""
    return [e for e in loaded.written if isinstance(e, (data.Open, data.Transaction))]


@lru_cache(maxsize=64)
def _original(text: str, end: date) -> tuple[Counter, frozenset[type], dict[str, Decimal]]:
    """The given ledger's records by fingerprint, its entry types, and its totals by account at `end`."""
    loaded = gate.load(text)
    if not loaded.ok:
        raise ValueError(f"the original ledger does not load: {loaded.refused or loaded.errors[0]}")
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for entry in loaded.entries:
        if isinstance(entry, data.Transaction) and entry.date <= end:
            for p in entry.postings:
                totals[p.account] += p.units.number
    fingerprints = Counter(_fingerprint(e) for e in _recorded(loaded))
    return fingerprints, frozenset(type(e) for e in loaded.entries), dict(totals)


def _net(txns: list[data.Transaction]) -> dict[str, Decimal]:
    """The transactions' postings summed by account, zeros dropped (`world.net`)."""
    return {
        p.account: p.amount for p in net(Posting(q.account, q.units.number) for t in txns for q in t.postings)
    }


def _within(entry: data.Transaction, end: date) -> set[str]:
    """The accounts `entry` moves by the period end (none when it is dated after)."""
    return {p.account for p in entry.postings} if entry.date <= end else set()


def score(text: str | None, key: Key) -> Score:
    """Score ledger `text` (None: nothing was ever written) against `key`. Never raises on bad input."""
    result = Score(balances_total=len(key.balances), plants=len(key.fixes))
    if text is None:
        return result
    result.written = True
    loaded = gate.load(text)
    if not loaded.ok:
        result.refused = loaded.refused
        result.errors = [e[:300] for e in loaded.errors[:10]]
        return result
    result.loaded = True
    entries = loaded.entries

    totals: dict[str, Decimal] = defaultdict(Decimal)
    for entry in entries:
        if isinstance(entry, data.Transaction) and entry.date <= key.end:
            for p in entry.postings:
                totals[p.account] += p.units.number

    original, _, given = _original(key.original, key.end)
    recorded = [(e, _fingerprint(e)) for e in _recorded(loaded)]
    seen = Counter(fp for _, fp in recorded)
    removed = original - seen
    result.damaged = sum(removed.values())
    # Accounts a penalised change touches: their balances earn no credit, however right.
    tainted = {account for fp in removed if fp[0] == "txn" for account, *_ in fp[6]}
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
    refs = {fix.ref for fix in key.fixes}
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
        group = groups.get(fix.ref, [])
        if any(entry.date == fix.date for entry in group):
            result.located.append(fix.ref)
        if _net(group) != fix.fix:
            # Entries carrying the line's ref that do not net to its fix correct nothing.
            if not key.located_credit:
                result.fabricated += max(0, len(group) - replaced[fix.ref])
            tainted |= {a for e in group for a in _within(e, key.end)}
        elif len(group) == 1 and group[0].date == fix.date:
            result.resolved.append(fix.ref)

    right = {a for a, v in key.balances.items() if totals[a] == Decimal(v) and a not in tainted}
    result.balances_hit = len(right)
    affected = [a for a, v in key.balances.items() if given.get(a, Decimal(0)) != Decimal(v)]
    result.affected_total, result.affected_hit = len(affected), len(right.intersection(affected))
    penalties = PENALTY * (result.damaged + result.fabricated + result.invented)
    if key.located_credit:
        value = (
            Decimal("0.2") * Decimal(len(result.located)) / Decimal(result.plants)
            + Decimal("0.3") * Decimal(result.affected_hit) / Decimal(max(1, result.affected_total))
            + Decimal("0.5") * Decimal(len(result.resolved)) / Decimal(result.plants)
            - penalties
        )
    else:
        value = (
            Decimal("0.5") * Decimal(result.balances_hit) / Decimal(result.balances_total)
            + Decimal("0.5") * Decimal(len(result.resolved)) / Decimal(result.plants)
            - penalties
        )
    result.reward = float(max(Decimal(0), value).quantize(Decimal("0.000001")))
    return result
