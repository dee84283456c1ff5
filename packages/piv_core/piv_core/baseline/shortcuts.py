"""Shortcut search: the most a ledger-audit reward pays a policy that reads only surface features.

A shortcut policy answers each row from what the row shows at a glance, never from the per-row
arithmetic or the comparison the rules ask for: its treatment as the category table names it, its
type, whether its recorded figure is zero or has cents, whether the recorded figure repeats the
price's digits, its size against the ledger's median, its place in the ledger, and the like (an
environment's `Surface` says which). For each row it picks a `Move`: the figure to state (the
recorded one, zero, the recorded one cut or rounded to whole dollars, or one figure for every row
it is given: one of those the fitting sample's books state most often) and the flags (none, the
code its treatment can have, or every code). The labels are then worked out from those figures
the way the environment's `Surface.reply` says.

`search` does not try a fixed list of such policies: for every set of at most `depth` features it
builds a decision table (one move per combination of the features' values), fits each cell's move
to one sample of tasks by coordinate ascent on the real grader, and scores the fitted table on
another sample. Its result is the best of those held-out means: what an optimiser that has found
the best surface rule would earn on tasks it has not seen.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any, Protocol

_DOLLAR = Decimal(1)
_ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Glance:
    """One row as a shortcut sees it."""

    txn_id: str
    features: Mapping[str, Hashable]
    recorded: Decimal
    """The row's recorded figure (the books' tax column)."""
    own_codes: tuple[str, ...]
    """The codes a row of its treatment can carry at this rung (its "own" flag)."""


FIGURES: dict[str, Callable[[Decimal], Decimal]] = {
    "recorded": lambda recorded: recorded,
    "zero": lambda recorded: _ZERO,
    "dollars": lambda recorded: recorded.quantize(_DOLLAR, rounding=ROUND_DOWN).quantize(_ZERO),
    "rounded": lambda recorded: recorded.quantize(_DOLLAR, rounding=ROUND_HALF_UP).quantize(_ZERO),
}
FLAGS = ("none", "own", "all")


CONSTANT = "constant"
COMMON_FIGURES = 3
"""How many of the figures a sample's books state most often a search tries as a constant answer."""


@dataclass(frozen=True)
class Move:
    """What a shortcut does with one row: the figure it states (`FIGURES`, or `value` for every row
    where `figure` is `CONSTANT`) and its flags (`FLAGS`)."""

    figure: str = "recorded"
    flag: str = "none"
    value: Decimal | None = None

    def stated(self, recorded: Decimal) -> Decimal:
        """The figure this move states for a row whose books record `recorded`."""
        if self.figure == CONSTANT and self.value is not None:
            return self.value
        return FIGURES[self.figure](recorded)


MOVES = tuple(Move(figure, flag) for figure in FIGURES for flag in FLAGS)


def constant_moves(samples: Sequence[Sequence[Glance]], count: int = COMMON_FIGURES) -> tuple[Move, ...]:
    """A move for each flag and each of the `count` non-zero figures the rows of `samples` record
    most often: the guess "every row's figure is the usual one", fitted as any other move is."""
    seen = Counter(row.recorded for rows in samples for row in rows if row.recorded)
    return tuple(Move(CONSTANT, flag, value) for value, _ in seen.most_common(count) for flag in FLAGS)


class Surface(Protocol):
    """An environment's side of the search, for tasks of one configuration."""

    def glances(self, task: Any) -> list[Glance]:
        """The task's rows as a shortcut sees them."""

    def reply(self, task: Any, figures: Mapping[str, Decimal], flags: Mapping[str, Sequence[str]]) -> str:
        """A well-formed answer stating `figures` per row (where the task asks for them), the labels
        worked out from them, and `flags` as the fault map."""

    def reward(self, task: Any, reply: str) -> float:
        """The task's reward for `reply`, as the environment grades it."""


Table = dict[tuple[Hashable, ...], Move]


def _reply(surface: Surface, task: Any, rows: list[Glance], keys: list[tuple], table: Table) -> str:
    figures: dict[str, Decimal] = {}
    flags: dict[str, Sequence[str]] = {}
    every = sorted({code for row in rows for code in row.own_codes})
    for row, cell in zip(rows, keys):
        move = table.get(cell, Move())
        figures[row.txn_id] = move.stated(row.recorded)
        if move.flag == "own" and row.own_codes:
            flags[row.txn_id] = list(row.own_codes)
        elif move.flag == "all" and every:
            flags[row.txn_id] = every
    return surface.reply(task, figures, flags)


@dataclass(frozen=True)
class Found:
    """The best shortcut found: its held-out mean, the features it reads and its table."""

    mean: float
    features: tuple[str, ...]
    table: Mapping[tuple[Hashable, ...], Move]
    fitted: float
    """Its mean on the sample it was fitted to."""


def _fit(
    surface: Surface,
    tasks: list[tuple[Any, list[Glance]]],
    names: tuple[str, ...],
    passes: int,
    moves: Sequence[Move] = MOVES,
) -> Table:
    keys = [[tuple(row.features[n] for n in names) for row in rows] for _, rows in tasks]
    cells: dict[tuple, list[int]] = {}
    for i, task_keys in enumerate(keys):
        for cell in task_keys:
            cells.setdefault(cell, []).append(i)
    table: Table = dict.fromkeys(cells, Move())
    seen: list[dict[str, float]] = [{} for _ in tasks]  # many trials give a task the same reply

    def reward(i: int, trial: Table) -> float:
        reply = _reply(surface, *tasks[i], keys[i], trial)
        if reply not in seen[i]:
            seen[i][reply] = surface.reward(tasks[i][0], reply)
        return seen[i][reply]

    scores = [reward(i, table) for i in range(len(tasks))]
    for _ in range(passes):
        changed = False
        for cell, members in cells.items():
            members = sorted(set(members))
            best, best_gain, best_scores = table[cell], 0.0, None
            for move in moves:
                if move == table[cell]:
                    continue
                trial = {**table, cell: move}
                new = [reward(i, trial) for i in members]
                gain = sum(new) - sum(scores[i] for i in members)
                if gain > best_gain + 1e-12:
                    best, best_gain, best_scores = move, gain, new
            if best_scores is not None:
                table[cell] = best
                for i, score in zip(members, best_scores):
                    scores[i] = score
                changed = True
        if not changed:
            break
    return table


def held_out_mean(surface: Surface, tasks: Sequence[Any], names: tuple[str, ...], table: Table) -> float:
    """The mean reward of decision `table` over `names` on `tasks`."""
    total = 0.0
    for task in tasks:
        rows = surface.glances(task)
        keys = [tuple(row.features[n] for n in names) for row in rows]
        total += surface.reward(task, _reply(surface, task, rows, keys, table))
    return total / len(tasks)


def search(
    surface: Surface,
    fit: Sequence[Any],
    test: Sequence[Any],
    depth: int = 2,
    passes: int = 2,
) -> Found:
    """The best decision table over at most `depth` of the surface's features (the empty set, one
    move for every row, included), each fitted on `fit` and judged by its mean on `test`; a cell's
    move is one of `MOVES` or a constant figure common in `fit`'s books (`constant_moves`)."""
    fitted = [(task, surface.glances(task)) for task in fit]
    moves = MOVES + constant_moves([rows for _, rows in fitted])
    values: dict[str, set] = {}
    for _, rows in fitted:
        for row in rows:
            for name, value in row.features.items():
                values.setdefault(name, set()).add(value)
    names = sorted(name for name, seen in values.items() if len(seen) > 1)  # a constant feature tells nothing
    subsets = [chosen for size in range(depth + 1) for chosen in itertools.combinations(names, size)]
    judged = []
    for chosen in subsets:
        table = _fit(surface, fitted, chosen, passes, moves)
        judged.append((held_out_mean(surface, test, chosen, table), chosen, table))
    mean, chosen, table = max(judged, key=lambda entry: entry[0])  # the first of equals: the fewest features
    return Found(mean, chosen, table, held_out_mean(surface, fit, chosen, table))


def median_split(values: Sequence[Decimal]) -> Callable[[Decimal], bool]:
    """Whether a value is at or above the median of `values` (a size feature)."""
    ordered = sorted(values)
    middle = ordered[len(ordered) // 2] if ordered else _ZERO
    return lambda value: value >= middle


def point_moved(a: Decimal, b: Decimal) -> bool:
    """Whether `b` is `a` with its point moved one or two places left, to the cent (``44.00`` and
    ``4.40``, ``257.34`` and ``25.73``): read off the page without working anything out."""
    return any((a.scaleb(-k)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) == b for k in (1, 2))


def conversation_of(task: Any) -> Any:
    """The conversation a scripted policy reads for task data `task` (system prompt, then prompt)."""
    from piv_core.policy import Conversation

    return Conversation(
        [{"role": "system", "content": task.system_prompt}, {"role": "user", "content": task.prompt_text}], []
    )


def policy_mean(surface: Surface, tasks: Sequence[Any], policy: Callable[[Any], str]) -> float:
    """The mean reward of `policy` (a function of the conversation, as the baseline endpoint serves
    it) over `tasks`."""
    return sum(surface.reward(task, policy(conversation_of(task))) for task in tasks) / len(tasks)
