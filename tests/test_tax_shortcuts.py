"""What the tax environments' rewards pay at every rung: no rule over surface features earns as much
as an honest audit that errs on 3 rows in 10, nor half the oracle's, nor at the worksheet rungs more
than `FOCUSED_CEILING`; the answers that skip the work stay below an honest audit erring on every
other row; and an honest audit's reward falls as it errs more.

The shortcut search fits decision tables over the features each environment's `shortcuts` surface
reads on the train split and judges them on the eval split (`piv_core.baseline.shortcuts.search`)."""

from __future__ import annotations

import random
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from types import SimpleNamespace

import pytest
from au_bas_reconciliation_v1 import baselines as au_baselines
from au_bas_reconciliation_v1 import levels as au_levels
from au_bas_reconciliation_v1 import prompt as au_prompt
from au_bas_reconciliation_v1 import shortcuts as au_shortcuts
from au_bas_reconciliation_v1 import taskset as au_taskset
from piv_core.baseline.shortcuts import (
    MOVES,
    constant_moves,
    conversation_of,
    held_out_mean,
    policy_mean,
    search,
)
from piv_core.testing import score_reply
from us_sut_reconciliation_v1 import baselines as us_baselines
from us_sut_reconciliation_v1 import levels as us_levels
from us_sut_reconciliation_v1 import shortcuts as us_shortcuts
from us_sut_reconciliation_v1 import taskset as us_taskset

ENVIRONMENTS = {
    "au-bas": SimpleNamespace(
        surface=au_shortcuts.AuBasSurface(),
        weights=au_shortcuts.WEIGHTS,
        config=au_taskset.AuBasConfig,
        make=au_taskset.make_task_data,
        task=au_taskset.AuBasTask,
        baselines=au_baselines,
        rungs=au_levels.RUNGS,
        taxable=lambda features: features["treatment"] == "taxable",
    ),
    "us-sut": SimpleNamespace(
        surface=us_shortcuts.UsSutSurface(),
        weights=us_shortcuts.WEIGHTS,
        config=us_taskset.UsSutConfig,
        make=us_taskset.make_task_data,
        task=us_taskset.UsSutTask,
        baselines=us_baselines,
        rungs=us_levels.RUNGS,
        taxable=lambda features: not features["exempt_category"],
    ),
}
CASES = [(name, level) for name, env in ENVIRONMENTS.items() for level in sorted(env.rungs)]
FOCUSED_CEILING = 0.15
"""The most a rule over surface features may earn at the rungs under the worksheet, which teach the
arithmetic: half the mean a first rung aims to give a small model (0.3), so that a rule doing none of
the arithmetic, such as the verdict on the rows that need none, pays under half of work that does."""
MISCALCULATED = {"gst_miscalculated", "tax_miscalculated"}
"""The codes of a taxable row's wrong figure (a row dated outside the quarter may have its figure right)."""
FULL_SAMPLES = ((30, 80), (16, 40), (8, 16), (4, 8))
"""Tasks the tables of the full-prompt rungs, in order, are fitted on and judged on."""


def _focused(env) -> list[int]:
    """The rungs under the focused prompt: the sales-only ones at the foot of the ladder."""
    return [level for level, knobs in sorted(env.rungs.items()) if knobs["prompt_style"] == "focused"]


def _above_focused(env, level: int) -> int:
    """How far `level` is above the last focused rung (0 or less: it is focused)."""
    return level - max(_focused(env))


def _samples(env, level: int) -> tuple[int, int]:
    """Tasks a rung's tables are fitted on and judged on (fewer where ledgers are long)."""
    above = _above_focused(env, level)
    return ((40, 150) if level <= 2 else (40, 100)) if above <= 0 else FULL_SAMPLES[above - 1]


def _tasks(env, level: int, split: str, count: int) -> list:
    return [env.make(env.config(level=level, split=split), idx) for idx in range(count)]


def _noisy(env, p: float):
    rng = random.Random(7)
    return lambda conversation: env.baselines.noisy(conversation, p, rng)


def _degenerate(env) -> dict:
    """Answers that skip the work, besides one move for every row (the books copied, zeros, one
    figure the books often state, every row flagged with its own code or every code:
    `piv_core.baseline.shortcuts.MOVES` and `constant_moves`)."""
    return {
        "empty": lambda conversation: '<answer>{"faults": {}}</answer>',
        "example copied": env.baselines.example,
        "everything flagged": env.baselines.blanket,
        "garbage": env.baselines.garbage,
    }


@pytest.mark.parametrize(("name", "level"), CASES)
def test_no_rule_over_surface_features_pays_like_the_work(name, level):
    env = ENVIRONMENTS[name]
    fit, test = (_tasks(env, level, split, n) for split, n in zip(("train", "eval"), _samples(env, level)))
    found = search(env.surface, fit, test, depth=2 if _above_focused(env, level) <= 1 else 1)
    honest = policy_mean(env.surface, test, _noisy(env, 0.3))
    ceiling = FOCUSED_CEILING if _above_focused(env, level) <= 0 else 0.5
    assert found.mean <= min(honest, ceiling), (found, honest)


@pytest.mark.parametrize(("name", "level"), CASES)
def test_the_reward_orders_behaviour(name, level):
    env = ENVIRONMENTS[name]
    tasks = _tasks(env, level, "eval", _samples(env, level)[1])
    noisy = [policy_mean(env.surface, tasks, _noisy(env, p)) for p in (0.0, 0.1, 0.3, 0.5)]
    assert noisy[0] == pytest.approx(1.0) and noisy == sorted(noisy, reverse=True), noisy
    floor = {what: policy_mean(env.surface, tasks, policy) for what, policy in _degenerate(env).items()}
    moves = MOVES + constant_moves([env.surface.glances(data) for data in tasks])
    floor |= {move: held_out_mean(env.surface, tasks, (), {(): move}) for move in moves}
    assert max(floor.values()) < noisy[-1], (floor, noisy)


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_surface_scores_as_the_task_does(name):
    env = ENVIRONMENTS[name]
    assert {reward: getattr(env.task, reward)._vf_weight for reward in env.weights} == env.weights
    for level in [*_focused(env), max(_focused(env)) + 2]:
        for data in _tasks(env, level, "eval", 5):
            task, conversation = env.task(data), conversation_of(data)
            replies = (
                env.baselines.noisy(conversation, 0.3, random.Random(1)),
                env.baselines.blanket(conversation),
            )
            for reply in replies:
                assert env.surface.reward(data, reply) == pytest.approx(score_reply(task, reply).reward)


@pytest.mark.parametrize(
    ("name", "level"), [(name, level) for name, env in ENVIRONMENTS.items() for level in _focused(env)]
)
def test_at_the_sales_only_rungs_no_treatment_tells_a_faulty_row_and_no_rounding_undoes_one(name, level):
    """A faulty row is as likely whatever its treatment, and no miscalculated tax is put right by
    cutting or rounding the books' figure to whole dollars."""
    env = ENVIRONMENTS[name]
    faulty: dict[bool, list[bool]] = {True: [], False: []}
    for data in _tasks(env, level, "train", 300):
        for row in env.surface.glances(data):
            taxable, is_faulty = env.taxable(row.features), row.txn_id in data.faults
            faulty[taxable].append(is_faulty)
            if taxable and set(data.faults.get(row.txn_id, ())) & MISCALCULATED:
                right = Decimal(data.row_figures[row.txn_id]).scaleb(-2)
                undone = [
                    row.recorded.quantize(Decimal(1), rounding=how) for how in (ROUND_DOWN, ROUND_HALF_UP)
                ]
                assert right not in undone, (row, right)
    shares = {taxable: sum(flags) / len(flags) for taxable, flags in faulty.items()}
    assert abs(shares[True] - shares[False]) < 0.1, shares


@pytest.mark.parametrize("level", [1, 2])
def test_at_au_bas_round_price_rungs_a_tenth_of_the_price_pays_no_more_than_a_surface_rule_may(level):
    """The commonest miscalculation used as the method (a tenth of each taxable price, cut to whole
    dollars, 0.00 on the others, each row flagged where the books differ) would be the right GST of a
    whole-dollar price below $110; the prices of rungs 1 and 2 start there (`ROUND_GST_DOLLARS`), so
    the rule earns no more than a rule over surface features may (`FOCUSED_CEILING`), whether the
    faults are read from the figures (rung 1) or from the fault map (rung 2)."""
    env = ENVIRONMENTS["au-bas"]
    tasks = _tasks(env, level, "eval", 150)
    total = 0.0
    for data in tasks:
        figures, flags = {}, {}
        for row in au_prompt.read_ledger(data.prompt_text)[1]:
            taxable = au_prompt.treatment_of(row.category) == "taxable"
            tenth = (row.amount / 10).quantize(Decimal(1), rounding=ROUND_DOWN).quantize(Decimal("0.01"))
            figures[row.txn_id] = tenth if taxable else Decimal("0.00")
            if figures[row.txn_id] != row.gst:
                flags[row.txn_id] = ["gst_miscalculated" if taxable else "gst_on_gst_free"]
        total += env.surface.reward(data, env.surface.reply(data, figures, flags))
    assert total / len(tasks) <= FOCUSED_CEILING, total / len(tasks)
