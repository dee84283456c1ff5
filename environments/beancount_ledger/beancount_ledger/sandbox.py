"""Where model-written ledgers are loaded and scored: bounded worker processes, never the caller.

The gate (`gate.py`) makes it impossible for a ledger to reach a file or a module. This module
is the second wall, for what no gate can rule out: beancount's C parser crashing on a ledger
(``1/0`` in an amount is a segmentation fault in beancount 3.2.3), or a ledger costing more
time or memory than it should. Every load and score of model-written text in the tools and in
the reward runs in a worker process that

- starts with an empty environment (no evaluator secret, no state secret, no API key) in an
  empty working directory, from the isolated interpreter (``python -I -B``), importing only
  beancount and this package's gate and scorer (not verifiers);
- lowers its own limits before it reads any request: address space `MEMORY_BYTES`, no file
  writes, few descriptors; and `CPU_SECONDS` of CPU per request (SIGXCPU interrupts the
  request, which then fails alone); started as root, it drops to the `nobody` user once its
  imports are done;
- answers one JSON line per JSON request line; it is killed and replaced when a reply takes
  longer than `WALL_SECONDS`, when it dies, or when it answers something that is not JSON.

A failed request is a `Failure` naming what happened ("timeout", "crashed (signal 11)"), never
an exception: the tools turn it into an error message, the scorer into reward 0 with the
``scorer_error`` metric. Workers are pooled per process (one per concurrent caller, at most
`MAX_WORKERS`), started on first use and reused; a forked child starts its own.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

CPU_SECONDS = 3
"""CPU seconds one request may use in the worker."""
WALL_SECONDS = 15.0
"""Wall seconds the caller waits for one reply before it kills the worker."""
MEMORY_BYTES = 1 << 30
"""The worker's address-space limit."""
MAX_WORKERS = max(2, os.cpu_count() or 2)
"""Concurrent workers per calling process."""
_OPEN_FILES = 64
_NOBODY = 65534
_BOOT = (
    "import sys, types\n"
    "package = types.ModuleType('beancount_ledger')\n"
    "package.__path__ = [sys.argv[1]]\n"
    "sys.modules['beancount_ledger'] = package\n"
    "from beancount_ledger.sandbox import serve\n"
    "serve(sys.argv[2])\n"
)
"""The worker's entry: the package's modules without its ``__init__`` (which loads verifiers)."""
OPS_MODULE = "beancount_ledger.isolated"
"""The module whose ``OPS`` table (operation name to function) the workers serve; named, not
imported, here: it is the caller of this pool, and the worker imports it after its limits."""


@dataclass(frozen=True)
class Failure:
    """A request that produced no answer."""

    reason: str


class _Overrun(Exception):
    """Raised in the worker by SIGXCPU: the request used its CPU seconds."""


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        self._home = tempfile.mkdtemp(prefix="beancount-ledger-sandbox-")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", _BOOT, os.path.dirname(os.path.abspath(__file__)), OPS_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._home,
            env={"PATH": os.defpath, "HOME": self._home, "LC_ALL": "C.UTF-8"},
            start_new_session=True,
        )
        self._buffer = b""

    def call(self, request: bytes) -> dict[str, Any] | Failure:
        try:
            self.proc.stdin.write(request)
            self.proc.stdin.flush()
        except OSError:
            return self._dead()
        deadline = time.monotonic() + WALL_SECONDS
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                return Failure("timeout")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return self._dead()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            self.close()
            return Failure("protocol error")
        return reply if isinstance(reply, dict) else Failure("protocol error")

    def _dead(self) -> Failure:
        self.close()
        code = self.proc.returncode
        return Failure(f"crashed (signal {-code})" if code and code < 0 else f"exited ({code})")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            os.rmdir(self._home)
        except OSError:
            pass


class _Pool:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self.started = 0
        self.lock = threading.Lock()

    def acquire(self) -> _Worker:
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            pass
        with self.lock:
            if self.started < MAX_WORKERS:
                self.started += 1
                return _Worker()
        return self.idle.get()

    def release(self, worker: _Worker) -> None:
        if worker.alive:
            self.idle.put(worker)
            return
        with self.lock:
            self.started -= 1


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _current_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            _pool = _Pool()
        return _pool


def call(op: str, **payload: Any) -> dict[str, Any] | Failure:
    """Run `op` (see `OPS`) in a worker with `payload`; its JSON reply, or why there is none."""
    request = (json.dumps({"op": op, **payload}) + "\n").encode()
    pool = _current_pool()
    try:
        worker = pool.acquire()
    except Exception as e:  # no worker could be started (out of processes or descriptors)
        with pool.lock:
            pool.started -= 1
        return Failure(f"no worker ({type(e).__name__})")
    try:
        reply = worker.call(request)
        if isinstance(reply, dict) and "failure" in reply:
            worker.close()  # a request interrupted mid-way may leave the worker inconsistent
            reply = Failure(str(reply["failure"]))
        return reply
    finally:
        pool.release(worker)


def shutdown() -> None:
    """Stop this process's workers (they also stop by themselves when their caller exits)."""
    pool = _current_pool()
    while True:
        try:
            worker = pool.idle.get_nowait()
        except queue.Empty:
            return
        worker.close()
        pool.release(worker)  # a closed worker frees its place in the pool


# ---- the worker side ----


def _limit() -> None:
    for limit, value in (
        (resource.RLIMIT_AS, MEMORY_BYTES),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NOFILE, _OPEN_FILES),
        (resource.RLIMIT_CORE, 0),
    ):
        _, hard = resource.getrlimit(limit)
        resource.setrlimit(limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))


def _cpu_budget() -> None:
    """Let the next request use `CPU_SECONDS` more CPU seconds before SIGXCPU."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + CPU_SECONDS
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(
        resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
    )


def _drop_privileges() -> None:
    """Started as root, the worker becomes `nobody` once its imports are done: no file of root's,
    no other process's environment, is then readable from it."""
    if os.geteuid() != 0:
        return
    os.setgroups([])
    os.setgid(_NOBODY)
    os.setuid(_NOBODY)


def _overrun(signum: int, frame: Any) -> None:
    raise _Overrun


def serve(ops_module: str) -> None:
    """The worker: limits first, then one JSON reply per JSON request line on stdin, each
    request naming an operation of `ops_module`'s ``OPS``."""
    _limit()
    signal.signal(signal.SIGXCPU, _overrun)
    import importlib

    from beancount.core import realization  # noqa: F401  every module a request needs, up front

    ops = importlib.import_module(ops_module).OPS  # with the gate and the scorer it imports

    _drop_privileges()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        try:
            _cpu_budget()
            request = json.loads(line)
            reply = ops[request.pop("op")](**request)
        except _Overrun:
            reply = {"failure": "cpu limit"}
        except MemoryError:
            reply = {"failure": "memory limit"}
        except Exception as e:
            reply = {"failure": f"error ({type(e).__name__})"}
        stdout.write((json.dumps(reply) + "\n").encode())
        stdout.flush()
