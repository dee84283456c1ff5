"""The two requests a sandbox worker answers, and their typed callers.

- `check(text)`: what the tools report about a ledger (refused, beancount's errors, or every
  account's balance), for `write_ledger` and `run_beancount`;
- `score(text, key)` / `ascore`: `scorer.score`, for the task's reward and metrics (`ascore`
  for a coroutine: the event loop never waits on the sandbox).

The callers run in the tool server and the env server; the bodies (`OPS`) run in a sandbox
worker (`sandbox.py`). A worker that fails (crash, timeout, limit) yields a `Checked` with
`failure` set, or a `Score` with `error` set and reward 0; neither ever raises.

What the tools ask is shared fairly (`Lane`, one per rollout):

- a check is remembered by the ledger's digest (sha256 of its text, the last `CHECKS_KEPT` in
  this process): an unchanged ledger is never checked again, and concurrent checks of one text
  run once, the others waiting for that answer; only answers the same text would get again are
  remembered (never "busy", a timeout or a killed worker);
- a rollout has at most one check in flight: a second one waits for it (`sandbox.WAIT_SECONDS`
  at most), then is declined as busy;
- a check waits `sandbox.WAIT_SECONDS` at most for a worker (the pool serves in arrival order),
  then is declined as busy;
- a rollout's checks may use `EPISODE_CPU` CPU seconds of the sandbox in all (a remembered
  answer costs nothing; a failure that costs a worker its life costs the CPU it used, start-up
  included); past that, every check is declined.

A declined check (`Checked.declined`) is an error message to the model, and the episode goes on.
The reward is never declined: its score waits its turn in the pool, however busy, and always
comes (`ascore`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from beancount_ledger import sandbox
from beancount_ledger.answer import Fix, Key
from beancount_ledger.scorer import Score

CHECKS_KEPT = 256
"""Checks remembered per process (least recently used forgotten first)."""
EPISODE_CPU = 12.0
"""Sandbox CPU seconds one rollout's checks may use (the reference's episode uses under 0.05)."""


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
    declined: str | None = None
    """Why the sandbox was not asked this time (busy, or the episode's CPU spent): say it, go on."""
    cpu: float = 0.0
    """Sandbox CPU seconds this answer cost its caller (0 when remembered)."""

    @property
    def ok(self) -> bool:
        return self.refused is None and self.failure is None and self.declined is None and not self.errors


class _Remembered:
    """Checks by digest: the last `CHECKS_KEPT` answers, and one computation per digest at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: OrderedDict[str, Checked] = OrderedDict()
        self.running: dict[str, threading.Event] = {}

    def check(self, text: str) -> Checked:
        digest = hashlib.sha256(text.encode()).hexdigest()
        while True:
            with self.lock:
                if (hit := self.done.get(digest)) is not None:
                    self.done.move_to_end(digest)
                    return dataclasses.replace(hit, cpu=0.0)
                flight = self.running.get(digest)
                if flight is None:
                    flight = self.running[digest] = threading.Event()
                    break
            flight.wait()  # bounded: the running check is (sandbox.WAIT_SECONDS + WALL_SECONDS)
            with self.lock:
                if digest not in self.done:  # it was not remembered: its caller gets it, not us
                    return Checked(declined=_busy_text())
        try:
            checked, lasting = _sandboxed_check(text)
            if lasting:
                with self.lock:
                    self.done[digest] = checked
                    while len(self.done) > CHECKS_KEPT:
                        self.done.popitem(last=False)
            return checked
        finally:
            with self.lock:
                del self.running[digest]
            flight.set()


def _busy_text() -> str:
    return f"busy: the sandbox did not answer within {sandbox.WAIT_SECONDS:g} s; try again"


def _sandboxed_check(text: str) -> tuple[Checked, bool]:
    """(the check of `text`, whether the same text would always get it)."""
    reply = sandbox.call("check", text=text, wait=sandbox.WAIT_SECONDS)
    if isinstance(reply, sandbox.Failure):
        if reply.reason.startswith("busy"):
            return Checked(declined=reply.reason), False
        return Checked(failure=reply.reason, cpu=reply.cpu), reply.lasting
    value = reply.value
    checked = Checked(
        refused=value["refused"],
        errors=list(value["errors"]),
        error_count=value["error_count"],
        balances=[(a, b) for a, b in value["balances"]],
        cpu=reply.cpu,
    )
    return checked, True


_remembered = _Remembered()


def check(text: str) -> Checked:
    """What the tools report about `text`, from a sandbox worker, remembered by digest."""
    return _remembered.check(text)


class Lane:
    """One rollout's use of the sandbox: one check in flight at a time, `EPISODE_CPU` seconds in all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cpu = 0.0
        """Sandbox CPU seconds this rollout's checks have used."""

    def check(self, text: str) -> Checked:
        if self.cpu >= EPISODE_CPU:
            return Checked(
                declined=f"budget: this episode's checks have used their {EPISODE_CPU:g} CPU seconds of "
                "beancount, so write_ledger and run_beancount are declined from now on; submit still "
                "scores the last ledger written"
            )
        if not self._lock.acquire(timeout=sandbox.WAIT_SECONDS):
            return Checked(
                declined=f"busy: this episode's previous check was still running after "
                f"{sandbox.WAIT_SECONDS:g} s; try again"
            )
        try:
            checked = check(text)
            self.cpu += checked.cpu
            return checked
        finally:
            self._lock.release()


def score(text: str | None, key: Key) -> Score:
    if text is None:
        return _unwritten(key)
    return _score_of(sandbox.call("score", text=text, key=key_json(key)), key)


async def ascore(text: str | None, key: Key) -> Score:
    """`score` for a coroutine: the request waits and runs in a thread, off the event loop."""
    if text is None:
        return _unwritten(key)
    return _score_of(await sandbox.acall("score", text=text, key=key_json(key)), key)


def _unwritten(key: Key) -> Score:
    return Score(balances_total=len(key.balances), plants=len(key.fixes))


def _score_of(reply: sandbox.Reply | sandbox.Failure, key: Key) -> Score:
    if isinstance(reply, sandbox.Failure):
        return Score(
            written=True, balances_total=len(key.balances), plants=len(key.fixes), error=reply.reason
        )
    return Score(**reply.value)


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
        "located_credit": key.located_credit,
    }


def key_from_json(value: dict[str, Any]) -> Key:
    fixes = tuple(
        Fix(f["kind"], f["ref"], date.fromisoformat(f["date"]), {a: Decimal(v) for a, v in f["fix"].items()})
        for f in value["fixes"]
    )
    end = date.fromisoformat(value["end"])
    return Key(value["original"], value["balances"], fixes, end, bool(value.get("located_credit")))


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
