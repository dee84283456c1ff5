"""Where model-written ledgers are loaded and scored: bounded worker processes, never the caller.

The gate (`gate.py`) makes it impossible for a ledger to reach a file or a module. This module
is the second wall, for what no gate can rule out: beancount's C parser crashing on a ledger
(``1/0`` in an amount is a segmentation fault in beancount 3.2.3), or a ledger costing more
time or memory than it should. Every load and score of model-written text in the tools and in
the reward runs in a worker process that

- starts with an empty environment (no evaluator secret, no state secret, no API key) in an
  empty working directory, from the isolated interpreter (``python -I -B``), importing only
  beancount and this package's gate and scorer (not verifiers); the directory is removed as soon
  as the worker has started in it, so no worker leaves one behind, however its caller ends
  (nothing can be created in a removed directory either);
- lowers its own limits before it reads any request: address space `MEMORY_BYTES`, no file
  writes, few descriptors; and `CPU_SECONDS` of CPU per request (SIGXCPU interrupts the
  request, which then fails alone); it runs at a lower CPU priority (`NICE`) than its caller,
  so that the servers' event loops stay responsive while workers are busy; started as root, it
  drops to the `nobody` user once its imports are done;
- answers one JSON line per JSON request line, with the CPU seconds the request used; it is
  killed and replaced when a reply takes longer than `WALL_SECONDS`, when it dies, or when it
  answers something that is not JSON.

A request gets a `Reply` (the operation's JSON answer and its CPU seconds) or a `Failure` naming
what happened ("timeout", "crashed (signal 11)", "busy ..."), never an exception: the tools turn
it into an error message, the scorer into reward 0 with the ``scorer_error`` metric. A failure
that costs the worker its life is charged the worker's CPU that no reply accounted for (its
start-up and the failed request), so that a run of crashes costs its rollout what it costs the
machine.

The pool is fair. Workers are pooled per process (at most `MAX_WORKERS`, started on first use and
reused; a forked child starts its own). A caller that finds none free joins a queue and is
served strictly in arrival order: a released worker is handed to the longest waiter, never to a
newcomer, so no burst of requests can overtake a waiting one. A caller may give a deadline
(``wait``; the tools give `WAIT_SECONDS`): past it, it leaves the queue with ``Failure("busy
...")``, which the model sees as a tool error. Without one (the reward) it waits its turn, which
comes after at most the requests queued before it. `acall` is the same request for a coroutine:
it waits and runs in a thread of its own, never on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CPU_SECONDS = 3
"""CPU seconds one request may use in the worker."""
WALL_SECONDS = 15.0
"""Wall seconds the caller waits for one reply before it kills the worker."""
WAIT_SECONDS = 5.0
"""Wall seconds a request with a deadline (a tool's check) waits for a free worker before it is
answered busy."""
MEMORY_BYTES = 1 << 30
"""The worker's address-space limit."""
MAX_WORKERS = max(2, os.cpu_count() or 2)
"""Concurrent workers per calling process."""
NICE = 10
"""How much lower than its caller's the worker's CPU priority is."""
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
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
OPS_MODULE = "beancount_ledger.isolated"
"""The module whose ``OPS`` table (operation name to function) the workers serve; named, not
imported, here: it is the caller of this pool, and the worker imports it after its limits."""


@dataclass(frozen=True)
class Reply:
    """A request's answer: the operation's JSON value, and the worker CPU seconds it used."""

    value: dict[str, Any]
    cpu: float = 0.0


@dataclass(frozen=True)
class Failure:
    """A request that produced no answer."""

    reason: str
    cpu: float = 0.0
    """Worker CPU seconds charged for it."""
    lasting: bool = True
    """Whether the same request would fail the same way again (it failed on what it asked, not on
    how busy or how the machine was): only such failures may be remembered as the answer."""


def _busy(wait: float) -> Failure:
    return Failure(f"busy: every sandbox worker stayed in use for {wait:g} s; try again", lasting=False)


class _Overrun(Exception):
    """Raised in the worker by SIGXCPU: the request used its CPU seconds."""


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        home = tempfile.mkdtemp(prefix="beancount-ledger-sandbox-")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", _BOOT, _PACKAGE_DIR, OPS_MODULE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=home,
                env={"PATH": os.defpath, "HOME": home, "LC_ALL": "C.UTF-8"},
                start_new_session=True,
            )
        finally:
            # Popen returns once the child has changed into `home` and started the interpreter: the
            # child keeps its (now removed, still empty) working directory, and nothing is left here.
            os.rmdir(home)
        self._buffer = b""
        self._reported = 0.0

    def _unreported(self) -> float:
        """The CPU seconds the worker used that no reply accounted for (read before it is reaped)."""
        used = _cpu_of(self.proc.pid)
        return float(CPU_SECONDS) if used is None else max(0.0, used - self._reported)

    def _failed(self, reason: str, lasting: bool = True) -> Failure:
        charged = self._unreported()
        self.close()
        return Failure(reason, cpu=charged, lasting=lasting)

    def call(self, request: bytes) -> Reply | Failure:
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
                return self._failed("timeout", lasting=False)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return self._dead()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        # Imported here, on the caller's side: the worker imports this module and nothing of piv_core.
        from piv_core.parsing.bounded_decode import Undecodable, load_json

        try:  # nested as deep as it likes, a reply is refused unread (no reply outgrows the worker)
            answer = load_json(line, max_bytes=MEMORY_BYTES, where="the sandbox worker's reply")
        except Undecodable:
            answer = None
        if not isinstance(answer, dict) or not isinstance(answer.get("cpu"), int | float):
            return self._failed("protocol error")
        if "failure" in answer:  # a request interrupted mid-way may leave the worker inconsistent
            return self._failed(str(answer["failure"]))
        if not isinstance(answer.get("reply"), dict):
            return self._failed("protocol error")
        self._reported += answer["cpu"]
        return Reply(answer["reply"], float(answer["cpu"]))

    def _dead(self) -> Failure:
        charged = self._unreported()
        self.close()
        code = self.proc.returncode
        reason = f"crashed (signal {-code})" if code and code < 0 else f"exited ({code})"
        # Killed from outside (an operator, the kernel's OOM killer, `shutdown`) or gone by itself:
        # nothing says the request caused it, or that it would again.
        outside = code == -signal.SIGKILL or not (code and code < 0)
        return Failure(reason, cpu=charged, lasting=not outside)

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


def _cpu_of(pid: int) -> float | None:
    """The CPU seconds process `pid` has used (an exited, unreaped one's too); None if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


_START = object()
"""What `_Pool.acquire` hands a caller that may start a new worker in a free place."""


@dataclass(eq=False)
class _Waiter:
    ready: threading.Event = field(default_factory=threading.Event)
    grant: Any = None
    """The worker handed over, or `_START`."""


class _Pool:
    """`MAX_WORKERS` places, handed out in arrival order (see the module docstring)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        self.started = 0
        """Places taken: workers alive (idle or busy) and workers being started."""
        self.workers: set[_Worker] = set()
        self.waiters: deque[_Waiter] = deque()

    def acquire(self, wait: float | None) -> Any:
        """An idle worker, or `_START` (a free place), in arrival order; None past `wait` seconds."""
        with self.lock:
            if not self.waiters:
                if self.idle:
                    return self.idle.pop()
                if self.started < MAX_WORKERS:
                    self.started += 1
                    return _START
            waiter = _Waiter()
            self.waiters.append(waiter)
        if waiter.ready.wait(wait):
            return waiter.grant
        with self.lock:
            if waiter.ready.is_set():  # handed over while the wait ran out
                return waiter.grant
            self.waiters.remove(waiter)
            return None

    def _hand(self, grant: Any) -> bool:
        """Give `grant` to the longest waiter (the lock held); False when nobody waits."""
        if not self.waiters:
            return False
        waiter = self.waiters.popleft()
        waiter.grant = grant
        waiter.ready.set()
        return True

    def started_one(self, worker: _Worker) -> None:
        with self.lock:
            self.workers.add(worker)

    def release(self, worker: _Worker | None) -> None:
        """Return a worker (None: a start that failed); a dead one frees its place."""
        with self.lock:
            if worker is not None and worker.alive:
                if not self._hand(worker):
                    self.idle.append(worker)
                return
            if worker is not None:
                self.workers.discard(worker)
            if not self._hand(_START):
                self.started -= 1


_pool: _Pool | None = None
_threads: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _current_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            _pool = _Pool()
        return _pool


def _current_threads() -> ThreadPoolExecutor:
    """This process's threads for `acall` (one per place in the pool: more would only queue)."""
    global _threads
    with _pool_lock:
        if _threads is None or _threads[0] != os.getpid():
            _threads = (os.getpid(), ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="sandbox"))
        return _threads[1]


def call(op: str, *, wait: float | None = None, **payload: Any) -> Reply | Failure:
    """Run `op` (see `OPS`) in a worker with `payload`: its reply, or why there is none. With
    `wait`, a request that finds no worker free within `wait` seconds is answered busy."""
    request = (json.dumps({"op": op, **payload}) + "\n").encode()
    pool = _current_pool()
    got = pool.acquire(wait)
    if got is None:
        return _busy(wait or 0.0)
    worker: _Worker | None = None
    try:
        if got is _START:
            try:
                got = _Worker()
            except Exception as e:  # no worker could be started (out of processes or descriptors)
                return Failure(f"no worker ({type(e).__name__})", lasting=False)
            pool.started_one(got)
        worker = got
        return worker.call(request)
    finally:
        pool.release(worker)


async def acall(op: str, **payload: Any) -> Reply | Failure:
    """`call` for a coroutine: the request waits for its worker and its reply in a thread, so the
    event loop goes on serving everything else meanwhile."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_current_threads(), functools.partial(call, op, **payload))


def worker_pids() -> list[int]:
    """The process ids of this process's live workers."""
    pool = _current_pool()
    with pool.lock:
        return sorted(w.proc.pid for w in pool.workers if w.alive)


def shutdown() -> None:
    """Stop this process's idle workers (they also stop by themselves when their caller exits)."""
    pool = _current_pool()
    with pool.lock:
        idle, pool.idle = pool.idle, []
    for worker in idle:
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


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_budget() -> None:
    """Let the next request use `CPU_SECONDS` more CPU seconds before SIGXCPU."""
    soft = int(_cpu_used()) + 1 + CPU_SECONDS
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
    os.nice(NICE)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        used = _cpu_used()
        try:
            _cpu_budget()
            request = json.loads(line)
            answer = {"reply": ops[request.pop("op")](**request)}
        except _Overrun:
            answer = {"failure": "cpu limit"}
        except MemoryError:
            answer = {"failure": "memory limit"}
        except Exception as e:
            answer = {"failure": f"error ({type(e).__name__})"}
        answer["cpu"] = round(_cpu_used() - used, 6)
        stdout.write((json.dumps(answer) + "\n").encode())
        stdout.flush()
