"""What the tax environments' rewards pay at each rung, per policy: the best rule over surface
features (`piv_core.baseline.shortcuts.search`, fitted on the train split, judged on the eval split), the
answers that skip the work, and the scripted honest audit erring on a share p of rows:

    uv run python bench/shortcuts.py                       # every rung of both environments
    uv run python bench/shortcuts.py --levels 1,2,3 --fit 60 --test 200

Prints one markdown table per environment.
"""

from __future__ import annotations

import argparse
import random
import time

from piv_core.baseline.shortcuts import MOVES, held_out_mean, policy_mean, search


def _environments():
    from au_bas_reconciliation_v1 import baselines as au_baselines
    from au_bas_reconciliation_v1.levels import RUNGS as AU_RUNGS
    from au_bas_reconciliation_v1.shortcuts import AuBasSurface
    from au_bas_reconciliation_v1.taskset import AuBasConfig
    from au_bas_reconciliation_v1.taskset import make_task_data as au_task
    from us_sut_reconciliation_v1 import baselines as us_baselines
    from us_sut_reconciliation_v1.levels import RUNGS as US_RUNGS
    from us_sut_reconciliation_v1.shortcuts import UsSutSurface
    from us_sut_reconciliation_v1.taskset import UsSutConfig
    from us_sut_reconciliation_v1.taskset import make_task_data as us_task

    return {
        "au-bas-reconciliation-v1": (AuBasSurface(), AuBasConfig, au_task, au_baselines, AU_RUNGS),
        "us-sut-reconciliation-v1": (UsSutSurface(), UsSutConfig, us_task, us_baselines, US_RUNGS),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="", help="comma-separated rungs (default: all)")
    parser.add_argument("--fit", type=int, default=60, help="train tasks a table is fitted on")
    parser.add_argument("--test", type=int, default=200, help="eval tasks a table is judged on")
    args = parser.parse_args()
    for env_id, (surface, config, make, baselines, rungs) in _environments().items():
        print(f"\n### {env_id}\n")
        print("| rung | best shortcut | its features | degenerate (best) | noisy 0 / 0.1 / 0.3 / 0.5 | s |")
        print("|---|---|---|---|---|---|")
        levels = [int(x) for x in args.levels.split(",")] if args.levels else sorted(rungs)
        last_focused = max(level for level, knobs in rungs.items() if knobs["prompt_style"] == "focused")
        for level in levels:
            start = time.perf_counter()
            near = level <= last_focused + 1  # the short ledgers: the whole sample, pairs of features
            shrink = 1 if near else 4
            fit = [make(config(level=level), i) for i in range(args.fit // shrink)]
            test = [make(config(level=level, split="eval"), i) for i in range(args.test // shrink)]
            found = search(surface, fit, test, depth=2 if near else 1)
            noisy = []
            for p in (0.0, 0.1, 0.3, 0.5):
                rng = random.Random(7)
                noisy.append(
                    policy_mean(surface, test, lambda c, p=p, rng=rng, b=baselines: b.noisy(c, p, rng))
                )
            floor = {
                "empty": policy_mean(surface, test, lambda c: '<answer>{"faults": {}}</answer>'),
                "example": policy_mean(surface, test, baselines.example),
                "blanket": policy_mean(surface, test, baselines.blanket),
                "garbage": policy_mean(surface, test, baselines.garbage),
            }
            for move in MOVES:
                floor[f"all {move.figure}/{move.flag}"] = held_out_mean(surface, test, (), {(): move})
            worst = max(floor, key=floor.get)
            features = ", ".join(found.features) or "-"
            print(
                f"| {level} | {found.mean:.3f} | {features} | {worst} {floor[worst]:.3f} "
                f"| {' / '.join(f'{v:.3f}' for v in noisy)} | {time.perf_counter() - start:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
