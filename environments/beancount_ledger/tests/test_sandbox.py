"""The sandbox worker and the tools on top of it: what the worker can see, what it may use, and
that every failure (a crash, a timeout, a tool's own error) is an answer, never an exception."""

import os
import threading
from pathlib import Path

import pytest
import verifiers.v1 as vf
from beancount_ledger import isolated, keys, sandbox
from beancount_ledger.answer import golden_ledger, key_of
from beancount_ledger.contract import LEDGER_ENVELOPE
from beancount_ledger.render import LEDGER
from beancount_ledger.taskset import make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout

DIVIDE_BY_ZERO = '\n2024-03-31 * "crash"\n  Assets:Bank:Operating  1/0 AUD\n  Income:Sales\n'
"""An amount beancount 3.2.3's C parser dies on (segmentation fault)."""


@pytest.fixture
def data():
    return make_task_data("bank_recon_001")


@pytest.fixture
def fresh_pool(monkeypatch):
    """Workers started inside the test (so they see the test's environment), in a pool of the test's
    own; the process's pool is set aside untouched and comes back afterwards (`shutdown` closes a
    pool's idle workers but keeps counting them, so a pool shut down here could start no more)."""
    monkeypatch.setattr(sandbox, "_pool", None)
    monkeypatch.setattr(isolated, "_remembered", isolated._Remembered())  # nothing checked yet
    yield
    sandbox.shutdown()


def _worker_pid() -> int:
    return sandbox.worker_pids()[0]


def test_the_worker_has_no_secret_no_files_and_its_limits(fresh_pool, monkeypatch, data):
    monkeypatch.setenv(keys.SECRET_ENV, "a secret the worker must never see")
    assert isolated.check(golden_ledger(data)).ok
    proc = Path(f"/proc/{_worker_pid()}")
    environ = proc.joinpath("environ").read_bytes().split(b"\0")
    assert sorted(v.split(b"=")[0] for v in environ if v) == [b"HOME", b"LC_ALL", b"PATH"]
    assert b"a secret" not in proc.joinpath("environ").read_bytes()
    assert os.listdir(proc / "cwd") == []
    limits = proc.joinpath("limits").read_text()
    assert f"Max address space         {sandbox.MEMORY_BYTES}" in limits
    assert "Max file size             0" in limits
    cpu = next(line for line in limits.splitlines() if line.startswith("Max cpu time"))
    assert cpu.split()[3] != "unlimited"  # a soft CPU limit is set per request


def test_a_crash_is_an_answer_and_the_next_request_gets_a_new_worker(fresh_pool, data):
    key = key_of(data)
    crashed = isolated.score(golden_ledger(data) + DIVIDE_BY_ZERO, key)
    assert crashed.reward == 0.0 and crashed.error == "crashed (signal 11)"
    assert crashed.metrics()["scorer_error"] == 1.0
    assert isolated.check(golden_ledger(data) + DIVIDE_BY_ZERO).failure == "crashed (signal 11)"
    assert isolated.score(golden_ledger(data), key).reward == 1.0


def test_a_reply_past_the_wall_clock_kills_the_worker(fresh_pool, monkeypatch, data):
    assert isolated.check(golden_ledger(data)).ok
    pid = _worker_pid()
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 0.0)
    assert isolated.check(golden_ledger(data) + "; a text not checked yet\n").failure == "timeout"
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    monkeypatch.setattr(sandbox, "WALL_SECONDS", 15.0)
    assert isolated.check(golden_ledger(data)).ok


def test_concurrent_scores_each_get_their_own_answer(dev_worlds):
    tasks = [make_task_data(s) for s in ("bank_recon_001", "dev:1", "dev:2", "dev:3")]
    texts = [(golden_ledger(d), 1.0) for d in tasks] + [(d.files["ledger.beancount"], None) for d in tasks]
    results: dict[int, float] = {}

    def one(i: int) -> None:
        d = tasks[i % len(tasks)]
        results[i] = isolated.score(texts[i][0], key_of(d)).reward

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    from beancount_ledger.scorer import score

    for i, (text, _) in enumerate(texts):
        assert results[i] == score(text, key_of(tasks[i % len(tasks)])).reward


@pytest.fixture
def tools(tmp_path, monkeypatch, data):
    monkeypatch.chdir(tmp_path)
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    toolset.data = data
    with rollout(LedgerState(files=dict(data.files))):
        yield toolset


def _served_ledger(tools) -> str:
    text, error = tools._file(LEDGER)
    assert text is not None, error
    return text


def test_a_ledger_beancount_cannot_process_is_not_written(tools, data):
    assert tools.write_ledger(golden_ledger(data)).startswith("written: revision 1")
    reply = tools.write_ledger(golden_ledger(data) + DIVIDE_BY_ZERO)
    assert reply.startswith("not written: beancount could not process it (crashed")
    assert tools.state.revision == 1 and tools.state.ledger == golden_ledger(data)
    assert _served_ledger(tools) == golden_ledger(data)


def test_run_beancount_reports_a_crash_and_goes_on(tools, data):
    # A world whose given ledger crashes beancount's parser (none does; the tool must cope anyway).
    tools.state.files = {**data.files, LEDGER: golden_ledger(data) + DIVIDE_BY_ZERO}
    assert "beancount could not process it (crashed" in tools.run_beancount()
    tools.state.files = {**data.files, LEDGER: golden_ledger(data)}
    assert tools.run_beancount().startswith("no errors. Balances:")


def test_served_and_scored_ledger_never_diverge(tools, data, tmp_path):
    """One field is both: every accepted write changes what is served and what is scored at once,
    every refused one changes neither, and no file is written anywhere."""
    golden = golden_ledger(data)
    attempts = [
        (golden, True),
        (golden + DIVIDE_BY_ZERO, False),
        (f'{golden}\nplugin "beancount.plugins.auto_accounts"\n', False),
        ("x" * (LEDGER_ENVELOPE + 1), False),
        (data.files[LEDGER], True),
        (None, False),
    ]
    revision = 0
    for text, accepted in attempts:
        before = (tools.state.ledger, _served_ledger(tools))
        reply = tools.write_ledger(text)
        assert reply.startswith("written: revision") == accepted, reply
        revision += accepted
        assert tools.state.revision == revision
        if accepted:
            assert tools.state.ledger == text == _served_ledger(tools)
        else:
            assert (tools.state.ledger, _served_ledger(tools)) == before
    assert list(tmp_path.iterdir()) == []


def test_a_tool_that_fails_answers_with_an_error(tools, monkeypatch):
    def boom(text):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(isolated, "check", boom)
    assert tools.run_beancount() == "error: run_beancount failed (RuntimeError); try again"
    assert tools.write_ledger("x").startswith("error: write_ledger failed (RuntimeError)")
    assert tools.state.tool_calls["run_beancount"] == 1


@pytest.mark.parametrize(
    "pattern",
    [r"(\w+\s?)+$X", r"(a|aa)*b", r"(.*a){20}", r"(x+x+)+y", r"^(([a-z])+.)+[A-Z]([a-z])+$"],
)
def test_grep_matches_catastrophic_patterns_in_linear_time(tools, pattern):
    # RE2 has no backtracking: these return at once (Python's re takes exponential time on some).
    reply = tools.grep(pattern)
    assert reply == "no matches" or ":" in reply


def test_grep_refuses_what_re2_cannot_match(tools):
    assert tools.grep(r"(a)\1").startswith("error: invalid regular expression (RE2 syntax)")
    assert tools.grep(r"(?<=a)b").startswith("error: invalid regular expression")
    assert "BS2403-001" in tools.grep("bs2403-001")  # case-insensitive as before


def test_tool_calls_run_off_the_servers_event_loop(tools):
    import asyncio

    seen = {}

    def probe():
        seen["thread"] = threading.get_ident()
        return "ok"

    async def call():
        seen["loop"] = threading.get_ident()
        return await tools._with_state(probe)()

    assert asyncio.run(call()) == "ok"
    assert seen["thread"] != seen["loop"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the worker drops privileges only when started as root")
def test_a_worker_started_as_root_runs_as_nobody(fresh_pool, data):
    assert isolated.check(golden_ledger(data)).ok
    status = Path(f"/proc/{_worker_pid()}/status").read_text()
    uid = next(line for line in status.splitlines() if line.startswith("Uid:"))
    assert uid.split()[1:] == [str(sandbox._NOBODY)] * 4
    assert isolated.score(golden_ledger(data), key_of(data)).reward == 1.0
