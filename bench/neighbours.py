"""Honest beancount-ledger episodes alone and beside hostile neighbours, through the real ``eval``.

    uv run python bench/neighbours.py [--honest N] [--hostile M] [--repeats R]

One ``eval`` run serves every episode from one env server (its tool server and sandbox pools shared
by all of them) against an endpoint of this script's, whose policy plays each rollout either as the
reference bookkeeper (honest) or as ``heavy`` (`adversaries.heavy`: writes the heaviest ledger the
envelope holds, runs beancount on it 15 times in the turn, submits). Rollouts take their part in
the order their first request arrives, alternating, so honest and hostile ones start together; a
hostile rollout marks its first turn with a ``list_files`` call, so that its later turns are told
apart from the transcript alone.

Per setting it prints the honest episodes' wall time (trace start to the end of scoring: median and
max), their mean reward, the hostile ones' wall time and the run's whole wall time. ``alone`` runs
the honest episodes with no neighbour; ``beside`` adds the hostile ones. The target is honest
episodes within 1.5x of alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from beancount_ledger.adversaries import heavy
from beancount_ledger.bookkeeper import reference
from piv_core.policy import Conversation, ToolCall
from piv_core.testing import run_policy_eval

MARK = ToolCall("list_files")
"""What a hostile rollout adds to its first turn."""


def mixed(hostile: int):
    """A policy playing the first `hostile` odd-numbered rollouts to arrive as ``heavy``, the others
    honestly."""
    lock, arrived = threading.Lock(), [0, 0]  # first requests seen, hostile rollouts started

    def policy(conversation: Conversation):
        assistants = [m for m in conversation.messages if m.get("role") == "assistant"]
        if not assistants:
            with lock:
                n = arrived[0]
                arrived[0] += 1
                bad = n % 2 == 1 and arrived[1] < hostile
                if bad:
                    arrived[1] += 1
            return [*heavy(conversation), MARK] if bad else reference(conversation)
        first = assistants[0].get("tool_calls") or []
        bad = any((c.get("function") or {}).get("name") == MARK.name for c in first)
        return heavy(conversation) if bad else reference(conversation)

    return policy


def run(honest: int, hostile: int, out: str, name: str) -> dict[str, list[float]]:
    episodes = honest + hostile
    start = time.perf_counter()
    code, output = run_policy_eval(
        "beancount-ledger", mixed(hostile), out, name, "-r", str(episodes), "-c", str(episodes)
    )
    wall = time.perf_counter() - start
    if code != 0 and "traces.jsonl" not in output:
        raise SystemExit(f"eval failed ({code}):\n{output[-3000:]}")
    times: dict[str, list[float]] = {"honest": [], "hostile": [], "honest_reward": [], "wall": [wall]}
    for line in Path(out, name, "traces.jsonl").read_text().splitlines():
        for trace in json.loads(line)["traces"]:
            calls = trace["info"].get("tool_calls") or {}
            part = "hostile" if calls.get("list_files") else "honest"
            timing = trace["timing"]
            times[part].append(timing["scoring"]["end"] - timing["start"])
            if part == "honest":
                reward = ((trace.get("rewards") or {}).get("ledger") or {}).get("score")
                times["honest_reward"].append(reward or 0.0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--honest", type=int, default=4)
    parser.add_argument("--hostile", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(
        "| setting | honest episodes | honest median | honest max | honest mean reward "
        "| hostile median | run wall |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as out:
        for setting, hostile in (("alone", 0), (f"beside {args.hostile} hostile", args.hostile)):
            merged: dict[str, list[float]] = {}
            for repeat in range(args.repeats):
                got = run(args.honest, hostile, out, f"{setting.split()[0]}-{repeat}")
                for key, values in got.items():
                    merged.setdefault(key, []).extend(values)
            honest, bad = merged["honest"], merged["hostile"]
            hostile_median = f"{statistics.median(bad):.2f} s" if bad else "-"
            print(
                f"| {setting} | {len(honest)} | {statistics.median(honest):.2f} s | {max(honest):.2f} s | "
                f"{statistics.mean(merged['honest_reward']):.3f} | {hostile_median} | "
                f"{statistics.median(merged['wall']):.1f} s |",
                flush=True,
            )


if __name__ == "__main__":
    main()
