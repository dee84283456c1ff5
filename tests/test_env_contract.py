"""The contract every environment keeps, tested once for all four.

- A bad knob fails when the config is built, and the error names the knob.
- The same configuration gives byte-identical tasks in every process, whatever its hash seed.
- `validate` accepts the tasks as generated and rejects a task whose key was tampered with.

Each environment is described by a `Contract`: how to build its config, a few of its tasks, and
a tampered copy of a task's key. beancount-ledger is reached through its public names only
(`beancount_ledger.taskset.make_task_data`, `LedgerConfig`, `LedgerTask`).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import ValidationError


@dataclass(frozen=True)
class Contract:
    env_id: str
    tasks: str
    """Python source that binds ``tasks``: a few task data objects under one fixed configuration."""
    config: str
    """``module:ConfigClass`` of the environment's taskset config."""
    task: str
    """``module:TaskClass`` that validates one task data object."""
    bad_knobs: list[tuple[dict[str, Any], str]]
    """Knob values that must fail, each with the knob name the error must mention."""
    tamper: Callable[[Any], list[Any]]
    """Copies of a task data object whose key no longer matches its prompt."""


def _bump_figure(field: str) -> Callable[[Any], list[Any]]:
    """A ledger task with one figure one cent off, with a fault dropped, and with a fault invented."""

    def tamper(data: Any) -> list[Any]:
        figures = getattr(data, field)
        label = next(iter(figures))
        txn = next(iter(data.faults), None)
        out = [data.model_copy(update={field: {**figures, label: figures[label] + 1}})]
        if txn is not None:
            out.append(data.model_copy(update={"faults": {k: v for k, v in data.faults.items() if k != txn}}))
            out.append(
                data.model_copy(update={"faults": {**data.faults, txn: [*data.faults[txn], "invented"]}})
            )
        return out

    return tamper


def _geo_tamper(data: Any) -> list[Any]:
    return [data.model_copy(update={"key": [*data.key[:-1], data.key[-1] + shift]}) for shift in (1e-3, 1.0)]


def _beancount_tamper(data: Any) -> list[Any]:
    account, balance = next(iter(data.balances.items()))
    return [
        data.model_copy(update={"balances": {**data.balances, account: f"{float(balance) + 1:.2f}"}}),
        data.model_copy(update={"fixes": data.fixes[1:]}),
    ]


CONTRACTS = [
    Contract(
        "au-bas-reconciliation-v1",
        "from au_bas_reconciliation_v1.taskset import AuBasConfig, make_task_data\n"
        "tasks = [make_task_data(AuBasConfig(num_transactions=40, fault_rate=0.3), i) for i in range(8)]",
        "au_bas_reconciliation_v1.taskset:AuBasConfig",
        "au_bas_reconciliation_v1.taskset:AuBasTask",
        [
            ({"num_transactions": 3}, "num_transactions"),
            ({"num_transactions": 10**6}, "num_transactions"),
            ({"fault_rate": 1.5}, "fault_rate"),
            ({"fault_rate": -0.1}, "fault_rate"),
            ({"fault_rate": float("nan")}, "fault_rate"),
            ({"num_transactionz": 30}, "num_transactionz"),
            ({"level": 13}, "level"),
            ({"fault_codes": ["no_such_code"]}, "fault_codes"),
            ({"labels": []}, "labels"),
        ],
        _bump_figure("bas"),
    ),
    Contract(
        "us-sut-reconciliation-v1",
        "from us_sut_reconciliation_v1.taskset import UsSutConfig, make_task_data\n"
        "tasks = [make_task_data(UsSutConfig(), i) for i in range(8)]",
        "us_sut_reconciliation_v1.taskset:UsSutConfig",
        "us_sut_reconciliation_v1.taskset:UsSutTask",
        [
            ({"num_rows": 3}, "num_rows"),
            ({"num_rows": 10**6}, "num_rows"),
            ({"fault_rate": 1.5}, "fault_rate"),
            ({"fault_rate": -0.1}, "fault_rate"),
            ({"num_tasks": 0}, "num_tasks"),
            ({"num_tasks": 10**9}, "num_tasks"),
            ({"num_rowz": 30}, "num_rowz"),
            ({"level": 13}, "level"),
            ({"fault_codes": ["no_such_code"]}, "fault_codes"),
            ({"figures": ["gross"]}, "figures"),
        ],
        _bump_figure("figures"),
    ),
    Contract(
        "geo-reprojection-v1",
        "from geo_reprojection_v1.taskset import GeoConfig, make_task_data\n"
        "tasks = [make_task_data(GeoConfig(seed=5), i) for i in range(24)]",
        "geo_reprojection_v1.taskset:GeoConfig",
        "geo_reprojection_v1.taskset:GeoTask",
        [
            ({"position_tolerance_m": 0.0}, "position_tolerance_m"),
            ({"bearing_tolerance_deg": float("inf")}, "bearing_tolerance_deg"),
            ({"families": []}, "families"),
        ],
        _geo_tamper,
    ),
    Contract(
        "beancount-ledger",
        "from beancount_ledger.taskset import make_task_data\ntasks = [make_task_data('bank_recon_001')]",
        "beancount_ledger.taskset:LedgerConfig",
        "beancount_ledger.taskset:LedgerTask",
        [({"selectors": []}, "selectors")],
        _beancount_tamper,
    ),
]
BY_ID = {contract.env_id: contract for contract in CONTRACTS}
ENV_IDS = list(BY_ID)

_DUMP = """
import json, sys
sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True))"""


def _load(ref: str) -> Any:
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def _tasks(contract: Contract) -> list[Any]:
    scope: dict[str, Any] = {}
    exec(contract.tasks, scope)
    return scope["tasks"]


def _valid(contract: Contract, data: Any) -> bool:
    return asyncio.run(_load(contract.task)(data).validate(None))


@pytest.mark.parametrize(
    ("env_id", "knobs", "named"),
    [(c.env_id, knobs, named) for c in CONTRACTS for knobs, named in c.bad_knobs],
)
def test_a_bad_knob_fails_at_load_naming_it(env_id, knobs, named):
    with pytest.raises(ValidationError, match=named):
        _load(BY_ID[env_id].config)(**knobs)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_tasks_are_byte_identical_across_processes(env_id):
    contract = BY_ID[env_id]
    here = json.dumps([t.model_dump(mode="json") for t in _tasks(contract)], sort_keys=True)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", contract.tasks + _DUMP],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        for hash_seed in ("0", "4242")
    ]
    try:
        outputs = [run.communicate(timeout=300)[0] for run in runs]
    finally:
        for run in runs:
            run.kill()
    assert [run.returncode for run in runs] == [0, 0]
    assert outputs == [here, here]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_validate_accepts_tasks_and_rejects_a_tampered_key(env_id):
    contract = BY_ID[env_id]
    for data in _tasks(contract):
        assert _valid(contract, data), data.id
        tampered = contract.tamper(data)
        assert tampered
        for bad in tampered:
            assert not _valid(contract, bad), (data.id, bad)


# ----------------------------------------------------------------------------- numbers, strictly

NOT_INTEGERS = [
    True,
    False,
    2.0,
    2.5,
    " 2",
    "2 ",
    "02",
    "+2",
    "2.0",
    "1_0",
    "1e1",
    "true",
    "1٢",
    "²",
    "",
    "0x10",
]
NOT_NUMBERS = [
    True,
    False,
    " 0.5",
    "0.5 ",
    "1_0",
    "nan",
    "inf",
    float("nan"),
    float("inf"),
    "١",
    "0,5",
    "",
    "+0.5",
]


def _numeric_knobs(model: type, prefix: str = "") -> list[tuple[str, type, Any]]:
    """(dotted name, int or float, default) of every number knob a config declares, its task's too."""
    import typing

    import verifiers.v1 as vf

    out: list[tuple[str, type, Any]] = []
    base = set(vf.TasksetConfig.model_fields) | set(vf.TaskConfig.model_fields)
    for name, field in model.model_fields.items():
        kinds = {a for a in typing.get_args(field.annotation) or (field.annotation,) if a is not type(None)}
        if name == "task" and isinstance(field.default, vf.TaskConfig):
            out += _numeric_knobs(type(field.default), f"{prefix}task.")
        elif name not in base and kinds in ({int}, {float}):
            out.append((prefix + name, kinds.pop(), field.default))
    return out


def _nested(dotted: str, value: Any) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    return {head: _nested(rest, value) if rest else value}


NUMERIC = [(c.env_id, *knob) for c in CONTRACTS for knob in _numeric_knobs(_load(c.config))]
COMPANIONS = {("geo-reprojection-v1", "point_decimals"): {"families": ["reproject"], "grids": ["webmerc"]}}
"""The knobs a number knob needs set beside it to be valid at all (a rounded point is a Web Mercator one)."""


def test_every_environment_declares_number_knobs_and_a_level():
    names = {env_id: {knob for e, knob, _, _ in NUMERIC if e == env_id} for env_id in ENV_IDS}
    assert all("level" in knobs for knobs in names.values()), names
    assert len(NUMERIC) >= 15, NUMERIC


@pytest.mark.parametrize(("env_id", "knob", "kind", "default"), NUMERIC)
def test_a_number_knob_takes_only_a_number_or_its_command_line_text(env_id, knob, kind, default):
    config = _load(BY_ID[env_id].config)
    leaf = knob.rsplit(".", 1)[-1]
    for bad in NOT_INTEGERS if kind is int else NOT_NUMBERS:
        with pytest.raises(ValidationError, match=leaf):
            config(**_nested(knob, bad))
    value = 1 if default is None else default  # level: rung 1
    text = str(value)
    built = config(**_nested(knob, text), **COMPANIONS.get((env_id, knob), {}))
    got = built
    for part in knob.split("."):
        got = getattr(got, part)
    assert got == value and type(got) is kind, (knob, text, got)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_command_line_level_is_read_and_a_toml_bool_or_padded_text_is_refused(env_id, tmp_path, capsys):
    from piv_core.cli.commands import _eval_config

    assert _eval_config([env_id, "-n", "1", "--env.taskset.level", "2"]).env.taskset.level == 2
    for bad in (" 2", "02", "true", "2.0", "1٢"):
        with pytest.raises(SystemExit):
            _eval_config([env_id, "-n", "1", "--env.taskset.level", bad])
        assert "level must be an integer" in capsys.readouterr().err
    for bad in ("true", "2.0", '" 2"'):
        (tmp_path / "config.toml").write_text(f"[env.taskset]\nlevel = {bad}\n")
        with pytest.raises(SystemExit):
            _eval_config([env_id, "-n", "1", "@", str(tmp_path / "config.toml")])
        assert "level must be an integer" in capsys.readouterr().err
