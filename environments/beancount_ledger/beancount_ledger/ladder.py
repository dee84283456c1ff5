"""The difficulty ladder: the taskset's ``level`` knob as a world profile and a prompt, rung 1 the easiest.

A level is applied on top of the selectors: ``selectors=["train:0-99"], level=1`` serves the worlds
``train:0:level1`` .. ``train:99:level1``, each keyed by its own selector (so a rung never serves
another rung's world, nor the unlevelled one) and drawn from its split's years. Each rung changes one
thing from the rung below:
- rungs 1 to 5 are a short month with one line not booked, booked twice or booked at a wrong amount
  and nothing else irregular on the statement (no prior-period cheque clearing), served the statement
  beside the ledger entries carrying each line's ref, a line booked at another amount marked so, with
  the account each line settles and the line to correct named (rung 1); without the name (rung 2);
  without the accounts (rung 3); without the mark, so that a line's amount is compared with its
  booking's (rung 4); and that view with rung 6's tools and prompt, book_correction in place of
  correct_bank_line (rung 5);
- rungs 6 to 11 are a short month with a single discrepancy of the five standard kinds, drawn per
  world, served rung 5's tools and prompt: the plain view alone (rung 6), the ledger and the statement
  quoted above it (rung 7), the prior-period archive quoted too (rung 8), the policy too (rung 9), the
  four files quoted without it (rung 10), and nothing but the task, the files read with read_file
  (rung 11);
- rung 12 is rung 11 for a short month with three discrepancies; rung 13 the same month with the six
  tools and the common prompt (the whole ledger written back); rung 14 the standard month (all five
  standard kinds); rung 15 the hard month (eight kinds and decoys).
Rungs 14 and 15 keep the seed's score; rungs 1 to 13 (`world.Profile.located_credit`) also credit a
discrepancy located and each account it put wrong set right, and their policy says so (`scorer`), so
that the books left alone score 0 and a partial correction more. The shipped world and the ``:hard``
selectors name their own profile and take no level.

Rungs 5 to 12 are served their own tool surface (`tools.SURFACES["append"]`: read_file,
run_beancount, write_ledger, book_correction, which appends one correcting transaction from a
statement line's ref, an amount and two accounts, dated from the statement and checked as a whole:
`correction`, and submit), rungs 1 to 4 the same with correct_bank_line in place of book_correction
(`tools.SURFACES["bank"]`: the ref, the amount the correction adds to the operating bank account and
the account opposite it, the shape of every correction those rungs ask for); one server serves one
surface, so a taskset serves rungs of one surface only. Rungs 1 to 12 have their own prompts
(`contract.PROMPTS`, the view's options by prompt in `contract.VIEWS`): the user messages of rungs 1
to 9 show the view (`statement_view`), rung 7's quotes the ledger and the statement as given, rung 8's
the archive too, rung 9's and rung 10's the policy too (`contract.QUOTES`). Every other world is served
the six tools and the common prompt.
"""

from __future__ import annotations

from piv_core.tasksets.knobs import WHOLE
from piv_core.tasksets.ladder import check_rungs, rung_table

from beancount_ledger import world

RUNGS = {
    1: {"profile": world.PROFILES["flagged"].name, "tools": "bank", "prompt": "named"},
    2: {"profile": world.PROFILES["flagged"].name, "tools": "bank", "prompt": "settled"},
    3: {"profile": world.PROFILES["flagged"].name, "tools": "bank", "prompt": "flagged"},
    4: {"profile": world.PROFILES["flagged"].name, "tools": "bank", "prompt": "unmarked"},
    5: {"profile": world.PROFILES["flagged"].name, "tools": "append", "prompt": "append"},
    6: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "append"},
    7: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "pair"},
    8: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "archive"},
    9: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "quoted"},
    10: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "files"},
    11: {"profile": world.PROFILES["single"].name, "tools": "append", "prompt": "read"},
    12: {"profile": world.PROFILES["three"].name, "tools": "append", "prompt": "three"},
    13: {"profile": world.PROFILES["three"].name, "tools": "full", "prompt": "full"},
    14: {"profile": world.STANDARD.name, "tools": "full", "prompt": "full"},
    15: {"profile": world.HARD.name, "tools": "full", "prompt": "full"},
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
    Raises ValueError naming the knob when worlds served different tools are mixed."""
    surfaces = {tool_surface(s) for s in selectors}
    if len(surfaces) > 1:
        served = {name: [k for k, rung in RUNGS.items() if rung["tools"] == name] for name in surfaces}
        groups = "; ".join(
            f"{KNOB} {', '.join(map(str, served[name]))}" if name != "full" else "every other world"
            for name in sorted(surfaces, key=lambda name: (name == "full", served[name]))
        )
        raise ValueError(
            f"selectors mix worlds served different tools ({groups}); one server serves one set of "
            "tools, so serve each apart"
        )
    return surfaces.pop() if surfaces else "full"


def tool_surface(selector: str) -> str:
    """The tool surface of one canonical selector's world."""
    level = level_of(selector)
    return RUNGS[level]["tools"] if level in RUNGS else "full"


def prompt_of(selector: str) -> str:
    """The prompts (`contract.PROMPTS`) one canonical selector's world is served."""
    level = level_of(selector)
    return RUNGS[level]["prompt"] if level in RUNGS else "full"
