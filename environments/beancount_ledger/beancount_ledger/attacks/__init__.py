"""The exploit corpus: attack families as code, each audited against the entitlement oracle.

An attack is a function ``World -> Attempt``: the ledger text an agent would write (built from the
public ledger `render.ledger_text`, the statement and the corrections a perfect bookkeeper would
compute) and its `Claim`, the semantic declaration of what that ledger honestly does (which plants it
corrects the way the policy asks, which it only books in substance, which other violations it commits;
see `entitlement`). `audit` scores every attack of `ATTACKS` with the real scorer and sets the reward
beside the oracle's entitlement; the release preflight fails a world where any reward exceeds it.
Families that crash beancount's parser (`SANDBOXED`) are scored in a sandbox worker, as the reward is.

The families are grouped by what they attack: `plugs` (a plug entry instead of the corrections),
`matching` (how corrections are matched to the key: tags, dates, entry shape), `history` (stale
items and edited originals), `metadata` (forged metadata and provenance), `directives` (what the
loader skips or obeys: comments, assertions, pads, injected directives), `amounts` (tolerance,
precision, prices, currencies) and `resources` (the envelope, a parser crash). `blocks` holds what
they are built from and `corpus` their order, the audit and its table. Each family is reached by
name through `ATTACKS`; this package exposes the corpus, its audit and the building blocks.
"""

# The modules the corpus is written against, reachable from it as before (``attacks.render``).
from beancount_ledger import answer, isolated, render, scorer  # noqa: F401
from beancount_ledger.attacks.blocks import (
    EPSILON,
    Attack,
    AttackResult,
    Attempt,
    Legs,
    NotApplicable,
)
from beancount_ledger.attacks.corpus import ATTACKS, audit, key, table
from beancount_ledger.attacks.directives import INJECTED_DIRECTIVES, INJECTION_PREFIXES, INJECTIONS
from beancount_ledger.attacks.resources import SANDBOXED

__all__ = [
    "ATTACKS",
    "EPSILON",
    "INJECTED_DIRECTIVES",
    "INJECTIONS",
    "INJECTION_PREFIXES",
    "SANDBOXED",
    "Attack",
    "AttackResult",
    "Attempt",
    "Legs",
    "NotApplicable",
    "audit",
    "key",
    "table",
]
