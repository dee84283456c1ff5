"""What a model can reach, tested for every environment (`piv_core.runtime.confinement`).

- A harness that runs model-written commands is refused on the host: by `eval` at load, for
  every such harness verifiers ships and every way of naming the harness and the runtime, and by
  the task itself under verifiers' own `vf-eval` (the episode ends in setup; the model is never
  asked, nothing it would run runs).
- A single-reply environment is one model turn: generated replies that call tools (real-looking
  or made-up names, any arguments, nesting past any decoder's depth) end the episode at that
  reply, scored, after exactly one request.
- What a task puts in the model's reach (its prompt, its workspace files, its tools) holds no
  secret, no golden answer and nothing importable.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
import verifiers.v1 as vf
from piv_core.baseline.endpoint import running_endpoint
from piv_core.cli.commands import eval_main
from piv_core.policy import Conversation, ToolCall
from piv_core.runtime.confinement import SANDBOX_RUNTIMES, host_refusal
from piv_core.testing import run_policy_eval

ENV_IDS = ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1", "beancount-ledger"]
SINGLE_REPLY = ENV_IDS[:3]
RUNNING_NOTHING = {"null", *ENV_IDS}
"""The harnesses that run nothing a model writes: verifiers' tool-less chat loop and each
environment's default."""


def _shipped_harnesses() -> list[str]:
    import verifiers.v1.harnesses as package

    found = pkgutil.iter_modules(package.__path__)
    return sorted(m.name.replace("_", "-") for m in found if m.ispkg and m.name != "utils")


COMMAND_HARNESSES = [h for h in _shipped_harnesses() if h not in RUNNING_NOTHING]


def test_verifiers_ships_command_harnesses_and_the_null_loop():
    assert "bash" in COMMAND_HARNESSES and "null" in _shipped_harnesses()


@pytest.mark.parametrize("harness", [*COMMAND_HARNESSES, *sorted(RUNNING_NOTHING)])
@pytest.mark.parametrize("runtime", [None, "subprocess", *SANDBOX_RUNTIMES])
def test_only_a_sandbox_runs_model_commands(harness, runtime):
    refusal = host_refusal(harness, runtime)
    if harness in RUNNING_NOTHING or runtime in SANDBOX_RUNTIMES:
        assert refusal is None
    else:
        assert refusal and "\n" not in refusal and repr(harness) in refusal
        assert all(name in refusal for name in SANDBOX_RUNTIMES)


def _naming(harness: str, runtime: str | None, how: str, tmp_path: Path) -> list[str]:
    """The eval arguments that choose `harness` (and `runtime`), on the command line or in a file."""
    if how == "file":
        toml = tmp_path / "run.toml"
        body = f'[env.agent.harness]\nid = "{harness}"\n'
        if runtime:
            body += f'[env.agent.runtime]\ntype = "{runtime}"\n'
        toml.write_text(body)
        return ["@", str(toml)]
    args = [f"--env.agent.harness.id={harness}"] if how == "equals" else ["--env.agent.harness.id", harness]
    return args + (["--env.agent.runtime.type", runtime] if runtime else [])


@pytest.mark.parametrize(
    "env_id, harness, runtime, how",
    [
        (env, harness, runtime, how)
        for env, harness, runtime, how in itertools.product(
            ENV_IDS, ["bash", "mini-swe-agent"], [None, "subprocess"], ["flag", "equals", "file"]
        )
    ],
)
def test_eval_refuses_a_command_harness_on_the_host_at_load(env_id, harness, runtime, how, tmp_path, capsys):
    out = tmp_path / "out"
    chosen = _naming(harness, runtime, how, tmp_path)
    argv = [env_id, "--model", "baseline/oracle", "-n", "1", "-o", str(out), *chosen]
    with pytest.raises(SystemExit) as exited:
        eval_main(argv)
    message = str(exited.value.code)
    assert message.startswith("eval: harness") and "runs commands the model writes" in message
    assert "\n" not in message
    assert not out.exists()  # nothing ran, nothing was written


MARKER = "piv-confinement-marker"
VF_EVAL_ARGS = [
    *("-n", "1", "-m", "shell", "--client.api-key-var", "PIV_TEST_KEY", "--run.name", "r", "--no-push"),
    *("--env.agent.harness.id", "bash", "--env.agent.runtime.type", "subprocess", "--no-rich"),
]


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_task_refuses_a_shell_on_the_host_under_vf_eval(env_id, tmp_path):
    """verifiers' own command, which runs `bash` on the host when told to: every task ends the
    episode in its setup, so the model is never asked and its command never runs."""
    asked: list[int] = []
    target = tmp_path / "ran"

    def shell(conversation: Conversation):
        asked.append(1)
        return [ToolCall("bash", {"command": f"env > {target}; echo {MARKER}"})]

    with running_endpoint({"shell": shell}) as url:
        done = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "vf-eval"), env_id, *VF_EVAL_ARGS,
             "--client.base-url", url, "-o", str(tmp_path)],
            capture_output=True, text=True, env={**os.environ, "PIV_TEST_KEY": "x"}, timeout=600,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    lines = (tmp_path / "r" / "traces.jsonl").read_text().splitlines()
    (trace,) = [t for line in lines for t in json.loads(line)["traces"]]
    assert not asked and not target.exists(), done.stdout[-2000:]
    assert not trace["ok"] and trace["stop_condition"] == "task_error"
    assert "runs commands the model writes" in trace["errors"][0]["message"]
    assert MARKER not in json.dumps(trace["nodes"])


def _tool_call_replies() -> list[list[ToolCall]]:
    """Replies that call tools: real-looking and made-up names, one or several calls, arguments
    of every JSON shape, nesting far past any decoder's depth."""
    deep = json.loads("[" * 200 + "]" * 200)
    names = ["bash", "submit", "python", "made_up_tool", ""]
    shapes = [{}, {"command": "cat /etc/passwd"}, {"x": deep}, {"answer": "<answer>{}</answer>"}]
    replies = [[ToolCall(name, args)] for name, args in itertools.product(names, shapes)]
    replies.append([ToolCall("a", {}), ToolCall("b", {"n": 1}), ToolCall("c", {"s": "x" * 4096})])
    return replies


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", SINGLE_REPLY)
def test_a_single_reply_environment_takes_one_turn_whatever_the_reply_calls(env_id, tmp_path):
    replies = _tool_call_replies()
    requests: list[int] = []

    def caller(conversation: Conversation):
        requests.append(1)
        return replies[(len(requests) - 1) % len(replies)]

    code, output = run_policy_eval(env_id, caller, str(tmp_path), "caller", num_tasks=len(replies))
    lines = (tmp_path / "caller" / "traces.jsonl").read_text().splitlines()
    traces = [t for line in lines for t in json.loads(line)["traces"]]
    assert code == 0 and len(traces) == len(replies), output[-2000:]
    assert len(requests) == len(replies)  # one request an episode, never a second
    for trace in traces:
        assert trace["ok"] and trace["stop_condition"] == "reply_called_a_tool"
        assert [n["message"]["role"] for n in trace["nodes"] if n.get("message")][-1] == "assistant"
        read = [v for k, v in trace["metrics"].items() if k in ("parsed", "answered", "answer_parsed")]
        assert trace["rewards"] and read and set(read) == {0.0}
        assert sum(r["score"] * r["weight"] for r in trace["rewards"].values()) == 0.0


class _RecordingRuntime:
    """A runtime that records what a task's setup puts in the workspace."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    async def write(self, path: str, data: bytes) -> None:
        self.files[path] = data


CODE_SUFFIXES = {".py", ".pyc", ".pth", ".so", ".whl", ".zip"}
SECRET = "piv-secret-" + "5f3a9c" * 4


def _tasks(env_id: str, count: int) -> list[vf.Task]:
    from verifiers.v1.utils.loaders import taskset_config_type

    return list(itertools.islice(vf.load_taskset(taskset_config_type(env_id)(id=env_id)), count))


def _hidden_answer(env_id: str, task: vf.Task) -> str:
    """What the model must not be handed: the golden ledger, or the solver's whole answer."""
    if env_id == "beancount-ledger":
        from beancount_ledger.taskset import golden_of

        return golden_of(task.data)
    from piv_core.plugins import load

    messages = [
        {"role": "system", "content": task.data.system_prompt},
        {"role": "user", "content": task.data.prompt},
    ]
    reply = load(env_id).policies["oracle"](Conversation(messages, []))
    return reply.split("<answer>")[-1].split("</answer>")[0].strip()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_nothing_in_the_models_reach_gives_the_key_away(env_id, monkeypatch):
    monkeypatch.setenv("PIV_EVAL_SECRET", SECRET)
    for task in _tasks(env_id, 3):
        trace = vf.Trace(
            task=vf.TraceTask(type=type(task).__name__, data=task.data),
            agent=vf.AgentInfo(config=vf.AgentConfig()),
            state=importlib.import_module("verifiers.v1.state").state_cls(type(task))(),
        )
        runtime = _RecordingRuntime()
        asyncio.run(task.setup(trace, runtime))
        written = {name: data.decode() for name, data in runtime.files.items()}
        files = getattr(task.data, "files", {})
        assert written == ({} if env_id in SINGLE_REPLY else files)  # the task's public inputs, nothing else
        assert not any(Path(name).suffix in CODE_SUFFIXES for name in written)
        reach = [str(task.data.system_prompt or ""), json.dumps(task.data.prompt), *written.values()]
        hidden = _hidden_answer(env_id, task)
        assert len(hidden) > 8
        for text in reach:
            assert SECRET not in text and hidden not in text
            assert "import " not in text and "piv_core" not in text


def test_beancount_tools_run_nothing_the_model_writes():
    from beancount_ledger.taskset import LedgerConfig, LedgerTaskset
    from verifiers.v1.utils.decorators import discover_decorated

    for level in (None, 1):
        (toolset,) = LedgerTaskset.toolsets(LedgerConfig(level=level))
        names = {getattr(fn, "tool_name", None) or fn.__name__ for fn in discover_decorated(toolset, "tool")}
        assert names and not names & {"bash", "python", "shell", "exec", "run_python", "edit"}
