"""configs/prime-rl/ read the way prime-rl reads it, and one multi-environment run against one endpoint.

Every key of the two files must be one prime-rl's config models declare; the key names below
were read from prime-rl's public source (PrimeIntellect-ai/prime-rl, main at commit
559b44772e471d1538537b8805cc77f3824a5e64 of 2026-08-21, the files named beside each set) and
are written out here, so a key prime-rl does not know fails this test. What prime-rl hands to
verifiers (each source's ``env`` and ``serve`` tables) is validated by verifiers' own models,
the way prime-rl's sources do it: ``vf.resolve_env_field`` narrows ``env`` to the environment's
config class (so a misspelt knob is refused, not dropped), ``vf.ServeConfig`` takes ``serve``,
and ``vf.load_taskset`` loads the taskset as the orchestrator does.

The e2e test then runs the evals file the way prime-rl's ``evals`` runs it: one env server per
source (verifiers' ``serve_env``, sized by the source's ``serve.pool``), every taskset loaded
client-side, a fixed eval set of ``num_examples`` tasks each, and one client, one model name
and one baseline endpoint for all four sources.

Against verifiers 0.3.1 (``make test-verifiers-0.3.1``, where beancount-ledger, which needs
verifiers 0.4, is not installed) the same tests run for the three text environments' sources.
"""

from __future__ import annotations

import asyncio
import importlib.util
import tomllib
from contextlib import ExitStack
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
import verifiers.v1 as vf
from piv_core.baseline.endpoint import running_endpoint
from piv_core.compat import IN_PROCESS_HARNESS, VERIFIERS_VERSION
from piv_core.runtime.serving import env_server_pool
from verifiers.v1.serve import EnvClient
from verifiers.v1.utils.loaders import default_harness_id, harness_class, taskset_config_type

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "prime-rl"
TEXT_ENVS = ("au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1")
ALL_ENVS = (*TEXT_ENVS, "beancount-ledger")
INSTALLED = tuple(e for e in ALL_ENVS if importlib.util.find_spec(e.replace("-", "_")) is not None)

# --- prime-rl's config keys (packages/prime-rl-configs/src/prime_rl/configs/, commit 559b4477) ---
# orchestrator.py: EnvConfig, TrainSourceConfig, EvalSourceConfig, TrainConfig, EvalConfig,
# TrainSamplingConfig, EvalSamplingConfig, OrchestratorConfig
ENV_SOURCE = {"env", "serve", "name", "ratio"}
TRAIN_SOURCE = ENV_SOURCE | {"sampling", "group_size", "algo", "curriculum"}
EVAL_SOURCE = ENV_SOURCE | {"sampling", "num_examples", "group_size", "interval"}
TRAIN_SAMPLING = {"temperature", "max_completion_tokens", "extra_body"}
EVAL_SAMPLING = {
    "temperature", "top_p", "top_k", "min_p", "max_completion_tokens", "reasoning_effort", "extra_body",
}  # fmt: skip
TRAIN = {"source", "sampling", "filter_zero_advantages"}
EVAL = {
    "source",
    "sampling",
    "num_examples",
    "group_size",
    "interval",
    "skip_first_step",
    "retrigger_on_resume",
}
ORCHESTRATOR = {
    "algo", "model", "train", "tokenizer", "renderer", "eval", "log", "env_vars", "monitors",
    "collect_inference_metrics", "inference_metrics_roles", "ckpt", "resume", "weight_broadcast",
    "rollout_transport", "output_dir", "tasks_per_minute", "env_server_base_port", "batch_size",
    "token_batch_size", "concurrency", "group_size", "seq_len", "num_train_workers", "pad_to_multiple_of",
    "max_steps", "max_off_policy_steps", "heartbeat",
}  # fmt: skip
# evals.py: EvalsEvalConfig (EvalConfig plus three), EvalsConfig
EVALS_EVAL = EVAL | {"client", "env_server_base_port", "concurrency"}
EVALS = {"model", "eval", "online", "weight_broadcast", "output_dir", "log", "monitors"}
# shared.py: ClientConfig
CLIENT = {
    "wait_for_ready_timeout", "base_url", "api_key_var", "headers", "headers_from_env",
    "extra_headers_from_state", "skip_model_check", "admin_base_url",
}  # fmt: skip
# orchestrator.py: CurriculumConfig, DifficultyPoolSamplerConfig, DifficultyPoolConfig, AdvRangeGateConfig
CURRICULUM = {
    "sampler": {"type": None, "pools": {"*": {"threshold", "weight"}}, "seed": None},
    "gates": {"*": {"type", "reject_min", "reject_max"}},
}
# rl.py: RLConfig, SharedModelConfig; trainer.py: TrainerConfig, BaseOptimizerConfig; inference.py
RL = {
    "trainer", "orchestrator", "inference", "env_vars", "run", "output_dir", "clean", "log", "ckpt",
    "resume", "monitors", "model", "tokenizer", "max_steps", "seq_len", "weight_broadcast",
    "rollout_transport", "deployment", "slurm", "dry_run",
}  # fmt: skip
SHARED_MODEL = {"name", "vlm"}
TRAINER = {
    "model", "tokenizer", "data", "loss", "optim", "scheduler", "ckpt", "resume", "weight_broadcast",
    "rollout_transport", "log", "monitors", "output_dir", "matmul_precision", "max_steps",
    "enable_router_replay", "memory_profiler_path", "gc", "trace_path", "dist_timeout_seconds",
    "heartbeat", "metrics_server", "enable_token_export", "env_vars",
}  # fmt: skip
OPTIMIZER = {"lr", "weight_decay", "max_norm"}
INFERENCE = {
    "server", "router", "backend_port", "vllm", "log", "env_vars", "use_deep_gemm", "weight_broadcast",
    "kv_cache_offload", "use_pd_kv_transfer", "enable_fp32_lm_head", "enable_fp32_router_logits",
    "deployment", "slurm", "output_dir", "dry_run",
}  # fmt: skip

VERIFIERS = "verifiers"
"""A table prime-rl hands to verifiers unchanged (``env``, ``serve``): checked by verifiers' models."""


def _schema(source_keys: set[str], sampling: set[str]) -> dict[str, Any]:
    tables = {"env": VERIFIERS, "serve": VERIFIERS, "sampling": sampling, "curriculum": CURRICULUM}
    return {key: None for key in source_keys} | {
        k: v for k, v in tables.items() if k in source_keys | {"env"}
    }


EVALS_SCHEMA: dict[str, Any] = {key: None for key in EVALS} | {
    "eval": {key: None for key in EVALS_EVAL}
    | {"source": [_schema(EVAL_SOURCE, EVAL_SAMPLING)], "sampling": EVAL_SAMPLING, "client": CLIENT},
}
RL_SCHEMA: dict[str, Any] = {key: None for key in RL} | {
    "model": SHARED_MODEL,
    "trainer": {key: None for key in TRAINER} | {"optim": OPTIMIZER},
    "inference": INFERENCE,
    "orchestrator": {key: None for key in ORCHESTRATOR}
    | {
        "train": {key: None for key in TRAIN}
        | {"source": [_schema(TRAIN_SOURCE, TRAIN_SAMPLING)], "sampling": TRAIN_SAMPLING},
        "eval": {key: None for key in EVAL}
        | {"source": [_schema(EVAL_SOURCE, EVAL_SAMPLING)], "sampling": EVAL_SAMPLING},
    },
}


def _unknown_keys(data: Any, schema: Any, path: str = "") -> list[str]:
    """Keys of `data` that `schema` (nested dicts / sets, a one-item list for arrays of tables) lacks."""
    if schema is None or schema == VERIFIERS:
        return []
    if isinstance(schema, list):
        return [bad for i, item in enumerate(data) for bad in _unknown_keys(item, schema[0], f"{path}[{i}]")]
    if not isinstance(data, dict):
        return [f"{path} is not a table"]
    known = schema if isinstance(schema, dict) else dict.fromkeys(schema)
    if "*" in known:  # a table of named entries (pools, gates), each of one shape
        known = dict.fromkeys(data, known["*"])
    bad = [f"{path}.{key}".lstrip(".") for key in data if key not in known]
    return bad + [
        b
        for key, value in data.items()
        if key in known
        for b in _unknown_keys(value, known[key], f"{path}.{key}")
    ]


def _load(name: str) -> dict[str, Any]:
    return tomllib.loads((CONFIGS / name).read_text())


def _sources() -> list[tuple[str, str, dict[str, Any]]]:
    """(file, group, source table) for every source of both files."""
    evals = _load("evals.toml")
    return [("evals.toml", "eval", s) for s in evals["eval"]["source"]] + [
        (name, group, s)
        for name in ("rl.toml", "curriculum.toml")
        for group in ("train", "eval")
        for s in _load(name)["orchestrator"].get(group, {}).get("source", [])
    ]


@pytest.fixture
def operator_worlds(monkeypatch, tmp_path):
    """beancount-ledger's keyed worlds without the release manifest: a test secret and the
    development override, honoured here because the package is imported from its source tree."""
    if "beancount-ledger" not in INSTALLED:
        return
    from beancount_ledger import keys, release

    monkeypatch.setenv(keys.SECRET_ENV, "piv prime-rl config test secret")
    monkeypatch.setenv(release.OVERRIDE_ENV, "1")
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.mark.parametrize(
    ("name", "schema"), [("evals.toml", EVALS_SCHEMA), ("rl.toml", RL_SCHEMA), ("curriculum.toml", RL_SCHEMA)]
)
def test_every_key_is_one_prime_rl_declares(name, schema):
    assert _unknown_keys(_load(name), schema) == []


def test_the_key_check_catches_a_stray_key():
    data = _load("evals.toml")
    data["eval"]["source"][0]["num_exemples"] = 3
    data["eval"]["sampling"]["temprature"] = 0.0
    assert _unknown_keys(data, EVALS_SCHEMA) == ["eval.sampling.temprature", "eval.source[0].num_exemples"]
    data = _load("curriculum.toml")
    data["orchestrator"]["train"]["source"][0]["curriculum"]["sampler"]["pools"]["hard"]["weigth"] = 1
    data["orchestrator"]["train"]["source"][1]["curriculum"]["gates"]["low_signal"]["reject"] = 0
    assert _unknown_keys(data, RL_SCHEMA) == [
        "orchestrator.train.source[0].curriculum.sampler.pools.hard.weigth",
        "orchestrator.train.source[1].curriculum.gates.low_signal.reject",
    ]


def test_the_files_cover_all_four_environments_and_mix_them_in_training():
    ids = lambda sources: sorted(s["env"]["taskset"]["id"] for s in sources)  # noqa: E731
    rl = _load("rl.toml")["orchestrator"]
    assert ids(_load("evals.toml")["eval"]["source"]) == sorted(ALL_ENVS)
    assert ids(rl["train"]["source"]) == ids(rl["eval"]["source"]) == sorted(ALL_ENVS)


@pytest.mark.parametrize(
    ("name", "group", "source"), _sources(), ids=lambda v: v if isinstance(v, str) else v["name"]
)
def test_each_source_resolves_through_verifiers_with_every_knob_accepted(
    name, group, source, operator_worlds
):
    env_id = source["env"]["taskset"]["id"]
    if env_id not in INSTALLED:
        pytest.skip(f"{env_id} is not installed beside verifiers {VERIFIERS_VERSION}")
    env = vf.resolve_env_field({"env": dict(source["env"])})["env"]
    assert isinstance(env, vf.SingleAgentEnvConfig)
    # Narrowed to the environment's own config class, every knob taken as written.
    assert type(env.taskset) is taskset_config_type(env_id)
    given = source["env"]["taskset"]
    resolved = env.taskset.model_dump(mode="json")
    for knob, value in given.items():
        if knob == "task":
            assert all(resolved["task"][k] == v for k, v in value.items()), knob
        elif knob != "selectors":  # beancount-ledger expands ranges ('eval:0-199') on validation
            assert resolved[knob] == value, knob
    # The runtime is local and the harness is the environment's own.
    assert env.agent.runtime.type == "subprocess"
    assert harness_class(env.agent.harness.id) is harness_class(default_harness_id(env_id))
    assert env.timeout.episode == source["env"]["timeout"]["episode"]
    # The text environments train on the train stream and evaluate on the held-out one.
    if env_id in TEXT_ENVS:
        assert env.taskset.split == ("train" if group == "train" else "eval")
    else:
        assert all(s.startswith(f"{group}:") for s in env.taskset.selectors)
        if name != "curriculum.toml":
            assert len(env.taskset.selectors) == (1000 if group == "train" else 200)
    # `serve`, and the taskset as the orchestrator loads it.
    serve = vf.ServeConfig.model_validate(source.get("serve", {}))
    assert serve.pool.type in ("elastic", "static")
    taskset = vf.load_taskset(env.taskset)
    first = next(iter(taskset))
    assert first.data.system_prompt and first.data.prompt
    if group == "eval" and type(taskset).INFINITE:
        assert source.get("num_examples", 0) > 0, (
            "prime-rl refuses an infinite eval taskset without num_examples"
        )


@pytest.mark.parametrize("name", ["evals.toml", "rl.toml"])
def test_beancount_sources_are_refused_loudly_without_the_operator_setup(name, monkeypatch, tmp_path):
    pytest.importorskip("beancount_ledger")
    from beancount_ledger import keys, release
    from pydantic import ValidationError

    monkeypatch.delenv(keys.SECRET_ENV, raising=False)
    monkeypatch.delenv(release.OVERRIDE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    source = next(s for _, _, s in _sources() if s["env"]["taskset"]["id"] == "beancount-ledger")
    with pytest.raises(ValidationError, match="no secret"):
        vf.resolve_env_field({"env": dict(source["env"])})


# ------------------------------------------------------------------------- the multi-environment run

NUM_EXAMPLES = 2
SOLVER = "baseline/oracle"
"""One model name for every source: `oracle` and `reference` both name an environment's solver."""


async def _run_source(address: str, client: vf.ClientConfig, tasks: list, sampling: dict) -> list:
    env_client = EnvClient(address)
    await env_client.wait_for_server_startup(timeout=300)
    episodes = await asyncio.gather(
        *(
            env_client.run(
                task_data=task.data.model_dump(mode="json"),
                client=client,
                model=SOLVER,
                sampling=vf.SamplingConfig(**sampling),
            )
            for task in tasks
        )
    )
    return list(episodes)


@pytest.mark.e2e
def test_the_evals_config_runs_all_four_sources_against_one_endpoint(operator_worlds):
    evals = _load("evals.toml")
    sampling = dict(evals["eval"]["sampling"])
    plan = []
    for source in evals["eval"]["source"]:
        if source["env"]["taskset"]["id"] not in INSTALLED:
            continue
        env = vf.resolve_env_field({"env": dict(source["env"])})["env"]
        serve = vf.ServeConfig.model_validate(source.get("serve", {}))
        tasks = list(islice(iter(vf.load_taskset(env.taskset)), NUM_EXAMPLES))  # the fixed eval set
        plan.append((source["name"], env, serve, tasks))
    with ExitStack() as stack:
        base_url = stack.enter_context(running_endpoint())  # every installed environment, one base URL
        client = vf.EvalClientConfig(base_url=base_url)
        addresses = [stack.enter_context(env_server_pool(env, pool=serve.pool)) for _, env, serve, _ in plan]

        async def run_all() -> list[list]:
            return await asyncio.gather(
                *(
                    _run_source(address, client, tasks, sampling)
                    for address, (*_, tasks) in zip(addresses, plan)
                )
            )

        results = dict(zip([name for name, *_ in plan], asyncio.run(run_all())))
    assert sorted(results) == sorted(ALL_ENVS if IN_PROCESS_HARNESS else TEXT_ENVS)
    for name, episodes in results.items():
        assert len(episodes) == NUM_EXAMPLES
        for episode in episodes:
            assert episode.ok, (name, episode.errors)
            (trace,) = episode.traces
            assert trace.reward == pytest.approx(1.0), (name, trace.rewards)
            task_id = trace.task.data.id
            assert "-eval-" in task_id or task_id.startswith("eval:"), task_id  # the held-out streams
        print(f"{name}: {[(e.traces[0].task.data.id, e.traces[0].reward) for e in episodes]}")


# ------------------------------------------------------------------------- the curriculum over mixed rungs


def _curricula() -> list[dict[str, Any]]:
    return _load("curriculum.toml")["orchestrator"]["train"]["source"]


def test_the_curriculum_trains_every_environment_on_pools_of_mixed_rungs():
    sources = _curricula()
    assert sorted(s["env"]["taskset"]["id"] for s in sources) == sorted(ALL_ENVS)
    for source in sources:
        sampler, gates = source["curriculum"]["sampler"], source["curriculum"]["gates"]
        # What prime-rl's DifficultyPoolSamplerConfig and AdvRangeGateConfig refuse, refused here too.
        assert sampler["type"] == "difficulty_pool"
        thresholds = [pool["threshold"] for pool in sampler["pools"].values()]
        assert len(set(thresholds)) == len(thresholds) and max(thresholds) == 1.0
        assert all(pool["weight"] >= 0 for pool in sampler["pools"].values())
        assert any(pool["weight"] > 0 for pool in sampler["pools"].values())
        assert [gate["type"] for gate in gates.values()] == ["advantage_range"]
        assert all(gate["reject_min"] <= 0 <= gate["reject_max"] for gate in gates.values())


@pytest.mark.parametrize("source", _curricula(), ids=lambda s: s["name"])
def test_each_curriculum_source_is_a_finite_mix_with_unique_durable_keys(source, operator_worlds):
    env_id = source["env"]["taskset"]["id"]
    if env_id not in INSTALLED:
        pytest.skip(f"{env_id} is not installed beside verifiers {VERIFIERS_VERSION}")
    env = vf.resolve_env_field({"env": dict(source["env"])})["env"]
    taskset = vf.load_taskset(env.taskset)
    assert not type(taskset).INFINITE  # prime-rl's pools list the taskset, and refuse an infinite one
    if env_id in TEXT_ENVS:
        levels = env.taskset.levels
        assert len(levels) >= 3 and levels == sorted(levels)
        size, sample = len(levels) * env.taskset.tasks_per_level, len(levels) * 20
    else:
        levels = sorted({int(s.rsplit("level", 1)[1]) for s in env.taskset.selectors})
        assert levels == [13, 14, 15]  # rungs 1 to 12 are served other tools: they train apart
        size, sample = len(env.taskset.selectors), 3
    tasks = list(islice(iter(taskset), sample))  # every rung is served from the first tasks on
    assert len({task.key for task in tasks}) == len(tasks) and size >= len(tasks)
    if env_id in TEXT_ENVS:
        assert {task.data.level for task in tasks} == set(levels)
