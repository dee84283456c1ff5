"""Every environment ships a default rollout timeout, so a model stream that never ends cannot hold an
episode forever; the run counts it as a timeout and `eval` exits non-zero.

The endpoint here is a scripted OpenAI-compatible server on 127.0.0.1 that answers every chat request
with streaming headers and then either one content chunk a second, forever (``drip``), or nothing at
all (``stall``). The end-to-end runs pass a short ``--env.agent.timeout.rollout`` so the test stays
quick; that the shipped default applies when none is passed is shown from the tasks each taskset
serves, through verifiers' own resolution of an agent's timeouts, and from a run's trace.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import verifiers.v1 as vf
from piv_core.runs.reading import read_eval_run
from piv_core.runtime.timeouts import SINGLE_REPLY_SECONDS, rollout_seconds
from piv_core.testing import run_command

pytestmark = pytest.mark.e2e

OVERRIDE = 3
"""The rollout timeout (seconds) the end-to-end runs pass."""


def _tasksets() -> dict[str, tuple[vf.Taskset, float]]:
    from au_bas_reconciliation_v1 import AuBasConfig, AuBasTaskset
    from beancount_ledger import contract
    from beancount_ledger.taskset import LedgerConfig, LedgerTaskset
    from geo_reprojection_v1.taskset import GeoConfig, GeoTaskset
    from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutTaskset

    ledger = rollout_seconds(contract.TOKEN_CEILING, contract.MAX_TURNS)
    return {
        "au-bas-reconciliation-v1": (AuBasTaskset(AuBasConfig()), SINGLE_REPLY_SECONDS),
        "us-sut-reconciliation-v1": (UsSutTaskset(UsSutConfig()), SINGLE_REPLY_SECONDS),
        "geo-reprojection-v1": (GeoTaskset(GeoConfig()), SINGLE_REPLY_SECONDS),
        "beancount-ledger": (LedgerTaskset(LedgerConfig()), ledger),
    }


def test_every_taskset_serves_its_default_and_the_command_line_overrides_it():
    from verifiers.v1.agent import TimeoutConfig, resolve_rollout_timeouts

    assert SINGLE_REPLY_SECONDS == 900.0
    for env_id, (taskset, default) in _tasksets().items():
        task = next(iter(taskset))
        assert resolve_rollout_timeouts(TimeoutConfig(), task).agent == default, env_id
        assert resolve_rollout_timeouts(TimeoutConfig(rollout=7.0), task).agent == 7.0, env_id
    assert _tasksets()["beancount-ledger"][1] == 1800.0


@contextmanager
def endless_endpoint(mode: str) -> Iterator[str]:
    """A chat endpoint that never finishes a reply; yields its base URL."""
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "endless",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "a"}, "finish_reason": None}],
    }
    ready: dict[str, object] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n"
            )
            await writer.drain()
            while True:
                if mode == "drip":
                    writer.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    await writer.drain()
                await asyncio.sleep(1)
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.close()

    def serve() -> None:
        loop = asyncio.new_event_loop()
        server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
        ready["port"], ready["loop"] = server.sockets[0].getsockname()[1], loop
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    while "port" not in ready:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{ready['port']}/v1"
    finally:
        loop = ready["loop"]
        loop.call_soon_threadsafe(loop.stop)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("env_id", "mode"),
    [
        ("au-bas-reconciliation-v1", "drip"),
        ("au-bas-reconciliation-v1", "stall"),
        ("beancount-ledger", "drip"),
    ],
)
def test_an_endless_stream_ends_as_one_timeout_and_a_failing_exit(tmp_path, env_id, mode):
    with endless_endpoint(mode) as base_url:
        started = time.monotonic()
        code, output = run_command(
            "eval",
            env_id,
            "--model",
            "endless",
            "-n",
            "1",
            "--no-rich",
            "-o",
            str(tmp_path),
            "--run.name",
            "endless",
            "--client.base-url",
            base_url,
            "--env.agent.timeout.rollout",
            str(OVERRIDE),
            timeout=240,
        )
        wall = time.monotonic() - started
    assert code == 1, output[-3000:]
    assert "Traceback" not in output
    summary = next(line for line in output.splitlines() if line.startswith("eval: endless: "))
    assert "1 episode, 0 completed, 0 errors, 1 timeout" in summary, summary
    assert f"first timeout: task {'bank_recon_001' if env_id == 'beancount-ledger' else 'au-bas-'}" in summary
    assert f"agent_timeout (the {OVERRIDE} s rollout limit)" in summary and "eval.log" in summary
    (trace,) = read_eval_run(tmp_path / "endless").traces
    assert trace["is_timeout"] and trace["stop_condition"] == "agent_timeout"
    assert trace["agent"]["config"]["timeout"]["rollout"] == OVERRIDE
    assert trace["task"]["data"]["timeout"]["agent"] == _tasksets()[env_id][1]  # the default, overridden
    assert wall < 120, wall


def test_without_an_override_a_run_records_the_default_as_its_limit(tmp_path):
    """A refused connection ends the episode at once; its trace shows which limit applied."""
    code, output = run_command(
        "eval",
        "us-sut-reconciliation-v1",
        "--model",
        "nowhere",
        "-n",
        "1",
        "--no-rich",
        "-o",
        str(tmp_path),
        "--run.name",
        "nowhere",
        "--client.base-url",
        "http://127.0.0.1:9/v1",
        timeout=240,
    )
    assert code == 1 and "Traceback" not in output
    summary = next(line for line in output.splitlines() if line.startswith("eval: nowhere: "))
    assert "1 error, 0 timeouts" in summary and "first error: task us-sut-" in summary
    assert "ProviderError: All connection attempts failed" in summary and "eval.log" in summary
    (trace,) = read_eval_run(tmp_path / "nowhere").traces
    assert trace["agent"]["config"]["timeout"].get("rollout") is None
    assert trace["task"]["data"]["timeout"]["agent"] == SINGLE_REPLY_SECONDS
