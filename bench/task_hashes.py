"""Digests of what an environment serves, to show that a change kept it byte-identical.

    uv run python bench/task_hashes.py [--tasks N] [--env ID ...]

For each text environment: N tasks of each split under the default configuration (and a few
other knob settings), hashed as their task data's canonical JSON, and every baseline policy's
reply to each task scored through the real `Task.score`, hashed as the rewards and metrics.
For beancount-ledger: the shipped world and N keyed worlds of each stream, derived under a
fixed dummy secret (so no release is needed), hashed the same way, with the reference and
baseline bookkeepers' ledgers (written from the public files) scored against each key.

Run it before and after a change that should not alter what is served; equal lines mean the
same tasks, keys, prompts and rewards.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import time

from piv_core.policy import Conversation
from piv_core.testing import score_reply

TEXT = {
    "au-bas-reconciliation-v1": (
        "AuBasConfig",
        [{}, {"num_transactions": 8, "fault_rate": 0.0}, {"fault_rate": 0.9}],
    ),
    "us-sut-reconciliation-v1": ("UsSutConfig", [{}, {"num_rows": 10}]),
    "geo-reprojection-v1": ("GeoConfig", [{}]),
}
DUMMY_SECRET = b"task-hashes-dummy-secret-0123456789abcdef"


def _canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def _conversation(data) -> Conversation:
    return Conversation(
        [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}], []
    )


def text_env(env_id: str, n: int) -> dict[str, str]:
    module = env_id.replace("-", "_")
    taskset = importlib.import_module(f"{module}.taskset")
    policies = importlib.import_module(f"{module}.baselines").POLICIES
    config_name, knob_sets = TEXT[env_id]
    config_cls = getattr(taskset, config_name)
    data_h, score_h = hashlib.sha256(), hashlib.sha256()
    for knobs in knob_sets:
        for split in ("train", "eval"):
            config = config_cls(split=split, **knobs)
            for idx in range(n):
                data = taskset.make_task_data(config, idx)
                data_h.update(_canonical(data.model_dump(mode="json")))
                task_cls = next(
                    v
                    for v in vars(taskset).values()
                    if isinstance(v, type)
                    and v.__name__.endswith("Task")
                    and v.__module__ == taskset.__name__
                )
                task = task_cls(data, config.task) if hasattr(config, "task") else task_cls(data)
                for name in sorted(policies):
                    reply = policies[name](_conversation(data))
                    scored = score_reply(task, reply)
                    score_h.update(_canonical([name, scored.rewards, scored.metrics, scored.reward]))
    return {"tasks": data_h.hexdigest()[:16], "scores": score_h.hexdigest()[:16]}


BEANCOUNT_WRITERS = ("reference", "untouched", "plug", "rewrite", "invent")
"""Baseline bookkeepers whose ledgers (written from the public files alone) are scored per world."""


def _beancount_scores(data, score_h) -> None:
    """The golden ledger's and each of `BEANCOUNT_WRITERS`' ledgers' scores against the task's key
    (the score's own fields, not the metric names a trace reports)."""
    from beancount_ledger import bookkeeper, taskset
    from beancount_ledger.scorer import score

    key = taskset.key_of(data)
    files = data.files
    reads = [files[name] for name in bookkeeper.READS]
    ledgers = [("golden", taskset.golden_of(data))]
    ledgers += [(name, getattr(bookkeeper, f"{name}_ledger")(*reads)) for name in BEANCOUNT_WRITERS]
    for name, text in ledgers:
        s = score(text, key)
        fields = [s.reward, s.loaded, s.balances_hit, s.balances_total, sorted(s.resolved), s.plants]
        score_h.update(_canonical([data.id, name, *fields, s.damaged, s.fabricated, s.invented]))


def beancount(n: int) -> dict[str, str]:
    from beancount_ledger import taskset

    data_h, score_h = hashlib.sha256(), hashlib.sha256()
    selectors = ["bank_recon_001"] + [f"{s}:{i}" for s in ("train", "eval") for i in range(n)]
    selectors += [f"train:{i}:hard" for i in range(max(1, n // 4))]
    for selector in selectors:
        secret = None if selector == "bank_recon_001" else DUMMY_SECRET
        data = taskset.make_task_data(selector, secret)
        data_h.update(_canonical(data.model_dump(mode="json")))
        _beancount_scores(data, score_h)
    digests = {"tasks": data_h.hexdigest()[:16], "scores": score_h.hexdigest()[:16]}
    return {**digests, "worlds": str(len(selectors))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500, help="tasks per split and knob setting")
    parser.add_argument("--env", action="append", help="environment id (default: all four)")
    args = parser.parse_args()
    for env_id in args.env or [*TEXT, "beancount-ledger"]:
        start = time.perf_counter()
        if env_id == "beancount-ledger":
            out = beancount(max(1, args.tasks // 10))
        else:
            out = text_env(env_id, args.tasks)
        fields = " ".join(f"{k}={v}" for k, v in out.items())
        print(f"{env_id:28s} {fields}  ({time.perf_counter() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
