"""The calculator a text task may offer (`piv_core.runtime.calculator`): the prompt section a task's
prompt ends on, the bounds on calls that `confinement.SingleReply` holds, and the tool server as
verifiers launches it, called through verifiers' own MCP client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from types import SimpleNamespace

import pytest
from piv_core.runtime import calculator
from piv_core.runtime.confinement import SingleReply


def test_the_section_round_trips_and_only_a_prompt_ending_on_it_offers_the_tool():
    base = "You audit a ledger.\n\nGRADING\nOnly corrections score."
    offered = calculator.with_section(base, True)
    assert calculator.with_section(base, False) == base
    assert calculator.offered(offered) == (True, base)
    assert calculator.offered(base) == (False, base)
    assert calculator.offered(offered + "\n")[0] is False  # the section must end the prompt
    assert calculator.offered(calculator.PROMPT_SECTION)[0] is False  # and follow a prompt
    assert calculator.offered(None)[0] is False
    for bound in (calculator.CALLS_PER_TURN, calculator.TOOL_TURNS):
        assert f" {bound} " in calculator.PROMPT_SECTION


class _Task(SingleReply):
    def __init__(self, system: str) -> None:
        self.data = SimpleNamespace(system_prompt=system)


def _reply(calls: int, name: str = calculator.TOOL, namespace: str | None = None) -> SimpleNamespace:
    call = SimpleNamespace(name=name, namespace=namespace)
    return SimpleNamespace(message=SimpleNamespace(tool_calls=[call] * calls or None))


def _trace(earlier_replies_with_calls: int, plain_replies: int = 0) -> SimpleNamespace:
    nodes = [SimpleNamespace(sampled=False, message=SimpleNamespace(tool_calls=None))]  # the prompt
    nodes += [SimpleNamespace(sampled=True, message=SimpleNamespace(tool_calls=[object()]))] * (
        earlier_replies_with_calls
    )
    nodes += [SimpleNamespace(sampled=True, message=SimpleNamespace(tool_calls=None))] * plain_replies
    return SimpleNamespace(nodes=nodes)


def _stops(task: _Task, calls: int, earlier: int) -> bool:
    return asyncio.run(task.reply_called_a_tool(_reply(calls), _trace(earlier)))


def test_without_the_calculator_any_call_ends_the_episode_and_a_plain_reply_never_does():
    task = _Task("You audit a ledger.")
    assert _stops(task, 1, 0) is True
    assert _stops(task, 0, 0) is False


@pytest.mark.parametrize("calls", [1, calculator.CALLS_PER_TURN, calculator.CALLS_PER_TURN + 1, 500])
@pytest.mark.parametrize("earlier", [0, calculator.TOOL_TURNS - 1, calculator.TOOL_TURNS, 50])
def test_with_the_calculator_calls_run_within_the_stated_bounds_and_a_reply_beyond_them_ends_it(
    calls, earlier
):
    task = _Task(calculator.with_section("You audit a ledger.", True))
    beyond = calls > calculator.CALLS_PER_TURN or earlier >= calculator.TOOL_TURNS
    assert _stops(task, calls, earlier) is beyond
    assert _stops(task, 0, earlier) is False  # the answer, without calls, ends it as the loop does


@pytest.mark.parametrize("name", ["bash", "edit", "read_file", "calculator", "Calculate", "calculate ", ""])
def test_with_the_calculator_a_call_to_any_other_tool_ends_the_episode_unrun(name):
    task = _Task(calculator.with_section("You audit a ledger.", True))
    assert asyncio.run(task.reply_called_a_tool(_reply(1, name), _trace(0))) is True
    mixed = SimpleNamespace(
        message=SimpleNamespace(
            tool_calls=[*_reply(2).message.tool_calls, *_reply(1, name).message.tool_calls]
        )
    )
    assert asyncio.run(task.reply_called_a_tool(mixed, _trace(0))) is True
    assert asyncio.run(task.reply_called_a_tool(_reply(1, namespace="mcp"), _trace(0))) is True


def test_plain_replies_do_not_count_against_the_turns_with_calls():
    task = _Task(calculator.with_section("You audit a ledger.", True))
    trace = _trace(calculator.TOOL_TURNS - 1, plain_replies=5)
    assert asyncio.run(task.reply_called_a_tool(_reply(1), trace)) is False


def _serve(tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """The tool server as verifiers launches it (``python -m <module>``, config in VF_CONFIG)."""
    port_file = tmp_path / "port"
    env = {**os.environ, "VF_CONFIG": "{}", "MCP_PORT_FILE": str(port_file)}
    server = subprocess.Popen([sys.executable, "-m", "piv_core.runtime.calculator"], env=env)
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text()):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail("the calculator's server did not start")
        time.sleep(0.05)
    return server, int(port_file.read_text())


@pytest.mark.e2e
def test_the_server_answers_through_verifiers_client_and_stays_up_after_bad_calls(tmp_path):
    from verifiers.v1.harnesses.utils import mcp  # verifiers 0.4's chat program's own MCP client

    server, port = _serve(tmp_path)

    async def session() -> list[str]:
        config = {"mcpServers": {"": {"url": f"http://127.0.0.1:{port}/mcp", "timeout": 30}}}
        async with AsyncExitStack() as stack:
            for _ in range(200):  # the port is reported before the server accepts
                try:
                    schemas, dispatch, servers = await mcp.connect_mcp(config, stack)
                    break
                except Exception:
                    await asyncio.sleep(0.1)
            names = [schema["function"]["name"] for schema in schemas]
            assert names == [calculator.TOOL]
            replies = []
            for arguments in (
                {"expression": "554.63 / 11"},
                {"expression": "__import__('os').getcwd()"},
                {"expression": "1" * 500},
                {"expression": "(1+2)*3"},
            ):
                replies.append(await mcp.call_mcp(servers, dispatch, calculator.TOOL, arguments))
            for bad in ({"expression": 12}, {}, {"expression": "1", "path": "/etc/passwd"}):
                replies.append(await mcp.call_mcp(servers, dispatch, calculator.TOOL, bad))
            replies.append(await mcp.call_mcp(servers, dispatch, calculator.TOOL, {"expression": "2/4"}))
            return replies

    try:
        replies = asyncio.run(session())
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert replies[0].startswith("554.63 / 11 = 50.42 to the cent")
    assert replies[1].startswith("error: ") and replies[2].startswith("error: ")
    assert replies[3] == "(1+2)*3 = 9.00"
    assert all(reply.startswith("Error executing tool calculate: ") for reply in replies[4:6])  # the schema's
    assert replies[6] == "1 = 1.00"  # an argument the tool does not take is never read
    assert replies[-1] == "2/4 = 0.50"


NODELAY_PROBE = """
import socket, sys
if sys.argv[1] == "patched":
    from piv_core.runtime.tool_server import serve_promptly
    serve_promptly()
    serve_promptly()
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # protocol 0, as verifiers binds it
server.bind(("127.0.0.1", 0))
server.listen()
client = socket.create_connection(server.getsockname())
conn, _ = server.accept()
print(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
"""


def test_the_server_accepts_connections_without_nagles_delay():
    """Without it, every reply on a kept-alive connection waits out the client's delayed ACK."""
    nodelay = {
        mode: subprocess.run(
            [sys.executable, "-c", NODELAY_PROBE, mode], capture_output=True, text=True, check=True
        ).stdout.strip()
        for mode in ("plain", "patched")
    }
    assert nodelay["plain"] == "0" and nodelay["patched"] != "0"
