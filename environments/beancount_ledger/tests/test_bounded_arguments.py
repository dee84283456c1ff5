"""Model-written tool arguments and operator files are decoded within bounds: a tool call whose
arguments are too deep, too large, not JSON or anything else unexpected is answered with an error
and the chat loop goes on; the report, the bookkeeper's reading of a transcript and the manifest
loader refuse deep JSON by name instead of ending in a RecursionError.

The loop is the one the harness runs (`program_namespace(program_source())`), with the model and
the tool server replaced by scripts."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from beancount_ledger import limits, release, sandbox
from beancount_ledger.bookkeeper import tool_results
from beancount_ledger.harness import program_source
from beancount_ledger.keys import Refused
from beancount_ledger.report_view import ledger_view, submitted_ledger
from beancount_ledger.taskset import make_task_data
from openai.types.chat import ChatCompletion, ChatCompletionMessageToolCall
from openai.types.chat.chat_completion_message_tool_call import Function
from piv_core.parsing.bounded_decode import TOOL_ARGUMENTS_MAX_BYTES, TOOL_ARGUMENTS_MAX_DEPTH
from piv_core.policy import Conversation
from piv_core.runtime.harness import program_namespace

DEEP = 3_000
"""The depth of the attack that ended an episode as a harness error (about 6 KB)."""
TOOLS = ("read_file", "write_ledger", "submit", "boom")


def _arguments_matrix() -> dict[str, Any]:
    """Tool-call arguments by what is wrong with them (or nothing): the value is what a model's
    call carries in ``function.arguments``."""
    too_large = json.dumps({"text": "x" * TOOL_ARGUMENTS_MAX_BYTES})
    return {
        "deep array": "[" * DEEP + "]" * DEEP,
        "deep unclosed": "[" * DEEP,
        "deep object": '{"a":' * DEEP + "1" + "}" * DEEP,
        "deep under a key": '{"text": ' + "[" * DEEP + "]" * DEEP + "}",
        "deep mixed": '{"a": [' * (DEEP // 2) + "0" + "]}" * (DEEP // 2),
        "100k deep": "[" * 100_000,
        "one level too deep": '{"a":' * TOOL_ARGUMENTS_MAX_DEPTH + "[]" + "}" * TOOL_ARGUMENTS_MAX_DEPTH,
        "too large": too_large,
        "not JSON": '{"name": ',
        "not an object": "[1, 2]",
        "escaped lone surrogate": '{"name": "\\ud800"}',
        "raw lone surrogate": '{"name": "\ud800"}',
        "lone surrogate in a key": '{"\\udc00": 1}',
        "long integer": "{" + '"n": ' + "9" * 5_000 + "}",
        "not text": 12345,
    }


VALID = {
    "brackets in a string": ('{"name": "' + "[{" * DEEP + '"}', {"name": "[{" * DEEP}),
    "at the depth bound": (
        '{"a":' * (TOOL_ARGUMENTS_MAX_DEPTH - 1) + "[]" + "}" * (TOOL_ARGUMENTS_MAX_DEPTH - 1),
        None,
    ),
    "no arguments": (None, {}),
}


def _call(call_id: str, name: str, arguments: Any) -> ChatCompletionMessageToolCall:
    """A tool call built as the SDK builds a response, unvalidated: a provider can send arguments
    that are not a string."""
    function = Function.model_construct(name=name, arguments=arguments)
    return ChatCompletionMessageToolCall.model_construct(id=call_id, type="function", function=function)


def _completion(calls: list[ChatCompletionMessageToolCall]) -> ChatCompletion:
    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "message": {"role": "assistant", "content": "" if calls else "thinking"},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )
    completion.choices[0].message.tool_calls = calls or None
    return completion


@pytest.fixture
def program():
    return program_namespace(program_source())


def _run_loop(program, monkeypatch, turns: list[list[ChatCompletionMessageToolCall]]):
    """Run the harness's chat loop on scripted replies (then idle replies until it ends); the
    transcript and the calls that reached the tool server."""
    replies = iter([*map(_completion, turns), *[_completion([])] * limits.IDLE_TURNS])
    dispatched: list[tuple[str, Any]] = []

    async def scripted_chat(client, model, messages, tools, max_tokens):
        return next(replies)

    async def tool_server(servers, dispatch, name, tool_args):
        dispatched.append((name, tool_args))
        if name == "boom":
            raise RuntimeError("the tool server fell over")
        return f"ok: {name}"

    monkeypatch.setitem(program, "capped_chat", scripted_chat)
    monkeypatch.setitem(program, "call_mcp", tool_server)
    messages: list[dict] = [{"role": "user", "content": "Reconcile March."}]
    args = SimpleNamespace(tool_interception_url=None, api_key="k")
    compactor = SimpleNamespace(client=None, model="m", tools=[])
    dispatch = dict.fromkeys(TOOLS, "ledger")
    asyncio.run(program["run_chat_loop"](args, compactor, messages, dispatch, {}, None))
    return messages, dispatched


def _replies(messages: list[dict]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the non-text arguments do not serialize as declared
def test_every_bad_argument_is_answered_with_an_error_and_the_loop_goes_on(program, monkeypatch):
    bad = _arguments_matrix()
    calls = [_call(f"bad-{i}", "read_file", arguments) for i, arguments in enumerate(bad.values())]
    calls += [_call(f"ok-{i}", "read_file", arguments) for i, (arguments, _) in enumerate(VALID.values())]
    calls += [_call("unknown", "no_such_tool", "{}"), _call("boom", "boom", "{}")]
    per_turn = limits.CALLS_PER_TURN
    turns = [calls[i : i + per_turn] for i in range(0, len(calls), per_turn)]
    turns.append([_call("last", "submit", "{}")])  # after every bad call, the loop still runs tools
    messages, dispatched = _run_loop(program, monkeypatch, turns)

    replies = _replies(messages)
    assert len(replies) == len(calls) + 1, "every call is answered once"
    for i, (what, _) in enumerate(bad.items()):
        reply = replies[f"bad-{i}"]
        assert reply.startswith("error: ") and "\n" not in reply, (what, reply[:200])
        assert len(reply) < 400, (what, reply[:200])
    for kind in ("deep array", "deep unclosed", "deep object", "deep under a key", "deep mixed", "100k deep"):
        reply = replies[f"bad-{list(bad).index(kind)}"]
        assert f"tool arguments: JSON nested deeper than {TOOL_ARGUMENTS_MAX_DEPTH} levels" in reply, kind
    assert "over the" in replies[f"bad-{list(bad).index('too large')}"]
    assert "not valid Unicode" in replies[f"bad-{list(bad).index('raw lone surrogate')}"]
    assert "expected JSON text, got int" in replies[f"bad-{list(bad).index('not text')}"]
    assert replies["unknown"] == "error: unknown tool 'no_such_tool'"
    assert replies["boom"] == "error: the boom call failed (RuntimeError); try again"
    assert replies["last"] == "ok: submit"
    for i in range(len(VALID)):
        assert replies[f"ok-{i}"] == "ok: read_file"
    expected = [("read_file", value) for _, value in VALID.values()]
    reached = [(name, args) for name, args in dispatched if name == "read_file"]
    assert len(reached) == len(expected)
    for (_, args), (_, value) in zip(reached, expected, strict=True):
        assert value is None or args == value
    assert [name for name, _ in dispatched][-2:] == ["boom", "submit"]
    json.dumps(messages, ensure_ascii=False).encode("utf-8")  # every message can go on the wire


def test_a_3000_deep_argument_alone_is_answered_and_the_episode_continues(program, monkeypatch):
    """The reported attack: a 6 KB ``[[[...]]]`` write, then an honest write and a submit."""
    attack = _call("attack", "write_ledger", "[" * DEEP + "]" * DEEP)
    honest = _call("honest", "write_ledger", json.dumps({"text": "2024-01-01 open Assets:Bank\n"}))
    messages, dispatched = _run_loop(program, monkeypatch, [[attack], [honest], [_call("s", "submit", "{}")]])
    replies = _replies(messages)
    assert replies["attack"].startswith("error: tool arguments: JSON nested deeper than")
    assert replies["honest"] == "ok: write_ledger" and replies["s"] == "ok: submit"
    assert [name for name, _ in dispatched] == ["write_ledger", "submit"]


def test_the_loops_walks_of_a_message_never_recurse(program):
    deep: Any = "\ud800"
    for i in range(100_000):
        deep = [deep] if i % 2 else {"k\udc00": deep}
    cleaned = program["without_surrogates"](deep)
    node = cleaned
    while not isinstance(node, str):
        node = node[0] if isinstance(node, list) else node["k\ufffd"]
    assert node == "\ufffd"
    assert program["unicode_problem"](deep).startswith("error: the arguments are not valid Unicode")
    assert program["unicode_problem"]({"a": [["ok", {"b": "é"}]]}) is None
    message = {"role": "tool", "content": "a\ud800b", "name": "x", "extra": [{"\udfff": ["\ud800"]}]}
    assert program["without_surrogates"](message) == {
        "role": "tool",
        "content": "a\ufffdb",
        "name": "x",
        "extra": [{"\ufffd": ["\ufffd"]}],
    }
    assert message["content"] == "a\ud800b", "the message itself is left as it was"


# ----------------------------------------------------------------------------- readers of traces


@pytest.fixture(scope="module")
def ledger_data():
    return json.loads(make_task_data("bank_recon_001").model_dump_json())


def _trace(data: dict, *arguments: str) -> dict:
    calls = [{"type": "function", "function": {"name": "write_ledger", "arguments": a}} for a in arguments]
    return {
        "task": {"data": data},
        "nodes": [{"message": {"role": "assistant", "tool_calls": [c]}} for c in calls],
        "rewards": {"ledger": {"score": 0.0, "weight": 1.0}},
        "metrics": {},
    }


@pytest.mark.parametrize("arguments", [v for v in _arguments_matrix().values() if isinstance(v, str)])
def test_the_submitted_ledger_passes_over_a_bad_write(arguments):
    earlier = json.dumps({"text": "the earlier ledger"})
    assert submitted_ledger(_trace({}, earlier, arguments)) == "the earlier ledger"
    assert submitted_ledger(_trace({}, arguments)) is None


def test_the_report_view_of_a_deep_write_returns_instead_of_raising(ledger_data):
    view = ledger_view(_trace(ledger_data, "[" * DEEP + "]" * DEEP))
    assert "nothing was written" in view


UNREAD = [v for k, v in _arguments_matrix().items() if isinstance(v, str) and "surrogate" not in k]
"""The arguments no reader decodes (the surrogate cases are JSON objects: only sending them fails)."""


@pytest.mark.parametrize("arguments", UNREAD)
def test_the_bookkeeper_reads_a_bad_call_as_no_arguments(arguments):
    conversation = Conversation(
        tools=[],
        messages=[
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "function": {"name": "read_file", "arguments": arguments}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a reply"},
        ],
    )
    assert tool_results(conversation) == {"read_file:None": ["a reply"]}


# ----------------------------------------------------------------------------- the manifest


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"body": ' + '{"a":' * DEEP + "1" + "}" * DEEP + ', "signature": "s"}'],
)
def test_a_deep_manifest_is_one_line_refusal_naming_it(tmp_path, text):
    path = tmp_path / "manifest.json"
    path.write_text(text)
    with pytest.raises(Refused) as refusal:
        release.read_manifest(path, b"an evaluator secret of some length")
    assert refusal.value.reason == "manifest signature invalid"
    assert str(refusal.value) == (
        f"manifest signature invalid: {path} is not a signed manifest (JSON nested deeper than 64 levels)"
    )


def test_a_manifest_over_its_size_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(release, "MAX_MANIFEST_BYTES", 100)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"body": {}, "signature": "x" * 200}))
    with pytest.raises(Refused, match="over the 100-byte limit") as refusal:
        release.read_manifest(path, b"an evaluator secret of some length")
    assert "\n" not in str(refusal.value)


# ----------------------------------------------------------------------------- the sandbox's replies


@pytest.mark.parametrize(
    "reply", ["[" * 100_000, '{"reply": ' + '{"a":' * DEEP + "1" + "}" * DEEP + ', "cpu": 0}']
)
def test_a_deep_reply_from_a_sandbox_worker_is_a_protocol_error(reply):
    """A worker runs beancount on model text; whatever it answers, its caller gets a `Failure`."""
    echo = (
        f"import sys; sys.stdin.readline(); sys.stdout.write({reply!r} + '\\n'); sys.stdout.flush(); "
        "sys.stdin.read()"
    )
    worker = sandbox._Worker.__new__(sandbox._Worker)
    worker.proc = subprocess.Popen(
        [sys.executable, "-c", echo], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    worker._buffer, worker._reported = b"", 0.0
    try:
        answer = worker.call(b"{}\n")
    finally:
        worker.close()
    assert isinstance(answer, sandbox.Failure) and answer.reason == "protocol error"
