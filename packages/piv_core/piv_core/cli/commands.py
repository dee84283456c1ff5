"""The suite's commands: ``piv-eval``, ``piv-validate`` and ``piv-summarize``.

piv-core installs them under these prefixed names, so they never shadow a trainer's or
verifiers' own commands (verifiers 0.3.1 itself installs ``eval`` and ``validate``). Inside
this repository the root project also names them ``eval``, ``validate`` and ``summarize``.

``piv-eval`` and ``piv-validate`` are vf-eval and vf-validate with three differences:

- they run locally unless told otherwise: the agent (or check) runs in a host subprocess,
  nothing is pushed, so a newcomer is never sent to a remote sandbox, and ``eval`` keeps at
  most `LOCAL_CONCURRENCY` episodes in flight (verifiers' default of 128 starts more harness
  and tool-server processes at once than a small machine can boot before their timeouts);
- ``--model baseline/<policy>`` starts the baseline endpoint (the evaluated environment's
  policies; no other installed environment is loaded) on a free loopback port and points the
  client at it, so the whole pipeline runs with no API key;
- they read what the run wrote and exit non-zero when an episode errored or timed out, or
  a validated task was invalid (verifiers exits 0 in both cases), printing one summary line.

Every flag vf-eval / vf-validate accept is passed through unchanged.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from piv_core.baseline.endpoint import running_endpoint, serving
from piv_core.parsing.bounded_decode import OPERATOR_FILE_MAX_DEPTH, Undecodable, load_toml
from piv_core.plugins import NotRegistered, Refused
from piv_core.policy import MODEL_PREFIX
from piv_core.runs.files import RunFileError, describe, read_text
from piv_core.runs.reading import read_eval_run, read_validate_run

BASELINE_KEY_VAR = "PIV_BASELINE_API_KEY"
LOCAL_CONCURRENCY = 4 * (os.cpu_count() or 1)
MAX_CONFIG_BYTES = 1 << 20
"""The largest ``@ file.toml`` read (1 MiB)."""


def _toml_files(argv: list[str]) -> list[Path]:
    return [Path(argv[i + 1]) for i, arg in enumerate(argv[:-1]) if arg == "@"]


def _read_config(path: Path) -> dict[str, Any]:
    """An ``@ file.toml``: a regular file of at most `MAX_CONFIG_BYTES`, valid TOML (else SystemExit,
    naming the file: verifiers would read a device or a fifo without end), nested at most
    `OPERATOR_FILE_MAX_DEPTH` deep (deeper is refused before it is decoded)."""
    try:
        text = read_text(path, MAX_CONFIG_BYTES)
    except (OSError, RunFileError) as error:
        raise SystemExit(f"config file {describe(error)}") from None
    try:
        return load_toml(
            text, max_depth=OPERATOR_FILE_MAX_DEPTH, max_bytes=MAX_CONFIG_BYTES, where=f"config file {path}"
        )
    except Undecodable as error:
        raise SystemExit(str(error)) from None


def _check_configs(argv: list[str], taskset: str) -> None:
    """Every ``@ file.toml`` readable, and the taskset's ``level`` in it a TOML integer: the command
    line carries every value as text, a config file can say what it means (``level = "1"`` or
    ``level = true`` is refused, naming the file)."""
    for path in _toml_files(argv):
        node: Any = _read_config(path)
        for part in (*taskset.split("."), "level"):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None and (isinstance(node, bool) or not isinstance(node, int)):
            raise SystemExit(f"config file {path}: {taskset}.level must be a TOML integer, got {node!r}")


def _toml_value(argv: list[str], dotted: str) -> Any:
    """The value of `dotted` in the last ``@ file.toml`` that sets it, else None."""
    found = None
    for path in _toml_files(argv):
        node: Any = _read_config(path)
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            found = node
    return found


def _flag_given(argv: list[str], *flags: str) -> bool:
    return any(
        arg == flag or arg.startswith(flag + "=") or arg.startswith(flag + ".")
        for arg in argv
        for flag in flags
    )


def _with_local_defaults(argv: list[str], runtime_flag: str, runtime_key: str) -> list[str]:
    """`argv` plus a subprocess runtime when neither the command line nor a config file picks one."""
    if not _flag_given(argv, runtime_flag) and _toml_value(argv, runtime_key) is None:
        argv = [*argv, f"{runtime_flag}.type", "subprocess"]
    return argv


def _refuse_host_commands(config: Any, runtime_chosen: bool) -> None:
    """SystemExit with `confinement.host_refusal`'s line when the run's harness (`config`, parsed)
    runs model-written commands and its runtime is the host's (``subprocess``) or none was chosen
    (`runtime_chosen` False: the subprocess runtime in `config` is then eval's own default, which
    such a harness never gets)."""
    from verifiers.v1.utils.loaders import default_harness_id

    from piv_core.runtime.confinement import host_refusal

    agent = getattr(config.env, "agent", None)
    if agent is None:
        return
    harness = default_harness_id(config.env.taskset.id) if agent.harness is None else agent.harness.id
    refusal = host_refusal(harness, agent.runtime.type if runtime_chosen else None)
    if refusal:
        raise SystemExit(f"eval: {refusal}")


EVAL_DEFAULTS = f"""\
This eval applies its own defaults where neither the command line nor an @ config file sets them
(they replace the verifiers defaults shown further down):
  --env.agent.runtime.type subprocess   the agent runs in a local subprocess (no remote sandbox);
                                        a harness that runs model-written commands (bash) is
                                        refused there and needs a container or sandbox runtime
  --no-push                             nothing is uploaded
  --max-concurrent {LOCAL_CONCURRENCY:<20} four episodes per CPU core of this machine
  --model baseline/<policy>             a scripted policy on a built-in local endpoint: no key needed
A real model: --model NAME --client.base-url URL --client.api-key-var VAR, where VAR names the
environment variable that holds the key, e.g.
  OpenAI:                 --model gpt-4.1-mini --client.base-url https://api.openai.com/v1 \\
                          --client.api-key-var OPENAI_API_KEY
  vLLM, llama.cpp, Ollama (OpenAI-compatible):  --model <served name> \\
                          --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var ANY_SET_VARIABLE
Name the model every time: the default model shown below is a hosted one that needs its key.
Runs are written under outputs/<run name>; the summary line names the first error and the log.
"""


def _wants_help(argv: list[str]) -> bool:
    return not argv or any(arg in ("-h", "--help") for arg in argv)


def _parse(config_type: type, argv: list[str]) -> Any:
    """Parse `argv` into `config_type` exactly as the verifiers command does."""
    from pydantic_config import cli
    from verifiers.v1.cli.resolve import plugin_errors

    saved = sys.argv
    try:
        with plugin_errors():
            sys.argv = [saved[0], *argv]
            return cli(config_type)
    finally:
        sys.argv = saved


def _eval_config(argv: list[str]) -> Any:
    from verifiers.v1.cli.resolve import narrow_config, with_positional_taskset
    from verifiers.v1.configs.cli.eval import EvalConfig

    argv = with_positional_taskset(argv)
    return _parse(narrow_config(EvalConfig, argv), argv)


def _validate_config(argv: list[str]) -> Any:
    from verifiers.v1.cli.resolve import with_positional_taskset
    from verifiers.v1.cli.validate import _narrow

    argv = with_positional_taskset(argv, flag="--taskset.id")
    return _parse(_narrow(argv), argv)


def eval_main(argv: list[str] | None = None) -> None:
    from verifiers.v1.cli.eval.main import main as vf_eval
    from verifiers.v1.cli.output import output_path

    argv = list(sys.argv[1:] if argv is None else argv)
    # The harness runs as a uv script in its own environment: compile it once, import it fast every rollout.
    os.environ.setdefault("UV_COMPILE_BYTECODE", "1")
    if _wants_help(argv) or "--dry-run" in argv:
        if _wants_help(argv):
            print(EVAL_DEFAULTS, flush=True)
        vf_eval(argv)
        return
    _check_configs(argv, "env.taskset")
    runtime_chosen = (
        _flag_given(argv, "--env.agent.runtime") or _toml_value(argv, "env.agent.runtime") is not None
    )
    argv = _with_local_defaults(argv, "--env.agent.runtime", "env.agent.runtime.type")
    if not _flag_given(argv, "--push", "--no-push") and _toml_value(argv, "push") is None:
        argv.append("--no-push")
    if not _flag_given(argv, "-c", "--max-concurrent") and _toml_value(argv, "max_concurrent") is None:
        argv += ["--max-concurrent", str(LOCAL_CONCURRENCY)]
    config = _eval_config(argv)
    _refuse_host_commands(config, runtime_chosen)
    if not _flag_given(argv, "--run.name"):
        argv += ["--run.name", config.run.name]
    with ExitStack() as stack:
        if config.model.startswith(MODEL_PREFIX):
            try:
                served = serving(config.env.taskset.id)
            except (NotRegistered, Refused) as error:
                raise SystemExit(f"eval: no baseline policies for --model {config.model}: {error}") from None
            base_url = stack.enter_context(running_endpoint(served))
            argv += ["--client.base-url", base_url, "--client.api-key-var", BASELINE_KEY_VAR]
        vf_eval(argv)
    path = output_path(config)
    try:
        run = read_eval_run(path)
    except FileNotFoundError:
        raise SystemExit(f"eval: {path} has no traces.jsonl; the run wrote nothing") from None
    except RunFileError as error:
        raise SystemExit(f"eval: the run's traces cannot be read: {error}") from None
    print(f"\neval: {run.one_line()} -> {path}")
    if run.failed or not run.completed:
        raise SystemExit(1)


def validate_main(argv: list[str] | None = None) -> None:
    from verifiers.v1.cli.output import output_path
    from verifiers.v1.cli.validate import main as vf_validate

    argv = list(sys.argv[1:] if argv is None else argv)
    if _wants_help(argv):
        vf_validate(argv)
        return
    _check_configs(argv, "taskset")
    argv = _with_local_defaults(argv, "--runtime", "runtime.type")
    config = _validate_config(argv)
    if not _flag_given(argv, "--run.name"):
        argv += ["--run.name", config.run.name]
    vf_validate(argv)
    try:
        run = read_validate_run(output_path(config))
    except (OSError, RunFileError) as error:
        raise SystemExit(f"validate: the run's summary cannot be read: {describe(error)}") from None
    print(f"\nvalidate: {run.one_line()} -> {run.path}")
    if not run.ok:
        raise SystemExit(1)


SUMMARIES = Path("outputs") / "summaries"
"""Where `summarize` writes its chart and report unless told otherwise."""


def summary_base(runs: list[Any]) -> Path:
    """The default path, less its suffix, of one summary's files: under `SUMMARIES`, named after
    the runs' labels and a digest of their directories, so two summaries of other runs never
    overwrite each other and summarizing the same runs again replaces its own files."""
    import hashlib
    import re

    from piv_core.runs.reading import run_labels

    stem = re.sub(r"[^A-Za-z0-9._+-]+", "_", "+".join(run_labels(runs)))[:80].strip("._")
    digest = hashlib.sha256("\0".join(str(run.path.resolve()) for run in runs).encode()).hexdigest()[:8]
    return SUMMARIES / f"{stem or 'summary'}--{digest}"


def summarize_main(argv: list[str] | None = None) -> None:
    from piv_core.runs.summary import render_groups, render_skills, render_table, write_chart

    parser = argparse.ArgumentParser(
        description="Summarize vf-eval run directories as a markdown table, a per-skill table and a bar "
        "chart (and, with --html, a self-contained HTML report)."
    )
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (each holding traces.jsonl)")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="LABEL",
        help="a short name per run, given once per run in order (default: each directory's name "
        "less the parts all the runs' names share)",
    )
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        help="the path, less its suffix, of the chart (OUT.png) and the report (OUT.html); default: "
        f"{SUMMARIES}/<run labels>--<digest of the run directories>",
    )
    parser.add_argument("--png", type=Path, default=None, help="where to write the chart (default: OUT.png)")
    parser.add_argument("--no-png", action="store_true", help="write no chart")
    parser.add_argument("--by", help="also split each run by this key of trace.info or the task data")
    parser.add_argument("--median", help="with --by: report the median of this metric per group")
    parser.add_argument("--where", help="with --median: only over traces whose metric WHERE is 1.0")
    parser.add_argument(
        "--html",
        type=Path,
        nargs="?",
        const=True,
        default=None,
        help="also write a self-contained HTML report (to OUT.html, or to the path given): why runs "
        "failed, the tables and chart, stops and errors, a paired comparison when two runs are "
        "given, and every rollout's answer against its key",
    )
    args = parser.parse_args(argv)
    if args.label and len(args.label) != len(args.runs):
        parser.error(f"--label is given once per run: {len(args.label)} labels for {len(args.runs)} runs")
    try:
        runs = [read_eval_run(path) for path in args.runs]
        for run, label in zip(runs, args.label):
            run.label = label
        base = args.out or summary_base(runs)
        print(render_table(runs))
        skills = render_skills(runs)
        if skills:
            print(f"\n{skills}")
        from piv_core.runs.reading import run_labels

        named = [(label, run.path) for label, run in zip(run_labels(runs), runs) if label != str(run.path)]
        if named:
            print("\nruns:\n" + "\n".join(f"- {label}: {path}" for label, path in named))
        if args.by:
            print(f"\nby {args.by}:\n")
            print(render_groups(runs, args.by, args.median, args.where))
        if not args.no_png:
            png = args.png or base.with_name(base.name + ".png")
            write_chart(runs, png)
            print(f"\nchart: {png}")
        if args.html:
            from piv_core.runs.report import write_html

            html = base.with_name(base.name + ".html") if args.html is True else args.html
            write_html(runs, html)
            print(f"\nreport: {html}")
    except (OSError, RunFileError) as error:
        parser.exit(2, f"summarize: {describe(error)}\n")
