"""Served = local: au-bas run through verifiers' env-server pool scores exactly as in-process.

The pool (`serve_env` with spawned workers, driven by `EnvClient`) is how trainers scale an
environment across processes and machines: each worker rebuilds the environment from its
JSON config and every task from its `TaskData` alone. Same tasks, same baseline policies,
same rewards, whichever way they run. With the calculator offered, each worker serves it too.
"""

from __future__ import annotations

import asyncio

import pytest
import verifiers.v1 as vf
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTaskset
from piv_core.baseline.endpoint import running_endpoint
from piv_core.runtime.serving import env_server_pool
from verifiers.v1.serve import EnvClient

pytestmark = pytest.mark.e2e

ENV_ID = "au-bas-reconciliation-v1"
POLICIES = ("oracle", "blanket", "silent", "garbage")


def _env_config() -> vf.SingleAgentEnvConfig:
    return vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": ENV_ID, "num_transactions": 30, "fault_rate": 0.35},
            "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}},
        }
    )


def _tasks(count: int) -> list:
    return [
        task for _, task in zip(range(count), AuBasTaskset(AuBasConfig(num_transactions=30, fault_rate=0.35)))
    ]


def _rewards(trace) -> dict[str, float]:
    return {name: reward.score for name, reward in trace.rewards.items()}


async def _served(address: str, base_url: str, tasks: list) -> dict[tuple[str, int], dict[str, float]]:
    client = EnvClient(address)
    await client.wait_for_server_startup(timeout=180)
    config = vf.EvalClientConfig(base_url=base_url)

    async def one(policy: str, task) -> tuple[tuple[str, int], dict[str, float]]:
        episode = await client.run(
            config, f"baseline/{policy}", vf.SamplingConfig(), task.data.model_dump(mode="json")
        )
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        return (policy, task.data.idx), _rewards(trace)

    try:
        return dict(await asyncio.gather(*(one(p, t) for p in POLICIES for t in tasks)))
    finally:
        await client.close()


async def _local(base_url: str, tasks: list) -> dict[tuple[str, int], dict[str, float]]:
    results = {}
    for policy in POLICIES:
        agent_config = vf.AgentConfig.model_validate(
            {
                "model": f"baseline/{policy}",
                "harness": {"id": "null"},
                "runtime": {"type": "subprocess"},
                "client": {"type": "eval", "base_url": base_url},
            }
        )
        traces = await asyncio.gather(*(vf.Agent(agent_config).run(task) for task in tasks))
        for task, trace in zip(tasks, traces):
            assert trace.ok, trace.errors
            results[(policy, task.data.idx)] = _rewards(trace)
    return results


def test_pool_of_two_spawned_workers_scores_like_in_process():
    tasks = _tasks(3)
    with env_server_pool(_env_config(), workers=2) as address, running_endpoint(ENV_ID) as base_url:
        served = asyncio.run(_served(address, base_url, tasks))
        local = asyncio.run(_local(base_url, tasks))
    assert served == local
    assert {served[("oracle", t.data.idx)]["bas_correct"] for t in tasks} == {1.0}
    assert all(served[("garbage", t.data.idx)] == {"bas_correct": 0.0, "fault_audit": 0.0} for t in tasks)
    assert len({tuple(sorted(r.items())) for r in served.values()}) > 2  # the policies really differ


def test_the_pool_serves_the_calculator_and_the_oracle_uses_it():
    """Each worker starts the calculator's server for its rollouts (taskset-scoped), rebuilt from the
    config alone; the oracle's calls are answered there and it earns full marks."""
    config = _env_config().model_copy(deep=True)
    config.taskset = config.taskset.model_validate(
        {**config.taskset.model_dump(), "num_transactions": 8, "calculator": True}
    )
    tasks = [t for _, t in zip(range(2), AuBasTaskset(AuBasConfig(num_transactions=8, calculator=True)))]

    async def run(address: str, base_url: str) -> list:
        client = EnvClient(address)
        await client.wait_for_server_startup(timeout=180)
        try:
            client_config = vf.EvalClientConfig(base_url=base_url)
            return await asyncio.gather(
                *(
                    client.run(
                        client_config, "baseline/oracle", vf.SamplingConfig(), t.data.model_dump(mode="json")
                    )
                    for t in tasks
                )
            )
        finally:
            await client.close()

    with env_server_pool(config, workers=2) as address, running_endpoint(ENV_ID) as base_url:
        episodes = asyncio.run(run(address, base_url))
    for episode in episodes:
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        replies = [n.message.content for n in trace.nodes if n.message.role == "tool"]
        assert replies and all(" = " in reply and "error" not in reply for reply in replies)
        assert _rewards(trace) == {"bas_correct": 1.0, "fault_audit": 1.0}
