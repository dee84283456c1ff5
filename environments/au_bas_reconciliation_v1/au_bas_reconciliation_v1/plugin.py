"""What au-bas-reconciliation-v1 registers with the suite (the ``piv.environments`` entry point): its
policies, the text that marks its requests, its ladder and how a report shows its answers."""

from piv_core.plugins import Registration
from piv_core.runs.report_views import figures_view

from au_bas_reconciliation_v1.baselines import POLICIES, noisy
from au_bas_reconciliation_v1.levels import RUNGS
from au_bas_reconciliation_v1.prompt import MARKER

PLUGIN = Registration(
    id="au-bas-reconciliation-v1",
    policies=POLICIES,
    mark=MARKER,
    noisy=noisy,
    naive="silent",
    levels=tuple(sorted(RUNGS)),
    answer_view=figures_view,
    skill_prefixes=("recall_",),
)
