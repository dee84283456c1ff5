"""Load through one env-server pool: many concurrent episodes, no errors, no cross-talk.

256 single-reply au-bas episodes (two policies over 128 tasks) and 32 beancount-ledger episodes
(the reference bookkeeper on 32 worlds) run concurrently through a pool of two spawned workers
with each environment's default in-process harness. Every episode must complete, and every
reward must equal what its own reply (its own written ledger) scores in-process against its
own task: an answer scored against another episode's task would differ. No time is asserted.
"""

from __future__ import annotations

import asyncio

import pytest
import verifiers.v1 as vf
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTaskset
from beancount_ledger import keys, release, scorer
from beancount_ledger.taskset import key_of, make_task_data
from piv_core.baseline.endpoint import running_endpoint
from piv_core.runtime.serving import env_server_pool
from piv_core.testing import score_reply
from verifiers.v1.serve import EnvClient

pytestmark = pytest.mark.e2e


async def _episodes(address: str, base_url: str, jobs: list[tuple[str, dict]]) -> list:
    client = EnvClient(address)
    await client.wait_for_server_startup(timeout=300)
    config = vf.EvalClientConfig(base_url=base_url)
    try:
        episodes = await asyncio.gather(
            *(client.run(config, model, vf.SamplingConfig(), data) for model, data in jobs)
        )
    finally:
        await client.close()
    return episodes


def _pool(env_id: str, taskset: dict | None = None):
    return env_server_pool(
        vf.SingleAgentEnvConfig.model_validate(
            {"taskset": {"id": env_id, **(taskset or {})}, "agent": {"runtime": {"type": "subprocess"}}}
        ),
        workers=2,
    )


def test_256_concurrent_single_reply_episodes():
    env_id = "au-bas-reconciliation-v1"
    tasks = [task for _, task in zip(range(128), AuBasTaskset(AuBasConfig()))]
    jobs = [(f"baseline/{p}", t.data.model_dump(mode="json")) for p in ("oracle", "blanket") for t in tasks]
    with running_endpoint(env_id) as base_url, _pool(env_id) as address:
        episodes = asyncio.run(_episodes(address, base_url, jobs))
    assert len(episodes) == 256
    by_id = {t.data.id: t for t in tasks}
    seen = set()
    for (model, data), episode in zip(jobs, episodes):
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        assert trace.task.data.id == data["id"]
        local = score_reply(by_id[data["id"]], trace.last_reply)
        assert {n: r.score for n, r in trace.rewards.items()} == local.rewards
        seen.add((model, trace.reward))
    assert ("baseline/oracle", 1.0) in seen and all(r < 1.0 for m, r in seen if m == "baseline/blanket")


def test_32_concurrent_ledger_episodes(monkeypatch, tmp_path):
    monkeypatch.setenv(keys.SECRET_ENV, "a test secret for generated worlds")
    monkeypatch.setenv(release.OVERRIDE_ENV, "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    env_id = "beancount-ledger"
    selectors = [f"dev:{n}" for n in range(32)]
    data = {s: make_task_data(s) for s in selectors}
    jobs = [("baseline/reference", data[s].model_dump(mode="json")) for s in selectors]
    with running_endpoint(env_id) as base_url, _pool(env_id, {"selectors": selectors}) as address:
        episodes = asyncio.run(_episodes(address, base_url, jobs))
    ledgers = set()
    for selector, episode in zip(selectors, episodes):
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        assert trace.task.data.id == selector and trace.reward == 1.0
        ledger = trace.info["ledger"]
        assert scorer.score(ledger, key_of(data[selector])).reward == 1.0
        ledgers.add(ledger)
    assert len(ledgers) == 32
