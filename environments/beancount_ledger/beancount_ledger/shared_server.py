"""How one server serves the tools to every rollout of an env worker: `SharedToolset`, the base of
`tools.LedgerToolset` (which holds the tools themselves and what they answer).

verifiers pulls a call's rollout state from the host and pushes it back after the call; this
server remembers, per rollout route, the state it last pushed (`KNOWN_ROUTES` of them, least
recently called dropped first) and pulls from the host only on a rollout's first call, so a call
costs one state exchange instead of two. It keeps each rollout's sandbox `isolated.Lane` beside
it, runs every call in a thread of its own pool (`TOOL_THREADS`) rather than on the event loop,
and serves as every tool server of the suite does: Nagle's algorithm off on every accepted
connection, the per-request loggers at WARNING (`piv_core.runtime.tool_server`).
"""

import asyncio
import contextvars
import functools
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import verifiers.v1 as vf
from piv_core.runtime.tool_server import serve_promptly

from beancount_ledger import isolated
from beancount_ledger.verifiers_internals import call_state

KNOWN_ROUTES = 512
"""Rollouts whose last pushed state and sandbox lane the server keeps (least recently called
dropped first)."""
TOOL_THREADS = 64
"""Threads the server runs tool calls in (its own: asyncio's default pool has a few per core, and a
call waiting on the sandbox holds its thread for up to `sandbox.WAIT_SECONDS` plus a check)."""


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
        """verifiers' server, prompt and quiet (`piv_core.runtime.tool_server.serve_promptly`)."""
        serve_promptly()
        super()._serve()
