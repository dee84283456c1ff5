"""prime-rl's own curriculum over a finite mix of rungs: which rungs end up in which difficulty pool.

prime-rl is not a dependency of this suite; point ``--prime-rl`` at a checkout of it (its
``src`` and ``packages/prime-rl-configs/src`` are put on the path, and only its curriculum, which
needs nothing but ``verifiers.v1``, is imported). The taskset is loaded the way prime-rl's
orchestrator loads a finite one (``vf.load_taskset``, then listed); the curriculum is built from a
source's ``curriculum`` table of ``configs/prime-rl/curriculum.toml``; each group is
``--group`` replies of the environment's scripted ``noisy-<p>`` policy, p rising with the rung
(``SKILL``), scored in-process by the task's own rewards, given the group-relative advantage
(reward minus the group's mean) and handed to the curriculum as finalized episodes. Prints the
pools' occupancy by rung every ``--every`` groups:

    uv run python bench/curriculum.py --prime-rl ~/src/prime-rl
    uv run python bench/curriculum.py --prime-rl ~/src/prime-rl --env us-sut-reconciliation-v1 --groups 600
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "prime-rl" / "curriculum.toml"
SKILL = {1: 0.05, 2: 0.2, 3: 0.45, 4: 0.7, 5: 0.9}
"""The scripted policy's error rate by rung (``noisy-<p>``): it masters the low rungs, not the high
(`UNLEARNED` at every rung above these)."""
UNLEARNED = 0.95


def _source(env_id: str) -> dict:
    sources = tomllib.loads(CONFIG.read_text())["orchestrator"]["train"]["source"]
    return next(s for s in sources if s["env"]["taskset"]["id"] == env_id)


def _episode(task, replies: list[str]):
    import verifiers.v1 as vf
    from piv_core.testing import score_reply

    traces = [score_reply(task, reply).trace for reply in replies]
    mean = sum(trace.reward for trace in traces) / len(traces)
    for trace in traces:
        trace.ok = True  # scored as a finished rollout is
        for node in trace.nodes:  # the group-relative advantage on the reply's tokens, as GRPO sets it
            node.advantages = [trace.reward - mean] * max(1, len(node.message.content or "") // 4)
    record = vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash)
    return [vf.Episode(task=record, ok=True, traces=[trace]) for trace in traces]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prime-rl", type=Path, required=True, help="a prime-rl checkout")
    parser.add_argument("--env", default="au-bas-reconciliation-v1", help="a source of curriculum.toml")
    parser.add_argument("--tasks-per-level", type=int, default=25, help="overrides the source's size")
    parser.add_argument("--groups", type=int, default=400, help="groups to sample and observe")
    parser.add_argument("--group", type=int, default=4, help="replies per group")
    parser.add_argument("--every", type=int, default=100, help="print the pools every this many groups")
    args = parser.parse_args()
    sys.path[:0] = [str(args.prime_rl / "src"), str(args.prime_rl / "packages" / "prime-rl-configs" / "src")]

    import verifiers.v1 as vf
    from piv_core.baseline.shortcuts import conversation_of
    from piv_core.plugins import load
    from prime_rl.configs.orchestrator import CurriculumConfig
    from prime_rl.orchestrator.curriculum import Curriculum

    source = _source(args.env)
    knobs = {**source["env"]["taskset"], "tasks_per_level": args.tasks_per_level}
    config = vf.resolve_env_field({"env": {"taskset": knobs}})["env"].taskset
    start = time.perf_counter()
    taskset = vf.load_taskset(config)
    if type(taskset).INFINITE:
        raise SystemExit(f"{args.env}: the source's taskset is infinite; prime-rl's pools need a finite one")
    tasks = list(taskset)  # what prime-rl's orchestrator does with a finite taskset
    loaded = time.perf_counter() - start
    curriculum = Curriculum(CurriculumConfig.model_validate(source["curriculum"]), tasks)
    noisy, rng = load(args.env).noisy, random.Random(0)
    level_of = {task.key: task.data.level for task in tasks}
    sampled: collections.Counter = collections.Counter()
    print(f"{args.env}: {len(tasks)} tasks of levels {config.levels}, {len(level_of)} keys, {loaded:.1f} s")
    print("\n| groups | rung | sampled | unseen | " + " | ".join(curriculum.sampler.pools) + " | admitted |")
    print("|---|---|---|---|" + "---|" * len(curriculum.sampler.pools) + "---|")
    admitted: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for n in range(1, args.groups + 1):
        task = next(curriculum.sampler)
        level = task.data.level
        sampled[level] += 1
        conversation = conversation_of(task.data)
        replies = [noisy(conversation, SKILL.get(level, UNLEARNED), rng) for _ in range(args.group)]
        admitted[level] += curriculum.on_result(_episode(task, replies))
        if n % args.every == 0 or n == args.groups:
            for level in config.levels:
                keys = [key for key, at in level_of.items() if at == level]
                pools = collections.Counter(curriculum.sampler.task_pool(key) for key in keys)
                cells = " | ".join(str(pools[name]) for name in curriculum.sampler.pools)
                print(f"| {n} | {level} | {sampled[level]} | {pools[None]} | {cells} | {admitted[level]} |")
    took = time.perf_counter() - start
    print(
        f"\n{args.groups} groups of {args.group} in {took:.1f} s ({took / args.groups * 1000:.1f} ms a group)"
    )


if __name__ == "__main__":
    main()
