"""The two requests a sandbox worker answers, and their typed callers.

- `check(text)`: what the tools report about a ledger (refused, beancount's errors, or every
  account's balance), for `write_ledger` and `run_beancount`;
- `score(text, key)`: `scorer.score`, for the task's reward and metrics.

The callers run in the tool server and the env server; the bodies (`OPS`) run in a sandbox
worker (`sandbox.py`). A worker that fails (crash, timeout, limit) yields a `Checked` with
`failure` set, or a `Score` with `error` set and reward 0; neither ever raises.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from beancount_ledger import sandbox
from beancount_ledger.answer import Fix, Key
from beancount_ledger.scorer import Score


@dataclass(frozen=True)
class Checked:
    """A ledger as the tools describe it."""

    refused: str | None = None
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    balances: list[tuple[str, str]] = field(default_factory=list)
    """(account, AUD balance) for every account with postings, when the ledger loads."""
    failure: str | None = None
    """Why beancount produced no answer at all (it crashed, or ran out of time or memory)."""

    @property
    def ok(self) -> bool:
        return self.refused is None and self.failure is None and not self.errors


def check(text: str) -> Checked:
    reply = sandbox.call("check", text=text)
    if isinstance(reply, sandbox.Failure):
        return Checked(failure=reply.reason)
    return Checked(
        refused=reply["refused"],
        errors=list(reply["errors"]),
        error_count=reply["error_count"],
        balances=[(a, b) for a, b in reply["balances"]],
    )


def score(text: str | None, key: Key) -> Score:
    if text is None:
        return Score(balances_total=len(key.balances), plants=len(key.fixes))
    reply = sandbox.call("score", text=text, key=key_json(key))
    if isinstance(reply, sandbox.Failure):
        return Score(
            written=True, balances_total=len(key.balances), plants=len(key.fixes), error=reply.reason
        )
    return Score(**reply)


def key_json(key: Key) -> dict[str, Any]:
    """`key` as JSON values (the form it travels in)."""
    return {
        "original": key.original,
        "balances": key.balances,
        "fixes": [
            {
                "kind": f.kind,
                "ref": f.ref,
                "date": f.date.isoformat(),
                "fix": {a: str(v) for a, v in f.fix.items()},
            }
            for f in key.fixes
        ],
        "end": key.end.isoformat(),
    }


def key_from_json(value: dict[str, Any]) -> Key:
    fixes = tuple(
        Fix(f["kind"], f["ref"], date.fromisoformat(f["date"]), {a: Decimal(v) for a, v in f["fix"].items()})
        for f in value["fixes"]
    )
    return Key(value["original"], value["balances"], fixes, date.fromisoformat(value["end"]))


# ---- run in the worker ----


def _check(text: str) -> dict[str, Any]:
    from beancount.core import realization

    from beancount_ledger import gate
    from beancount_ledger.render import CURRENCY

    loaded = gate.load(text)
    balances = []
    if loaded.ok:
        real = realization.realize(loaded.entries)
        balances = [
            (acc.account, f"{acc.balance.get_currency_units(CURRENCY).number:.2f}")
            for acc in realization.iter_children(real)
            if acc.txn_postings
        ]
    return {
        "refused": loaded.refused,
        "errors": loaded.errors,
        "error_count": loaded.error_count,
        "balances": balances,
    }


def _score(text: str, key: dict[str, Any]) -> dict[str, Any]:
    from beancount_ledger import scorer

    return dataclasses.asdict(scorer.score(text, key_from_json(key)))


OPS = {"check": _check, "score": _score}
