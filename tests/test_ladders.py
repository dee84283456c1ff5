"""Every environment's ladder survives the round trip a config makes between processes.

verifiers' env server, and prime-rl's launcher and orchestrator, hand a taskset config on as
its dump, every field included, and validate it again. A ``level`` config re-read that way must
be accepted and must serve the same tasks: the rung's own values are not a conflict with it.
"""

from __future__ import annotations

import json

import pytest
import verifiers.v1 as vf

TEXT = ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1"]


def _levels(config_type) -> list[int]:
    found = []
    for level in range(1, 33):
        try:
            config_type(id="probe", level=level)
        except ValueError:
            break
        found.append(level)
    return found


def _first_tasks(config, n: int = 3) -> list[str]:
    return [task.data.model_dump_json() for task in vf.load_taskset(config).take(n)]


@pytest.mark.parametrize("env_id", TEXT)
def test_a_levelled_config_round_trips_through_its_dump(env_id):
    config_type = vf.taskset_config_type(env_id)
    levels = _levels(config_type)
    assert len(levels) >= 4
    for level in levels:
        config = config_type(id=env_id, level=level)
        again = config_type.model_validate(json.loads(config.model_dump_json()))
        assert again == config, (env_id, level)
        assert _first_tasks(again) == _first_tasks(config), (env_id, level)


def test_beancounts_levelled_config_round_trips_through_its_dump(monkeypatch, tmp_path):
    from beancount_ledger import keys, release
    from beancount_ledger.taskset import LedgerConfig

    # Dev worlds without a manifest: a throwaway secret and the development override.
    monkeypatch.setenv(keys.SECRET_ENV, "ladder-round-trip-secret-0123456789abcdef")
    monkeypatch.setenv(release.OVERRIDE_ENV, "1")
    monkeypatch.setenv("HOME", str(tmp_path))

    for config in (LedgerConfig(level=2), LedgerConfig(level=4, selectors=["dev:0-2"])):
        again = LedgerConfig.model_validate(json.loads(config.model_dump_json()))
        assert again == config
    assert LedgerConfig(level=4, selectors=["dev:0-2"]).selectors[0].endswith("level4")


@pytest.mark.parametrize("env_id", TEXT)
def test_the_levelled_first_task_differs_from_the_default(env_id):
    config_type = vf.taskset_config_type(env_id)
    default = vf.load_taskset(config_type(id=env_id)).take(1)
    levelled = vf.load_taskset(config_type(id=env_id, level=1)).take(1)
    (a,), (b,) = list(default), list(levelled)
    assert a.data.id != b.data.id
