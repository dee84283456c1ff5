"""What a rollout of the suite's tasks may reach, decided on the task so it holds under any driver.

Two rules hold whatever runs an episode (``piv-eval``, ``vf-eval``, an env-server worker of a
trainer) and whatever harness it picks:

- **Commands a model writes never run on the host.** A harness whose program hands the model
  local execution (verifiers marks it ``EXECUTES_CODE``: ``bash`` and every agent harness) runs
  only on a container or sandbox runtime (`SANDBOX_RUNTIMES`). On the ``subprocess`` runtime the
  model's shell would run as the operator, beside the operator's files, environment and processes
  (another process's ``/proc/<pid>/environ`` included, whatever the child's own environment
  holds) and beside this suite's own solvers. `host_refusal` says so in one line: ``piv-eval``
  refuses such a run at load, and every task refuses such an episode in its ``setup``
  (`refuse_host_commands`), before the model is asked anything. No flag lifts it; a laptop run
  keeps the harnesses that run nothing the model writes (each environment's default, ``null``).
- **A single-reply task is one model turn** (`SingleReply`): a reply that calls a tool ends the
  episode there and is graded as the reply; no tool call of it is run. The one exception is the
  calculator a task's prompt may offer (`piv_core.runtime.calculator`), whose calls run within the
  bounds the prompt states.
"""

from __future__ import annotations

import verifiers.v1 as vf
from verifiers.v1.runtimes import SubprocessRuntime

from piv_core.runtime import calculator

SANDBOX_RUNTIMES = ("docker", "podman", "apptainer", "e2b", "modal", "prime")
"""The runtimes verifiers ships that isolate the agent from the host (``--env.agent.runtime.type``)."""


def runs_model_commands(harness_id: str) -> bool:
    """Whether harness `harness_id` hands the model local execution (False when verifiers cannot
    resolve the id: it refuses that itself, naming it)."""
    from verifiers.v1.utils.loaders import harness_class

    try:
        return bool(harness_class(harness_id).EXECUTES_CODE)
    except Exception:  # an unknown harness id is verifiers' error to report
        return False


def host_refusal(harness_id: str, runtime_type: str | None) -> str | None:
    """Why harness `harness_id` may not run on runtime `runtime_type` (None: no runtime chosen),
    in one line; None when it may."""
    if runtime_type in SANDBOX_RUNTIMES or not runs_model_commands(harness_id):
        return None
    where = f" (the {runtime_type} runtime runs them here)" if runtime_type else ""
    return (
        f"harness {harness_id!r} runs commands the model writes, which never run on this machine"
        f"{where}: choose a container or sandbox, --env.agent.runtime.type {' | '.join(SANDBOX_RUNTIMES)} "
        "(each environment's default harness runs nothing the model writes)"
    )


def refuse_host_commands(trace: vf.Trace, runtime: vf.Runtime) -> None:
    """Raise `PermissionError` when this episode's harness runs model-written commands in a host
    subprocess (`host_refusal`). A task's ``setup`` calls it first, so the refusal holds under
    every driver; an episode without a harness (``vf-validate``'s checks) passes."""
    harness = trace.agent.config.harness
    if harness is None or not isinstance(runtime, SubprocessRuntime):
        return
    refusal = host_refusal(harness.id, "subprocess")
    if refusal:
        raise PermissionError(refusal)


def replies_with_calls(trace: vf.Trace) -> int:
    """How many of the model's replies recorded on `trace` made tool calls."""
    return sum(1 for node in trace.nodes if node.sampled and getattr(node.message, "tool_calls", None))


class SingleReply:
    """The mixin of a single-reply task: its first reply ends the episode even when it calls a
    tool (`reply_called_a_tool`, a verifiers response stop: the reply is recorded and graded, its
    calls are never run). A plain reply ends it as the harness's own loop does.

    A task whose system prompt offers the calculator (`calculator.offered`) may call it: a reply
    whose calls are all to `calculator.TOOL` goes on unless it makes more than
    `calculator.CALLS_PER_TURN` calls or `calculator.TOOL_TURNS` replies with calls came before it;
    any other reply with calls ends the episode the same way, its calls not run. So only the
    calculator runs, within the stated bounds, whatever the harness offers."""

    @vf.stop
    async def reply_called_a_tool(self, response: vf.Response, trace: vf.Trace) -> bool:
        calls = response.message.tool_calls
        if not calls:
            return False
        if not calculator.offered(self.data.system_prompt)[0]:
            return True
        if any(
            getattr(call, "name", None) != calculator.TOOL or getattr(call, "namespace", None)
            for call in calls
        ):
            return True  # only the calculator ever runs, whatever the harness offers
        return len(calls) > calculator.CALLS_PER_TURN or replies_with_calls(trace) >= calculator.TOOL_TURNS

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        refuse_host_commands(trace, runtime)
