"""The release preflight: mint the keyed population, gate every world, and write the signed manifest.

``beancount-ledger-preflight [--train 1000] [--eval 200] [--hard 200] [--levels 1-15 [--level-worlds 100]]
[--search 24] [--manifest PATH]``

``--levels`` also certifies rungs of the difficulty ladder (`ladder.py`): ``train:<n>:level<k>`` and
``eval:<n>:level<k>`` for the first ``--level-worlds`` indices of each split, at each rung given, so that
a taskset with ``level`` set may serve them (its selectors must be within those indices).

Phase 1, offline, in worker processes, on every minted world:
- minting twice gives byte-identical task data;
- every public file is within its envelope (`contract.envelope_problems`);
- the golden ledger scores 1.0, and so does the reference bookkeeper working from the public files;
- the ledger as given, and every attack of the corpus (the `attacks` package), scores no more than the
  entitlement oracle allows (`entitlement.py`), and the ledger as given scores below 1.0;
- so does every edit set of a bounded generative search (`mutations.search`, ``--search`` edit sets
  per world, seeded by the world, so a rerun tries the same ones).

Phase 2 signs a pending manifest of the worlds that passed and verifies every record through the
real serving door in a fresh process: verifiers resolves the env config and loads the taskset as
`eval` would, the taskset admits each selector against the signed manifest and rebuilds its task,
whose digest must equal the record's. The manifest is then written with the records that passed
both phases. Exit status 0 only when every world passed.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piv_core.tasksets.knobs import argument, whole_range

from beancount_ledger import keys, ladder, release


@dataclass
class Minted:
    selector: str
    record: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)
    attacks: list[Any] = field(default_factory=list)
    """`attacks.AttackResult` of every attack on this world (the generative search: its worst edit set)."""
    searched: int = 0
    """Edit sets the generative search tried on this world."""


def population(train: int, eval_: int, hard: int, levels: list[int] = (), level_worlds: int = 0) -> list[str]:
    return [
        *(f"train:{n}" for n in range(train)),
        *(f"eval:{n}" for n in range(eval_)),
        *(f"train:{n}:hard" for n in range(hard)),
        *(
            ladder.levelled(f"{split}:{n}", k)
            for k in levels
            for split in ("train", "eval")
            for n in range(level_worlds)
        ),
    ]


def label(selector: str) -> str:
    """The group a selector is counted in: its population, or its population at its rung."""
    level = ladder.level_of(selector)
    return keys.population(selector) + ("" if level is None else f" level {level}")


def levels(text: str) -> list[int]:
    """``--levels``: rungs, comma-separated (``1,2``) or as a range (``1-4``)."""
    out: list[int] = []
    rungs = len(ladder.RUNGS)
    for part in filter(None, text.split(",")):
        try:
            out += whole_range(part, "--levels", most=rungs, most_count=rungs)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{error} (a rung or a range of rungs, 1-{rungs})") from None
    for k in out:
        try:
            ladder.check(k)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"--levels: {error}") from None
    return sorted(set(out))


SEARCH = 24
"""Edit sets the generative search tries per world by default."""


def mint(selector: str, search: int = SEARCH) -> Minted:
    """Phase 1 for one selector (runs in a worker; the secret comes from the environment)."""
    from beancount_ledger import attacks, baselines, mutations, render
    from beancount_ledger.answer import golden_ledger, key_of
    from beancount_ledger.entitlement import entitled
    from beancount_ledger.scorer import score
    from beancount_ledger.taskset import data_of

    out = Minted(selector)
    try:
        secret = keys.read_secret()
        w, again = keys.resolve(selector, secret), keys.resolve(selector, secret)
        data = data_of(selector, w)
        if release.task_digest(data) != release.task_digest(data_of(selector, again)):
            out.failures.append("re-minting is not byte-identical")
        key = key_of(data)
        golden = score(golden_ledger(data), key).reward
        if golden != 1.0:
            out.failures.append(f"golden ledger scores {golden}")
        files = data.files
        solved = baselines.reference_ledger(
            files[render.LEDGER], files["bank_statement.csv"], files["archive_prior_period.csv"]
        )
        if (reference := score(solved, key).reward) != 1.0:
            out.failures.append(f"reference bookkeeper scores {reference}")
        untouched, bound = score(key.original, key).reward, entitled(w, frozenset())
        if not untouched < 1.0 or untouched > bound + attacks.EPSILON:
            out.failures.append(f"ledger as given scores {untouched} (entitled to {bound})")
        out.attacks = attacks.audit(w)
        searched = mutations.search(w, search)
        out.searched = len(searched)
        for result in [*out.attacks, *searched]:
            if result.exploit:
                out.failures.append(f"attack {result.name} scores {result.reward} > {result.entitlement}")
        if searched:
            out.attacks.append(max(searched, key=lambda r: (r.reward - r.entitlement, r.reward)))
        out.record = {
            **({} if (level := ladder.level_of(selector)) is None else {"level": level}),
            "population": keys.population(selector),
            "public_id": data.public_id,
            "digest": release.task_digest(data),
            "ledger_bytes": len(files[render.LEDGER].encode()),
            "plants": len(data.fixes),
            "untouched": untouched,
        }
    except Exception as error:  # a world that cannot be minted fails its gate, it does not stop the run
        out.failures.append(f"{type(error).__name__}: {error}")
    return out


def _progress():
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )


def phase_one(selectors: list[str], workers: int, search: int = SEARCH) -> list[Minted]:
    context = multiprocessing.get_context("spawn")
    results: list[Minted] = []
    with context.Pool(workers) as pool, _progress() as bar:
        task = bar.add_task("phase 1: offline gates", total=len(selectors))
        for minted in pool.imap_unordered(functools.partial(mint, search=search), selectors, chunksize=4):
            results.append(minted)
            bar.advance(task)
    order = {s: i for i, s in enumerate(selectors)}
    return sorted(results, key=lambda m: order[m.selector])


def verify(manifest: Path) -> dict[str, str]:
    """Phase 2 (in a fresh process): every record through the serving door -> {selector: problem}."""
    from verifiers.v1.utils.loaders import load_environment, resolve_env_config

    records = release.read_manifest(manifest, keys.read_secret())
    selectors = sorted(records)
    # One taskset serves one tool surface (the low rungs', or the six tools): one door per surface.
    groups: dict[str, list[str]] = {}
    for selector in selectors:
        groups.setdefault(ladder.tool_surface(selector), []).append(selector)
    problems = {s: "not served" for s in selectors}
    with _progress() as bar:
        task = bar.add_task("phase 2: serving door", total=len(selectors))
        for group in groups.values():
            config = resolve_env_config(
                {"taskset": {"id": "beancount-ledger", "selectors": group, "manifest": str(manifest)}}
            )
            try:
                for served in load_environment(config).taskset:
                    selector = served.data.id
                    if release.task_digest(served.data) == records[selector]["digest"]:
                        problems.pop(selector, None)
                    else:
                        problems[selector] = "digest differs from the record"
                    bar.advance(task)
            except keys.Refused as refusal:
                problems.update({s: f"refused: {refusal}" for s in group if s in problems})
    return problems


def phase_two(manifest: Path) -> dict[str, str]:
    """Run `verify` in a fresh interpreter without the development override."""
    env = {k: v for k, v in os.environ.items() if k != release.OVERRIDE_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "beancount_ledger.preflight", "--verify", str(manifest)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"phase 2 could not run (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="beancount-ledger-preflight", description=__doc__.split("\n\n")[0])
    indices = argument(most=keys.MAX_INDEX)
    parser.add_argument("--train", type=indices, default=1000, help="train:<n> worlds (default 1000)")
    parser.add_argument("--eval", type=indices, default=200, help="eval:<n> worlds (default 200)")
    parser.add_argument("--hard", type=indices, default=200, help="train:<n>:hard worlds (default 200)")
    parser.add_argument(
        "--levels", type=levels, default=[], help="rungs to certify too, e.g. 1-15 (default none)"
    )
    parser.add_argument(
        "--level-worlds",
        type=indices,
        default=100,
        help="indices per split certified at each rung (default 100)",
    )
    parser.add_argument(
        "--manifest", default=None, help=f"where to write it (default {release.DEFAULT_MANIFEST})"
    )
    parser.add_argument(
        "--search",
        type=argument(least=0),
        default=SEARCH,
        help=f"generative edit sets per world (default {SEARCH})",
    )
    parser.add_argument("--workers", type=argument(least=1), default=os.cpu_count() or 1)
    parser.add_argument("--verify", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.verify:
        print(json.dumps(verify(Path(args.verify))))
        return 0

    started = time.perf_counter()
    secret = keys.read_secret()
    target = release.manifest_path(args.manifest)
    selectors = population(args.train, args.eval, args.hard, args.levels, args.level_worlds)
    for selector in selectors:
        keys.expand(selector)  # the indices are in range
    minted = phase_one(selectors, max(1, args.workers), args.search)
    passed = {m.selector: m.record for m in minted if not m.failures and m.record}
    failed = [m for m in minted if m.failures]
    pending = target.with_name(target.stem + ".pending.json")
    release.write_manifest(pending, passed, secret, phase="pending")
    problems = phase_two(pending) if passed else {}
    pending.unlink()
    released = {s: r for s, r in passed.items() if s not in problems}
    groups = dict.fromkeys([*keys.POPULATIONS, *map(label, selectors)])
    counts = {p: sum(1 for s in selectors if label(s) == p) for p in groups}
    release.write_manifest(target, released, secret, phase="released", populations=counts)
    wall = time.perf_counter() - started

    by_population = ", ".join(
        f"{p} {sum(1 for s in released if label(s) == p)}/{n}" for p, n in counts.items() if n
    )
    from beancount_ledger import attacks

    print(attacks.table(r for m in minted for r in m.attacks))
    print(
        f"generative search: {sum(m.searched for m in minted):,} edit sets over {len(minted)} worlds "
        f"({args.search} per world; the table's generative_search row is each world's worst)"
    )
    print(f"phase 1 (offline gates): {len(passed)}/{len(selectors)} worlds passed")
    for m in failed[:10]:
        print(f"  {m.selector}: {'; '.join(m.failures)}")
    print(f"phase 2 (serving door): {len(passed) - len(problems)}/{len(passed)} records verified")
    for selector, problem in list(problems.items())[:10]:
        print(f"  {selector}: {problem}")
    print(f"released: {len(released)}/{len(selectors)} ({by_population})")
    print(f"manifest: {target} (signed; {len(released)} records)")
    print(f"wall time: {wall:.1f} s with {args.workers} workers")
    return 0 if len(released) == len(selectors) else 1


if __name__ == "__main__":
    raise SystemExit(main())
