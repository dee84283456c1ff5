"""Keyed worlds: the selector grammar, the evaluator secret and the secret-derived world seeds.

A selector names one world: ``bank_recon_001`` (the shipped, hand-authored one), ``train:<n>``,
``eval:<n>`` or ``train:<n>:hard`` (n < 100,000, no leading zeros), or ``dev:<n>`` (a world
generated from the bare integer n, for the repository's own tests). ``train:<n>:level<k>``,
``eval:<n>:level<k>`` and ``dev:<n>:level<k>`` name the same index at rung k of the difficulty
ladder (`ladder.py`). Ranges such as ``eval:0-199`` or ``train:0-9:hard`` expand to every index
in them.

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
from dataclasses import dataclass
from pathlib import Path

from beancount_ledger import ladder, world

SHIPPED = "bank_recon_001"
SECRET_ENV = "PIV_EVAL_SECRET"
SECRET_FILE = "~/.piv/eval_secret"
MIN_SECRET_BYTES = 16
MAX_INDEX = 100_000

REASONS = (
    "no secret",
    "secret too short",
    "malformed selector",
    "index out of range",
    "not in the manifest",
    "manifest signature invalid",
    "version mismatch",
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

_KEYED = re.compile(r"(train|eval):(0|[1-9]\d*)(?:-(0|[1-9]\d*))?(:hard|:level[1-9]\d*)?")
_DEV = re.compile(r"dev:(0|[1-9]\d*)(?:-(0|[1-9]\d*))?(:level[1-9]\d*)?")
GRAMMAR = (
    f"'{SHIPPED}', 'train:<n>', 'eval:<n>', 'train:<n>:hard' (n < {MAX_INDEX:,}), "
    "a range such as 'eval:0-199', or a generated one at a rung of the ladder, such as 'eval:<n>:level<k>'"
)


def population(selector: str) -> str:
    """'train', 'eval' or 'hard' for a keyed selector."""
    return "hard" if selector.endswith(":hard") else selector.split(":", 1)[0]


def is_keyed(selector: str) -> bool:
    return selector.startswith(("train:", "eval:"))


def expand(selector: str) -> list[str]:
    """The canonical selectors `selector` names (one, or every index of a range)."""
    if selector == SHIPPED:
        return [selector]
    keyed, dev = _KEYED.fullmatch(selector), _DEV.fullmatch(selector)
    if keyed:
        split, lo, hi, profile = keyed.groups()
        if profile == ":hard" and split != "train":
            raise Refused("malformed selector", f"{selector!r}: the hard profile is 'train:<n>:hard'")
        prefix, suffix = split, profile or ""
    elif dev:
        lo, hi, level = dev.groups()
        prefix, suffix = "dev", level or ""
    else:
        raise Refused("malformed selector", f"{selector!r}; expected {GRAMMAR}")
    if suffix.startswith(ladder.SUFFIX):
        try:
            ladder.check(int(suffix.removeprefix(ladder.SUFFIX)))
        except ValueError as error:
            raise Refused("malformed selector", f"{selector!r}: {error}") from None
    first, last = int(lo), int(hi if hi is not None else lo)
    if last < first:
        raise Refused("malformed selector", f"{selector!r}: the range ends before it starts")
    if keyed and last >= MAX_INDEX:
        raise Refused("index out of range", f"{selector!r}: indices run from 0 to {MAX_INDEX - 1:,}")
    return [f"{prefix}:{n}{suffix}" for n in range(first, last + 1)]


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
    if selector == SHIPPED:
        return world.bank_recon_001()
    if selector.startswith("dev:"):
        if (level := ladder.level_of(selector)) is not None:
            seed = int(selector[4:].split(":", 1)[0])
            return world.generate(seed, world_id=selector, profile=ladder.profile(level))
        return world.generate(int(selector[4:]))
    if secret is None:
        secret = read_secret()
    return keyed_world(selector, secret)
