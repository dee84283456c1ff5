"""What beancount-ledger registers with the suite (the ``piv.environments`` entry point): its
policies, the text that marks its requests, its ladder and how a report shows its answers."""

from piv_core.plugins import Registration

from beancount_ledger.baselines import POLICIES, noisy
from beancount_ledger.contract import OPENING
from beancount_ledger.ladder import RUNGS
from beancount_ledger.report_view import ledger_view

PLUGIN = Registration(
    id="beancount-ledger",
    policies=POLICIES,
    # The opening every system prompt of this environment shares (the six tools' and the low rungs',
    # `contract.PROMPTS`), so the endpoint tells its requests apart by it.
    mark=OPENING,
    noisy=noisy,
    naive="untouched",
    levels=tuple(sorted(RUNGS)),
    answer_view=ledger_view,
    skill_prefixes=("resolved_",),
)
