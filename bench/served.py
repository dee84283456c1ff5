"""Benchmark a served episode: where the time of one au-bas rollout goes, in-process and behind
verifiers' env-server pool (2 spawned workers), with the oracle baseline as the model.

    uv run python bench/served.py [episodes]

Prints the wall time per episode for both paths and the median of each rollout stage from the
traces (setup, model, harness, finalize, scoring). The environment's own work is the task
generation (client side) and the scoring stage; the rest is verifiers and its chat harness.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

import verifiers.v1 as vf
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTaskset
from piv_core.baseline.endpoint import running_endpoint
from piv_core.runtime.serving import env_server_pool
from verifiers.v1.serve import EnvClient

ENV_ID = "au-bas-reconciliation-v1"
AGENT = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}


def stages(trace) -> dict[str, float]:
    timing = trace.timing.model_dump() if hasattr(trace.timing, "model_dump") else trace.timing
    span = lambda name: timing[name]["end"] - timing[name]["start"]  # noqa: E731
    return {
        "setup": span("setup"),
        "model": timing["agent"]["model"]["duration"],
        "harness": timing["agent"]["harness"]["duration"],
        "finalize": span("finalize"),
        "scoring": span("scoring"),
    }


async def in_process(tasks, base_url: str) -> list:
    config = vf.AgentConfig.model_validate(
        {**AGENT, "model": "baseline/oracle", "client": {"type": "eval", "base_url": base_url}}
    )
    return await asyncio.gather(*(vf.Agent(config).run(task) for task in tasks))


async def served(tasks, base_url: str, address: str) -> list:
    client = EnvClient(address)
    await client.wait_for_server_startup(timeout=180)
    config = vf.EvalClientConfig(base_url=base_url)
    try:
        episodes = await asyncio.gather(
            *(
                client.run(config, "baseline/oracle", vf.SamplingConfig(), task.data.model_dump(mode="json"))
                for task in tasks
            )
        )
    finally:
        await client.close()
    return [trace for episode in episodes for trace in episode.traces]


def report(label: str, traces: list, wall: float) -> None:
    assert all(trace.ok and trace.reward == 1.0 for trace in traces), label
    medians = {name: statistics.median(stages(t)[name] for t in traces) for name in stages(traces[0])}
    cells = " | ".join(f"{seconds * 1e3:.1f} ms" for seconds in medians.values())
    print(f"| {label} | {len(traces)} | {wall / len(traces):.2f} s | {cells} |")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    tasks = [task for _, task in zip(range(count), AuBasTaskset(AuBasConfig()))]
    env_config = vf.SingleAgentEnvConfig.model_validate({"taskset": {"id": ENV_ID}, "agent": AGENT})
    print("| path | episodes | wall / episode | setup | model | harness | finalize | scoring |")
    print("|---|---|---|---|---|---|---|---|")
    with running_endpoint(ENV_ID) as base_url:
        start = time.perf_counter()
        traces = asyncio.run(in_process(tasks, base_url))
        report("in-process (vf.Agent)", traces, time.perf_counter() - start)
        with env_server_pool(env_config, workers=2) as address:
            asyncio.run(served(tasks[:1], base_url, address))  # warm both workers' imports
            start = time.perf_counter()
            traces = asyncio.run(served(tasks, base_url, address))
            report("env-server pool, 2 workers", traces, time.perf_counter() - start)


if __name__ == "__main__":
    main()
