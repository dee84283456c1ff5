"""Every environment id resolves the way verifiers resolves it, with its own config, harness and policies."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
import verifiers.v1 as vf
from piv_core import plugins
from piv_core.runtime.harness import SingleReplyHarness
from verifiers.v1.utils.loaders import default_harness_id, harness_class, taskset_class

ROOT = Path(__file__).resolve().parents[1]
ENV_IDS = sorted(
    path.name.replace("_", "-")
    for path in (ROOT / "environments").iterdir()
    if (path / "pyproject.toml").exists()
)


def test_the_suite_has_its_environments():
    assert "au-bas-reconciliation-v1" in ENV_IDS


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_id_resolves_to_one_taskset_with_its_own_config(env_id):
    taskset = taskset_class(env_id)
    assert issubclass(taskset, vf.Taskset)
    assert vf.taskset_config_type(env_id) is not vf.TasksetConfig
    assert harness_class(default_harness_id(env_id)) is not None


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_registers_baseline_policies_including_a_solver(env_id):
    """Every environment ships a policy that earns full marks from what the model sees:
    `oracle` for the single-reply environments, `reference` for the tool-using one."""
    registration = plugins.load(env_id)
    assert {"oracle", "reference"} & set(registration.policies)
    assert len(registration.policies) >= 3
    assert registration.naive in registration.policies and registration.noisy is not None
    assert registration.answer_view is not None and registration.skill_prefixes


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_registered_ladder_is_the_level_knob(env_id):
    """The rungs an environment registers are exactly those its config accepts."""
    config_type = vf.taskset_config_type(env_id)
    accepted = []
    for level in range(1, 33):
        try:
            config_type(level=level)
        except ValueError:
            break
        accepted.append(level)
    assert list(plugins.load(env_id).levels) == accepted


def test_the_registry_is_the_suite():
    assert plugins.environment_ids() == ENV_IDS


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_modules_have_docstrings(env_id):
    package = importlib.import_module(env_id.replace("-", "_"))
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        assert module.__doc__ and module.__doc__.strip(), f"{module.__name__} has no docstring"


def test_text_environments_default_to_the_single_reply_harness():
    assert harness_class(default_harness_id("au-bas-reconciliation-v1")) is SingleReplyHarness


def test_one_endpoint_serves_every_installed_environment_and_tells_them_apart():
    """The baseline endpoint finds every registered environment, and recognises each one's
    requests from the system prompt its tasks carry."""
    from piv_core.baseline.endpoint import BaselineEndpoint
    from piv_core.policy import Conversation

    environments = plugins.load_all()
    assert sorted(environments) == ENV_IDS
    endpoint = BaselineEndpoint(list(environments.values()))
    for env_id in ENV_IDS:
        task = next(iter(vf.load_taskset(vf.taskset_config_type(env_id)(id=env_id))))
        system = [{"role": "system", "content": task.data.system_prompt}, {"role": "user", "content": "q"}]
        folded = [{"role": "user", "content": f"{task.data.system_prompt}\n\n{task.data.prompt_text}"}]
        assert endpoint.recognise(Conversation(system, [])).id == env_id
        assert endpoint.recognise(Conversation(folded, [])).id == env_id
        served = endpoint.environments[[e.id for e in endpoint.environments].index(env_id)]
        assert plugins.policy_of(served, "oracle")
