"""What checking a ledger costs: the shipped ledger, the largest generated one at the top rung, and the
heaviest ledger of each shape the gate still admits under its complexity bound (`limits.MAX_CHECK_COST`),
through `gate.load` in this process (CPU time, median of several runs).

    uv run python bench/ledger_check_cost.py [--repeat 7] [--worlds 40]

Each shape is grown (by bisection on its size) to the largest ledger the gate does not refuse, so the
figure is the worst the bound lets through for that shape; an admitted ledger that then fails
beancount's checks (an unopened account, a failed assertion) has paid the full cost all the same.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from beancount_ledger import gate, ladder, world
from beancount_ledger.answer import golden_ledger, project
from beancount_ledger.limits import LEDGER_ENVELOPE

OPEN = "2024-01-01 open {} AUD"


def cost_ms(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        gate.load(text)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def _txn(legs: list[str], day: str = "2024-01-02") -> str:
    return "\n".join([f'{day} * "x"', *(f"  {a} 1 AUD" for a in legs), "  Equity:E"])


def parent_balances(n: int) -> str:
    """n sub-accounts of one parent, each posted to, and n assertions on the parent."""
    subs = [f"Assets:P:S{i}" for i in range(n)]
    asserts = ["2024-01-03 balance Assets:P 1 AUD"] * n
    return "\n".join([*(OPEN.format(a) for a in subs), _txn(subs), *asserts]) + "\n"


def leaf_balances(n: int) -> str:
    """n assertions on one account."""
    return "\n".join([_txn(["Assets:S"]), *["2024-01-03 balance Assets:S 1 AUD"] * n]) + "\n"


def distinct_balances(n: int) -> str:
    """n accounts, each asserted once."""
    accounts = [f"Assets:S{i}" for i in range(n)]
    asserts = [f"2024-01-03 balance {a} 1 AUD" for a in accounts]
    return "\n".join([_txn(accounts), *asserts]) + "\n"


def many_postings(n: int) -> str:
    """n two-posting transactions on opened accounts (a ledger that loads)."""
    body = [OPEN.format(a) for a in ("Assets:S", "Equity:E")]
    body += ['2024-01-02 * "x"\n  Assets:S 1 AUD\n  Equity:E -1 AUD' for _ in range(n)]
    return "\n".join(body) + "\n"


def one_transaction(n: int) -> str:
    """One transaction of n postings."""
    return _txn(["Assets:S"] * n) + "\n"


def unopened_accounts(n: int) -> str:
    """One transaction of n postings, each to an account never opened (an error each)."""
    return _txn([f"Assets:S{i}" for i in range(n)]) + "\n"


def deep_tree(n: int) -> str:
    """A chain of accounts 12 deep, postings at every depth, and n assertions on its root."""
    chain = [":".join(["Assets", *(f"A{j}" for j in range(k + 1))]) for k in range(12)]
    return "\n".join([_txn(chain * 4), *["2024-01-03 balance Assets:A0 1 AUD"] * n]) + "\n"


def many_pads(n: int) -> str:
    """n accounts, each padded from equity and then asserted."""
    accounts = [f"Assets:S{i}" for i in range(n)]
    body = [_txn(accounts)]
    for a in accounts:
        body += [f"2024-01-03 pad {a} Equity:E", f"2024-01-04 balance {a} 5 AUD"]
    return "\n".join(body) + "\n"


def postings_and_parent(n: int) -> str:
    """200 postings, plus n assertions on the parent of 30 posted sub-accounts."""
    subs = [f"Assets:P:S{i}" for i in range(30)]
    head = [_txn(subs), *(_txn(["Assets:X"] * 20) for _ in range(10))]
    return "\n".join([*head, *["2024-01-03 balance Assets:P 1 AUD"] * n]) + "\n"


SHAPES: dict[str, Callable[[int], str]] = {
    f.__name__: f
    for f in (
        parent_balances,
        leaf_balances,
        distinct_balances,
        many_postings,
        one_transaction,
        unopened_accounts,
        deep_tree,
        many_pads,
        postings_and_parent,
    )
}


def admitted(text: str) -> bool:
    return len(text.encode()) <= LEDGER_ENVELOPE and gate.load(text).refused is None


def largest(shape: Callable[[int], str], hi: int = 4096) -> int:
    """The largest n whose ledger the gate admits (0 when none)."""
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if admitted(shape(mid)) else (lo, mid - 1)
    return lo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--worlds", type=int, default=40, help="top-rung worlds searched for the largest")
    args = parser.parse_args()

    shipped = golden_ledger(project(world.bank_recon_001()))
    top = max(
        (
            golden_ledger(project(world.generate(n, profile=ladder.profile(len(ladder.RUNGS)))))
            for n in range(args.worlds)
        ),
        key=lambda t: len(t.encode()),
    )
    base, big = cost_ms(shipped, args.repeat), cost_ms(top, args.repeat)
    print(f"shipped ledger (bank_recon_001, golden): {len(shipped.encode()):,} B, {base:.2f} ms")
    print(f"largest top-rung ledger of {args.worlds} (golden): {len(top.encode()):,} B, {big:.2f} ms")
    print("| shape | n | bytes | check cost (units) | ms | x shipped | x largest generated |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for name, shape in SHAPES.items():
        n = largest(shape)
        text = shape(n)
        ms = cost_ms(text, args.repeat)
        worst = max(worst, ms)
        work = gate.check_cost(gate.parse(text)[0])[0]
        size = len(text.encode())
        print(f"| {name} | {n} | {size:,} | {work:,} | {ms:.2f} | {ms / base:.1f} | {ms / big:.1f} |")
    ratios = f"{worst / base:.1f}x shipped, {worst / big:.1f}x largest generated"
    print(f"worst admissible: {worst:.2f} ms = {ratios}")


if __name__ == "__main__":
    main()
