"""beancount-ledger figures for the hardening: what isolation costs per score, and what each attack
costs now against what it cost a loader without the gate, the sandbox and RE2.

    uv run python bench/beancount_attacks.py

(a) Per ledger (the golden ledgers of the shipped world, two dev worlds and one hard world):
    beancount's own ``loader.load_string``, ``scorer.score`` in this process and ``isolated.score``
    (the same score in a sandbox worker, the reward's path), with ratios to load_string and the
    isolation cost in ms per score.
(b) Per attack: an ``include "/dev/zero"`` ledger through the gate (in process, and through
    ``isolated.check`` as the tools call it), each catastrophic grep pattern through the grep tool
    (RE2) on the workspace as given and with the ``redos`` policy's bait lines written, and the
    ``1/0`` amount through ``isolated.score`` (the worker dies; the next score starts a new one).
    The old costs run in a subprocess capped at `CAP` seconds: Python's ``re`` on the
    same patterns and lines, and beancount's loader on the same ledgers.
Figures are medians of several runs (`piv_core.bench.per_item`).
"""

import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import verifiers.v1 as vf
from beancount import loader
from beancount_ledger import adversaries, gate, isolated, keys, sandbox
from beancount_ledger.scorer import score
from beancount_ledger.taskset import data_of, golden_of, key_of, make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout
from piv_core.bench import per_item

SECRET = b"bench secret, never released"
CAP = 5.0
"""Seconds an old-cost measurement may run before it is reported as "> 5 s"."""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def samples() -> dict:
    out = {s: make_task_data(s) for s in ("bank_recon_001", "dev:1", "dev:2")}
    out["train:1:hard"] = data_of("train:1:hard", keys.keyed_world("train:1:hard", SECRET))
    return out


def isolation(datas: dict) -> None:
    print("(a) scoring one golden ledger: beancount load_string, score in process, score in the sandbox")
    print(
        f"{'world':<15} {'bytes':>6}  {'load_string':>11}  {'score':>11}  {'isolated':>11}  "
        f"{'score/load':>10}  {'isolated/load':>13}  {'isolation':>9}"
    )
    for selector, data in datas.items():
        text, key = golden_of(data), key_of(data)
        isolated.score(text, key)  # the worker is up and has the original cached, as in a run
        load = per_item(lambda i, text=text: loader.load_string(text), 30, 9)
        local = per_item(lambda i, text=text, key=key: score(text, key), 30, 9)
        boxed = per_item(lambda i, text=text, key=key: isolated.score(text, key), 30, 9)
        print(
            f"{selector:<15} {len(text.encode()):>6}  {ms(load)}  {ms(local)}  {ms(boxed)}  "
            f"{local / load:9.2f}x  {boxed / load:12.2f}x  {(boxed - local) * 1000:6.2f} ms"
        )


_OLD_RE = """
import re, sys, time
from pathlib import Path
lines = [l for p in sorted(Path(sys.argv[2]).iterdir()) for l in p.read_text().splitlines()]
regex = re.compile(sys.argv[1], re.IGNORECASE)
start = time.perf_counter()
hits = sum(1 for line in lines if regex.search(line))
print(time.perf_counter() - start)
"""
_OLD_LOAD = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from beancount import loader
text = open(sys.argv[1]).read()
start = time.perf_counter()
try:
    loader.load_string(text)
except MemoryError:
    print("memory", time.perf_counter() - start)
else:
    print("ok", time.perf_counter() - start)
"""


def old(code: str, *args: str) -> str:
    """Run `code` in a fresh interpreter, capped at `CAP` seconds: what it printed, or why it stopped."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=CAP
        )
    except subprocess.TimeoutExpired:
        return f"> {CAP:.0f} s"
    if done.returncode < 0:
        return f"killed by signal {-done.returncode} after {time.perf_counter() - start:.2f} s"
    if done.returncode:
        return f"failed ({done.stderr.strip().splitlines()[-1][:60]})"
    words = done.stdout.split()
    seconds = float(words[-1])
    return f"{seconds * 1000:.2f} ms" + (" (MemoryError at 1 GiB)" if words[0] == "memory" else "")


def attacks(data) -> None:
    print("\n(b) attacks on bank_recon_001: cost now, and the old cost (fresh process, capped)")
    golden, key = golden_of(data), key_of(data)
    with tempfile.TemporaryDirectory() as home:
        workspace = Path(home, "workspace")
        workspace.mkdir()
        for name, text in data.files.items():
            (workspace / name).write_text(text)

        devzero = f'{golden}X include "/dev/zero"\n'
        (scratch_ledger := Path(home, "devzero.beancount")).write_text(
            devzero.replace("X include", "include")
        )
        now_gate = per_item(lambda i: gate.load(devzero), 50)
        now_check = per_item(lambda i: isolated.check(devzero), 50)
        print(f'include "/dev/zero"  gate.load {ms(now_gate)}   isolated.check {ms(now_check)}   refused')
        print(f"{'':20} old: beancount loader on it: {old(_OLD_LOAD, str(scratch_ledger))}")

        tools = LedgerToolset(vf.SharedToolsetConfig())
        state = LedgerState(files=dict(data.files))
        with rollout(state):
            for bait in (False, True):
                if bait:  # what the redos policy writes first: lines each pattern explodes on
                    ledger = data.files["ledger.beancount"].rstrip("\n")
                    written = f"{ledger}\n\n" + "\n".join(adversaries.REDOS_BAIT) + "\n"
                    assert tools.write_ledger(written).startswith("written")
                    (workspace / "ledger.beancount").write_text(written)  # for the old measurement
                served = {**state.files, **({"ledger.beancount": state.ledger} if state.ledger else {})}
                lines = sum(len(text.splitlines()) for text in served.values())
                where = "with the bait written" if bait else "as given"
                print(
                    f"grep over the eight files {where} ({lines} lines), RE2 through the tool vs Python re:"
                )
                for pattern in adversaries.REDOS_PATTERNS:
                    now = per_item(lambda i, p=pattern: tools.grep(p), 5)
                    before = old(_OLD_RE, pattern, str(workspace))
                    print(f"  {pattern:<20} grep tool {ms(now)}   old: re {before}")

        crash = adversaries.crash_ledger((data.files["ledger.beancount"], golden))
        (crash_ledger := Path(home, "crash.beancount")).write_text(crash)
        isolated.score(golden, key)
        warm = per_item(lambda i: isolated.score(golden, key), 20)
        dies, restarts = [], []
        for _ in range(7):
            start = time.perf_counter()
            assert isolated.score(crash, key).error
            middle = time.perf_counter()
            assert isolated.score(golden, key).reward == 1.0
            dies.append(middle - start)
            restarts.append(time.perf_counter() - middle)
        print(
            f"amount 1/0           isolated.score {ms(statistics.median(dies))} (the worker dies: reward 0, "
            f"scorer_error 1); the next score, in a new worker, {ms(statistics.median(restarts)).strip()} "
            f"(warm: {ms(warm).strip()})"
        )
        print(f"{'':20} old: beancount loader on it: {old(_OLD_LOAD, str(crash_ledger))}")
    sandbox.shutdown()


def main() -> None:
    datas = samples()
    isolation(datas)
    attacks(datas["bank_recon_001"])


if __name__ == "__main__":
    main()
