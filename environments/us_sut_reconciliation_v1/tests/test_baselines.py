"""The scripted policies, in process: the oracle solves from the prompt alone, nothing else does."""

from __future__ import annotations

from statistics import fmean

import pytest
from piv_core.policy import Conversation
from us_sut_reconciliation_v1 import grading
from us_sut_reconciliation_v1.baselines import POLICIES
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutData, UsSutTask, make_task_data

NAIVE = sorted(set(POLICIES) - {"oracle"})


def _ask(policy: str, data: UsSutData) -> grading.Grade:
    conversation = Conversation(
        [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}], []
    )
    text = POLICIES[policy](conversation)
    assert isinstance(text, str)
    return grading.grade(text, data.figures, data.faults)


@pytest.fixture(scope="module")
def varied() -> list[UsSutData]:
    """600 tasks over 600 seeds, with ledgers from 5 to 80 rows and fault rates from 0 to 1."""
    return [
        make_task_data(UsSutConfig(seed=seed, num_rows=5 + seed % 76, fault_rate=(seed % 11) / 10), seed % 7)
        for seed in range(600)
    ]


def test_oracle_scores_one_on_every_seed(varied: list[UsSutData]) -> None:
    for data in varied:
        grade = _ask("oracle", data)
        assert (grade.figures_correct, grade.fault_audit, grade.parsed, grade.figure_accuracy) == (
            1.0,
        ) * 4, data.id
        # piv_core.pair_scores reports precision and recall as 0 when both sets are empty
        assert grade.fault_precision == grade.fault_recall == float(bool(data.faults)), data.id


@pytest.mark.parametrize("policy", NAIVE)
def test_every_other_policy_is_below_the_oracle(policy: str, varied: list[UsSutData]) -> None:
    grades = [_ask(policy, data) for data in varied]
    assert fmean(0.6 * g.figures_correct + 0.4 * g.fault_audit for g in grades) < 0.5
    assert fmean(g.fault_audit for g in grades) < 0.8


@pytest.mark.parametrize("policy", NAIVE)
def test_no_other_policy_files_a_correct_return_on_the_default_set(
    policy: str, default_tasks: list[UsSutTask]
) -> None:
    assert all(_ask(policy, task.data).figures_correct == 0.0 for task in default_tasks)


def test_origin_sourcing_is_the_adversary_it_claims(default_tasks: list[UsSutTask]) -> None:
    """Right on everything but sourcing: gross, taxable and use tax agree, sales tax does not."""
    grades = [_ask("origin-sourcing", task.data) for task in default_tasks]
    assert all(g.figure_accuracy == pytest.approx(0.6) for g in grades)
    assert 0.3 < fmean(g.fault_audit for g in grades) < 0.9
