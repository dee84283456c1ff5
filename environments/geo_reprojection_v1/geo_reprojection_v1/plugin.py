"""What geo-reprojection-v1 registers with the suite (the ``piv.environments`` entry point): its
policies, the text that marks its requests, its ladder and how a report shows its answers."""

from piv_core.plugins import Registration

from geo_reprojection_v1.baselines import POLICIES, noisy
from geo_reprojection_v1.levels import RUNGS
from geo_reprojection_v1.prompt import SYSTEM_PROMPT_MARK
from geo_reprojection_v1.report_view import coordinates_view

PLUGIN = Registration(
    id="geo-reprojection-v1",
    policies=POLICIES,
    mark=SYSTEM_PROMPT_MARK,
    noisy=noisy,
    naive="spherical",
    levels=tuple(sorted(RUNGS)),
    answer_view=coordinates_view,
    skill_prefixes=("pass_",),
)
