"""Benchmark hostile replies to the text environments: the cost per item of each attack.

A reply is model output, and an optimiser finds whatever is expensive to read. This prints what the
money parser, the answer-block reader and a whole au-bas grade cost on the inputs that used to blow
up: figures with absurd exponents or lengths, thousands of unclosed ``<answer>`` tags, a code fence
padded with spaces. Every measurement runs in its own interpreter and is cut off after 5 s ("> 5 s"),
so the script also finishes against code that is super-linear on these inputs:

    uv run python bench/text_attacks.py
    uv run python bench/text_attacks.py --checkout /path/to/other/checkout   # e.g. an older revision

``--checkout`` puts that tree's ``packages/piv_core`` and ``environments/au_bas_reconciliation_v1``
first on the path; an older revision can be unpacked with
``git archive <rev> packages environments | tar -x -C /path/to/other/checkout``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

LIMIT_S = 5.0
SETUP_LIMIT_S = 120.0

_CHILD = """
import statistics, sys, time
from decimal import Decimal
from piv_core.bench import per_item
{setup}
def call():
    {call}
print("ready", flush=True)
start = time.perf_counter()
try:
    call()
except Exception as error:
    print("raises", type(error).__name__, flush=True)
    sys.exit(0)
first = time.perf_counter() - start
if first > 0.05:
    print(first, flush=True)
else:
    items = max(1, min(10_000, int(0.05 / max(first, 1e-7))))
    print(per_item(lambda i: call(), items, repeats=5), flush=True)
"""

_GRADE_SETUP = """
from au_bas_reconciliation_v1 import grading
from au_bas_reconciliation_v1.taskset import AuBasConfig, make_task_data
task = make_task_data(AuBasConfig(), 0)
forget = getattr(grading.parse_answer, "cache_clear", lambda: None)  # measure the parse, not a cache hit
faults = '"faults": {}'
"""


def _figure_reply(figure: str) -> str:
    """Setup code for a reply whose G1 is the bare JSON number the Python expression `figure` spells."""
    head = "'<answer>{\"G1\": '"
    tail = '\', "1A": "1.00", "1B": "1.00", "net": "0.00", \' + faults + \'}</answer>\''
    return f"reply = {head} + {figure} + {tail}"


CASES: list[tuple[str, str, str]] = [
    *(
        (f'`parse_cents(Decimal("0e{k}"))`', f'value = Decimal("0e{k}")', "parse_cents(value)")
        for k in ("1000", "100000", "10000000", "1000000000")
    ),
    ('`parse_cents(Decimal("1e1000000"))`', 'value = Decimal("1e1000000")', "parse_cents(value)"),
    *(
        (f'`parse_cents("9" * {n:,})`', f'value = "9" * {n}', "parse_cents(value)")
        for n in (10_000, 1_000_000)
    ),
    *(
        (f'`parse_cents(Decimal("9" * {n:,}))`', f'value = Decimal("9" * {n})', "parse_cents(value)")
        for n in (10_000, 1_000_000)
    ),
    ("`parse_cents(10 ** 100_000)`", "value = 10 ** 100_000", "parse_cents(value)"),
    *(
        (
            f"`last_answer_block`, {n:,} unclosed `<answer>` tags",
            f'reply = "<answer>" * {n}',
            "last_answer_block(reply)",
        )
        for n in (1_000, 4_000, 16_000)
    ),
    *(
        (
            f"`last_answer_block`, `<answer>` + ``` + {n:,} spaces + `x</answer>`",
            f'reply = "<answer>```" + " " * {n} + "x</answer>"',
            "last_answer_block(reply)",
        )
        for n in (10_000, 40_000)
    ),
    *(
        (
            f"`last_answer_block`, `<answer>` + ```\\n + {n:,} spaces + `x</answer>`",
            f'reply = "<answer>```\\n" + " " * {n} + "x</answer>"',
            "last_answer_block(reply)",
        )
        for n in (10_000, 40_000)
    ),
    (
        "au-bas grade, the oracle's figures (yardstick)",
        _GRADE_SETUP
        + 'from piv_core.parsing.money import format_cents\nimport json\nreply = "<answer>" + json.dumps('
        '{**{k: format_cents(v) for k, v in task.bas.items()}, "faults": task.faults}) + "</answer>"',
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas grade, figure `0e10000000`",
        _GRADE_SETUP + _figure_reply('"0e10000000"'),
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas grade, figure `1e1000000`",
        _GRADE_SETUP + _figure_reply('"1e1000000"'),
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas grade, figure of 100,000 nines and `.5`",
        _GRADE_SETUP + _figure_reply('"9" * 100_000 + ".5"'),
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas grade, 16,000 unclosed `<answer>` tags",
        _GRADE_SETUP + 'reply = "<answer>" * 16_000',
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas grade, ``` + 40,000 spaces in the block",
        _GRADE_SETUP + 'reply = "<answer>```" + " " * 40_000 + "x</answer>"',
        "forget(); grading.grade(reply, task.bas, task.faults)",
    ),
    (
        "au-bas score of one trace (2 rewards + 1 metric), oracle reply",
        _GRADE_SETUP
        + "from au_bas_reconciliation_v1.taskset import AuBasTask\nfrom piv_core.testing import score_reply\n"
        "from piv_core.parsing.money import format_cents\nimport json\nscored = AuBasTask(task)\n"
        'reply = "<answer>" + json.dumps({**{k: format_cents(v) for k, v in task.bas.items()}, '
        '"faults": task.faults}) + "</answer>"',
        "forget(); score_reply(scored, reply)",
    ),
]


def _pretty(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def measure(setup: str, call: str, env: dict[str, str]) -> str:
    """Seconds per call of `call` after `setup`, in a fresh interpreter, or why there is no figure."""
    source = _CHILD.format(setup=f"from piv_core import last_answer_block, parse_cents\n{setup}", call=call)
    child = subprocess.Popen(
        [sys.executable, "-c", source], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        ready = child.stdout.readline().strip() if child.stdout else ""
        if ready != "ready":
            _, errors = child.communicate(timeout=SETUP_LIMIT_S)
            return f"setup failed: {errors.strip().splitlines()[-1] if errors.strip() else ready}"
        out, _ = child.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return f"> {LIMIT_S:g} s"
    out = out.strip()
    if out.startswith("raises"):
        return out
    return _pretty(float(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, help="measure the piv-core and au-bas of this tree instead")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.checkout is not None:
        root = args.checkout.resolve()
        paths = [root / "packages" / "piv_core", root / "environments" / "au_bas_reconciliation_v1"]
        env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    print("| attack | per item |")
    print("|---|---|")
    for label, setup, call in CASES:
        print(f"| {label} | {measure(setup, call, env)} |", flush=True)


if __name__ == "__main__":
    main()
