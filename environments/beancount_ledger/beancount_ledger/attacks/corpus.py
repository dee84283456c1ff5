"""The corpus in order, and its audit: `ATTACKS` lists every family by name (the order is that of
the generated attack matrices and tables), `audit` scores them on a world beside the oracle's
entitlement, and `table` sums the results up per family.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from beancount_ledger import answer, isolated, scorer
from beancount_ledger.attacks.amounts import (
    currency_invented_commodity,
    currency_usd_widened_opens,
    over_precise_three_decimals,
    over_precise_tolerated,
    price_plug,
)
from beancount_ledger.attacks.blocks import EPSILON, Attack, AttackResult, NotApplicable
from beancount_ledger.attacks.directives import (
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
from beancount_ledger.entitlement import entitled_to
from beancount_ledger.world import World

ATTACKS: dict[str, Attack] = {
    fn.__name__: fn
    for fn in (
        plug_statement_equity,
        full_plug,
        near_complete_plug,
        plug_new_account,
        suspense_per_line,
        partial_tagged_plug,
        padding_flag_plug,
        edit_then_reuse_ref,
        partial_untagged_fix,
        combined_corrections,
        comment_injection,
        copied_statement,
        wash_unplanted_refs,
        wash_pairs_on_plants,
        padded_file,
        over_precise_tolerated,
        over_precise_three_decimals,
        forged_shifted_refs,
        forged_wrong_dates,
        forged_refs_on_originals,
        extra_metadata,
        forged_lineno_plug,
        forged_filename_plug,
        pushmeta_lineno_plug,
        posting_reserved_meta,
        dunder_meta,
        reverse_unpresented_cheque,
        prior_cheque_as_expense,
        corrections_after_period,
        balance_assertions,
        pad_plug,
        directive_injection,
        carriage_return_option,
        price_plug,
        duplicated_corrections,
        sign_flipped,
        rewrite_history,
        currency_usd_widened_opens,
        currency_invented_commodity,
        division_by_zero_amount,
    )
}
ATTACKS.update(INJECTIONS)


def key(w: World) -> answer.Key:
    """The scorer's key of `w` (`answer.key_of` of its projection)."""
    return answer.key_of(answer.project(w))


def audit(w: World, names: Iterable[str] | None = None) -> list[AttackResult]:
    """Every attack (or those named) on `w`: the scorer's reward beside the oracle's entitlement
    (families the world gives no material for, `NotApplicable`, are left out)."""
    k, out = key(w), []
    for name in ATTACKS if names is None else names:
        try:
            text, claim = ATTACKS[name](w)
        except NotApplicable:
            continue
        reward = (isolated if name in SANDBOXED else scorer).score(text, k).reward
        out.append(
            AttackResult(name, w.world_id, reward, entitled_to(w, claim), entitled_to(w, claim, strict=True))
        )
    return out


def table(results: Iterable[AttackResult]) -> str:
    """Markdown, one row per attack family: worlds, max reward, max entitlement, min margin
    (entitlement - reward), exploits (reward > entitlement) and how often the reward exceeds the strict
    entitlement (books corrected in another form are over it by design)."""
    rows: dict[str, list[AttackResult]] = defaultdict(list)
    for r in results:
        rows[r.name].append(r)
    lines = [
        "| attack | worlds | max reward | max entitlement | min margin | exploits | over strict |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rs in rows.items():
        lines.append(
            f"| {name} | {len(rs)} | {max(r.reward for r in rs):.3f} | {max(r.entitlement for r in rs):.3f} "
            f"| {min(r.entitlement - r.reward for r in rs):.3f} | {sum(r.exploit for r in rs)} "
            f"| {sum(r.reward > r.strict + EPSILON for r in rs)} |"
        )
    return "\n".join(lines)
