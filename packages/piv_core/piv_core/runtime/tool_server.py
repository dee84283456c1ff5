"""What a tool server of the suite sets in its own process before it serves: prompt replies and a
quiet log (`serve_promptly`).

verifiers binds a tool server's listening socket as ``socket(AF_INET, SOCK_STREAM)``, protocol 0,
and asyncio turns Nagle's algorithm off only on sockets whose protocol is IPPROTO_TCP. uvicorn
writes a reply's head and body apart, so on a kept-alive connection every reply would wait out
the client's delayed ACK: about 44 ms a tool call instead of 2 ms. And the MCP server sets the
root logger to INFO with a rich handler, which formats two HTTP lines and an access line for
every call of every rollout.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket

PER_REQUEST_LOGGERS = ("httpx", "uvicorn.access", "mcp.server.lowlevel.server", "mcp.server.streamable_http")
"""Loggers that write a line per tool call or state exchange at INFO."""


def serve_promptly() -> None:
    """Set TCP_NODELAY on every TCP connection this process accepts from now on, and the
    per-request loggers to WARNING (idempotent). Call it in the tool server's own process only
    (a toolset's ``setup``), never where other code shares the socket class."""
    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
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
