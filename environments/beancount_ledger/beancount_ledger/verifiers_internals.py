"""The parts of verifiers that beancount-ledger uses although verifiers does not export them, in
one place.

The package splices its chat loop into verifiers' bundled chat program (`harnesses.utils`,
`bundle_program`), lists the tool schemas the MCP server publishes (`MCPServer._tool_manager`),
binds a rollout's state around each tool call (`ServerBase._with_state`, `_pull_state`,
`_push_state`, `_state_channel`, `_call_state`),
registers the tools itself (`discover_decorated`) and records on the trace what the chat
loop held when the episode ended (the message graph's `prepare_turn`, the chat dialect's
`parse_message`). Every such name is looked up here, once, at import; if the installed
verifiers lacks one, importing this module raises `MissingInternal`, naming the piece and the
installed version, instead of an AttributeError deep inside an episode.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any


class MissingInternal(ImportError):
    """The installed verifiers lacks a piece beancount-ledger relies on."""


def _installed() -> str:
    try:
        return version("verifiers")
    except PackageNotFoundError:
        return "not installed"


def _get(module: str, name: str | None = None) -> Any:
    where = f"{module}.{name}" if name else module
    try:
        found: Any = importlib.import_module(module)
        if name is not None:
            found = getattr(found, name)
    except (ImportError, AttributeError) as e:
        raise MissingInternal(
            f"verifiers {_installed()} has no {where}, which beancount-ledger's harness and tools "
            f"use; install a verifiers release the package supports ({type(e).__name__}: {e})"
        ) from None
    return found


# The bundled chat program: its script header, the bundler, and the modules it concatenates.
CHAT_PROGRAM: str = _get("verifiers.v1.harnesses.utils.launch", "CHAT_PROGRAM")
bundle_program = _get("verifiers.v1.harnesses.utils.launch", "bundle_program")
CHAT_MODULES: tuple[ModuleType, ...] = tuple(
    _get(f"verifiers.v1.harnesses.utils.{name}") for name in ("mcp", "compaction", "core")
)
"""The modules the bundled chat program is made of, in verifiers' own order."""

# The tool server side: per-call state binding and tool discovery.
ServerBase = _get("verifiers.v1.mcp.server", "ServerBase")
call_state = _get("verifiers.v1.mcp.server", "_call_state")
"""The context variable holding the rollout state bound to the tool call being served."""
discover_decorated = _get("verifiers.v1.utils.decorators", "discover_decorated")
for _method in ("_with_state", "_pull_state", "_push_state", "_state_channel"):
    if not callable(getattr(ServerBase, _method, None)):
        raise MissingInternal(
            f"verifiers {_installed()} has no ServerBase.{_method}, which the tools override (calls in a "
            "worker thread, a rollout's state pulled once and then known from its pushes)"
        )

# The trace side: the message graph and the chat wire format.
prepare_turn = _get("verifiers.v1.graph", "prepare_turn")
parse_message = _get("verifiers.v1.dialects.chat", "parse_message")


def published_tools(server: Any) -> list[Any]:
    """The tools an `mcp` MCPServer publishes (name, description, parameters), listed synchronously:
    the listing behind its async `list_tools`."""
    manager = getattr(server, "_tool_manager", None)
    if manager is None or not callable(getattr(manager, "list_tools", None)):
        raise MissingInternal(
            f"the installed mcp's MCPServer has no _tool_manager.list_tools (verifiers {_installed()}); "
            "the episode digest cannot list the published tool schemas"
        )
    return list(manager.list_tools())
