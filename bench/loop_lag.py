"""The event loop's worst lag while beancount-ledger scores a ledger: does scoring block the loop?

    uv run python bench/loop_lag.py [--runs N]

A ticker task sleeps 10 ms at a time on the loop and records how late each wake-up comes; meanwhile
the task's reward (`LedgerTask.ledger`) and its metric (`LedgerTask.components`) score one ledger,
concurrently, as verifiers calls them on an env server's loop. Per ledger it prints the worst lag
(median and max over `--runs`, each run on a ledger of its own so that no score is reused), the
wall time of scoring and the ledger's size:

- ``reference``: the reference bookkeeper's ledger of the shipped world;
- ``heavy``: `adversaries.heavy_ledger` (1,000 postings to sub-accounts and 650 ``balance``
  assertions on their parent, about 45 KB: over 2 s of beancount's CPU where nothing bounds it);
- ``admissible``: the most expensive ledger of that shape the gate admits (the heavy one itself
  where the gate has no complexity bound).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from types import SimpleNamespace

from beancount_ledger import gate
from beancount_ledger.adversaries import heavy_ledger
from beancount_ledger.taskset import LedgerTask, LedgerTaskConfig, golden_of, make_task_data

TICK = 0.010


async def _worst_lag(work) -> tuple[float, float]:
    """(worst lag of a 10 ms ticker while `work` runs, wall seconds of `work`)."""
    done = asyncio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(TICK)
            worst = max(worst, time.perf_counter() - start - TICK)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(3 * TICK)  # the ticker is running before the work starts
    start = time.perf_counter()
    await work()
    wall = time.perf_counter() - start
    done.set()
    await tick
    return worst, wall


def _admissible(original: str) -> str:
    """The heavy ledger if the gate books it, else the most expensive one of its shape it books."""
    text = heavy_ledger(original)
    if gate.load(text).refused is None:
        return text
    best, best_cost = heavy_ledger(original, 1, 1), 0.0
    for postings in (999, 799, 400, 100, 30):
        low, high = 0, 650  # the most assertions the gate books with this many postings
        while low < high:
            middle = (low + high + 1) // 2
            if gate.load(heavy_ledger(original, postings, middle)).refused is None:
                low = middle
            else:
                high = middle - 1
        candidate = heavy_ledger(original, postings, max(low, 1))
        if gate.load(candidate).refused is not None:
            continue
        start = time.process_time()
        gate.load(candidate)
        cost = time.process_time() - start
        if cost > best_cost:
            best, best_cost = candidate, cost
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = make_task_data("bank_recon_001")
    task = LedgerTask(data, LedgerTaskConfig())
    original = data.files["ledger.beancount"]
    ledgers = {
        "reference": golden_of(data),
        "heavy": heavy_ledger(original),
        "admissible": _admissible(original),
    }

    async def score(text: str) -> None:
        trace = SimpleNamespace(info={"ledger": text, "submitted": True, "tool_calls": {}})
        await asyncio.gather(task.ledger(trace), task.components(trace))

    async def everything() -> None:
        await score(golden_of(data) + "; warm-up\n")  # a sandbox worker is started
        print(
            "| ledger | bytes | refused by the gate | worst loop lag median | worst loop lag max "
            "| scoring wall median |"
        )
        print("|---|---|---|---|---|---|")
        for name, text in ledgers.items():
            lags, walls = [], []
            for run in range(args.runs):
                lag, wall = await _worst_lag(
                    lambda text=text, name=name, run=run: score(f"{text}; {name} run {run}\n")
                )
                lags.append(lag)
                walls.append(wall)
            refused = gate.load(text).refused
            print(
                f"| {name} | {len(text.encode())} | {'yes' if refused else 'no'} | "
                f"{statistics.median(lags) * 1e3:.1f} ms | {max(lags) * 1e3:.1f} ms | "
                f"{statistics.median(walls) * 1e3:.0f} ms |",
                flush=True,
            )

    asyncio.run(everything())


if __name__ == "__main__":
    main()
