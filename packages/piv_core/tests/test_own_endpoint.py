"""``eval`` against an OpenAI-compatible server of the user's own, as the README's "Evaluate your
model" shows: a model name, a base URL and the name of the variable holding the key.

The server here is a few lines of the standard library (not the baseline endpoint): it answers
every chat completion with one fixed reply, streamed as Server-Sent Events when asked, and sends
no token usage in its stream, as llama.cpp's server does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from piv_core.runs.reading import last_reply, read_eval_run

REPLY = 'Nothing checked.\n<answer>{"G1": 0, "1A": 0, "1B": 0, "net": 0, "faults": {}}</answer>'
KEY = "own-endpoint-test-key"


class _Chat(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": "my-model", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(
            {"path": self.path, "model": body.get("model"), "auth": self.headers.get("Authorization")}
        )
        message = {"role": "assistant", "content": REPLY}
        if not body.get("stream"):
            self._json(
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": REPLY}, None), ({}, "stop")):
            chunk = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _json(self, value: dict) -> None:
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def own_server() -> Iterator[str]:
    _Chat.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


@pytest.mark.e2e
def test_eval_reaches_an_openai_compatible_server_of_ones_own(own_server, tmp_path):
    command = [sys.executable, "-c", "from piv_core.cli.commands import eval_main; eval_main()"]
    command += ["au-bas-reconciliation-v1", "-n", "2", "--model", "my-model", "--client.base-url", own_server]
    command += [
        "--client.api-key-var",
        "MY_ENDPOINT_KEY",
        "-o",
        str(tmp_path),
        "--run.name",
        "mine",
        "--no-rich",
    ]
    done = subprocess.run(
        command, env={**os.environ, "MY_ENDPOINT_KEY": KEY}, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "eval: mine: 2 episodes, 2 completed" in done.stdout
    run = read_eval_run(Path(tmp_path, "mine"))
    assert len(run.traces) == 2 and run.failed == 0
    assert [last_reply(t) for t in run.traces] == [REPLY, REPLY]
    assert run.scores("metrics")["parsed"] == [1.0, 1.0]  # the server's reply was what was graded
    assert {s["model"] for s in _Chat.seen} == {"my-model"}
    assert {s["auth"] for s in _Chat.seen} == {f"Bearer {KEY}"}  # the key came from the named variable
    assert all(s["path"] == "/v1/chat/completions" for s in _Chat.seen)


def test_eval_help_shows_the_defaults_this_eval_applies(capsys):
    from piv_core.cli.commands import LOCAL_CONCURRENCY, eval_main

    with pytest.raises(SystemExit):
        eval_main(["--help"])
    shown = capsys.readouterr().out
    head = shown[: shown.index("usage:")]  # ahead of verifiers' own help and its defaults
    assert "--no-push" in head and f"--max-concurrent {LOCAL_CONCURRENCY}" in head
    assert "--client.base-url" in head and "--client.api-key-var" in head and "baseline/<policy>" in head
