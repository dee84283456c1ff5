"""What the rewards pay at each rung, per policy: the best answer read off the page (fitted on the train
split, judged on the eval split), the answers that skip the work, and the scripted honest solver erring
on a share p of rows or parts. For the tax environments the best is the best rule over what a row shows
(`piv_core.baseline.shortcuts.search`); for geo, the fitted surface answer (`geo_reprojection_v1.shortcuts`,
on a fifth of the tasks: its fit is a search over every printed number of every part).

    uv run python bench/shortcuts.py                       # every rung of the three environments
    uv run python bench/shortcuts.py --env geo-reprojection-v1 --levels 1,2,3 --fit 60 --test 200
    uv run python bench/shortcuts.py --env us-sut-reconciliation-v1 --levels 6 --knobs '{"fault_rate": 0.25}'

`--knobs` (tax environments) measures a rung that is not in the table: each rung of `--levels` with
those knobs changed, what a candidate rung would pay before it is added. Prints one markdown table
per environment.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from piv_core.baseline.shortcuts import MOVES, constant_moves, held_out_mean, policy_mean, search


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
    parser.add_argument("--env", default="", help="one environment id (default: all three)")
    parser.add_argument("--knobs", default="{}", help="JSON knobs changed on every rung (tax environments)")
    args = parser.parse_args()
    knobs = json.loads(args.knobs)
    levels = [int(x) for x in args.levels.split(",")] if args.levels else None
    for env_id, (surface, config, make, baselines, rungs) in _environments().items():
        if args.env and args.env != env_id:
            continue
        print(f"\n### {env_id}" + (f", each rung with {json.dumps(knobs)}" if knobs else "") + "\n")
        print("| rung | best shortcut | its features | degenerate (best) | noisy 0 / 0.1 / 0.3 / 0.5 | s |")
        print("|---|---|---|---|---|---|")
        last_focused = max(level for level, knobs in rungs.items() if knobs["prompt_style"] == "focused")
        for level in levels or sorted(rungs):
            start = time.perf_counter()
            near = level <= last_focused + 1  # the short ledgers: the whole sample, pairs of features
            shrink = 1 if near else 4
            rung = {**rungs[level], **knobs}
            fit = [make(config(**rung), i) for i in range(args.fit // shrink)]
            test = [make(config(**rung, split="eval"), i) for i in range(args.test // shrink)]
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
            for move in MOVES + constant_moves([surface.glances(task) for task in test]):
                figure = move.figure if move.value is None else str(move.value)
                floor[f"all {figure}/{move.flag}"] = held_out_mean(surface, test, (), {(): move})
            worst = max(floor, key=floor.get)
            features = ", ".join(found.features) or "-"
            print(
                f"| {level} | {found.mean:.3f} | {features} | {worst} {floor[worst]:.3f} "
                f"| {' / '.join(f'{v:.3f}' for v in noisy)} | {time.perf_counter() - start:.0f} |",
                flush=True,
            )
    if args.env in ("", "geo-reprojection-v1") and not knobs:
        _geo(levels, args.fit // 5, args.test // 5)


def _geo(levels: list[int] | None, fit: int, test: int) -> None:
    from geo_reprojection_v1 import baselines, shortcuts
    from geo_reprojection_v1.levels import RUNGS
    from piv_core.baseline.shortcuts import conversation_of
    from piv_core.testing import score_reply

    print("\n### geo-reprojection-v1\n")
    print("| rung | fitted surface answer | degenerate (best) | noisy 0 / 0.1 / 0.3 / 0.5 | s |")
    print("|---|---|---|---|---|")
    for level in levels or sorted(RUNGS):
        start = time.perf_counter()
        judged = shortcuts.tasks(level, "eval", test)
        best = shortcuts.mean(judged, shortcuts.fit(shortcuts.tasks(level, "train", fit)))
        floor = shortcuts.degenerate_means(judged)
        worst = max(floor, key=floor.get)
        noisy = []
        for p in (0.0, 0.1, 0.3, 0.5):
            rng = random.Random(7)
            replies = [baselines.noisy(conversation_of(task.data), p, rng) for task, _ in judged]
            rewards = [score_reply(task, reply).reward for (task, _), reply in zip(judged, replies)]
            noisy.append(sum(rewards) / len(judged))
        print(
            f"| {level} | {best:.3f} | {worst} {floor[worst]:.3f} | {' / '.join(f'{v:.3f}' for v in noisy)} "
            f"| {time.perf_counter() - start:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
