"""A shared worker is fair: the pool serves in arrival order with a deadline, a rollout has one
check in flight and a CPU budget, an unchanged ledger is never checked twice, scoring never blocks
the event loop, and no worker leaves a directory behind."""

import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import verifiers.v1 as vf
from beancount_ledger import isolated, sandbox
from beancount_ledger.render import LEDGER
from beancount_ledger.taskset import LedgerTask, LedgerTaskConfig, golden_of, make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout


@pytest.fixture
def data():
    return make_task_data("bank_recon_001")


@pytest.fixture
def fresh(monkeypatch):
    """A pool and a memory of checks of the test's own."""
    monkeypatch.setattr(sandbox, "_pool", None)
    monkeypatch.setattr(isolated, "_remembered", isolated._Remembered())
    yield sandbox._current_pool()
    sandbox.shutdown()


@pytest.fixture
def counted(monkeypatch):
    """Every request that reaches the sandbox, by operation, and the most in flight at once."""
    real, lock = sandbox.call, threading.Lock()
    seen = SimpleNamespace(calls=[], running=0, most=0, delay=0.0)

    def call(op, **payload):
        with lock:
            seen.calls.append(op)
            seen.running += 1
            seen.most = max(seen.most, seen.running)
        try:
            time.sleep(seen.delay)
            return real(op, **payload)
        finally:
            with lock:
                seen.running -= 1

    monkeypatch.setattr(sandbox, "call", call)
    return seen


def _tools(data) -> LedgerToolset:
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    toolset.data = data
    return toolset


class _Alive:
    alive = True


def test_the_pool_serves_waiters_in_arrival_order(monkeypatch):
    monkeypatch.setattr(sandbox, "MAX_WORKERS", 1)
    pool = sandbox._Pool()
    assert pool.acquire(None) is sandbox._START  # the only place is taken
    order: list[int] = []
    arrivals = list(range(8))
    random.Random(0).shuffle(arrivals)

    def waiter(n: int) -> None:
        worker = pool.acquire(None)
        order.append(n)
        pool.release(worker)

    threads = []
    for n in arrivals:
        threads.append(threading.Thread(target=waiter, args=(n,)))
        threads[-1].start()
        while len(pool.waiters) < len(threads):  # each is queued before the next arrives
            time.sleep(0.001)
    late = pool.acquire(0.05)  # one with a deadline leaves the queue without disturbing it
    assert late is None and len(pool.waiters) == len(arrivals)
    pool.release(_Alive())  # the place comes back as a worker: handed down the queue in order
    for t in threads:
        t.join(5)
    assert order == arrivals
    assert pool.idle and len(pool.idle) == 1 and not pool.waiters


def test_a_check_that_finds_no_worker_in_time_is_a_tool_error_and_the_episode_goes_on(
    fresh, monkeypatch, data
):
    monkeypatch.setattr(sandbox, "MAX_WORKERS", 1)
    monkeypatch.setattr(sandbox, "WAIT_SECONDS", 0.2)
    tools, golden = _tools(data), golden_of(data)
    held = fresh.acquire(None)  # another rollout's request holds the only worker
    with rollout(LedgerState(files=dict(data.files))):
        start = time.monotonic()
        reply = tools.write_ledger(golden)
        assert time.monotonic() - start < 2
        assert reply.startswith("error: busy: ") and reply.endswith("(not written)")
        assert tools.state.ledger is None and tools.state.revision == 0
        assert tools.run_beancount().startswith("error: busy: ")
        fresh.release(None)  # that request ends
        assert held is sandbox._START
        assert tools.write_ledger(golden).startswith("written: revision 1")
        assert tools.run_beancount().startswith("no errors. Balances:")
        assert tools.submit() == "submitted (revision 1)"


def test_an_unchanged_ledger_is_never_checked_again(fresh, counted, data):
    """Across any sequence of writes and checks by several rollouts, the sandbox sees each distinct
    ledger once."""
    golden = golden_of(data)
    texts = [golden, data.files[LEDGER], golden + "; reviewed\n", golden.replace("Interest", "Interest ")]
    rng = random.Random(7)
    tools, states = _tools(data), [LedgerState(files=dict(data.files)) for _ in range(3)]
    asked = set()
    for _ in range(40):
        with rollout(rng.choice(states)) as state:
            if rng.random() < 0.5:
                text = rng.choice(texts)
                asked.add(text)
                assert tools.write_ledger(text).startswith("written")
            else:
                asked.add(state.ledger if state.ledger is not None else data.files[LEDGER])
                assert tools.run_beancount().startswith(("no errors", "1 error", "2 error"))
    assert counted.calls == ["check"] * len(asked)


def test_concurrent_checks_of_one_ledger_run_once(fresh, counted, data):
    counted.delay = 0.3
    text, results = golden_of(data), []
    threads = [threading.Thread(target=lambda: results.append(isolated.check(text))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert counted.calls == ["check"] and all(r.ok for r in results) and len(results) == 6
    assert sorted(r.cpu > 0 for r in results).count(True) <= 1  # only the one that ran is charged


def test_a_rollout_has_one_check_in_flight(fresh, counted, data, monkeypatch):
    counted.delay = 0.2
    golden = golden_of(data)
    lanes = [isolated.Lane(), isolated.Lane()]
    replies: list[isolated.Checked] = []

    def one(lane: isolated.Lane, n: int) -> None:
        replies.append(lane.check(f"{golden}; note {n}\n"))

    threads = [threading.Thread(target=one, args=(lanes[0], n)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert counted.most == 1 and len(counted.calls) == 4 and all(r.ok for r in replies)
    # Two rollouts do run at once.
    counted.most = 0
    threads = [threading.Thread(target=one, args=(lane, 10 + n)) for n, lane in enumerate(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert counted.most == 2
    # A second check of a rollout waits for the first, up to the deadline, then is declined.
    monkeypatch.setattr(sandbox, "WAIT_SECONDS", 0.05)
    counted.delay = 0.5
    first = threading.Thread(target=one, args=(lanes[0], 20))
    first.start()
    while counted.running == 0:
        time.sleep(0.005)
    second = lanes[0].check(f"{golden}; note 21\n")
    first.join(10)
    assert second.declined and second.declined.startswith("busy: this episode's previous check")


def test_an_episode_past_its_cpu_budget_is_told_so_and_its_reward_still_comes(fresh, monkeypatch, data):
    real = sandbox.call

    def costly(op, **payload):
        reply = real(op, **payload)
        return sandbox.Reply(reply.value, cpu=1.0) if isinstance(reply, sandbox.Reply) else reply

    monkeypatch.setattr(sandbox, "call", costly)
    monkeypatch.setattr(isolated, "EPISODE_CPU", 2.5)
    tools, golden = _tools(data), golden_of(data)
    with rollout(LedgerState(files=dict(data.files))):
        for n in range(3):
            assert tools.write_ledger(f"{golden}; draft {n}\n").startswith("written")
        reply = tools.write_ledger(golden)
        assert reply.startswith("error: budget: ") and tools.state.revision == 3
        assert tools.run_beancount().startswith("error: budget: ")
        assert tools.read_file("policy.md").startswith("policy.md slice 1")  # other tools go on
        assert tools.submit() == "submitted (revision 3)"
        written = tools.state.ledger
    with rollout(LedgerState(files=dict(data.files))):  # another rollout's budget is its own
        assert tools.write_ledger(golden).startswith("written")
    assert isolated.score(written, isolated.key_from_json(isolated.key_json(_key(data)))).reward == 1.0


def _key(data):
    from beancount_ledger.answer import key_of

    return key_of(data)


def test_scoring_never_blocks_the_event_loop_and_runs_once(fresh, counted, data):
    """The reward and the metric score one slow ledger together: one sandbox request, and the loop
    keeps its 10 ms ticks meanwhile."""
    counted.delay = 1.0
    task = LedgerTask(data, LedgerTaskConfig())
    trace = SimpleNamespace(
        info={"ledger": golden_of(data) + "; slow\n", "submitted": True, "tool_calls": {}}
    )

    async def measured():
        worst, done = 0.0, False

        async def ticker():
            nonlocal worst
            while not done:
                start = time.perf_counter()
                await asyncio.sleep(0.01)
                worst = max(worst, time.perf_counter() - start - 0.01)

        tick = asyncio.create_task(ticker())
        reward, metrics = await asyncio.gather(task.ledger(trace), task.components(trace))
        done = True
        await tick
        return worst, reward, metrics

    worst, reward, metrics = asyncio.run(measured())
    assert reward == 1.0 and metrics["scorer_error"] == 0.0
    assert counted.calls == ["score"]
    assert worst < 0.2


_STARTS_WORKERS = """
import os, signal, sys, threading
from beancount_ledger import isolated, sandbox
from beancount_ledger.taskset import golden_of, make_task_data
golden = golden_of(make_task_data("bank_recon_001"))
threads = [threading.Thread(target=isolated.check, args=(f"{golden}; {n}\\n",)) for n in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print(" ".join(map(str, sandbox.worker_pids())), flush=True)
cwd = os.readlink(f"/proc/{sandbox.worker_pids()[0]}/cwd")
print(cwd, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
os._exit(0)  # no shutdown, no atexit
"""


@pytest.mark.parametrize("ending", ["exit", "kill"])
def test_workers_leave_no_directory_behind(tmp_path, ending):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _STARTS_WORKERS, ending], env=env, capture_output=True, text=True, timeout=120
    )
    pids, cwd = done.stdout.splitlines()[:2]
    assert len(pids.split()) >= 2, done.stderr
    assert cwd.startswith(str(tmp_path)) and cwd.endswith("(deleted)")  # it worked in the removed one
    assert list(tmp_path.iterdir()) == []
    for pid in map(int, pids.split()):  # and the workers end with their caller
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text():
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"worker {pid} outlived its caller")


def test_a_crash_costs_its_rollout_what_it_cost_the_worker(fresh, data):
    """The worker's start-up and the crashed request, read from the kernel: more than nothing (a run of
    crashes is bounded by the episode's budget), far less than a whole allowance."""
    lane, golden = isolated.Lane(), golden_of(data)
    assert lane.check(golden).ok
    crash = '\n2024-03-31 * "crash"\n  Assets:Bank:Operating  1/{} AUD\n  Income:Sales\n'
    crashes = [lane.check(golden + crash.format(n)) for n in ("0", "(0)", "(1-1)")]
    assert all(c.failure == "crashed (signal 11)" for c in crashes)
    assert all(0 < c.cpu < sandbox.CPU_SECONDS / 3 for c in crashes), [c.cpu for c in crashes]
    assert lane.cpu == pytest.approx(sum(c.cpu for c in crashes), abs=0.05)
    assert lane.check(f"{golden}; after\n").ok
