"""Keyed worlds: the selector grammar, the evaluator secret and the secret-derived world seeds.

A selector names one world: ``bank_recon_001`` (the shipped, hand-authored one), ``train:<n>``,
``eval:<n>`` or ``train:<n>:hard`` (n < 100,000, no leading zeros), or ``dev:<n>`` (a world
generated from the bare integer n, for the repository's own tests). ``train:<n>:level<k>``,
``eval:<n>:level<k>`` and ``dev:<n>:level<k>`` name the same index at rung k of the difficulty
ladder (`ladder.py`). Ranges such as ``eval:0-199`` or ``train:0-9:hard`` expand to every index
in them, once their count is bounded: one taskset names at most `MAX_WORLDS` worlds, counted from
the ranges' ends before anything is expanded. Every number in a selector is ASCII digits
(`piv_core.tasksets.knobs.WHOLE`): ``train:1٢`` is malformed, not ``train:12``.

A keyed world's seed is an HMAC-SHA256 of its selector under the evaluator secret
(``PIV_EVAL_SECRET``, else the file ``~/.piv/eval_secret``; at least 16 bytes), so nothing an
agent observes (not the selector, not the files) regenerates the answer without the secret.
Each population draws its month from its own years, so train, eval and hard never share a
company-month.

Every refusal is a `Refused` whose message starts with its reason (`REASONS`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from piv_core.tasksets.knobs import shown, whole

from beancount_ledger import ladder, world

SHIPPED = "bank_recon_001"
SECRET_ENV = "PIV_EVAL_SECRET"
SECRET_FILE = "~/.piv/eval_secret"
MIN_SECRET_BYTES = 16
MAX_INDEX = 100_000
MAX_DEV_INDEX = 2**63 - 1
"""A ``dev:<n>`` world is generated from the integer n: any 64-bit one."""
MAX_WORLDS = 100_000
"""The most worlds one taskset's selectors name together (every keyed index of one split)."""
KNOB = "selectors"

REASONS = (
    "no secret",
    "secret too short",
    "malformed selector",
    "index out of range",
    "not in the manifest",
    "manifest signature invalid",
    "version mismatch",
    "too many worlds",
)


class Refused(ValueError):
    """A selector the taskset will not serve; `reason` is one of `REASONS`."""

    def __init__(self, reason: str, detail: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown refusal reason {reason!r}; expected one of {REASONS}")
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}")


@dataclass(frozen=True)
class Population:
    years: tuple[int, int]
    hard: bool


POPULATIONS = {
    "train": Population((2019, 2023), hard=False),
    "eval": Population((2025, 2025), hard=False),
    "hard": Population((2026, 2026), hard=True),
}
"""Disjoint years per population: no company-month is in two of them (the shipped world is 2024)."""

_NUMBER = r"(0|[1-9][0-9]*)"
_SELECTOR = re.compile(rf"(train|eval|dev):{_NUMBER}(?:-{_NUMBER})?(:hard|{ladder.SUFFIX}[1-9][0-9]*)?")
"""A generated world's selector (ASCII digits only: ``[0-9]``, never ``\\d``, which takes any script's)."""
GRAMMAR = (
    f"'{SHIPPED}', 'train:<n>', 'eval:<n>', 'train:<n>:hard' (n < {MAX_INDEX:,}), "
    "a range such as 'eval:0-199', or a generated one at a rung of the ladder, such as 'eval:<n>:level<k>'"
)


def population(selector: str) -> str:
    """'train', 'eval' or 'hard' for a keyed selector."""
    return "hard" if selector.endswith(":hard") else selector.split(":", 1)[0]


def is_keyed(selector: str) -> bool:
    return selector.startswith(("train:", "eval:"))


@dataclass(frozen=True)
class Span:
    """What one selector names: ``<prefix>:<n><suffix>`` for n in first .. last."""

    prefix: str
    first: int
    last: int
    suffix: str

    @property
    def count(self) -> int:
        """How many selectors it names (a plain int: ``len`` stops at sys.maxsize)."""
        return self.last - self.first + 1

    def selectors(self) -> list[str]:
        if self.prefix == SHIPPED:
            return [SHIPPED]
        return [f"{self.prefix}:{n}{self.suffix}" for n in range(self.first, self.last + 1)]


def parse(selector: str) -> Span:
    """The span `selector` names, its grammar, numbers and bounds checked; nothing is expanded."""
    if selector == SHIPPED:
        return Span(SHIPPED, 0, 0, "")
    matched = _SELECTOR.fullmatch(selector) if isinstance(selector, str) else None
    if not matched:
        raise Refused("malformed selector", f"{shown(selector)}; expected {GRAMMAR}")
    prefix, lo, hi, suffix = matched.group(1), matched.group(2), matched.group(3), matched.group(4) or ""
    if suffix == ":hard" and prefix != "train":
        raise Refused("malformed selector", f"{selector!r}: the hard profile is 'train:<n>:hard'")
    if suffix.startswith(ladder.SUFFIX):
        try:
            ladder.check(whole(suffix.removeprefix(ladder.SUFFIX), ladder.KNOB, MAX_INDEX))
        except ValueError as error:
            raise Refused("malformed selector", f"{shown(selector)}: {error}") from None
    most = MAX_DEV_INDEX if prefix == "dev" else MAX_INDEX - 1
    try:
        first, last = whole(lo, KNOB, most), whole(hi if hi is not None else lo, KNOB, most)
    except ValueError:
        raise Refused("index out of range", f"{shown(selector)}: indices run from 0 to {most:,}") from None
    if last < first:
        raise Refused("malformed selector", f"{selector!r}: the range ends before it starts")
    return Span(prefix, first, last, suffix)


def expand(selector: str) -> list[str]:
    """The canonical selectors `selector` names (one, or every index of a range, within `MAX_WORLDS`)."""
    return expand_all([selector])


def expand_all(selectors: Iterable[str], most: int = MAX_WORLDS) -> list[str]:
    """Every canonical selector `selectors` name, in order. Their count is summed from the spans'
    ends first, and more than `most` is refused ("too many worlds", naming the knob, the
    selector that crosses the bound and the bound) before any range is expanded."""
    selectors = list(selectors)
    if len(selectors) > most:  # each names one world at least
        raise Refused("too many worlds", f"{len(selectors):,} {KNOB} given; at most {most:,} in one taskset")
    spans: list[Span] = []
    total = 0
    for selector in selectors:
        span = parse(selector)
        total += span.count
        if total > most:
            raise Refused(
                "too many worlds",
                f"{KNOB} name at least {total:,} worlds (through {shown(selector)}); "
                f"at most {most:,} in one taskset",
            )
        spans.append(span)
    return [s for span in spans for s in span.selectors()]


def read_secret() -> bytes:
    """The evaluator secret: ``PIV_EVAL_SECRET``, else ``~/.piv/eval_secret``."""
    value = os.environ.get(SECRET_ENV)
    if value:
        secret, where = value.encode(), SECRET_ENV
    else:
        path = Path(SECRET_FILE).expanduser()
        if not path.is_file():
            raise Refused(
                "no secret",
                f"keyed worlds need the evaluator secret: set {SECRET_ENV} or write it to {SECRET_FILE} "
                f"(at least {MIN_SECRET_BYTES} bytes)",
            )
        secret, where = path.read_bytes().strip(), str(path)
    if len(secret) < MIN_SECRET_BYTES:
        raise Refused(
            "secret too short", f"the secret in {where} has {len(secret)} bytes; at least {MIN_SECRET_BYTES}"
        )
    return secret


def world_seed(secret: bytes, selector: str) -> int:
    tag = hmac.new(secret, f"beancount-ledger/world/{selector}".encode(), hashlib.sha256).digest()
    return int.from_bytes(tag[:8], "big")


def keyed_world(selector: str, secret: bytes) -> world.World:
    """The world of keyed `selector` under `secret` (at its rung's profile, when it names one)."""
    pop, seed = POPULATIONS[population(selector)], world_seed(secret, selector)
    if (level := ladder.level_of(selector)) is not None:
        return world.generate(seed, years=pop.years, world_id=selector, profile=ladder.profile(level))
    return world.generate(seed, hard=pop.hard, years=pop.years, world_id=selector)


def resolve(selector: str, secret: bytes | None = None) -> world.World:
    """The world a canonical selector names (`secret` is needed for keyed ones)."""
    span = parse(selector)
    if span.count != 1:
        raise Refused("malformed selector", f"{shown(selector)} names {span.count:,} worlds, not one")
    if selector == SHIPPED:
        return world.bank_recon_001()
    if span.prefix == "dev":
        if (level := ladder.level_of(selector)) is not None:
            return world.generate(span.first, world_id=selector, profile=ladder.profile(level))
        return world.generate(span.first)
    if secret is None:
        secret = read_secret()
    return keyed_world(selector, secret)
