"""The shared tool server pulls a rollout's state from the host once, then works from what it last
pushed for that rollout; what the host holds is the same either way, and a failed push makes the
next call pull again. The host side of verifiers' state channel is played in-process, counting
the requests it gets, as in `test_shared_tools`.
"""

import asyncio

import pytest
import verifiers.v1 as vf
from beancount_ledger.render import LEDGER
from beancount_ledger.taskset import golden_of, make_task_data
from beancount_ledger.tools import KNOWN_ROUTES, LedgerState, LedgerToolset
from verifiers.v1.mcp import server as mcp_server

SECRET = "the shared server's service secret"
STATE_URL = "http://127.0.0.1:1/state"


class Response:
    def __init__(self, content: bytes) -> None:
        self.content = content


class Host:
    def __init__(self) -> None:
        self.states: dict[str, LedgerState] = {}
        self.requests: list[tuple[str, str]] = []
        self.fail_puts = 0

    async def request(self, method, url, secret, *, route=None, content=None, client=None):
        assert (url, secret) == (STATE_URL, SECRET)
        self.requests.append((method, route))
        await asyncio.sleep(0)
        if method == "GET":
            return Response(self.states[route].model_dump_json().encode())
        if self.fail_puts:
            self.fail_puts -= 1
            raise ConnectionError("the host is unreachable")
        self.states[route] = LedgerState.model_validate_json(content)
        return Response(b"{}")


@pytest.fixture
def host(monkeypatch):
    host = Host()
    monkeypatch.delenv("VF_STATE_URL", raising=False)
    monkeypatch.setenv("VF_STATE_SECRET", SECRET)
    monkeypatch.setattr(mcp_server, "_channel_request", host.request)
    return host


async def call(toolset: LedgerToolset, route: str, tool: str, **arguments) -> str:
    params = {
        mcp_server.STATE_URL_PARAM: [STATE_URL],
        mcp_server.STATE_ROUTE_PARAM: [route],
        mcp_server.STATE_SIGNATURE_PARAM: [mcp_server.state_signature(SECRET, STATE_URL, route)],
    }
    token = mcp_server._request_query_params.set(params)
    try:
        return await toolset._with_state(getattr(toolset, tool))(**arguments)
    finally:
        mcp_server._request_query_params.reset(token)


def test_one_pull_per_rollout_and_the_host_holds_every_update(host):
    data = make_task_data("bank_recon_001")
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    for route in ("a", "b"):
        host.states[route] = LedgerState(files=dict(data.files))

    async def episode(route: str) -> list[str]:
        return [
            await call(toolset, route, "read_file", name=LEDGER),
            await call(toolset, route, "read_file", name=LEDGER),
            await call(toolset, route, "write_ledger", text=golden_of(data)),
            await call(toolset, route, "read_file", name=LEDGER),
            await call(toolset, route, "submit"),
        ]

    async def both():
        return await asyncio.gather(episode("a"), episode("b"))

    replies_a, replies_b = asyncio.run(both())
    assert replies_a == replies_b
    assert replies_a[1].startswith("receipt: revision 0")  # the second read saw the first's update
    assert replies_a[3].startswith(f"{LEDGER} revision 1")
    for route in ("a", "b"):
        assert [m for m, r in host.requests if r == route] == ["GET"] + ["PUT"] * 5
        state = host.states[route]
        assert state.submitted and state.revision == 1 and state.ledger == golden_of(data)
        assert state.tool_calls == {"read_file": 3, "write_ledger": 1, "submit": 1}


def test_a_failed_push_makes_the_next_call_pull_again(host):
    data = make_task_data("bank_recon_001")
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    host.states["r"] = LedgerState(files=dict(data.files))

    async def run():
        await call(toolset, "r", "list_files")
        host.fail_puts = 1
        with pytest.raises(ConnectionError):
            await call(toolset, "r", "read_file", name="policy.md")
        return await call(toolset, "r", "read_file", name="policy.md")

    reply = asyncio.run(run())
    assert reply.startswith("policy.md slice 1 of 1")
    # The failed call worked from the known state and its push failed; the next call pulled.
    assert [m for m, _ in host.requests] == ["GET", "PUT", "PUT", "GET", "PUT"]
    # The host's state is the one the failed call never changed, plus the retried call.
    assert host.states["r"].tool_calls == {"list_files": 1, "read_file": 1}


def test_a_call_under_coordinates_not_signed_for_it_is_refused_before_any_state(host):
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    host.states["r"] = LedgerState(files={"policy.md": "x\n"})
    asyncio.run(call(toolset, "r", "list_files"))
    params = {
        mcp_server.STATE_URL_PARAM: [STATE_URL],
        mcp_server.STATE_ROUTE_PARAM: ["r"],
        mcp_server.STATE_SIGNATURE_PARAM: [mcp_server.state_signature("another secret", STATE_URL, "r")],
    }
    token = mcp_server._request_query_params.set(params)
    try:
        with pytest.raises(ValueError, match="invalid shared state coordinates"):
            asyncio.run(toolset._with_state(toolset.list_files)())
    finally:
        mcp_server._request_query_params.reset(token)


def test_the_known_states_are_bounded(host):
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    routes = [f"r{n}" for n in range(KNOWN_ROUTES + 5)]
    for route in routes:
        host.states[route] = LedgerState(files={"policy.md": "x\n"})

    async def run():
        for route in routes:
            await call(toolset, route, "list_files")

    asyncio.run(run())
    assert len(toolset._known) == KNOWN_ROUTES
    assert "r0" not in toolset._known and routes[-1] in toolset._known
