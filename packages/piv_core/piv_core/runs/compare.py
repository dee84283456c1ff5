"""Paired comparison of two eval runs over the tasks both of them ran (``compare RUN_A RUN_B``).

Rollouts are paired by task (`piv_core.runs.reading.task_key`: the task id, else the example index).
A task with several rollouts in a run counts once, at the mean of its rollouts' weighted
rewards; an episode that errored or timed out without a trace is a rollout with reward 0. Over
the tasks both runs share:

- per-task deltas ``B - A`` and their mean, with a percentile bootstrap interval: `RESAMPLES`
  resamples of the tasks with replacement, drawn by ``random.Random(seed)``, the interval
  running between the 2.5th and 97.5th percentiles of the resampled means (percentiles
  interpolated linearly between order statistics);
- an exact two-sided sign test on the discordant tasks (delta not 0): under the null each is
  equally likely to favour either run, so ``p = min(1, 2 * P(X <= min(k, n - k)))`` for
  ``X ~ Binomial(n, 1/2)``, computed in integers and returned as a `Fraction`;
- tokens per correct delivery for each run: completion tokens summed over its rollouts of the
  shared tasks, divided by how many of those rollouts scored full marks (reward 1.0); and the
  ratio B / A with a bootstrap interval from the same resamples (a resample in which either run
  has no correct delivery, or A spent no tokens, has no ratio and is left out; how many were is
  reported). A trace whose server reported no usage (llama.cpp's stream carries none, so the
  trace records 0 output tokens) counts its assistant text at four characters a token
  (`piv_core.runs.reading.output_tokens`); figures that include such estimates are marked ``~``, and
  the output says how many rollouts were estimated.

Runs are named by `piv_core.runs.reading.run_labels` (``--label``, else the directory names less what
they share); the output lists each label's full run directory once.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from pathlib import Path

from piv_core.runs.files import describe
from piv_core.runs.reading import (
    CHARS_PER_TOKEN,
    EvalRun,
    natural_key,
    output_tokens,
    read_eval_run,
    run_labels,
    task_key,
    trace_total,
)
from piv_core.tasksets.knobs import argument

RESAMPLES = 10_000
"""Bootstrap resamples for both intervals."""
MAX_RESAMPLES = 1_000_000
"""The most resamples `compare` takes: its cost is linear in them (a bound an operator cannot exceed)."""
SEED = 0
"""Default seed of the bootstrap's random stream."""
LEVEL = 0.95
"""Coverage of the percentile intervals."""
FULL_MARKS = 1.0 - 1e-9
"""A rollout at or above this weighted reward is a correct delivery."""


@dataclass(frozen=True)
class Rollout:
    task: str
    reward: float
    tokens: int
    estimated: bool = False
    """Whether `tokens` is an estimate from the reply's length (no usage recorded)."""

    @property
    def correct(self) -> bool:
        return self.reward >= FULL_MARKS


def rollouts(run: EvalRun) -> list[Rollout]:
    """Every rollout of `run`: its traces, then its failed episodes that left no trace (reward 0)."""
    found = [Rollout(task_key(t), trace_total(t) or 0.0, *output_tokens(t)) for t in run.traces]
    found += [
        Rollout(str(f["task"]), 0.0, int(f.get("tokens") or 0)) for f in run.failures if not f.get("traced")
    ]
    return found


@dataclass(frozen=True)
class TaskPair:
    """One shared task: each run's mean reward over its rollouts, and what the token figures need."""

    task: str
    a: float
    b: float
    a_tokens: int
    b_tokens: int
    a_correct: int
    b_correct: int
    a_rollouts: int
    b_rollouts: int
    a_estimated: int = 0
    b_estimated: int = 0
    """How many of each run's rollouts have estimated token counts."""

    @property
    def delta(self) -> float:
        return self.b - self.a


def pair_tasks(a: Sequence[Rollout], b: Sequence[Rollout]) -> tuple[list[TaskPair], int, int]:
    """The shared tasks in natural order of their ids, and how many tasks only A / only B ran."""

    def by_task(found: Sequence[Rollout]) -> dict[str, list[Rollout]]:
        tasks: dict[str, list[Rollout]] = {}
        for rollout in found:
            tasks.setdefault(rollout.task, []).append(rollout)
        return tasks

    tasks_a, tasks_b = by_task(a), by_task(b)
    pairs = []
    for task, ra in sorted(tasks_a.items(), key=lambda item: natural_key(item[0])):
        rb = tasks_b.get(task)
        if rb is None:
            continue
        pairs.append(
            TaskPair(
                task,
                math.fsum(r.reward for r in ra) / len(ra),
                math.fsum(r.reward for r in rb) / len(rb),
                sum(r.tokens for r in ra),
                sum(r.tokens for r in rb),
                sum(r.correct for r in ra),
                sum(r.correct for r in rb),
                len(ra),
                len(rb),
                sum(r.estimated for r in ra),
                sum(r.estimated for r in rb),
            )
        )
    return pairs, len(tasks_a.keys() - tasks_b.keys()), len(tasks_b.keys() - tasks_a.keys())


def sign_test(wins: int, losses: int) -> Fraction:
    """Exact two-sided sign-test p-value for `wins` against `losses` discordant pairs."""
    if wins < 0 or losses < 0:
        raise ValueError(f"sign_test needs non-negative counts, got wins={wins}, losses={losses}")
    n = wins + losses
    tail = sum(comb(n, i) for i in range(min(wins, losses) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-quantile (0..1) of `values`, interpolated linearly between order statistics."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"percentile q must be within [0, 1], got {q}")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def __str__(self) -> str:
        return f"[{_number(self.low)}, {_number(self.high)}]"

    def unsigned(self) -> str:
        return f"[{self.low:.3f}, {self.high:.3f}]"


def _interval(values: Sequence[float]) -> Interval:
    tail = (1.0 - LEVEL) / 2
    return Interval(percentile(values, tail), percentile(values, 1.0 - tail))


def _per_correct(tokens: int, correct: int) -> float:
    return tokens / correct if correct else math.inf


@dataclass(frozen=True)
class Comparison:
    a_name: str
    b_name: str
    pairs: list[TaskPair]
    only_a: int
    only_b: int
    mean_delta: float
    delta_interval: Interval
    b_better: int
    a_better: int
    sign_p: Fraction
    a_tokens: int
    b_tokens: int
    a_correct: int
    b_correct: int
    ratio: float
    ratio_interval: Interval | None
    ratio_left_out: int
    resamples: int
    seed: int
    a_estimated: int = 0
    b_estimated: int = 0
    """How many rollouts of the shared tasks have token counts estimated from reply length."""
    a_path: str = ""
    b_path: str = ""
    """The full run directories behind `a_name` and `b_name`."""

    @property
    def a_tokens_per_correct(self) -> float:
        return _per_correct(self.a_tokens, self.a_correct)

    @property
    def b_tokens_per_correct(self) -> float:
        return _per_correct(self.b_tokens, self.b_correct)


def compare(a: EvalRun, b: EvalRun, resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    """Compare run `b` against run `a` over the tasks both ran; raises ValueError when they share none."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    pairs, only_a, only_b = pair_tasks(rollouts(a), rollouts(b))
    if not pairs:
        raise ValueError(f"{a.name} and {b.name} share no task (paired by task id, else example index)")
    a_name, b_name = run_labels([a, b])
    deltas = [p.delta for p in pairs]
    rng = random.Random(seed)
    means, ratios, left_out = [], [], 0
    indices = range(len(pairs))
    for _ in range(resamples):
        drawn = [pairs[i] for i in rng.choices(indices, k=len(pairs))]
        means.append(math.fsum(p.delta for p in drawn) / len(drawn))
        a_correct, b_correct = sum(p.a_correct for p in drawn), sum(p.b_correct for p in drawn)
        a_spent = sum(p.a_tokens for p in drawn)
        if a_correct and b_correct and a_spent:
            ratios.append((sum(p.b_tokens for p in drawn) / b_correct) / (a_spent / a_correct))
        else:
            left_out += 1
    a_tokens, b_tokens = sum(p.a_tokens for p in pairs), sum(p.b_tokens for p in pairs)
    a_correct, b_correct = sum(p.a_correct for p in pairs), sum(p.b_correct for p in pairs)
    a_rate, b_rate = _per_correct(a_tokens, a_correct), _per_correct(b_tokens, b_correct)
    b_better = sum(d > 0 for d in deltas)
    a_better = sum(d < 0 for d in deltas)
    return Comparison(
        a_name=a_name,
        b_name=b_name,
        pairs=pairs,
        only_a=only_a,
        only_b=only_b,
        mean_delta=math.fsum(deltas) / len(deltas),
        delta_interval=_interval(means),
        b_better=b_better,
        a_better=a_better,
        sign_p=sign_test(b_better, a_better),
        a_tokens=a_tokens,
        b_tokens=b_tokens,
        a_correct=a_correct,
        b_correct=b_correct,
        ratio=b_rate / a_rate if math.isfinite(a_rate) and math.isfinite(b_rate) and a_rate else math.nan,
        ratio_interval=_interval(ratios) if ratios else None,
        ratio_left_out=left_out,
        resamples=resamples,
        seed=seed,
        a_estimated=sum(p.a_estimated for p in pairs),
        b_estimated=sum(p.b_estimated for p in pairs),
        a_path=str(a.path),
        b_path=str(b.path),
    )


def _number(value: float) -> str:
    if math.isinf(value):
        return "∞"
    return "–" if math.isnan(value) else f"{value:+.4f}" if abs(value) < 10 else f"{value:.4g}"


def _rate(value: float, estimated: bool = False) -> str:
    if math.isinf(value):
        return "∞ (no correct delivery)"
    return ("~" if estimated else "") + f"{value:.1f}"


def _tokens(c: Comparison, side: str) -> str:
    """One run's tokens per correct delivery, with what it is made of; "unknown" when the run
    recorded no token count and wrote no text to estimate one from."""
    name, tokens, correct, estimated = (
        (c.a_name, c.a_tokens, c.a_correct, c.a_estimated)
        if side == "a"
        else (c.b_name, c.b_tokens, c.b_correct, c.b_estimated)
    )
    if not tokens and correct:
        return f"{name} unknown (no token count recorded)"
    mark = "~" if estimated else ""
    rate = _rate(_per_correct(tokens, correct), bool(estimated))
    return f"{name} {rate} ({mark}{tokens} tokens / {correct} at 1.0)"


def p_text(p: Fraction) -> str:
    """A p-value as a decimal and, when its denominator is small, the exact fraction."""
    exact = f" ({p.numerator}/{p.denominator})" if 1 < p.denominator <= 2**20 else ""
    return f"{float(p):.4g}{exact}"


def summary_lines(c: Comparison) -> list[str]:
    """The comparison's findings, one sentence each (markdown and HTML share them)."""
    level = f"{LEVEL:.0%}"
    ratio = (
        f"{c.ratio:.3f}, {level} bootstrap interval {c.ratio_interval.unsigned()}"
        if math.isfinite(c.ratio) and c.ratio_interval
        else "undefined (a run has no correct delivery on the shared tasks, or no token count)"
    )
    if c.ratio_left_out and math.isfinite(c.ratio):
        ratio += f" ({c.ratio_left_out} resamples without a correct delivery in one run left out)"
    return [
        f"tasks in common: {len(c.pairs)} (only in {c.a_name}: {c.only_a}, only in {c.b_name}: {c.only_b})",
        f"mean reward difference ({c.b_name} − {c.a_name}): {_number(c.mean_delta)}, {level} bootstrap "
        f"interval {c.delta_interval} ({c.resamples} resamples, seed {c.seed}, percentile)",
        f"sign test: {c.b_name} better on {c.b_better}, {c.a_name} better on {c.a_better} of "
        f"{c.b_better + c.a_better} discordant tasks; exact two-sided p = {p_text(c.sign_p)}",
        f"tokens per correct delivery: {_tokens(c, 'a')}, {_tokens(c, 'b')}",
        f"tokens per correct delivery, ratio {c.b_name} / {c.a_name}: "
        + ("~" if (c.a_estimated or c.b_estimated) and math.isfinite(c.ratio) else "")
        + ratio,
        *_estimate_note(c),
    ]


def _estimate_note(c: Comparison) -> list[str]:
    """A line saying which token counts are estimates, when any are."""
    if not (c.a_estimated or c.b_estimated):
        return []
    counts = ", ".join(
        f"{name} {n} of {rollouts}"
        for name, n, rollouts in (
            (c.a_name, c.a_estimated, sum(p.a_rollouts for p in c.pairs)),
            (c.b_name, c.b_estimated, sum(p.b_rollouts for p in c.pairs)),
        )
        if n
    )
    return [
        f"~ marks estimated output tokens: the server reported no usage for some rollouts ({counts}), "
        f"so their assistant text was counted at {CHARS_PER_TOKEN} characters a token"
    ]


def render_markdown(c: Comparison) -> str:
    lines = [f"## {c.b_name} vs {c.a_name} (paired by task)", ""]
    if (c.a_path, c.b_path) != (c.a_name, c.b_name) and c.a_path:
        lines += [f"- A = {c.a_name}: {c.a_path}", f"- B = {c.b_name}: {c.b_path}"]
    lines += [f"- {line}" for line in summary_lines(c)]
    lines += ["", f"| task | {c.a_name} | {c.b_name} | delta |", "|---|---|---|---|"]
    for p in c.pairs:
        lines.append(
            f"| {p.task} | {p.a:.3f} (n={p.a_rollouts}) | {p.b:.3f} (n={p.b_rollouts}) | {p.delta:+.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Paired comparison of two vf-eval runs over their shared tasks (markdown on stdout)."
    )
    parser.add_argument("run_a", type=Path, help="the baseline run directory (A)")
    parser.add_argument("run_b", type=Path, help="the run compared against it (B); deltas are B - A")
    parser.add_argument(
        "--resamples",
        type=argument(least=1, most=MAX_RESAMPLES),
        default=RESAMPLES,
        help=f"bootstrap resamples ({RESAMPLES}; at most {MAX_RESAMPLES:,})",
    )
    parser.add_argument("--seed", type=argument(), default=SEED, help=f"bootstrap seed ({SEED})")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="LABEL",
        help="a short name for run A, then (given again) for run B; default: the run directories' "
        "names less the parts they share",
    )
    args = parser.parse_args(argv)
    if len(args.label) > 2:
        parser.error("--label is given at most twice: run A's, then run B's")
    try:
        runs = [read_eval_run(args.run_a), read_eval_run(args.run_b)]
        for run, label in zip(runs, args.label):
            run.label = label
        comparison = compare(*runs, args.resamples, args.seed)
    except (OSError, ValueError) as error:  # a bad run file is a RunFileError, a ValueError
        print(f"compare: {describe(error)}", file=sys.stderr)
        raise SystemExit(2) from None
    print(render_markdown(comparison))


if __name__ == "__main__":
    main()
