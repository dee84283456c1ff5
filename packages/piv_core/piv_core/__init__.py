"""piv-core: the mechanisms every piv environment shares, defined once.

A few concept modules sit at the top; each concern is a subpackage. A unit imports only the units
of lower layers (``tests/test_structure.py`` holds it; ``docs/architecture.md`` draws it):

    layer 3   cli/         the commands: piv-eval, piv-validate, piv-summarize, piv-signal, piv-export
              testing      helpers for environments' tests: score a reply, run a command as a user would
              bench        per-item timing for the scripts in bench/
    layer 2   baseline/    the baseline endpoint, its noisy policies' seeding, the shortcut search
              runs/        run directories read without trust; summaries, comparisons, the HTML report
    layer 1   runtime/     in-process harnesses, the model request, confinement, timeouts, env servers
              ledger_audit/  the tax environments' shared task: fault plans, the key, grading
              plugins      the one door to the environments: the ``piv.environments`` entry points
    layer 0   parsing/     untrusted text: replies, money, ledger tables, bounded JSON and TOML
              tasksets/    knobs, ladders and mixes, seeded streams and splits, prompt budget, re-scoring
              policy       what a scripted policy is: the conversation it reads, the reply it gives
              compat       what differs between the verifiers versions supported

The names below are the ones every environment reaches for, re-exported here.
"""

from piv_core.ledger_audit.audit import PairScores, pair_scores
from piv_core.parsing.answer import json_answer, last_answer_block
from piv_core.parsing.money import format_cents, parse_cents
from piv_core.tasksets.rng import task_rng

__all__ = [
    "PairScores",
    "format_cents",
    "json_answer",
    "last_answer_block",
    "pair_scores",
    "parse_cents",
    "task_rng",
]
