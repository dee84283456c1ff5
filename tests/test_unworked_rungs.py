"""The tax ladders' rung without the worksheet (au-bas 6, us-sut 7): the worksheet rung below it with
only the user prompt's close changed, to the request to work one line per row first. Its system
prompt, key and per-row figures are the worksheet rung's, so every answer earns the same at both,
and `validate` accepts that close only beside the per-row figures the system prompt asks for."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace

import pytest
from au_bas_reconciliation_v1 import baselines as au_baselines
from au_bas_reconciliation_v1 import levels as au_levels
from au_bas_reconciliation_v1 import prompt as au_prompt
from au_bas_reconciliation_v1 import taskset as au_taskset
from piv_core.baseline.shortcuts import conversation_of
from piv_core.testing import score_reply
from us_sut_reconciliation_v1 import baselines as us_baselines
from us_sut_reconciliation_v1 import levels as us_levels
from us_sut_reconciliation_v1 import prompt as us_prompt
from us_sut_reconciliation_v1 import taskset as us_taskset

ENVIRONMENTS = {
    "au-bas": SimpleNamespace(
        rungs=au_levels.RUNGS,
        config=au_taskset.AuBasConfig,
        make=au_taskset.make_task_data,
        task=au_taskset.AuBasTask,
        prompt=au_prompt,
        baselines=au_baselines,
        key="bas",
        naive="silent",
    ),
    "us-sut": SimpleNamespace(
        rungs=us_levels.RUNGS,
        config=us_taskset.UsSutConfig,
        make=us_taskset.make_task_data,
        task=us_taskset.UsSutTask,
        prompt=us_prompt,
        baselines=us_baselines,
        key="figures",
        naive="gross-only",
    ),
}


def _valid(task) -> bool:
    return asyncio.run(task.validate(None))


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_rung_without_the_worksheet_is_the_one_below_with_another_close(name):
    env = ENVIRONMENTS[name]
    (level,) = [level for level, knobs in env.rungs.items() if not knobs["worksheet"]]
    below = env.rungs[level - 1]
    assert below["worksheet"] and {k for k, v in env.rungs[level].items() if below[k] != v} == {"worksheet"}
    same = ("system_prompt", env.key, "faults", "row_figures")
    for idx in range(20):
        worked, unworked = (env.make(env.config(level=rung), idx) for rung in (level - 1, level))
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
