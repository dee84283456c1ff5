"""The chat loop's requests are the SDK's, byte for byte in meaning; its per-episode savings keep
what goes on the wire; the episode contract's limits are defined once; the knob and the digest.

The loop's functions are taken from the program exactly as the harness runs it
(`program_namespace(program_source())`), not from the module.
"""

import ast
import asyncio
import contextlib
import json
import ssl
from pathlib import Path

import httpx2
import pytest
from aiohttp import web
from beancount_ledger import chat_loop, contract, limits, tools, verifiers_internals
from beancount_ledger.harness import LedgerHarnessConfig, program_source
from openai import AsyncOpenAI
from piv_core.runtime.harness import program_namespace
from pydantic import ValidationError
from verifiers.v1.utils.loaders import harness_config_type

PACKAGE = Path(contract.__file__).parent
OWN = [
    "chat_loop",
    "harness",
    "tools",
    "contract",
    "limits",
    "loop_channel",
    "verifiers_internals",
    "sandbox",
]
MESSAGES = [
    {"role": "system", "content": "You keep the books."},
    {"role": "user", "content": "Reconcile March. \u00e9\u4e2d"},
    {
        "role": "assistant",
        "content": "",
        "reasoning_content": "the statement first",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"name": "a"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "x" * 5000, "name": "read_file"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    }
]


@pytest.fixture(scope="module")
def program():
    return program_namespace(program_source())


async def _captured(send) -> list[tuple[bytes, dict]]:
    """Requests `send(base_url)` makes to a chat endpoint that answers one streamed reply."""
    seen: list[tuple[bytes, dict]] = []

    async def chat(request: web.Request) -> web.StreamResponse:
        seen.append((await request.read(), dict(request.headers)))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        delta = {"role": "assistant", "content": "done"}
        for choice in ({"index": 0, "delta": delta}, {"index": 0, "delta": {}, "finish_reason": "stop"}):
            await response.write(f"data: {json.dumps({**chunk, 'choices': [choice]})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        await send(f"http://127.0.0.1:{port}/v1")
    finally:
        await runner.cleanup()
    return seen


def test_the_loops_request_is_the_sdks(program):
    """`capped_chat` skips the SDK's parameter transform and request machinery; the body bytes
    and every header are what ``chat.completions.create`` sends for the same call."""

    async def both(base_url: str) -> None:
        client = AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
        stream = await client.chat.completions.create(
            model="m",
            messages=MESSAGES,
            tools=TOOLS,
            max_tokens=123,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass
        completion = await program["capped_chat"](client, "m", MESSAGES, TOOLS, 123)
        assert completion.choices[0].message.content == "done"
        await client.close()

    (sdk_body, sdk_headers), (ours_body, ours_headers) = asyncio.run(_captured(both))
    assert ours_body == sdk_body  # byte for byte, key order included
    assert {k.lower(): v for k, v in ours_headers.items()} == {k.lower(): v for k, v in sdk_headers.items()}


def test_every_mcp_client_shares_one_tls_context(program, monkeypatch):
    """The bundled program parsed the CA bundle for every episode's MCP client; ours builds the
    default context once per process and hands it to each client."""
    made: list[object] = []
    init = httpx2.AsyncClient.__init__

    def recording(self, *args, **kwargs):
        made.append(kwargs.get("verify"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(httpx2.AsyncClient, "__init__", recording)

    async def connect_twice() -> None:
        for _ in range(2):
            with contextlib.suppress(Exception):  # nothing listens there; only the client's making matters
                async with program["mcp_client"]({"url": "http://127.0.0.1:9/mcp", "timeout": 1}):
                    pass

    asyncio.run(connect_twice())
    contexts = [v for v in made if isinstance(v, ssl.SSLContext)]
    assert len(contexts) >= 2 and all(c is contexts[0] for c in contexts)


def test_reasoning_fields_are_withheld_only_when_asked(program):
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage(role="assistant", content="ok")
    for name in chat_loop.REASONING_FIELDS:
        setattr(
            message, name, "why" if name != "reasoning_details" else [{"type": "reasoning.text", "text": "w"}]
        )
    kept = program["assistant_turn"](message, True)
    dropped = program["assistant_turn"](message, False)
    assert all(name in kept for name in chat_loop.REASONING_FIELDS)
    assert not any(name in dropped for name in chat_loop.REASONING_FIELDS)
    assert dropped == {k: v for k, v in kept.items() if k not in chat_loop.REASONING_FIELDS}


def test_the_contract_limits_are_defined_once():
    """Only `limits` assigns them; the contract, the tools and the spliced loop use those very objects."""
    names = {
        "MAX_TURNS",
        "TOKEN_CEILING",
        "IDLE_TURNS",
        "CALLS_PER_TURN",
        "LEDGER_ENVELOPE",
        "REPLY_CAP",
        "MAX_CHECK_COST",
    }
    for module in OWN:
        if module == "limits":
            continue
        tree = ast.parse((PACKAGE / f"{module}.py").read_text())
        assigned = {
            t.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        assert not assigned & names, (module, assigned & names)
    for name in names:
        assert getattr(contract, name) is getattr(limits, name)
    program = program_namespace(program_source())
    assert (program["IDLE_TURNS"], program["TOKEN_CEILING"], program["CALLS_PER_TURN"]) == (
        limits.IDLE_TURNS,
        limits.TOKEN_CEILING,
        limits.CALLS_PER_TURN,
    )


LIMIT_NAMES = {name for name in vars(limits) if name.isupper()}


def _imports(module: str) -> set[str]:
    """The package modules `module` imports, at top level or inside functions (a limit imported
    through `contract`, which re-exports them, is an import of `limits`)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("beancount_ledger"):
            target = node.module.removeprefix("beancount_ledger").lstrip(".")
            if target == "contract" and {a.name for a in node.names} <= LIMIT_NAMES:
                target = "limits"
            found |= {target} if target else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("beancount_ledger.")}
    return {m.split(".")[0] for m in found} - {module}


def test_no_import_circle_through_the_loop_tools_or_contract():
    modules = [p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"]
    graph = {m: _imports(m) & set(modules) for m in modules}

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), list(graph[start])
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
        return False

    for module in OWN:
        assert not reaches(module, module), f"{module} imports itself through another module"


def test_package_code_of_the_loop_raises_instead_of_asserting():
    for module in OWN:
        tree = ast.parse((PACKAGE / f"{module}.py").read_text())
        assert not [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)], module


def test_a_missing_verifiers_internal_is_named():
    with pytest.raises(verifiers_internals.MissingInternal) as refusal:
        verifiers_internals._get("verifiers.v1.graph", "no_such_piece")
    assert "verifiers.v1.graph.no_such_piece" in str(refusal.value)
    assert "verifiers 0." in str(refusal.value) or "verifiers 1." in str(refusal.value)
    with pytest.raises(verifiers_internals.MissingInternal, match="_tool_manager"):
        verifiers_internals.published_tools(object())


def test_the_knob_is_the_harness_config_and_its_errors_name_it():
    assert harness_config_type("beancount-ledger") is LedgerHarnessConfig
    assert LedgerHarnessConfig(id="beancount-ledger").replay_reasoning is True
    assert LedgerHarnessConfig(id="beancount-ledger", replay_reasoning=False).replay_reasoning is False
    with pytest.raises(ValidationError, match="replay_reasoning"):
        LedgerHarnessConfig(id="beancount-ledger", replay_reasoning="sometimes")


def test_the_digest_is_unchanged_for_the_default_and_moves_with_the_choice():
    default, dropped = contract.episode_digest(), contract.episode_digest(replay_reasoning=False)
    assert contract.episode_digest(replay_reasoning=True) == default
    assert default["harness"] == {"replay_reasoning": True}
    assert dropped["harness"] == {"replay_reasoning": False}
    assert dropped["digest"] != default["digest"]
    assert json.loads(contract.recorded_digest(False)) == dropped
    with pytest.raises(TypeError, match="replay_reasoning"):
        contract.episode_digest(replay_reasoning="no")


def test_tool_replies_are_unstructured_and_the_schemas_unchanged():
    """No output schema, so no duplicate ``structuredContent`` and no client-side validation;
    the input schemas (the digest's) are the annotated ones."""
    import verifiers.v1 as vf
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("t")
    tools.LedgerToolset(vf.ToolsetConfig()).register(server)
    listed = verifiers_internals.published_tools(server)
    assert sorted(t.name for t in listed) == [
        "grep",
        "list_files",
        "read_file",
        "run_beancount",
        "submit",
        "write_ledger",
    ]
    assert all(t.output_schema is None for t in listed)
    read = next(t for t in listed if t.name == "read_file")
    assert read.parameters["required"] == ["name"] and set(read.parameters["properties"]) == {"name", "slice"}
