"""The tax environments' calculator (``--env.taskset.calculator true``, `piv_core.runtime.calculator`).

- It changes one thing: each task's system prompt ends on the calculator's section and its user
  prompt on a note asking for the calls first, at every rung; the ledger, the worksheet, the key
  and the scoring are those of the task without it, and `validate` re-derives the key from the
  prompt alone.
- Through the real ``eval``: the oracle has the calculator work out the taxable rows and earns
  1.0, and the tool's answers are the rows' correct figures.
- Through the real ``eval``, generated adversarial callers: hostile expressions and bad arguments
  come back as errors and the episode goes on to be graded; a reply that calls any other tool, or
  makes more calls than the prompt allows, or one more turn of calls, ends the episode at that
  reply, its calls not run, scored as it stands.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from types import SimpleNamespace

import pytest
from piv_core.plugins import load
from piv_core.policy import Conversation, ToolCall
from piv_core.runtime import calculator
from piv_core.testing import run_baseline_eval, run_policy_eval

TAX = ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1"]
CALCULATOR = ("--env.taskset.calculator", "true")


def _env(env_id: str) -> SimpleNamespace:
    """The environment's taskset module and what the tests take from it."""
    if env_id == TAX[0]:
        from au_bas_reconciliation_v1 import levels, taskset

        config, served, rows, most = (
            taskset.AuBasConfig,
            taskset.AuBasTaskset,
            "num_transactions",
            "TRANSACTIONS",
        )
    else:
        from us_sut_reconciliation_v1 import levels, taskset

        config, served, rows, most = taskset.UsSutConfig, taskset.UsSutTaskset, "num_rows", "ROWS"
    return SimpleNamespace(
        module=taskset,
        config=config,
        make=taskset.make_task_data,
        holds=taskset.holds,
        taskset=served,
        rungs=levels.RUNGS,
        rows=rows,
        most=getattr(taskset, f"MAX_{most}_CALCULATOR"),
    )


@pytest.mark.parametrize("env_id", TAX)
def test_the_calculator_adds_its_section_and_changes_nothing_else_at_any_rung(env_id):
    env = _env(env_id)
    config, make, holds, taskset, rungs = env.config, env.make, env.holds, env.taskset, env.rungs
    for level in [None, *rungs]:
        for idx in range(3):
            plain = make(config(level=level, split="eval"), idx)
            offered = make(config(level=level, split="eval", calculator=True), idx)
            assert offered.system_prompt == calculator.with_section(plain.system_prompt, True)
            noted, before_note = calculator.noted(offered.prompt)  # the note closes the prompt: after
            assert noted and plain.prompt.startswith(before_note)  # the ledger, or in the worksheet's closing
            replaced = plain.prompt[len(before_note) :]  # nothing, or the worksheet's closing sentence
            assert replaced == "" or (
                replaced.startswith("\n\nStart your reply with") and "\n" not in replaced[2:]
            )
            same = {"system_prompt", "prompt"}
            assert offered.model_dump(exclude=same) == plain.model_dump(exclude=same), (level, idx)
            assert holds(offered) and holds(plain)
            tampered = offered.model_copy(
                update={"system_prompt": offered.system_prompt.replace("16 calls", "99 calls")}
            )
            assert not holds(tampered)
            assert not holds(offered.model_copy(update={"prompt": plain.prompt}))  # no note, or no section
            assert not holds(plain.model_copy(update={"prompt": offered.prompt}))
    for offered, seconds in (
        (False, 900.0),
        (True, calculator.ROLLOUT_SECONDS),
    ):  # a turn's allowance a reply
        served = next(iter(taskset(config(calculator=offered, split="eval")).load()))
        assert served.data.timeout.agent == seconds
    assert calculator.ROLLOUT_SECONDS > 900.0
    assert taskset.toolsets(config()) == []
    [served] = taskset.toolsets(config(calculator=True))
    assert isinstance(served, calculator.CalculatorToolset)


def _traces(directory) -> list[dict]:
    lines = (directory / "traces.jsonl").read_text().splitlines()
    return [trace for line in lines for trace in json.loads(line)["traces"]]


def _reward(trace: dict) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values())


def _roles(trace: dict) -> list[str]:
    return [n["message"]["role"] for n in trace["nodes"] if n.get("message")]


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", TAX)
def test_the_oracle_calls_the_calculator_and_its_answers_are_the_rows_figures(env_id, tmp_path):
    code, output, run = run_baseline_eval(
        env_id, "oracle", str(tmp_path), *CALCULATOR, "--env.taskset.level", "4", num_tasks=4, command="eval"
    )
    traces = _traces(tmp_path / f"{env_id}--oracle")
    assert code == 0 and len(traces) == 4, output[-2000:]
    for trace in traces:
        assert trace["ok"] and trace["stop_condition"] == "agent_completed" and _reward(trace) == 1.0
        replies = [n["message"]["content"] for n in trace["nodes"] if n["message"]["role"] == "tool"]
        cents = Counter(int(re.sub(r"\D", "", reply.split(" = ")[1].split()[0])) for reply in replies)
        figures = Counter(trace["task"]["data"]["row_figures"].values())
        assert replies and cents <= figures, (replies, figures)  # each call worked out a row's figure
        assert _roles(trace)[-1] == "assistant"


HOSTILE = [
    ToolCall(calculator.TOOL, {"expression": "__import__('os').system('id')"}),
    ToolCall(calculator.TOOL, {"expression": "open('/etc/passwd').read()"}),
    ToolCall(calculator.TOOL, {"expression": "9" * 300}),
    ToolCall(calculator.TOOL, {"expression": "(" * 40 + "1" + ")" * 40}),
    ToolCall(calculator.TOOL, {"expression": 12}),
    ToolCall(calculator.TOOL, {"expression": {"nested": ["x"] * 50}}),
    ToolCall(calculator.TOOL, {}),
    ToolCall(calculator.TOOL, {"expression": "1 + 1", "path": "/proc/self/environ"}),
]


def _oracle(env_id: str):
    return load(env_id).policies["oracle"]


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", TAX)
def test_bad_calls_come_back_as_errors_and_the_episode_goes_on(env_id, tmp_path):
    oracle = _oracle(env_id)

    def caller(conversation: Conversation):
        return HOSTILE if not conversation.tool_replies else oracle(conversation)

    code, output = run_policy_eval(env_id, caller, str(tmp_path), "hostile", *CALCULATOR, num_tasks=2)
    traces = _traces(tmp_path / "hostile")
    assert code == 0 and len(traces) == 2, output[-2000:]
    for trace in traces:
        replies = [n["message"]["content"] for n in trace["nodes"] if n["message"]["role"] == "tool"]
        assert len(replies) == len(HOSTILE)
        assert all("error" in str(reply).lower() for reply in replies[:-1]), replies
        assert replies[-1] == "1 + 1 = 2.00"  # an argument the tool does not take is never read
        assert not any("root:" in str(reply) or "PATH=" in str(reply) for reply in replies)
        assert trace["stop_condition"] == "agent_completed" and _reward(trace) == 1.0


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", TAX)
def test_a_reply_calling_any_other_tool_ends_the_episode_unrun(env_id, tmp_path):
    names = ["bash", "edit", "read_file", "python", "calculator", "", calculator.TOOL.upper()]
    replies = [
        [ToolCall(calculator.TOOL, {"expression": "1 + 1"}), ToolCall(name, {"command": "env"})]
        for name in names
    ]
    requests: list[int] = []

    def caller(conversation: Conversation):
        requests.append(1)
        return replies[(len(requests) - 1) % len(replies)]

    code, output = run_policy_eval(
        env_id, caller, str(tmp_path), "other", *CALCULATOR, num_tasks=len(replies)
    )
    traces = _traces(tmp_path / "other")
    assert code == 0 and len(traces) == len(replies) == len(requests), output[-2000:]
    for trace in traces:
        assert trace["ok"] and trace["stop_condition"] == "reply_called_a_tool"
        assert "tool" not in _roles(trace) and _reward(trace) == 0.0  # not even the calculator's call ran


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", TAX)
@pytest.mark.parametrize("excess", ["calls", "turns"])
def test_a_reply_beyond_the_stated_calls_ends_the_episode_unrun(env_id, excess, tmp_path):
    requests: list[int] = []

    def caller(conversation: Conversation):
        requests.append(1)
        if excess == "calls":
            return [
                ToolCall(calculator.TOOL, {"expression": f"{i} + 1"})
                for i in range(calculator.CALLS_PER_TURN + 1)
            ]
        return [ToolCall(calculator.TOOL, {"expression": f"{len(conversation.tool_replies)} * 2"})]

    code, output = run_policy_eval(env_id, caller, str(tmp_path), "excess", *CALCULATOR, num_tasks=1)
    [trace] = _traces(tmp_path / "excess")
    assert code == 0 and trace["ok"], output[-2000:]
    assert trace["stop_condition"] == "reply_called_a_tool"
    run = 0 if excess == "calls" else calculator.TOOL_TURNS
    assert _roles(trace).count("tool") == run and len(requests) == run + 1
    assert _roles(trace)[-1] == "assistant" and _reward(trace) == 0.0


@pytest.mark.parametrize("env_id", TAX)
def test_the_longest_ledger_with_the_calculator_still_fits_one_argument_and_one_more_is_refused(env_id):
    from piv_core.tasksets.prompt_size import PROMPT_BUDGET, prompt_bytes

    env = _env(env_id)
    config, make, rows, most, taskset = env.config, env.make, env.rows, env.most, env.module
    widest = taskset.widest_prompt_bytes(most, taskset.LONGEST_SYSTEM_PROMPT, "focused", offered=True)
    assert widest <= PROMPT_BUDGET
    for style in ("full", "focused"):
        task = make(config(**{rows: most}, calculator=True, prompt_style=style, figure_credit="partial"), 0)
        assert prompt_bytes(task.system_prompt, task.prompt) <= widest
    with pytest.raises(ValueError, match=f"{rows} must be <= {most} with calculator=True, got {most + 1}"):
        config(**{rows: most + 1}, calculator=True)
    config(**{rows: most + 1})  # without it the bound is the plain prompt's
