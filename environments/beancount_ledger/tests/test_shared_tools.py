"""One tool server, many rollouts: every call sees its own rollout's files and state, and nothing else.

The tools are taskset-scoped (`LedgerTaskset.toolsets`): verifiers starts one server per env worker and
every rollout of that worker calls it with its own signed state coordinates. The first tests drive the
toolset through verifiers' own per-call state code (`ServerBase._with_state`: coordinates checked
against the service secret, state pulled, bound to a context variable, pushed back) with the host side
of the channel played in-process, many rollouts at once; the last runs concurrent reference episodes
through one env-server worker and its one tool server.
"""

import asyncio
import hashlib
import os
import threading
import time
from pathlib import Path

import pytest
import verifiers.v1 as vf
from beancount_ledger import isolated, scorer
from beancount_ledger.render import LEDGER
from beancount_ledger.taskset import (
    LedgerConfig,
    LedgerData,
    LedgerTask,
    LedgerTaskConfig,
    LedgerTaskset,
    golden_of,
    key_of,
    make_task_data,
)
from beancount_ledger.tools import LedgerState, LedgerToolset
from verifiers.v1.mcp import server as mcp_server

SERVICE_SECRET = "the shared server's service secret"
STATE_URL = "http://127.0.0.1:1/state"
ROLLOUTS = 24


class Response:
    def __init__(self, content: bytes) -> None:
        self.content = content


class Host:
    """The host side of the state channel, as verifiers' interception keeps it: one state per route,
    read and replaced whole by the tool server's GET and PUT."""

    def __init__(self) -> None:
        self.states: dict[str, LedgerState] = {}

    async def request(self, method, url, secret, *, route=None, content=None, client=None):
        assert (url, secret) == (STATE_URL, SERVICE_SECRET)
        await asyncio.sleep(0)  # other rollouts' calls run in between
        if method == "GET":
            return Response(self.states[route].model_dump_json().encode())
        self.states[route] = LedgerState.model_validate_json(content)
        return Response(b"{}")


def coordinates(route: str, secret: str = SERVICE_SECRET) -> dict[str, list[str]]:
    """The query parameters verifiers attaches to a rollout's URL for a shared server."""
    return {
        mcp_server.STATE_URL_PARAM: [STATE_URL],
        mcp_server.STATE_ROUTE_PARAM: [route],
        mcp_server.STATE_SIGNATURE_PARAM: [mcp_server.state_signature(secret, STATE_URL, route)],
    }


@pytest.fixture
def host(monkeypatch):
    host = Host()
    monkeypatch.delenv("VF_STATE_URL", raising=False)
    monkeypatch.setenv("VF_STATE_SECRET", SERVICE_SECRET)
    monkeypatch.setattr(mcp_server, "_channel_request", host.request)
    return host


@pytest.fixture
def worlds(dev_worlds) -> list[LedgerData]:
    return [make_task_data("bank_recon_001")] + [make_task_data(f"dev:{n}") for n in range(ROLLOUTS - 1)]


async def call(toolset: LedgerToolset, route: str, tool: str, **arguments) -> str:
    """One MCP call of `tool` as the shared server runs it for the rollout `route`."""
    token = mcp_server._request_query_params.set(coordinates(route))
    try:
        return await toolset._with_state(getattr(toolset, tool))(**arguments)
    finally:
        mcp_server._request_query_params.reset(token)


def test_concurrent_rollouts_on_one_server_see_only_their_own_state(host, worlds, monkeypatch):
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    for n, data in enumerate(worlds):
        host.states[f"rollout-{n}"] = LedgerState(files=dict(data.files))
    check, lock, running = isolated.check, threading.Lock(), [0, 0]  # now, most at once

    def slow_check(text: str) -> isolated.Checked:
        with lock:
            running[0] += 1
            running[1] = max(running)
        time.sleep(0.02)  # each rollout's write and check overlap other rollouts' calls
        try:
            return check(text)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(isolated, "check", slow_check)

    async def episode(n: int, data: LedgerData) -> list[str]:
        route, golden = f"rollout-{n}", golden_of(data)
        return [
            await call(toolset, route, "read_file", name=LEDGER),
            await call(toolset, route, "grep", pattern="^date,", name="bank_statement.csv"),
            await call(toolset, route, "write_ledger", text=golden),
            await call(toolset, route, "run_beancount"),
            await call(toolset, route, "read_file", name=LEDGER),
            await call(toolset, route, "submit"),
        ]

    async def everything():
        return await asyncio.gather(*(episode(n, d) for n, d in enumerate(worlds)))

    replies = asyncio.run(everything())
    assert running[1] > 1  # calls of different rollouts were in flight together
    assert sorted(host.states) == sorted(f"rollout-{n}" for n in range(len(worlds)))
    for n, (data, said) in enumerate(zip(worlds, replies)):
        state, golden = host.states[f"rollout-{n}"], golden_of(data)
        given = hashlib.sha256(data.files[LEDGER].encode()).hexdigest()[:16]
        written = hashlib.sha256(golden.encode()).hexdigest()[:16]
        assert said[0] == f"{LEDGER} revision 0 (sha256 {given})\n{data.files[LEDGER]}"
        assert said[1].startswith("bank_statement.csv:1: date,")
        assert said[2].startswith(f"written: revision 1, {len(golden.encode())} bytes")
        assert said[3].startswith("no errors. Balances:")
        assert said[4] == f"{LEDGER} revision 1 (sha256 {written})\n{golden}"
        assert said[5] == "submitted (revision 1)"
        assert state.files == data.files and state.ledger == golden
        assert (state.revision, state.submitted, state.full_reads) == (1, True, [0, 1])
        assert state.tool_calls == {
            "read_file": 2,
            "grep": 1,
            "write_ledger": 1,
            "run_beancount": 1,
            "submit": 1,
        }
        assert state.observation_bytes == sum(len(r.encode()) for r in said)
    assert len({host.states[f"rollout-{n}"].ledger for n in range(len(worlds))}) == len(worlds)


def test_a_call_is_served_only_under_coordinates_signed_for_it(host, worlds):
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    host.states["mine"] = LedgerState(files=dict(worlds[0].files))
    host.states["theirs"] = LedgerState(files=dict(worlds[1].files))
    read = toolset._with_state(toolset.read_file)

    async def attempt(params):
        token = mcp_server._request_query_params.set(params)
        try:
            return await read(name=LEDGER)
        finally:
            mcp_server._request_query_params.reset(token)

    forged = coordinates("theirs", secret="a guess")
    swapped = {**coordinates("mine"), mcp_server.STATE_ROUTE_PARAM: ["theirs"]}
    for params in (forged, swapped):
        with pytest.raises(ValueError, match="invalid shared state coordinates"):
            asyncio.run(attempt(params))
    assert host.states["theirs"].full_reads == [] and host.states["theirs"].tool_calls == {}
    # No coordinates at all: a fresh, empty state, never another rollout's files.
    assert asyncio.run(attempt(None)) == f"error: {LEDGER} is missing from the workspace"
    assert asyncio.run(attempt(coordinates("mine"))).startswith(f"{LEDGER} revision 0")


def test_setup_seeds_the_state_and_the_workspace():
    data = make_task_data("bank_recon_001")
    task = LedgerTask(data, LedgerTaskConfig())
    trace = vf.Trace(
        task=vf.TraceTask(type="LedgerTask", data=data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        state=LedgerState(),
    )
    written: dict[str, bytes] = {}

    class Workspace:
        async def write(self, path: str, content: bytes) -> None:
            written[path] = content

    asyncio.run(task.setup(trace, Workspace()))
    assert trace.state.files == data.files and trace.state.ledger is None
    assert {name: text.decode() for name, text in written.items()} == data.files


def test_the_tools_are_one_shared_server_per_worker():
    config = LedgerConfig()
    (toolset,) = LedgerTaskset.toolsets(config)
    assert isinstance(toolset, LedgerToolset) and isinstance(config.tools, vf.SharedToolsetConfig)
    # The placement is the config's; the surface follows the selectors' rung (six tools here).
    assert toolset.config.model_dump(exclude={"surface"}) == config.tools.model_dump()
    assert toolset.config.surface == "full" and isinstance(toolset.config, vf.SharedToolsetConfig)
    assert LedgerTask.toolsets(config.task) == []


def _tool_servers_under(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    cmdlines: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdlines[int(entry.name)] = (entry / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        if b"beancount_ledger.tools" in cmdlines.get(pid, b""):
            found.append(pid)
        stack.extend(children.get(pid, []))
    return found


@pytest.mark.e2e
def test_concurrent_episodes_of_one_worker_share_its_tool_server(dev_worlds):
    from piv_core.baseline.endpoint import running_endpoint
    from piv_core.runtime.serving import env_server_pool
    from verifiers.v1.serve import EnvClient

    selectors = ["bank_recon_001"] + [f"dev:{n}" for n in range(15)]
    data = {s: make_task_data(s) for s in selectors}
    env_config = vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": "beancount-ledger", "selectors": selectors},
            "agent": {"runtime": {"type": "subprocess"}},
        }
    )

    async def episodes(address: str, base_url: str):
        client = EnvClient(address)
        await client.wait_for_server_startup(timeout=300)
        config = vf.EvalClientConfig(base_url=base_url)
        try:
            return await asyncio.gather(
                *(
                    client.run(
                        config, "baseline/reference", vf.SamplingConfig(), data[s].model_dump(mode="json")
                    )
                    for s in selectors
                )
            )
        finally:
            await client.close()

    with running_endpoint("beancount-ledger") as base_url, env_server_pool(env_config, workers=1) as address:
        done = asyncio.run(episodes(address, base_url))
        servers = _tool_servers_under(os.getpid())
    assert len(servers) == 1, servers
    for selector, episode in zip(selectors, done):
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        own = data[selector]
        assert trace.task.data.id == selector and trace.reward == 1.0
        assert scorer.score(trace.info["ledger"], key_of(own)).reward == 1.0
        given = hashlib.sha256(own.files[LEDGER].encode()).hexdigest()[:16]
        replies = [m.content for m in trace.tool_messages]
        assert f"{LEDGER} revision 0 (sha256 {given})\n{own.files[LEDGER]}" in replies
