"""Shared fixtures: the default taskset's first tasks and a way to write replies by hand."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from piv_core.parsing.money import format_cents
from us_sut_reconciliation_v1.rules import FIGURES
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutData, UsSutTask, make_task_data

Reply = Callable[[dict[str, int], dict[str, list[str]]], str]


def _reply(figures: dict[str, int], faults: dict[str, list[str]], rows: dict[str, int] | None = None) -> str:
    body: dict = {name: format_cents(figures[name]) for name in FIGURES if name in figures}
    if rows:
        body["tax"] = {txn: format_cents(cents) for txn, cents in rows.items()}
    return f"Done.\n<answer>\n{json.dumps({**body, 'faults': faults})}\n</answer>"


@pytest.fixture(scope="session")
def reply() -> Reply:
    """Writes a well-formed reply stating `figures` (cents) as strings and the fault map `faults`."""
    return _reply


@pytest.fixture(scope="session")
def gold() -> Callable[[UsSutData], str]:
    """Writes the reply that states a task's key exactly."""
    return lambda data: _reply(data.figures, data.faults, data.row_figures)


@pytest.fixture(scope="session")
def default_tasks() -> list[UsSutTask]:
    config = UsSutConfig()
    return [UsSutTask(make_task_data(config, idx)) for idx in range(config.num_tasks)]


@pytest.fixture(scope="session")
def task(default_tasks: list[UsSutTask]) -> UsSutTask:
    """A default task with faults of at least three kinds."""
    return next(t for t in default_tasks if len({c for cs in t.data.faults.values() for c in cs}) >= 3)
