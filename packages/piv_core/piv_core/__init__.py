"""piv-core: the mechanisms every piv environment shares, defined once.

- `answer`            pulls the last ``<answer>`` block out of a reply and reads JSON from it;
- `money`             turns money text into exact cents;
- `audit`             pair-level precision / recall / F1 for fault audits, and fault maps;
- `ledger_audit`      the tax environments' shared key, reply grading and per-skill metrics;
- `ledger_audit_plan` fault planning for generated ledgers: faulty rows, invoice numbers, duplicates;
- `table`             the strict CSV codec of generated ledgers;
- `rng`               seeded per-task random streams and the train / eval split;
- `knobs`             taskset knob validators whose errors name the knob;
- `ladder`            difficulty ladders: a ``level`` knob as a rung of other knobs;
- `prompt_size`       the prompt budget that bounds size knobs;
- `harness`           the in-process harnesses (single reply, and the chat program beneath them);
- `chat_request`      a model turn as that chat program requests it, without the SDK's per-call cost;
- `openai_internals`  the openai SDK's private pieces `chat_request` uses, behind a probe (the SDK's
                      public path when it fails);
- `compat`            what differs between the verifiers versions supported (0.3.1 and 0.4);
- `plugins`           the one door to the environments: the ``piv.environments`` entry-point group,
                      the `EnvironmentPlugin` protocol each environment registers, and the registry
                      that loads only what is asked for and refuses a registration that misbehaves;
- `policy`            what a scripted policy is: the conversation it reads, the reply it gives;
- `rollout_seeding`   which rollout of a group a request is, and the seed of its noisy policy;
- `endpoint`          the OpenAI-compatible baseline endpoint serving registered environments'
                      policies, ``noisy-<p>`` included, each request by the mark it starts with;
- `serving`           verifiers' env-server pool, started and stopped for tests and benchmarks;
- `runs`              reads run directories written by vf-eval / vf-validate;
- `summary`           the summary table and chart; `report`, `report_failures` and `report_views`
                      the HTML run report; `skills` which tasks a per-skill metric is about;
- `compare`           paired comparison of two runs;
- `signal_health`     the learning-signal report over a ladder's rungs;
- `export`            tasks to JSONL and a datasets dataset, and back;
- `testing`, `bench`  helpers for the suite's tests and benchmarks;
- `cli`               the `piv-eval`, `piv-validate` and `piv-summarize` commands.
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
