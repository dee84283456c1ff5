"""Benchmark the tax environments' calculator: one expression worked out, and an episode's cost
outside the model with and without it, through the real `eval` against the baseline endpoint.

    uv run python bench/calculator.py [--episodes 24]

The episode rows are the medians, over the run's episodes, of verifiers' own harness time (the
chat program, tool calls included, minus the model's turns), one episode at a time; the oracle
makes one reply of calls (one for each taxable row's division) and then answers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from piv_core.bench import per_item
from piv_core.parsing.arithmetic import MAX_CHARS, MAX_DEPTH, MAX_DIGITS, calculation
from piv_core.testing import run_baseline_eval

EXPRESSIONS = {
    "a row's division (`554.63 / 11`)": "554.63 / 11",
    "a row's product (`1433.18 * 9.125 / 100`)": "1433.18 * 9.125 / 100",
    f"the longest product ({MAX_CHARS} characters of {MAX_DIGITS}-digit factors, out of range)": "*".join(
        ["9" * MAX_DIGITS] * (MAX_CHARS // (MAX_DIGITS + 1))
    ),
    f"brackets {MAX_DEPTH} deep": "(" * MAX_DEPTH + "1.5 / 7" + ")" * MAX_DEPTH,
    "a refused expression (`__import__('os')`)": "__import__('os')",
}


def _harness_seconds(env_id: str, episodes: int, calculator: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        args = ["--env.taskset.level", "4", "--env.taskset.calculator", str(calculator).lower(), "-c", "1"]
        code, output, _ = run_baseline_eval(env_id, "oracle", out, *args, num_tasks=episodes, command="eval")
        if code != 0:
            raise SystemExit(output[-2000:])
        lines = (Path(out) / f"{env_id}--oracle" / "traces.jsonl").read_text().splitlines()
        traces = [t for line in lines for t in json.loads(line)["traces"]]
        calls = sum(1 for t in traces for n in t["nodes"] if n["message"]["role"] == "tool")
        return statistics.median(t["timing"]["agent"]["harness"]["duration"] for t in traces), calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=24, help="episodes a row")
    args = parser.parse_args()
    print("| measure | per item |")
    print("|---|---|")
    for label, expression in EXPRESSIONS.items():
        print(f"| {label} | {per_item(lambda i, e=expression: calculation(e), 2000) * 1e6:.1f} µs |")
    for env_id in ("au-bas-reconciliation-v1", "us-sut-reconciliation-v1"):
        without, _ = _harness_seconds(env_id, args.episodes, False)
        offered, calls = _harness_seconds(env_id, args.episodes, True)
        print(f"| {env_id} rung 4, an episode outside the model, no calculator | {without * 1e3:.1f} ms |")
        print(
            f"| {env_id} rung 4, an episode outside the model, calculator "
            f"({calls / args.episodes:.1f} calls an episode) | {offered * 1e3:.1f} ms |"
        )


if __name__ == "__main__":
    main()
