"""How one server serves the tools to every rollout of an env worker: `SharedToolset`, the base of
`tools.LedgerToolset` (which holds the tools themselves and what they answer).

verifiers pulls a call's rollout state from the host and pushes it back after the call; this
server remembers, per rollout route, the state it last pushed (`KNOWN_ROUTES` of them, least
recently called dropped first) and pulls from the host only on a rollout's first call, so a call
costs one state exchange instead of two. It keeps each rollout's sandbox `isolated.Lane` beside
it, runs every call in a thread of its own pool (`TOOL_THREADS`) rather than on the event loop,
and serves with Nagle's algorithm off on every accepted connection and the per-request loggers
at WARNING.
"""

import asyncio
import contextlib
import contextvars
import functools
import logging
import socket
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import verifiers.v1 as vf

from beancount_ledger import isolated
from beancount_ledger.verifiers_internals import call_state

PER_REQUEST_LOGGERS = ("httpx", "uvicorn.access", "mcp.server.lowlevel.server", "mcp.server.streamable_http")
"""Loggers that write a line per tool call or state exchange at INFO."""
KNOWN_ROUTES = 512
"""Rollouts whose last pushed state and sandbox lane the server keeps (least recently called
dropped first)."""
TOOL_THREADS = 64
"""Threads the server runs tool calls in (its own: asyncio's default pool has a few per core, and a
call waiting on the sandbox holds its thread for up to `sandbox.WAIT_SECONDS` plus a check)."""


def _accept_without_delay() -> None:
    """Set TCP_NODELAY on every TCP connection this process accepts (idempotent).

    verifiers binds the tool server's listening socket as ``socket(AF_INET, SOCK_STREAM)``, with
    protocol 0, and asyncio turns Nagle's algorithm off only on sockets whose protocol is
    IPPROTO_TCP. uvicorn writes a reply's head and body apart, so on a kept-alive connection
    every reply then waits out the client's delayed ACK: 44 ms per tool call instead of 2 ms."""
    accept = socket.socket.accept
    if getattr(accept, "without_delay", False):
        return

    @functools.wraps(accept)
    def accept_without_delay(sock: socket.socket):
        conn, address = accept(sock)
        if conn.family in (socket.AF_INET, socket.AF_INET6) and conn.type == socket.SOCK_STREAM:
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, address

    accept_without_delay.without_delay = True  # type: ignore[attr-defined]
    socket.socket.accept = accept_without_delay  # type: ignore[method-assign]


ConfigT = TypeVar("ConfigT", bound=vf.SharedToolsetConfig)
StateT = TypeVar("StateT", bound=vf.State)


class SharedToolset(vf.Toolset[ConfigT, StateT]):
    """verifiers' toolset served to many rollouts at once: per-route state and sandbox lanes, calls
    in the server's own threads, a quiet and prompt server."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self._known: OrderedDict[str, bytes] = OrderedDict()
        self._lanes: OrderedDict[Any, tuple[Any, isolated.Lane]] = OrderedDict()
        self._lanes_lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None

    def _lane(self) -> isolated.Lane:
        """The sandbox lane of the call's rollout: by its route on a shared server, by the env
        channel on a server of its own, by its state object in-process (`tools.rollout`)."""
        url, _, route = self._state_channel()
        state = self.state
        rollout = route or url or ("state", id(state))
        with self._lanes_lock:
            owner, lane = self._lanes.get(rollout, (None, None))
            if lane is None or (not (route or url) and owner is not state):  # an id can be reused
                owner, lane = state, isolated.Lane()
                self._lanes[rollout] = (owner, lane)
            self._lanes.move_to_end(rollout)
            while len(self._lanes) > KNOWN_ROUTES:
                self._lanes.popitem(last=False)
            return lane

    def _remember(self, route: str, state: StateT) -> None:
        self._known[route] = self._state_adapter.dump_json(state)
        self._known.move_to_end(route)
        while len(self._known) > KNOWN_ROUTES:
            self._known.popitem(last=False)

    async def _pull_state(self) -> StateT:
        """The call's rollout state: pulled from the host on the rollout's first call, then the
        state this server last pushed for it (the tools are its only writer once `Task.setup` has
        seeded it, so that is what the host holds). The signed coordinates are checked first,
        on every call, exactly as before."""
        _, _, route = self._state_channel()
        known = self._known.get(route) if route else None
        if known is None:
            state = await super()._pull_state()
            if route:
                self._remember(route, state)
            return state
        self._known.move_to_end(route)
        return self._state_adapter.validate_json(known)

    async def _push_state(self, before: bytes) -> None:
        """verifiers' push; what it pushed becomes the known state of the rollout, and a failed
        push forgets it (the next call pulls from the host again)."""
        _, _, route = self._state_channel()
        try:
            await super()._push_state(before)
        except BaseException:
            if route:
                self._known.pop(route, None)
            raise
        state = call_state.get()
        if route and state is not None:
            self._remember(route, state)

    def _with_state(self, fn):
        """Every call runs in one of the server's threads (with the call's context: its state and
        coordinates), never on the server's event loop."""

        @functools.wraps(fn)
        async def offloaded(*args, **kwargs):
            if self._threads is None:
                self._threads = ThreadPoolExecutor(TOOL_THREADS, thread_name_prefix="tool")
            context = contextvars.copy_context()
            call = functools.partial(context.run, fn, *args, **kwargs)
            return await asyncio.get_running_loop().run_in_executor(self._threads, call)

        return super()._with_state(offloaded)

    def _serve(self) -> None:
        """verifiers' server, with every accepted connection free of Nagle's delay, logging
        warnings and errors but not each request (the MCP server it builds sets the root logger
        to INFO with a rich handler, which would format two HTTP lines and an access line for
        every tool call of every rollout)."""
        _accept_without_delay()
        for name in PER_REQUEST_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        super()._serve()
