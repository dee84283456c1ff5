"""piv-core: the mechanisms every piv environment shares, defined once.

- `answer`    pulls the last ``<answer>`` block out of a reply and reads JSON from it;
- `money`     turns money text into exact cents;
- `audit`     pair-level precision / recall / F1 for fault audits;
- `rng`       seeded per-task random streams and the train / eval split;
- `harness`   the single-reply harness text environments default to;
- `compat`    what differs between the verifiers versions supported (0.3.1 and 0.4);
- `endpoint`  the OpenAI-compatible baseline endpoint serving every installed environment's policies;
- `runs`      reads run directories written by vf-eval / vf-validate;
- `cli`       the `piv-eval`, `piv-validate` and `piv-summarize` commands.
"""

from piv_core.answer import json_answer, last_answer_block
from piv_core.audit import PairScores, pair_scores
from piv_core.money import format_cents, parse_cents
from piv_core.rng import task_rng

__all__ = [
    "PairScores",
    "format_cents",
    "json_answer",
    "last_answer_block",
    "pair_scores",
    "parse_cents",
    "task_rng",
]
