"""The ``split`` knob of the procedural environments: train and eval are disjoint streams.

`piv_core.tasksets.rng.split_rng` draws eval task i from a random stream no train task of any seed
shares. Checked here by content, not by construction: the first tasks of the eval split,
under the default seed, against the first tasks of the train split under the default seed
and a spread of others; no eval task's prompt (which alone determines the key) or key
equals a train task's. The train split is the stream the environments always drew.
"""

from __future__ import annotations

import importlib

import pytest
from piv_core.tasksets.rng import split_rng, task_rng

ENVS = {
    "au-bas-reconciliation-v1": ("au_bas_reconciliation_v1.taskset", "AuBasConfig", {"num_transactions": 8}),
    "us-sut-reconciliation-v1": ("us_sut_reconciliation_v1.taskset", "UsSutConfig", {"num_rows": 8}),
    "geo-reprojection-v1": ("geo_reprojection_v1.taskset", "GeoConfig", {}),
}
COUNT = 300
OTHER_SEEDS = (0, 1, 2, 7, 42, 20260701, 20260826)


def _stream(env_id: str, count: int, **knobs):
    module_name, config_name, sizes = ENVS[env_id]
    module = importlib.import_module(module_name)
    config = getattr(module, config_name)(**{**sizes, **knobs})
    return [module.make_task_data(config, idx) for idx in range(count)]


def _content(data) -> tuple:
    body = data.model_dump(mode="json", exclude={"id", "idx", "name"})
    return body["prompt"] if isinstance(body["prompt"], str) else str(body["prompt"]), str(
        sorted((k, v) for k, v in body.items() if k not in ("prompt", "system_prompt"))
    )


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_no_eval_task_equals_a_train_task(env_id):
    evals = _stream(env_id, COUNT, split="eval")
    trains = _stream(env_id, COUNT, split="train") + [
        data for seed in OTHER_SEEDS for data in _stream(env_id, 40, split="train", seed=seed)
    ]
    eval_prompts = {_content(d)[0] for d in evals}
    eval_keys = {_content(d)[1] for d in evals}
    assert len(eval_prompts) == COUNT  # the eval stream does not repeat itself either
    assert not eval_prompts & {_content(d)[0] for d in trains}
    assert not eval_keys & {_content(d)[1] for d in trains}
    assert not {d.id for d in evals} & {d.id for d in trains}
    assert all("-eval-" in d.id for d in evals)


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_train_is_the_default_and_the_stream_the_environment_always_drew(env_id):
    default, explicit = _stream(env_id, 5), _stream(env_id, 5, split="train")
    assert default == explicit
    assert [d.idx for d in default] == list(range(5))
    assert all("-eval-" not in d.id and d.id.endswith(f"-{d.idx}") for d in default)


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_an_unknown_split_is_refused_naming_the_knob(env_id):
    from pydantic import ValidationError

    module_name, config_name, _ = ENVS[env_id]
    config = getattr(importlib.import_module(module_name), config_name)
    with pytest.raises(ValidationError, match="split"):
        config(split="test")


def test_split_streams_never_share_a_random_key():
    assert split_rng("train", 5, 3).random() == task_rng(5, 3).random()
    draws = {split_rng("train", seed, i).random() for seed in range(50) for i in range(50)}
    assert not draws & {split_rng("eval", seed, i).random() for seed in range(50) for i in range(50)}
    with pytest.raises(ValueError, match="split must be one of"):
        split_rng("test", 0, 0)  # type: ignore[arg-type]
