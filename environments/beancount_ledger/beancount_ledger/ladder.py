"""The difficulty ladder: the taskset's ``level`` knob as a world profile, rung 1 the easiest.

A level is applied on top of the selectors: ``selectors=["train:0-99"], level=1`` serves the worlds
``train:0:level1`` .. ``train:99:level1``, each keyed by its own selector (so a rung never serves
another rung's world, nor the unlevelled one) and drawn from its split's years. Rung 1 is a short
month with a single discrepancy, its kind drawn per world; rung 2 a short month with three; rung 3
the standard month (all five standard kinds); rung 4 the hard month (eight kinds and decoys). Rungs 3
and 4 keep the seed's score; rungs 1 and 2 (`world.Profile.located_credit`) also credit a discrepancy
located and each account it put wrong set right, and their policy says so (`scorer`), so that the books
left alone score 0 and a partial correction more. The shipped world and the ``:hard`` selectors name their own
profile and take no level.

Rung 1 is also served its own prompt and tool surface (`tools.SURFACES["append"]`): the prompt names
each file, says that one statement line is booked wrongly and what its correction is, and its
user message quotes the ledger, statement, archive and policy as given; the tools are read_file,
run_beancount, write_ledger, book_correction (one correcting transaction from its date, ref, amount
and two accounts, appended to the ledger and checked as a whole: `correction`) and submit. Every
other world is served the six tools and the common prompt.
"""

from __future__ import annotations

from piv_core.tasksets.knobs import WHOLE
from piv_core.tasksets.ladder import check_rungs, rung_table

from beancount_ledger import world

RUNGS = {
    1: {"profile": world.PROFILES["single"].name, "tools": "append"},
    2: {"profile": world.PROFILES["three"].name, "tools": "full"},
    3: {"profile": world.STANDARD.name, "tools": "full"},
    4: {"profile": world.HARD.name, "tools": "full"},
}
check_rungs(RUNGS)
KNOB = "level"
SUFFIX = ":level"


def check(level: int, knob: str = KNOB) -> int:
    """`level` when it is a rung; else the ladder's error, naming the knob and the range."""
    if level not in RUNGS:
        raise ValueError(f"{knob} must be between 1 and {len(RUNGS)}, got {level}")
    return level


def profile(level: int) -> world.Profile:
    """The world profile of rung `level`."""
    return world.PROFILES[RUNGS[check(level)]["profile"]]


def level_of(selector: str) -> int | None:
    """The rung a canonical selector names (None: unlevelled)."""
    head, _, tail = selector.rpartition(SUFFIX)
    return int(tail) if head and WHOLE.fullmatch(tail) else None


def levelled(selector: str, level: int) -> str:
    """Canonical `selector` at rung `level` (unchanged when it already names that rung). Raises
    ValueError naming the knob for a selector that takes no level or already names another rung."""
    check(level)
    named = level_of(selector)
    if named == level:
        return selector
    if named is not None:
        raise ValueError(f"{KNOB} {level} was set, but selector {selector!r} already names level {named}")
    if selector.endswith(":hard"):
        raise ValueError(
            f"{KNOB} {level} does not apply to {selector!r}: ':hard' names its own profile "
            f"(the top rung is {KNOB} {len(RUNGS)} on {selector.removesuffix(':hard')!r})"
        )
    if not selector.startswith(("train:", "eval:", "dev:")):
        raise ValueError(
            f"{KNOB} {level} does not apply to {selector!r}: levels apply to generated worlds "
            "('train:<n>', 'eval:<n>')"
        )
    return f"{selector}{SUFFIX}{level}"


def table() -> str:
    """The ladder as a markdown table."""
    return rung_table(RUNGS)


def surface(selectors: list[str]) -> str:
    """The tool surface of a taskset serving canonical `selectors` (one server serves them all).
    Raises ValueError naming the knob when rung-1 worlds are mixed with others."""
    surfaces = {prompt_surface(s) for s in selectors}
    if len(surfaces) > 1:
        raise ValueError(
            f"selectors mix rung 1 with other worlds; rung 1 is served its own tools, so serve it "
            f"alone ({KNOB} 1) or leave it out"
        )
    return surfaces.pop() if surfaces else "full"


def prompt_surface(selector: str) -> str:
    """The tool surface (and so the prompt) of one canonical selector's world."""
    level = level_of(selector)
    return RUNGS[level]["tools"] if level in RUNGS else "full"
