"""A new environment needs no change in the core: one written here, in a few lines, registers itself
through the ``piv.environments`` entry-point group and is served by the baseline endpoint, scored by
the real ``eval``, shown by the run report through its own view, and exported and re-validated."""

from __future__ import annotations

import json
import os

import pytest
from piv_core import plugins
from piv_core.runs.reading import read_eval_run, trace_total
from piv_core.runs.report import render_html
from piv_core.testing import register_environment, run_baseline_eval, run_command

pytestmark = pytest.mark.e2e

ENV_ID = "sum-env-v1"
MODULE = '''"""sum-env-v1: add two whole numbers (an environment written in a test)."""

import re

import verifiers.v1 as vf
from piv_core.compat import TaskData
from piv_core.runtime import SingleReplyHarness
from piv_core.plugins import Registration

SYSTEM = "You add two whole numbers. End your reply with <answer>N</answer>."


class SumData(TaskData):
    a: int
    b: int


class SumTask(vf.Task[SumData, vf.State, vf.TaskConfig]):
    @vf.reward(weight=1.0)
    async def correct(self, trace: vf.Trace) -> float:
        found = re.findall(r"<answer>(-?[0-9]+)</answer>", trace.last_reply or "")
        return float(bool(found) and int(found[-1]) == self.data.a + self.data.b)

    async def validate(self, runtime) -> bool:
        return [int(n) for n in re.findall(r"[0-9]+", self.data.prompt_text)] == [self.data.a, self.data.b]


class SumConfig(vf.TasksetConfig):
    seed: int = 0


class SumTaskset(vf.Taskset[SumTask, SumConfig]):
    def load(self):
        for i in range(8):
            a, b = 3 * i + self.config.seed, 7 * i + 2
            data = SumData(id=f"sum-{i}", system_prompt=SYSTEM, prompt=f"What is {a} + {b}?", a=a, b=b)
            yield SumTask(data, self.config.task)


def oracle(conversation):
    a, b = (int(n) for n in re.findall(r"[0-9]+", conversation.user_text)[:2])
    return f"<answer>{a + b}</answer>"


def sum_view(trace):
    data = trace["task"]["data"]
    return f'<p class="sum-view">{data["a"]} + {data["b"]} = {data["a"] + data["b"]}</p>'


PLUGIN = Registration(
    "sum-env-v1",
    {"oracle": oracle, "zero": lambda conversation: "<answer>0</answer>"},
    mark=SYSTEM,
    naive="zero",
    answer_view=sum_view,
)
__all__ = ["SingleReplyHarness", "SumTaskset"]
'''


@pytest.fixture
def registered(tmp_path, monkeypatch):
    """The environment's module and its distribution metadata on the path of this process and of
    every command it starts."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sum_env_v1.py").write_text(MODULE)
    register_environment(site, ENV_ID, "sum_env_v1:PLUGIN")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    return tmp_path


def test_a_registered_environment_is_served_scored_reported_and_exported(registered):
    assert ENV_ID in plugins.environment_ids()
    runs = registered / "runs"
    code, output, oracle = run_baseline_eval(ENV_ID, "oracle", str(runs), num_tasks=3, command="eval")
    assert oracle is not None, output[-3000:]
    assert [trace_total(t) for t in oracle.traces] == [1.0, 1.0, 1.0], output[-3000:]
    code, output, zero = run_baseline_eval(ENV_ID, "zero", str(runs), num_tasks=3, command="eval")
    assert zero is not None and [trace_total(t) for t in zero.traces] == [0.0, 0.0, 0.0], output[-3000:]

    page = render_html([read_eval_run(runs / f"{ENV_ID}--oracle")])
    assert page.count('class="sum-view"') == 3 and "3 + 9 = 12" in page  # the environment's own view

    out = registered / "export"
    code, output = run_command("export", ENV_ID, "-n", "4", "-o", str(out), "--no-progress")
    assert code == 0, output[-3000:]
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert [row["task_id"] for row in rows] == ["sum-0", "sum-1", "sum-2", "sum-3"]
    assert {row["env_id"] for row in rows} == {ENV_ID}
    code, output = run_command("export", "--check", str(out))
    assert code == 0 and "4/4 tasks valid" in output, output[-3000:]
