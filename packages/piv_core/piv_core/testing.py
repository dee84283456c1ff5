"""Test helpers: score a reply through an environment's real `Task.score` with no model or runtime,
fill in a worksheet's answer line, run the suite's commands as a user would, read back what a run
report marks, register an environment written in a test the way an installed distribution
registers one, and tell an installed copy from a source checkout."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sysconfig
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

import verifiers.v1 as vf

from piv_core.parsing.money import format_cents


class Scored(NamedTuple):
    rewards: dict[str, float]
    metrics: dict[str, float]
    reward: float
    trace: vf.Trace


def score_reply(task: vf.Task, reply: str | None) -> Scored:
    """Score a single assistant `reply` (None: the model said nothing) the way a rollout would be scored."""
    trace = vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        state=vf.State(),
    )
    if reply is not None:
        trace.nodes.append(vf.MessageNode(message=vf.AssistantMessage(content=reply), sampled=True))
    asyncio.run(task.score(trace))
    rewards = {name: float(r.score) for name, r in trace.rewards.items()}
    metrics: dict[str, Any] = dict(trace.metrics)
    return Scored(rewards, metrics, float(trace.reward), trace)


def filled_answer_line(prompt_text: str, values: Mapping[str, str]) -> str:
    """The answer line a worksheet prompt ends on (`piv_core.ledger_audit.grading.worksheet`), each ``<...>``
    placeholder but the tags replaced by `values[its name]` (its text up to any ``:``): what a model
    that copied the line and filled it in would write."""
    line = next(line for line in reversed(prompt_text.splitlines()) if line.startswith("<answer>"))
    return re.sub(r"<(?!/?answer>)([^<>:]*)(?::[^<>]*)?>", lambda match: values[match.group(1)], line)


def filled_from_key(
    prompt_text: str,
    figures: Mapping[str, str],
    row_figures: Mapping[str, int],
    faults: Mapping[str, list[str]],
    row_figure: str,
) -> tuple[str, str]:
    """A worksheet's answer line filled from the key (the asked `figures`, each row's `row_figure`
    from `row_figures` in cents and its `faults`), and the same with the first faulty row's faults
    left ``[]``: the whole work, and the whole work less one verdict."""
    values = dict(figures)
    for txn, cents in row_figures.items():
        values[f"{row_figure} of {txn}"] = format_cents(cents)
        values[f"faults of {txn}"] = json.dumps(faults.get(txn, []))
    missed = {**values, f"faults of {next(iter(faults))}": "[]"}
    return filled_answer_line(prompt_text, values), filled_answer_line(prompt_text, missed)


def installed_from_wheel(module: str) -> bool:
    """Whether `module` is found in this interpreter's site-packages (a copy installed from a wheel),
    not in a source checkout (an editable install) or nowhere."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return False
    return Path(sysconfig.get_paths()["purelib"]).resolve() in Path(spec.origin).resolve().parents


def run_command(command: str, *args: str, cwd: str | None = None, timeout: float = 900) -> tuple[int, str]:
    """Run a suite command (``piv-eval``, ``piv-validate``, ``piv-summarize``; inside the
    repository also ``eval``, ``validate``, ``summarize``) as a user would.

    Returns (exit code, combined output)."""
    import os
    import shutil
    import subprocess
    import sys

    executable = shutil.which(command, path=os.path.dirname(sys.executable)) or command
    done = subprocess.run(
        [executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def run_baseline_eval(
    env_id: str, policy: str, output_dir: str, *args: str, num_tasks: int = 4, command: str = "piv-eval"
) -> Any:
    """Run ``piv-eval <env_id> --model baseline/<policy>`` (or `command`) into `output_dir`.

    Returns (exit code, output, EvalRun or None when the run wrote no traces)."""
    from piv_core.runs.reading import read_eval_run

    name = f"{env_id}--{policy}"
    code, output = run_command(
        command, *_eval_args(env_id, f"baseline/{policy}", num_tasks, output_dir, name), *args
    )
    try:
        run = read_eval_run(f"{output_dir}/{name}")
    except FileNotFoundError:
        run = None
    return code, output, run


def run_policy_eval(
    env_id: str, policy: Any, output_dir: str, name: str, *args: str, num_tasks: int = 1
) -> tuple[int, str]:
    """Run ``eval <env_id>`` against an endpoint of the caller's own serving `policy` (a
    `piv_core.baseline.endpoint.Policy`, e.g. one that records the requests it answers), into
    ``<output_dir>/<name>``. Returns (exit code, combined output)."""
    from piv_core.baseline.endpoint import running_endpoint

    with running_endpoint({name: policy}) as base_url:
        eval_args = _eval_args(env_id, name, num_tasks, output_dir, name)
        return run_command("eval", *eval_args, "--client.base-url", base_url, *args)


def _eval_args(env_id: str, model: str, num_tasks: int, output_dir: str, name: str) -> list[str]:
    """An eval command's arguments for `num_tasks` tasks of `env_id` by `model`, into ``output_dir/name``."""
    return [env_id, "--model", model, "-n", str(num_tasks), "--no-rich", "-o", output_dir, "--run.name", name]


class ReportMarks(HTMLParser):
    """What a run report (`piv_core.runs.report`) marks, read back from its HTML: every element of
    class ``diff`` (its attributes, its text, and the ``data-run`` / ``data-task`` around it), every
    rollout block's run and task, and every tag in the page."""

    VOID = frozenset({"meta", "br", "img", "hr", "input", "link", "col", "wbr"})

    def __init__(self, html: str = "") -> None:
        super().__init__()
        self.stack: list[dict[str, str]] = []
        self.open: list[tuple[int, dict[str, str]]] = []
        self.marked: list[dict[str, str]] = []
        self.rollouts: list[dict[str, str]] = []
        self.tags: list[str] = []
        if html:
            self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag in self.VOID:
            return
        self.stack.append(found)
        classes = found.get("class", "").split()
        context = {k: v for a in self.stack for k, v in a.items() if k in ("data-run", "data-task")}
        if "rollout" in classes:
            self.rollouts.append(context)
        if "diff" in classes:
            record = {**context, **found, "text": ""}
            self.marked.append(record)
            self.open.append((len(self.stack), record))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID or not self.stack:
            return
        while self.open and self.open[-1][0] >= len(self.stack):
            self.open.pop()
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        for _, record in self.open:
            record["text"] += data


def register_environment(directory: Path, env_id: str, target: str, distribution: str | None = None) -> Path:
    """Write, under `directory`, the metadata of a distribution (named `distribution`, by default
    `env_id`) that registers `target` (``"module:attribute"``) as environment `env_id` in the
    ``piv.environments`` group; with `directory` on ``sys.path`` (or ``PYTHONPATH``) the
    environment is registered. Returns the metadata directory."""
    from piv_core.plugins import ENTRY_POINT_GROUP

    name = distribution or env_id
    info = directory / f"{re.sub(r'[-_.]+', '_', name)}-0.0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{env_id} = {target}\n")
    return info
