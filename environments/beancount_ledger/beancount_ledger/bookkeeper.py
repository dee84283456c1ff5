"""The bookkeeper's policies: the reference reconciliation and the honest mistakes around it.

Each is stateless: it reads the tool results already in the transcript and decides the next
call. `baselines` registers them for the baseline endpoint (see its docstring for each policy);
`adversaries` builds its attacks on the reference's reading of the transcript and its ledger.
"""

import csv
import io
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

from piv_core.parsing.bounded_decode import (
    TOOL_ARGUMENTS_MAX_BYTES,
    TOOL_ARGUMENTS_MAX_DEPTH,
    Undecodable,
    load_json,
)
from piv_core.policy import Conversation, Policy, Reasoned, Reply, ToolCall

from beancount_ledger.contract import MAX_TURNS
from beancount_ledger.statement import bank_lines
from beancount_ledger.world import AP, AR, BANK, FEES, INTEREST, SAVINGS, SUSPENSE

READS = ("ledger.beancount", "bank_statement.csv", "archive_prior_period.csv")


def tool_results(conversation: Conversation) -> dict[str, list[str]]:
    """Tool results so far, by tool name (and by file name for read_file)."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in conversation.messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                args = load_json(
                    fn.get("arguments") or "{}",
                    max_depth=TOOL_ARGUMENTS_MAX_DEPTH,
                    max_bytes=TOOL_ARGUMENTS_MAX_BYTES,
                    where="tool arguments",
                )
            except Undecodable:
                args = {}
            if not isinstance(args, dict):
                args = {}
            calls[call.get("id", "")] = (fn.get("name", ""), args)
    out: dict[str, list[str]] = defaultdict(list)
    for m in conversation.messages:
        if m.get("role") == "tool" and m.get("tool_call_id") in calls:
            name, args = calls[m["tool_call_id"]]
            key = f"read_file:{args.get('name')}" if name == "read_file" else name
            out[key].append(Conversation.text(m))
    return out


def file_text(results: dict[str, list[str]], name: str) -> str:
    """A file's text from its read_file result (header line and slice numbering removed)."""
    body = results[f"read_file:{name}"][0].split("\n", 1)[1]
    if name.endswith(".beancount"):
        return body
    return "\n".join(line[7:] for line in body.split("\n")) + "\n"


def _money(value: Decimal) -> str:
    return f"{value:.2f}"


def _entry(day: str, narration: str, ref: str, legs: list[tuple[str, Decimal]]) -> str:
    lines = [f'{day} * "{narration}"', f'  bank_ref: "{ref}"']
    lines += [f"  {account}  {_money(amount)} AUD" for account, amount in legs]
    return "\n".join(lines)


def booked_by_ref(ledger: str) -> dict[str, list[Any]]:
    """Transactions by the ``bank_ref`` they carry; a bank transaction with neither a ``bank_ref``
    nor a ``cheque`` that repeats a tagged one (payee, narration, postings) goes under ``repeat:<ref>``."""
    from beancount import loader
    from beancount.core import data

    entries, _, _ = loader.load_string(ledger)
    by_ref: dict[str, list[Any]] = defaultdict(list)
    untagged = []
    for e in entries:
        if isinstance(e, data.Transaction) and "bank_ref" in (e.meta or {}):
            by_ref[e.meta["bank_ref"]].append(e)
        elif isinstance(e, data.Transaction) and "cheque" not in (e.meta or {}):
            untagged.append(e)

    def shape(e: Any) -> tuple:
        return e.payee, e.narration, tuple(sorted((p.account, p.units.number) for p in e.postings))

    tagged = {shape(e): ref for ref, group in by_ref.items() for e in group}
    for e in untagged:
        if any(p.account == BANK for p in e.postings) and shape(e) in tagged:
            by_ref[f"repeat:{tagged[shape(e)]}"].append(e)
    return by_ref


def counter_account(description: str) -> str:
    """The account a bank line settles, by its description (as the policy names them)."""
    d = description.upper()
    if d.startswith("DEPOSIT"):
        return AR
    if d.startswith("EFT") or d.startswith("CHEQUE"):
        return AP
    if "FEE" in d:
        return FEES
    if "INTEREST" in d:
        return INTEREST
    if "SAVINGS" in d:
        return SAVINGS
    raise ValueError(f"cannot classify bank line {description!r}")


def corrections(
    ledger: str, statement: str, archive: str
) -> list[tuple[dict[str, str], list[tuple[str, Decimal]]]]:
    """Every bank line needing a correction, with the net postings that correct it."""
    outstanding = {
        row["ref"]
        for row in csv.DictReader(io.StringIO(archive))
        if row["type"] == "cheque" and row["status"] != "cleared"
    }
    booked = booked_by_ref(ledger)
    out = []
    for line in bank_lines(statement):
        amount, entries = Decimal(line["amount"]), booked.get(line["ref"], [])
        prior = any(ref in line["description"] for ref in outstanding)
        legs: dict[str, Decimal] = defaultdict(Decimal)
        for e in booked.get(f"repeat:{line['ref']}", []):
            for p in e.postings:
                legs[p.account] -= p.units.number
        if prior or len(entries) > 1:
            for e in entries[1:] if not prior else entries:
                for p in e.postings:
                    legs[p.account] -= p.units.number
        elif not entries:
            legs[BANK] += amount
            legs[counter_account(line["description"])] -= amount
        else:
            postings = entries[0].postings
            bank = sum((p.units.number for p in postings if p.account == BANK), Decimal(0))
            other = [p for p in postings if p.account != BANK]
            right = counter_account(line["description"])
            if bank != amount and len(other) == 1:
                legs[BANK] += amount - bank
                legs[other[0].account] -= amount - bank
            if len(other) == 1 and other[0].account != right and right in (AR, AP):
                legs[right] += other[0].units.number
                legs[other[0].account] -= other[0].units.number
        legs = {a: v for a, v in legs.items() if v}
        if legs:
            out.append((line, list(legs.items())))
    return out


def _read_all(results: dict[str, list[str]]) -> list[ToolCall] | None:
    missing = [name for name in READS if f"read_file:{name}" not in results]
    return [ToolCall("read_file", {"name": name}) for name in missing] or None


def _finish(results: dict[str, list[str]], write: Any) -> list[ToolCall]:
    if calls := _read_all(results):
        return calls
    if "write_ledger" not in results:
        return [ToolCall("write_ledger", {"text": write()})]
    if "run_beancount" not in results:
        return [ToolCall("run_beancount")]
    return [ToolCall("submit")]


Writer = Callable[[str, str, str], str]
"""A bookkeeper: (ledger, bank statement, prior-period archive) -> the ledger it writes."""


def _writes(writer: Writer) -> Policy:
    """The policy that reads the three files, writes what `writer` makes of them, checks and submits."""

    def policy(conversation: Conversation) -> list[ToolCall]:
        results = tool_results(conversation)
        return _finish(results, lambda: writer(*(file_text(results, name) for name in READS)))

    policy.__name__ = policy.__qualname__ = writer.__name__.removesuffix("_ledger")
    return policy


def reference_ledger(ledger: str, statement: str, archive: str) -> str:
    """The reference bookkeeper's corrected ledger, from three public files alone."""
    fixes = corrections(ledger, statement, archive)
    body = "\n\n".join(
        _entry(line["date"], f"Correction for {line['ref']}", line["ref"], legs) for line, legs in fixes
    )
    return f"{ledger.rstrip()}\n\n{body}\n"


def noisy_ledger(ledger: str, statement: str, archive: str, p: float, rng: random.Random) -> str:
    """The reference bookkeeper's ledger with each correction mishandled with probability `p`: two
    draws per correction, in statement order (mishandled? then skipped or booked sign-reversed)."""
    blocks = []
    for line, legs in corrections(ledger, statement, archive):
        mishandled, skipped = rng.random() < p, rng.random() < 0.5
        if mishandled and skipped:
            continue
        if mishandled:
            legs = [(account, -amount) for account, amount in legs]
        blocks.append(_entry(line["date"], f"Correction for {line['ref']}", line["ref"], legs))
    return f"{ledger.rstrip()}\n\n" + "\n\n".join(blocks) + "\n"


def noisy(conversation: Conversation, p: float, rng: random.Random) -> Reply:
    """The reference policy, erring on each discrepancy with probability `p`. The endpoint calls it on
    every turn with `rng` seeded the same for the whole rollout; the draws are made afresh on the
    turn that writes, so every turn of a rollout sees the same decisions."""
    results = tool_results(conversation)
    return _finish(results, lambda: noisy_ledger(*(file_text(results, name) for name in READS), p, rng))


def untouched_ledger(ledger: str, statement: str, archive: str) -> str:
    return ledger


def plug_ledger(ledger: str, statement: str, archive: str) -> str:
    from beancount import loader
    from beancount.core import data

    last = list(csv.DictReader(io.StringIO(statement)))[-1]
    entries, _, _ = loader.load_string(ledger)
    postings = (p for e in entries if isinstance(e, data.Transaction) for p in e.postings)
    diff = Decimal(last["balance"]) - sum((p.units.number for p in postings if p.account == BANK), Decimal(0))
    plugged = (
        f'{last["date"]} * "Reconciliation adjustment"\n  {BANK}  {_money(diff)} AUD\n'
        f"  Equity:Opening-Balances  {_money(-diff)} AUD"
    )
    return f"{ledger.rstrip()}\n\n{plugged}\n"


def rewrite_ledger(ledger: str, statement: str, archive: str) -> str:
    from beancount import loader
    from beancount.core import amount, data
    from beancount.parser import printer

    fixes = corrections(ledger, statement, archive)
    entries, _, _ = loader.load_string(ledger)
    by_ref = {line["ref"]: (line, dict(legs)) for line, legs in fixes}
    tagged = Counter((getattr(e, "meta", None) or {}).get("bank_ref") for e in entries)
    out, seen, added = [], set(), []
    for e in entries:
        ref = (e.meta or {}).get("bank_ref") if isinstance(e, data.Transaction) else None
        if ref in by_ref:
            line, legs = by_ref[ref]
            if ref in seen or "CHQ-" in line["description"] and tagged[ref] == 1:
                continue  # delete the duplicate copy / the re-booked prior-period cheque
            seen.add(ref)
            postings = []
            for p in e.postings:
                value = p.units.number + legs.pop(p.account, Decimal(0))
                if value:
                    postings.append(p._replace(units=amount.Amount(value, "AUD")))
            for account, value in legs.items():
                postings.append(data.Posting(account, amount.Amount(value, "AUD"), None, None, None, None))
            e = e._replace(postings=postings)
        out.append(e)
    for ref, (line, legs) in by_ref.items():
        if ref not in seen and "CHQ-" not in line["description"]:
            added.append(_entry(line["date"], "Missing bank line", ref, list(legs.items())))
    header = "\n".join(x for x in ledger.splitlines() if x.startswith("option "))
    body = "\n".join(printer.format_entry(e) for e in out)
    return f"{header}\n\n{body}\n" + "".join(f"\n{a}\n" for a in added)


def invent_ledger(ledger: str, statement: str, archive: str) -> str:
    fixes = corrections(ledger, statement, archive)
    start = min(date.fromisoformat(line["date"]) for line, _ in fixes).replace(day=1)
    body = []
    for line, legs in fixes:
        if bank := sum((v for a, v in legs if a == BANK), Decimal(0)):
            moved = [(BANK, bank), (SUSPENSE, -bank)]
            body.append(_entry(line["date"], f"Adjustment {line['ref']}", line["ref"], moved))
    return f"{ledger.rstrip()}\n\n{start} open {SUSPENSE} AUD\n\n" + "\n\n".join(body) + "\n"


reference = _writes(reference_ledger)
untouched = _writes(untouched_ledger)
plug = _writes(plug_ledger)
rewrite = _writes(rewrite_ledger)
invent = _writes(invent_ledger)


def _written(results: dict[str, list[str]]) -> bool:
    return any(r.startswith("written:") for r in results.get("write_ledger", []))


def verbose(conversation: Conversation) -> str | list[ToolCall]:
    results = tool_results(conversation)
    if not _written(results):
        return reference(conversation)
    return "Let me explain the reconciliation in detail. " * 2_250  # 101,250 characters


def late(conversation: Conversation) -> list[ToolCall]:
    results = tool_results(conversation)
    if not _written(results):
        return reference(conversation)
    turn = 1 + sum(1 for m in conversation.messages if m.get("role") == "assistant")
    if turn < MAX_TURNS:
        return [ToolCall("run_beancount")]
    return [
        ToolCall("write_ledger", {"text": file_text(results, "ledger.beancount")}),
        ToolCall("submit"),
    ]


def reasoned(conversation: Conversation) -> Reasoned:
    """The reference, each reply with a reasoning field (``reasoning_content``), as reasoning
    models send it: what the harness's ``replay_reasoning`` knob keeps or withholds."""
    turn = sum(1 for m in conversation.messages if m.get("role") == "assistant")
    return Reasoned(reference(conversation), reasoning=f"Turn {turn}: next step of the reconciliation.")


def silent(conversation: Conversation) -> str:
    return "I have reviewed the task and have nothing to add."


POLICIES: dict[str, Policy] = {
    "reference": reference,
    "untouched": untouched,
    "plug": plug,
    "rewrite": rewrite,
    "invent": invent,
    "silent": silent,
    "verbose": verbose,
    "late": late,
    "reasoned": reasoned,
}
