"""Throughput through verifiers' env-server pool: N concurrent episodes per environment and harness.

    uv run python bench/throughput.py [--episodes N] [--workers W] [--env ID ...] [--harness H ...]
                                      [--public-sdk-path]

The model is the baseline endpoint (oracle, or the reference bookkeeper for beancount-ledger),
so an episode's time outside the model is what the environment, verifiers and the harness
cost. Per (environment, harness) it prints: episodes per second over the concurrent batch;
the environment overhead per episode, an episode's wall time (trace start to the end of
scoring) minus its model time, as median and p99 over `SEQUENTIAL` episodes run one at a time
(so no episode waits for another); the CPU seconds the pool's processes (server, workers, tool
servers, sandboxes: every descendant) spent per episode; and their peak resident memory.
``default`` is the environment's own harness (in-process); ``null`` is verifiers' process
per episode. ``--public-sdk-path`` turns the fast model-turn path off in the env servers
(``PIV_OPENAI_FAST_PATH=0``): every turn then takes the openai SDK's public path, as it does when
the SDK's private pieces fail their probe (`piv_core.runtime.openai_internals`).

For an environment whose tools do real work (beancount-ledger: the sandboxed beancount checks
of `write_ledger` and `run_beancount`), the overhead is also given without that work: each of
the sequential episodes' executed tool calls is replayed on the toolset in this process, bound
to a fresh state of the same task (`TOOL_WORK`), and its median time subtracted, so what is left
is what the harness, verifiers, the MCP transport and the state channel cost. The table goes
to stdout, the pool's logs to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import verifiers.v1 as vf
from piv_core.baseline.endpoint import running_endpoint
from piv_core.runtime.openai_internals import FORCE_PUBLIC
from piv_core.runtime.serving import env_server_pool
from verifiers.v1.serve import EnvClient

TEXT_ENVS = ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1"]
POLICY = {"beancount-ledger": "reference"}
DEFAULT_EPISODES = {"default": 128, "null": 32}
SEQUENTIAL = {"default": 64, "null": 16}
"""Episodes run one at a time for the overhead figures, per harness (a null episode takes a second)."""


def beancount_tool_seconds(trace) -> float:
    """Seconds the tool calls `trace` executed take when called on the toolset directly."""
    import verifiers.v1 as vf
    from beancount_ledger.tools import LedgerState, LedgerToolset, rollout

    answered = {m.tool_call_id: m.content for m in trace.tool_messages}
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    spent = 0.0
    with rollout(LedgerState(files=dict(trace.task.data.files))):
        for message in trace.assistant_messages:
            for call in message.tool_calls or []:
                reply = answered.get(call.id)
                if (
                    reply is None
                    or str(reply).startswith("error: not run")
                    or str(reply).startswith("error: only")
                ):
                    continue
                start = time.perf_counter()
                getattr(toolset, call.name)(**json.loads(call.arguments or "{}"))
                spent += time.perf_counter() - start
    return spent


TOOL_WORK: dict[str, Callable] = {"beancount-ledger": beancount_tool_seconds}
"""Per environment: the seconds an episode's tools spend on their own work."""


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def _cpu_seconds(pid: int) -> float:
    """CPU of `pid` and of its reaped children (so short-lived tool servers are counted)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pids: list[int]) -> float:
    peak = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]))
    return peak / 1024


def _tasks(env_config, count: int) -> list[dict]:
    tasks = []
    for task in vf.load_taskset(env_config.taskset).load():
        tasks.append(task.data.model_dump(mode="json"))
        if len(tasks) >= count:
            break
    return [tasks[i % len(tasks)] for i in range(count)]


async def _run(address: str, base_url: str, model: str, tasks: list[dict], limit: int) -> tuple[list, float]:
    """Run `tasks` with at most `limit` in flight; (traces, wall seconds)."""
    client = EnvClient(address)
    await client.wait_for_server_startup(timeout=300)
    config = vf.EvalClientConfig(base_url=base_url)
    gate = asyncio.Semaphore(limit)

    async def one(task: dict):
        async with gate:
            return await client.run(config, model, vf.SamplingConfig(), task)

    try:
        start = time.perf_counter()
        episodes = await asyncio.gather(*(one(t) for t in tasks))
        wall = time.perf_counter() - start
    finally:
        await client.close()
    return [trace for episode in episodes for trace in episode.traces], wall


def measure(env_id: str, harness: str, episodes: int, workers: int) -> str:
    agent: dict = {"runtime": {"type": "subprocess"}}
    if harness != "default":
        agent["harness"] = {"id": harness}
    env_config = vf.SingleAgentEnvConfig.model_validate({"taskset": {"id": env_id}, "agent": agent})
    tasks = _tasks(env_config, episodes)
    model = f"baseline/{POLICY.get(env_id, 'oracle')}"
    with running_endpoint(env_id) as base_url, env_server_pool(env_config, workers=workers) as address:
        asyncio.run(_run(address, base_url, model, tasks[: 2 * workers], 2 * workers))  # warm every worker
        # One episode at a time: what an episode costs outside the model, with no queueing.
        alone, _ = asyncio.run(_run(address, base_url, model, _tasks(env_config, SEQUENTIAL[harness]), 1))
        pool = _descendants(os.getpid())[1:]  # the env server and what it starts, not this client
        before = sum(_cpu_seconds(p) for p in pool)
        traces, wall = asyncio.run(_run(address, base_url, model, tasks, len(tasks)))
        pids = _descendants(os.getpid())[1:]
        cpu = sum(_cpu_seconds(p) for p in pids) - before
        rss = _peak_rss_mb(pids)
    bad = [t for t in traces + alone if not t.ok]
    overhead = sorted((t.timing.scoring.end - t.timing.start) - t.timing.agent.model.duration for t in alone)
    p99 = overhead[min(len(overhead) - 1, int(0.99 * len(overhead)))]
    rewards = statistics.mean(t.reward or 0.0 for t in traces)
    work = TOOL_WORK.get(env_id)
    tools = statistics.median(work(t) for t in alone) if work else 0.0
    cells = [
        env_id,
        harness,
        len(traces),
        len(bad),
        f"{rewards:.3f}",
        f"{len(traces) / wall:.1f}",
        f"{statistics.median(overhead) * 1e3:.1f} ms",
        f"{p99 * 1e3:.1f} ms",
        f"{(statistics.median(overhead) - tools) * 1e3:.1f} ms" if work else "-",
        f"{cpu / len(traces) * 1e3:.1f} ms",
        f"{rss:.0f} MB",
    ]
    return "| " + " | ".join(map(str, cells)) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, help="episodes per batch (default 128 in-process, 32 null)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--env",
        nargs="*",
        default=[
            "au-bas-reconciliation-v1",
            "us-sut-reconciliation-v1",
            "geo-reprojection-v1",
            "beancount-ledger",
        ],
    )
    parser.add_argument("--harness", nargs="*", default=["default", "null"])
    parser.add_argument(
        "--public-sdk-path",
        action="store_true",
        help="every model turn through the openai SDK's public path (the fast path's fallback)",
    )
    args = parser.parse_args()
    if args.public_sdk_path:
        os.environ[FORCE_PUBLIC] = "0"  # read by the spawned env servers at their first turn
    print(
        "| environment | harness | episodes | errors | mean reward | episodes/s | overhead median | "
        "overhead p99 | overhead median without the tools' work | CPU / episode | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    # Every environment under one harness before the next: a batch of null episodes leaves dozens of
    # exiting processes behind, which would weigh on whatever is measured right after it.
    for harness in args.harness:
        for env_id in args.env:
            if env_id == "beancount-ledger" and harness == "null":
                continue  # its contract lives in its own harness; verifiers' null would break it
            print(
                measure(env_id, harness, args.episodes or DEFAULT_EPISODES[harness], args.workers), flush=True
            )


if __name__ == "__main__":
    main()
