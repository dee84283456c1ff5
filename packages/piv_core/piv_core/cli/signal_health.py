"""``piv-signal``: how much learning signal an environment gives, rung by rung of its ladder.

    piv-signal <env-id> [--levels 1,2,3] [-n TASKS] [-r GROUP] [--noisy 0,0.1,0.3,0.6]
               [--naive POLICY] [-o OUT.md] [--env.taskset.<knob> VALUE ...]
    piv-signal <env-id> --model NAME --client.base-url URL [--client.api-key-var VAR]
               [--sampling.temperature 1.0 ...] [--levels ...] [-n TASKS] [-r GROUP]

For each level (every rung of the environment's ``level`` knob unless ``--levels`` names some)
it runs, through the real ``eval`` pipeline against the baseline endpoint, the oracle, a naive
policy and ``baseline/noisy-<p>`` for each p, over the same `TASKS` tasks. Deterministic
policies run once per task; noisy ones `GROUP` times per task (a trainer's group). With
``--model`` it runs that model instead, `GROUP` times per task, wherever eval's ``--client.*``
and ``--sampling.*`` arguments point it (a real endpoint: where on the ladder the model stands).
It reports, per rung and policy:

- the mean reward, and the share of tasks whose mean reward is above 0;
- the share of zero-variance groups: tasks whose `GROUP` rollouts all earned the same reward,
  so a group-relative trainer learns nothing from them (deterministic policies: always 1);
- the share of replies that parsed (the ``parsed`` or ``answered`` metric, where recorded), and
  the completion tokens per reply (``~`` marks an estimate of four characters a token, where the
  endpoint reported no usage), and the mean split by reward function (what earns it);
- the per-skill means: every ``recall_*`` (per fault code), ``pass_*`` (per problem family)
  and ``resolved_*`` (per discrepancy kind) metric the environment records, each over the
  rollouts whose task has that code, family or kind at all (its ``keyed_*`` or ``has_*``
  metric above 0, where the environment records one); "–" where no task has it;

and per rung, the share of tasks on which the policies' mean rewards differ (the tasks that
tell skill levels apart). Over two rungs or more, each policy run in groups (the model, the noisy
ones) also gets the ladder at a glance (`ladder`): per rung its mean, the share of groups whose
rewards vary, whether the rung gives signal (a mean of at least `SIGNAL_FLOOR` and a group that
varies), and the share of the rung below's mean it keeps, a cliff where that rung's mean is above
`SIGNAL_FLOOR` and it keeps less than `KEEP`. The markdown goes to stdout and to ``-o``; the runs stay under
``--runs`` for ``summarize`` and ``compare`` (``--reuse`` reads runs already there instead of
running them again).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from piv_core import plugins
from piv_core.runs.files import describe
from piv_core.runs.reading import EvalRun, output_tokens, read_eval_run, task_key, trace_total
from piv_core.runs.skills import SKILL_PREFIXES, applies
from piv_core.tasksets.knobs import DECIMAL, argument, whole

DEFAULT_NOISY = (0.0, 0.1, 0.3, 0.6)
FORMAT_METRICS = ("parsed", "answered")
"""Metrics saying whether a reply's answer could be read at all."""


MAX_LEVELS = 32
SIGNAL_FLOOR = 0.05
"""The least mean reward at which a rung, with a group whose rewards vary, gives a policy signal."""
KEEP = 0.3
"""The least share of the rung below's mean (where that is above `SIGNAL_FLOOR`) a rung keeps
without being a cliff."""


@dataclass
class PolicyResult:
    """One policy's rollouts at one rung, grouped by task."""

    policy: str
    group: int
    rewards: dict[str, list[float]] = field(default_factory=dict)
    skills: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0
    parsed: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=dict)
    """Each reward function's weighted score, per rollout: what the mean is made of."""
    tokens: list[int] = field(default_factory=list)
    estimated: bool = False
    """Whether some token counts are estimates from reply length (the endpoint reported no usage)."""

    @classmethod
    def of(
        cls, policy: str, group: int, run: EvalRun, skill_prefixes: tuple[str, ...] = SKILL_PREFIXES
    ) -> PolicyResult:
        result = cls(policy, group, errors=run.failed)
        skills: dict[str, list[float]] = {}
        for trace in run.traces:
            result.rewards.setdefault(task_key(trace), []).append(trace_total(trace) or 0.0)
            metrics = trace.get("metrics") or {}
            shown = [metrics[m] for m in FORMAT_METRICS if isinstance(metrics.get(m), int | float)]
            result.parsed += [float(v) for v in shown[:1]]
            tokens, estimated = output_tokens(trace)
            result.tokens.append(tokens)
            result.estimated = result.estimated or estimated
            for name, reward in (trace.get("rewards") or {}).items():
                if isinstance(reward, dict):
                    weighted = float(reward.get("score") or 0.0) * float(reward.get("weight", 1.0))
                    result.parts.setdefault(name, []).append(weighted)
            for name, value in metrics.items():
                if name.startswith(skill_prefixes) and isinstance(value, int | float):
                    kept = skills.setdefault(name, [])  # listed even where no task has it
                    if applies(metrics, name):
                        kept.append(float(value))
        result.skills = dict(skills)
        return result

    def task_means(self) -> dict[str, float]:
        return {task: statistics.fmean(values) for task, values in self.rewards.items()}

    @property
    def mean(self) -> float:
        values = [v for vs in self.rewards.values() for v in vs]
        return statistics.fmean(values) if values else 0.0

    @property
    def nonzero_share(self) -> float:
        means = self.task_means().values()
        return sum(m > 0 for m in means) / len(means) if means else 0.0

    def parts_cell(self) -> str:
        """The mean as the sum of its reward functions' weighted means (one function: "–")."""
        if len(self.parts) < 2:
            return "–"
        return " + ".join(f"{name} {statistics.fmean(v):.3f}" for name, v in sorted(self.parts.items()))

    @property
    def replies(self) -> int:
        return sum(len(v) for v in self.rewards.values())

    def tokens_cell(self) -> str:
        if not self.tokens:
            return "–"
        return ("~" if self.estimated else "") + f"{statistics.fmean(self.tokens):.0f}"

    @property
    def zero_variance_share(self) -> float:
        groups = self.rewards.values()
        return sum(len(set(g)) == 1 for g in groups) / len(groups) if groups else 0.0


def differing_share(results: list[PolicyResult]) -> float:
    """The share of tasks (run by every policy) on which the policies' mean rewards are not all equal."""
    means = [r.task_means() for r in results]
    shared = set.intersection(*(set(m) for m in means)) if means else set()
    if not shared:
        return 0.0
    return sum(len({round(m[t], 9) for m in means}) > 1 for t in shared) / len(shared)


def levels_of(env_id: str, plugin: plugins.EnvironmentPlugin | None = None) -> list[int]:
    """Every rung of `env_id`'s ladder, as its registration (`plugin`, loaded when not given) lists them."""
    try:
        plugin = plugin or plugins.load(env_id)
    except (plugins.NotRegistered, plugins.Refused) as error:
        raise SystemExit(f"signal: {error}") from None
    if not plugin.levels:
        raise SystemExit(f"signal: {env_id} registers no ladder; pass its knobs instead and --levels none")
    return list(plugin.levels)


def run_policy(
    env_id: str,
    policy: str,
    level: int | None,
    tasks: int,
    group: int,
    runs: Path,
    knobs: list[str],
    reuse: bool = False,
    real: bool = False,
    skill_prefixes: tuple[str, ...] = SKILL_PREFIXES,
) -> PolicyResult:
    """One policy at one rung through ``eval`` (a baseline policy, or with `real` the model of that
    name wherever `knobs` point the client); its output goes to the run's ``signal.log``."""
    from piv_core.cli.commands import eval_main

    label = re.sub(r"[^A-Za-z0-9._-]+", "_", policy)
    name = f"{env_id}--L{level if level is not None else 'default'}--{label}"
    if reuse and (runs / name / "traces.jsonl").exists():
        return PolicyResult.of(policy, group, _read(runs / name), skill_prefixes)
    model = policy if real else f"baseline/{policy}"
    argv = [env_id, "--model", model, "-n", str(tasks), "-r", str(group), "--no-rich"]
    argv += ["-o", str(runs), "--run.name", name, "--clean", *knobs]
    if level is not None:
        argv += ["--env.taskset.level", str(level)]
    log = io.StringIO()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        try:
            eval_main(argv)
        except SystemExit as exc:
            if exc.code not in (0, 1, None):
                raise SystemExit(f"signal: eval failed for {name}:\n{log.getvalue()[-2000:]}") from None
    (runs / name).mkdir(parents=True, exist_ok=True)
    (runs / name / "signal.log").write_text(log.getvalue())
    if not (runs / name / "traces.jsonl").exists():
        raise SystemExit(f"signal: {name} wrote no traces:\n{log.getvalue()[-2000:]}")
    return PolicyResult.of(policy, group, _read(runs / name), skill_prefixes)


def _read(path: Path) -> EvalRun:
    """A run of this command's, or one line naming what is wrong with its files (never a traceback)."""
    try:
        return read_eval_run(path)
    except (OSError, ValueError) as error:  # a bad run file is a RunFileError, a ValueError
        raise SystemExit(f"signal: {describe(error)}") from None


def _share(value: float) -> str:
    return f"{value:.2f}"


def render(env_id: str, level: int | None, results: list[PolicyResult], tasks: int) -> str:
    codes = sorted({c for r in results for c in r.skills})
    head = ["policy", "group", "replies", "mean reward", "tasks > 0", "zero-variance groups", "errors"]
    head += ["parsed", "tokens / reply", "mean by reward"]
    head += [f"`{c}`" for c in codes]
    rung = f"level {level}" if level is not None else "default configuration"
    lines = [
        f"### {env_id}, {rung}",
        "",
        f"{tasks} tasks; tasks on which the policies' mean rewards differ: "
        f"{_share(differing_share(results))}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in results:
        cells = [f"`{r.policy}`", str(r.group), str(r.replies), f"{r.mean:.3f}", _share(r.nonzero_share)]
        cells += [_share(r.zero_variance_share), str(r.errors)]
        cells += [_share(statistics.fmean(r.parsed)) if r.parsed else "–", r.tokens_cell(), r.parts_cell()]
        cells += [f"{statistics.fmean(r.skills[c]):.2f}" if r.skills.get(c) else "–" for c in codes]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def ladder(env_id: str, by_level: dict[int, list[PolicyResult]]) -> str:
    """Each policy run in groups over the rungs of `by_level`, in rung order: its mean, the share of
    groups that vary, whether it gives signal, and what it keeps of the mean of the rung before
    it in this run (named where that is not the rung just below); then the rungs with signal and
    the cliffs. Empty when fewer than two rungs or no policy ran in groups."""
    levels = sorted(by_level)
    grouped = [r.policy for r in by_level[levels[0]] if r.group > 1] if len(levels) > 1 else []
    sections = []
    for policy in grouped:
        rows, signal, cliffs, below = [], [], [], None
        for level in levels:
            result = next((r for r in by_level[level] if r.policy == policy), None)
            if result is None:
                continue
            varying = 1 - result.zero_variance_share
            if result.mean >= SIGNAL_FLOOR and varying > 0:
                signal.append(level)
            keeps = "–"
            if below is not None and below[1] > 0:
                share = result.mean / below[1]
                named = "" if below[0] == level - 1 else f" of rung {below[0]}"
                cliff = below[1] > SIGNAL_FLOOR and share < KEEP
                keeps = f"{share:.2f}{named}" + (": **cliff**" if cliff else "")
                if cliff:
                    cliffs.append(f"{below[0]} → {level}")
            rows.append(
                f"| {level} | {result.mean:.3f} | {_share(varying)} "
                f"| {'yes' if level in signal else 'no'} | {keeps} |"
            )
            below = (level, result.mean)
        sections.append(
            "\n".join(
                [
                    f"### {env_id}, the ladder for `{policy}`",
                    "",
                    "| rung | mean reward | groups varying | signal | keeps of the rung below |",
                    "|---|---|---|---|---|",
                    *rows,
                    "",
                    f"Rungs with signal (a mean of {SIGNAL_FLOOR:g} or more, a group varying): "
                    f"{len(signal)} ({', '.join(map(str, signal)) or 'none'}); cliffs (keeping under "
                    f"{KEEP:g} of a rung above {SIGNAL_FLOOR:g}): {', '.join(cliffs) or 'none'}.",
                ]
            )
            + "\n"
        )
    return "\n".join(sections)


def _floats(text: str) -> list[float]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values or not all(DECIMAL.fullmatch(v) and 0 <= float(v) <= 1 for v in values):
        raise argparse.ArgumentTypeError(
            f"noise shares are numbers from 0 to 1 in ASCII digits, got {text!r}"
        )
    return [float(v) for v in values]


def _levels(text: str) -> list[int | None]:
    """``--levels``: comma-separated rungs (ASCII digits), or 'none' for the default configuration."""
    if text == "none":
        return [None]
    try:
        return [whole(v.strip(), "rung", most=MAX_LEVELS) for v in text.split(",") if v.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="piv-signal",
        description="Learning-signal health of an environment's ladder: scripted policies, or a model.",
        epilog="Other arguments are passed to eval as taskset knobs, e.g. --env.taskset.selectors.",
    )
    parser.add_argument("env_id")
    parser.add_argument(
        "--levels", type=_levels, help="comma-separated rungs, or 'none' for the default configuration"
    )
    parser.add_argument(
        "-n", "--num-tasks", type=argument(least=1), default=40, help="tasks per rung (default 40)"
    )
    parser.add_argument(
        "-r", "--group", type=argument(least=1), default=8, help="rollouts per task for noisy policies"
    )
    parser.add_argument("--noisy", type=_floats, default=list(DEFAULT_NOISY), help="noise shares p")
    parser.add_argument("--naive", help="the naive policy (default: the environment's)")
    parser.add_argument(
        "--model",
        help="run this model instead of the scripted policies (see eval: --client.*, --sampling.*)",
    )
    parser.add_argument("--runs", type=Path, default=Path("outputs/signal"), help="where the runs go")
    parser.add_argument("-o", "--output", type=Path, help="also write the markdown here")
    parser.add_argument("--reuse", action="store_true", help="read runs already under --runs")
    args, knobs = parser.parse_known_args(argv)
    registered = plugins.find(args.env_id)
    if args.levels:
        levels: list[int | None] = args.levels
    elif registered is None:  # not registered, or refused (`find` has said why on stderr)
        raise SystemExit(
            f"signal: {args.env_id} has no registration that loads (registered: "
            f"{', '.join(plugins.environment_ids()) or 'none'}), so its ladder is unknown; pass --levels"
        )
    else:
        levels = list(levels_of(args.env_id, registered))
    if args.model:
        policies = [(args.model, args.group)]
    else:
        naive = args.naive or (registered.naive if registered is not None else None)
        policies = [("oracle", 1)] + ([(naive, 1)] if naive else [])
        policies += [(f"noisy-{p:g}", args.group) for p in args.noisy]
    options = {
        "reuse": args.reuse,
        "real": bool(args.model),
        # The environment's own per-skill prefixes, else the suite's (`SKILL_PREFIXES`).
        "skill_prefixes": tuple(registered.skill_prefixes)
        if registered and registered.skill_prefixes
        else SKILL_PREFIXES,
    }
    sections, by_level = [], {}
    for level in levels:
        start = time.perf_counter()
        results = [
            run_policy(args.env_id, policy, level, args.num_tasks, group, args.runs, knobs, **options)
            for policy, group in policies
        ]
        section = render(args.env_id, level, results, args.num_tasks)
        print(section, flush=True)
        print(f"({time.perf_counter() - start:.0f} s)\n", file=sys.stderr, flush=True)
        sections.append(section)
        if level is not None:
            by_level[level] = results
    if summary := ladder(args.env_id, by_level):
        print(summary, flush=True)
        sections.append(summary)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text("\n".join(sections))


if __name__ == "__main__":
    main()
