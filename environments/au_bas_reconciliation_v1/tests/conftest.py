"""Shared fixtures: tasks built exactly as the taskset builds them, and replies from the baseline policies."""

from __future__ import annotations

import json

import pytest
from au_bas_reconciliation_v1.baselines import POLICIES
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasData, AuBasTask, make_task_data
from piv_core.parsing.money import format_cents
from piv_core.policy import Conversation


def _task_for(idx: int = 0, **knobs) -> AuBasTask:
    return AuBasTask(make_task_data(AuBasConfig(**knobs), idx))


def _reply_of(policy: str, task: AuBasTask) -> str:
    conversation = Conversation(
        [
            {"role": "system", "content": task.data.system_prompt},
            {"role": "user", "content": task.data.prompt},
        ],
        [],
    )
    return POLICIES[policy](conversation)


def _answer(data: AuBasData, faults: dict | None = None, **labels) -> str:
    """A well-formed reply: the key's figures (each row's GST too, where the task asks for it) and
    faults unless overridden."""
    body = {label: format_cents(cents) for label, cents in data.bas.items()}
    if data.row_figures:
        body["gst"] = {txn: format_cents(cents) for txn, cents in data.row_figures.items()}
    body.update(labels)
    body["faults"] = data.faults if faults is None else faults
    return f"<answer>{json.dumps(body)}</answer>"


@pytest.fixture
def task() -> AuBasTask:
    """A default-configuration ledger that has faults (index 0 of the default seed)."""
    t = _task_for(0)
    assert t.data.faults
    return t


@pytest.fixture
def task_for():
    """task_for(idx, **knobs): task `idx` of the taskset configured with `knobs`."""
    return _task_for


@pytest.fixture
def reply_of():
    """reply_of(policy, task): what baseline `policy` answers to `task`'s prompt."""
    return _reply_of


@pytest.fixture
def answer():
    """answer(data, faults=None, **labels): a well-formed reply, the key unless overridden."""
    return _answer
