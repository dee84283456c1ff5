"""The learning signal: per-skill metrics with fixed names on every trace, and the noisy bookkeeper."""

import asyncio
import json
import random
import statistics

import pytest
import verifiers.v1 as vf
from beancount_ledger import answer, baselines, world
from beancount_ledger.scorer import SKILL_KINDS, score
from beancount_ledger.taskset import LedgerTask, LedgerTaskConfig, make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout
from piv_core.policy import Conversation

SKILLS = {*(f"resolved_{k}" for k in SKILL_KINDS), *(f"has_{k}" for k in SKILL_KINDS), "balances_hit_share"}


def _metrics(data, ledger) -> dict[str, float]:
    """The metrics a finalized and scored trace whose latest accepted write is `ledger` records."""
    task = LedgerTask(data, LedgerTaskConfig())
    state = LedgerState(ledger=ledger, submitted=True, revision=int(ledger is not None))
    trace = vf.Trace(
        task=vf.TraceTask(type="LedgerTask", data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        state=state,
    )
    asyncio.run(task.finalize(trace, None))
    asyncio.run(task.score(trace))
    return trace.metrics


def test_every_trace_has_every_skill_metric_with_its_fixed_name():
    names = set()
    for selector in ("bank_recon_001", "dev:2", "dev:2:level1", "dev:2:level15"):
        data = make_task_data(selector)
        for ledger in (None, data.files["ledger.beancount"], answer.golden_ledger(data)):
            metrics = _metrics(data, ledger)
            assert SKILLS <= set(metrics), selector
            names.add(frozenset(k for k in metrics if not k.startswith("calls_")))
    assert len(names) == 1  # the same names whatever the world or the ledger


def test_skill_metrics_count_what_was_planted_and_resolved():
    data = make_task_data("dev:2:level15")
    golden = _metrics(data, answer.golden_ledger(data))
    assert {k: golden[f"has_{k}"] for k in SKILL_KINDS} == {k: 1.0 for k in world.HARD_KINDS}
    assert all(golden[f"resolved_{k}"] == 1.0 for k in SKILL_KINDS) and golden["balances_hit_share"] == 1.0
    # One correction left out: its kind alone drops to 0, and the balances it moves are missed.
    dropped = data.fixes[0]
    text = answer.golden_ledger(data.model_copy(update={"fixes": data.fixes[1:]}))
    partial = _metrics(data, text)
    assert partial[f"resolved_{dropped.kind}"] == 0.0 and partial["balances_hit_share"] < 1.0
    assert all(partial[f"resolved_{k}"] == 1.0 for k in SKILL_KINDS if k != dropped.kind)
    # A world with one discrepancy: the other kinds are absent, and 0, not missing.
    single = make_task_data("dev:5:level1")
    (kind,) = [f.kind for f in single.fixes]
    metrics = _metrics(single, answer.golden_ledger(single))
    assert {k for k in SKILL_KINDS if metrics[f"has_{k}"]} == {kind} and metrics[f"resolved_{kind}"] == 1.0
    assert all(metrics[f"resolved_{k}"] == 0.0 for k in SKILL_KINDS if k != kind)


def _episode(policy, data) -> list:
    """Every reply `policy` gives over an episode whose tools are the real ones on `data`'s files."""
    tools = LedgerToolset(vf.SharedToolsetConfig())
    messages: list[dict] = [{"role": "user", "content": "Reconcile the books."}]
    replies = []
    with rollout(LedgerState(files=dict(data.files))):
        for turn in range(10):
            reply = policy(Conversation(messages, []))
            replies.append(reply)
            calls = [
                {"id": f"t{turn}c{i}", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for i, c in enumerate(reply)
            ]
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            for call, c in zip(calls, reply, strict=True):
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": getattr(tools, c.name)(**c.arguments),
                    }
                )
            if any(c.name == "submit" for c in reply):
                return replies
    raise AssertionError("the episode never submitted")


@pytest.mark.parametrize("selector", ["bank_recon_001", "dev:7", "dev:7:level15"])
def test_noisy_at_zero_is_the_reference_turn_for_turn(selector):
    data = make_task_data(selector)
    reference = _episode(baselines.reference, data)
    assert _episode(lambda c: baselines.noisy(c, 0.0, random.Random(11)), data) == reference


def test_noisy_decides_the_same_on_every_turn_of_a_rollout():
    data = make_task_data("dev:7:level15")
    # The endpoint hands every turn an rng seeded the same: each call redraws the same decisions.
    replies = _episode(lambda c: baselines.noisy(c, 0.5, random.Random(3)), data)
    written = [c.arguments["text"] for r in replies for c in r if c.name == "write_ledger"]
    assert len(written) == 1
    files = [data.files[n] for n in baselines.READS]
    assert written[0] == baselines.noisy_ledger(*files, 0.5, random.Random(3))
    assert written[0] != baselines.reference_ledger(*files)


def test_the_noisy_mean_falls_with_p():
    tasks = [make_task_data(s) for s in ("bank_recon_001", *(f"dev:{n}" for n in range(6)), "dev:1:level15")]
    means = []
    for p in (0.0, 0.2, 0.5, 1.0):
        rewards = []
        for data in tasks:
            files, key = [data.files[n] for n in baselines.READS], answer.key_of(data)
            for draw in range(4):
                rewards.append(score(baselines.noisy_ledger(*files, p, random.Random(draw)), key).reward)
        means.append(statistics.mean(rewards))
    assert means[0] == 1.0 and means == sorted(means, reverse=True) and len(set(means)) == 4
    assert means[-1] < 0.5
