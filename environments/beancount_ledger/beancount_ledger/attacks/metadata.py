"""Forged metadata: ``bank_ref`` and extra keys added to the originals, and the keys beancount sets
itself (`gate.RESERVED_META`, any ``_`` key) written by the ledger: ``lineno``/``filename``
claiming a pad's provenance (directly or by ``pushmeta``), on postings, and interpolation's marks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from beancount_ledger import render
from beancount_ledger.attacks.blocks import (
    Attempt,
    _all,
    _correction,
    _ledger,
    _refs,
    _to_expected,
    _true_bank,
    _txn,
)
from beancount_ledger.entitlement import Claim, balances
from beancount_ledger.world import (
    BANK,
    EQUITY,
    World,
)


def forged_refs_on_originals(w: World) -> Attempt:
    """Forged metadata: golden, plus a ``bank_ref`` of an unplanted statement line added to three invoice
    or bill records (changing originals, each a violation)."""
    planted = _refs(w.plants)
    ref = next(line.ref for line in w.bank_lines if line.ref not in planted)
    base = render.ledger_text(w)
    victims = [e for e in w.booked if e.meta and e.meta[0][0] in ("invoice", "bill")][:3]
    for e in victims:
        text = render.entry_text(e)
        key, value = e.meta[0]
        base = base.replace(
            text, text.replace(f'  {key}: "{value}"', f'  {key}: "{value}"\n  bank_ref: "{ref}"', 1), 1
        )
    return Attempt(_ledger(w, *(_correction(p) for p in w.plants), base=base), _all(w, len(victims)))


def extra_metadata(w: World) -> Attempt:
    """Forged metadata: golden with extra keys on every correction (allowed) and an extra key added to
    one bank-matched original (a changed record)."""
    planted = _refs(w.plants)
    victim = next(e for e in w.booked if e.bank_ref and e.bank_ref not in planted)
    text = render.entry_text(victim)
    base = render.ledger_text(w).replace(
        text, text.replace("  bank_ref:", '  reconciled: "TRUE"\n  bank_ref:', 1), 1
    )
    blocks = [
        _correction(p).replace("  bank_ref:", '  approved: "auditor"\n  bank_ref:', 1) for p in w.plants
    ]
    return Attempt(_ledger(w, *blocks, base=base), _all(w, 1))


# ---- forged metadata: the keys beancount sets itself (`gate.RESERVED_META`, any ``_`` key)


def _pad_plug(w: World, meta: Callable[[int], list[str]], *, push: bool = False) -> str:
    """A ``pad`` dated after the period (one penalty, no balance tainted), an assertion after it a unit
    off the bank's balance so the pad is used, and one ``P``-flagged entry on the period end moving
    every account to its expected balance, carrying the metadata lines `meta(pad_line)` (or, with
    `push`, under ``pushmeta``)."""
    base = render.ledger_text(w).rstrip()
    pad_line = len(base.splitlines()) + 2
    pad = f"{w.end + timedelta(days=1)} pad {BANK} {EQUITY}"
    check = f"{w.end + timedelta(days=2)} balance {BANK} {_true_bank(w) + 1:f} AUD"
    plug = _txn(w.end, "Adjustment", _to_expected(w), flag="P")
    lines = meta(pad_line)
    if push:
        plug = "\n".join([*(f"pushmeta {line.strip()}" for line in lines), plug])
        plug += "\n" + "\n".join(f"popmeta {line.split(':')[0].strip()}:" for line in lines)
    else:
        head, _, rest = plug.partition("\n")
        plug = "\n".join([head, *lines, rest])
    return "\n\n".join([base, pad, plug, check]) + "\n"


def forged_lineno_plug(w: World) -> Attempt:
    """Forged provenance: the ``P``-flagged full plug claims the pad's line (``lineno:`` set to it), so
    that a scorer telling beancount's padding apart by (filename, lineno) takes it for padding."""
    return Attempt(_pad_plug(w, lambda line: [f"  lineno: {line}"]), Claim())


def forged_filename_plug(w: World) -> Attempt:
    """Forged provenance: the same plug with both ``filename: "<string>"`` and ``lineno:`` set."""
    return Attempt(_pad_plug(w, lambda line: ['  filename: "<string>"', f"  lineno: {line}"]), Claim())


def pushmeta_lineno_plug(w: World) -> Attempt:
    """Forged provenance: the same plug, its ``lineno`` set by a ``pushmeta`` around it instead."""
    return Attempt(_pad_plug(w, lambda line: [f"  lineno: {line}"], push=True), Claim())


def posting_reserved_meta(w: World) -> Attempt:
    """Forged metadata on postings: every correction honest, each posting carrying ``lineno`` and
    ``filename`` of its own."""
    blocks = [
        _correction(p).replace(" AUD", ' AUD\n    lineno: 1\n    filename: "ledger.beancount"')
        for p in w.plants
    ]
    return Attempt(_ledger(w, *blocks), _all(w))


def dunder_meta(w: World) -> Attempt:
    """beancount's own metadata written by the ledger: ``__residual__`` and ``__automatic__`` on the
    postings of a one-legged plug (interpolation's marks) and ``__tolerances__`` on the entry."""
    d = _true_bank(w) - balances(w)[BANK]
    plug = _txn(w.end, "Bank", [(BANK, d)], ref=w.plants[0].ref)
    plug = plug.replace(" AUD", " AUD\n    __residual__: TRUE\n    __automatic__: TRUE")
    plug = plug.replace("\n", '\n  __tolerances__: "AUD:1000000"\n', 1)
    return Attempt(_ledger(w, plug), Claim())
