"""The tax ladders' rung without the worksheet that asks the fault map (au-bas 8, us-sut 7): the last
worksheet rung below it with only the user prompt's close changed, to the request to work one line
per row first. Its system prompt, key and per-row figures are the worksheet rung's, so every answer
earns the same at both, and `validate` accepts that close only beside the per-row figures the system
prompt asks for."""

from __future__ import annotations

import asyncio
import importlib
import random
from types import SimpleNamespace

import pytest
from piv_core.baseline.shortcuts import conversation_of
from piv_core.testing import score_reply


def _environment(package: str, prefix: str, key: str, naive: str) -> SimpleNamespace:
    """A tax environment's ladder, tasks, prompt and baselines; `key` names its data's figures and
    `naive` its naive policy."""
    taskset = importlib.import_module(f"{package}.taskset")
    return SimpleNamespace(
        rungs=importlib.import_module(f"{package}.levels").RUNGS,
        config=getattr(taskset, f"{prefix}Config"),
        make=taskset.make_task_data,
        task=getattr(taskset, f"{prefix}Task"),
        prompt=importlib.import_module(f"{package}.prompt"),
        baselines=importlib.import_module(f"{package}.baselines"),
        key=key,
        naive=naive,
    )


ENVIRONMENTS = {
    "au-bas": _environment("au_bas_reconciliation_v1", "AuBas", "bas", "silent"),
    "us-sut": _environment("us_sut_reconciliation_v1", "UsSut", "figures", "gross-only"),
}


def _valid(task) -> bool:
    return asyncio.run(task.validate(None))


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_rung_without_the_worksheet_is_the_one_below_with_another_close(name):
    env = ENVIRONMENTS[name]
    (level,) = [
        level
        for level, knobs in env.rungs.items()
        if not knobs["worksheet"] and not knobs.get("faults_from_figures")
    ]
    sheet_rung = max(rung for rung in env.rungs if rung < level and env.rungs[rung]["worksheet"])
    below = env.rungs[sheet_rung]
    assert {k for k, v in env.rungs[level].items() if below[k] != v} == {"worksheet"}
    same = ("system_prompt", env.key, "faults", "row_figures")
    for idx in range(20):
        worked, unworked = (env.make(env.config(level=rung), idx) for rung in (sheet_rung, level))
        assert env.prompt.read_scope(unworked.system_prompt).rows
        assert [getattr(unworked, field) for field in same] == [getattr(worked, field) for field in same]
        head = worked.prompt.split("```\n\n", 1)[0]
        assert unworked.prompt == f"{head}```\n\n{env.prompt.WORK_FIRST}" and _valid(env.task(unworked))
        conversation = conversation_of(worked)
        replies = [
            env.baselines.POLICIES[policy](conversation) for policy in ("oracle", env.naive, "blanket")
        ]
        replies.append(env.baselines.noisy(conversation, 0.3, random.Random(idx)))
        for reply in replies:
            scored = [score_reply(env.task(data), reply).reward for data in (worked, unworked)]
            assert scored[0] == scored[1], (idx, reply)
        assert not _valid(env.task(unworked.model_copy(update={"row_figures": {}}))), idx
