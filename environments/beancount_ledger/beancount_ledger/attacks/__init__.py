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
they are built from and `corpus` their order, the audit and its table. This package exposes all of
it under one name, as the single module it was.
"""

# The modules the corpus is written against, reachable from it as before (``attacks.render``).
from beancount_ledger import answer, isolated, render, scorer  # noqa: F401
from beancount_ledger.attacks.amounts import (
    currency_invented_commodity,
    currency_usd_widened_opens,
    over_precise_three_decimals,
    over_precise_tolerated,
    price_plug,
)
from beancount_ledger.attacks.blocks import (
    EPSILON,
    Attack,
    AttackResult,
    Attempt,
    Legs,
    NotApplicable,
    _correction,
    _fix,
    _ledger,
    _net,
    _txn,
)
from beancount_ledger.attacks.corpus import ATTACKS, audit, key, table
from beancount_ledger.attacks.directives import (
    INJECTED_DIRECTIVES,
    INJECTION_PREFIXES,
    INJECTIONS,
    balance_assertions,
    carriage_return_option,
    comment_injection,
    directive_injection,
    pad_plug,
)
from beancount_ledger.attacks.history import (
    corrections_after_period,
    prior_cheque_as_expense,
    reverse_unpresented_cheque,
    rewrite_history,
)
from beancount_ledger.attacks.matching import (
    combined_corrections,
    copied_statement,
    duplicated_corrections,
    forged_shifted_refs,
    forged_wrong_dates,
    partial_untagged_fix,
    sign_flipped,
    wash_pairs_on_plants,
    wash_unplanted_refs,
)
from beancount_ledger.attacks.metadata import (
    dunder_meta,
    extra_metadata,
    forged_filename_plug,
    forged_lineno_plug,
    forged_refs_on_originals,
    posting_reserved_meta,
    pushmeta_lineno_plug,
)
from beancount_ledger.attacks.plugs import (
    edit_then_reuse_ref,
    full_plug,
    near_complete_plug,
    padding_flag_plug,
    partial_tagged_plug,
    plug_new_account,
    plug_statement_equity,
    suspense_per_line,
)
from beancount_ledger.attacks.resources import SANDBOXED, division_by_zero_amount, padded_file

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
    "_correction",
    "_fix",
    "_ledger",
    "_net",
    "_txn",
    "audit",
    "balance_assertions",
    "carriage_return_option",
    "combined_corrections",
    "comment_injection",
    "copied_statement",
    "corrections_after_period",
    "currency_invented_commodity",
    "currency_usd_widened_opens",
    "directive_injection",
    "division_by_zero_amount",
    "dunder_meta",
    "duplicated_corrections",
    "edit_then_reuse_ref",
    "extra_metadata",
    "forged_filename_plug",
    "forged_lineno_plug",
    "forged_refs_on_originals",
    "forged_shifted_refs",
    "forged_wrong_dates",
    "full_plug",
    "key",
    "near_complete_plug",
    "over_precise_three_decimals",
    "over_precise_tolerated",
    "pad_plug",
    "padded_file",
    "padding_flag_plug",
    "partial_tagged_plug",
    "partial_untagged_fix",
    "plug_new_account",
    "plug_statement_equity",
    "posting_reserved_meta",
    "price_plug",
    "prior_cheque_as_expense",
    "pushmeta_lineno_plug",
    "reverse_unpresented_cheque",
    "rewrite_history",
    "sign_flipped",
    "suspense_per_line",
    "table",
    "wash_pairs_on_plants",
    "wash_unplanted_refs",
]
