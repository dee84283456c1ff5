"""Difficulty ladders: a taskset's ``level`` knob as a named set of other knobs' values.

An environment declares its rungs as a table, rung 1 the easiest::

    RUNGS = {1: {"num_transactions": 4, "fault_codes": ["NO_TAX_INVOICE"]}, 2: {...}, ...}

declares the knob as a `Level` and applies the table in its config's after-validator::

    level: Level = None

    @model_validator(mode="after")
    def _level(self):
        return apply_level(self, RUNGS)

``level`` unset leaves every knob as given. A set level fills in its rung's knobs. A knob the
user set explicitly to another value than the rung's fails at load naming both, so no run is
silently a different rung than it says. A level outside the table fails naming ``level`` and
the range. A level is an integer only (`piv_core.tasksets.knobs.integer`): ``True``, ``2.0``, ``" 2"`` and
``"02"`` fail naming ``level``; the command line's ``--taskset.level 2`` is read as 2.

A curriculum samples from several rungs at once. ``levels = [1, 2, 3]`` makes the taskset a
finite mix: ``tasks_per_level`` tasks of each rung, interleaved (task i of every rung, then task
i + 1), each the very task its rung alone serves under the same seed and split (`rung_configs`,
`interleaved`). An infinite taskset becomes finite while ``levels`` is set (`FiniteWhenMixed`), so
a trainer that materialises finite tasksets (prime-rl's difficulty pools) can take it. Each task's
``Task.key`` is its content hash without the position verifiers gives it (`DurableKey`), so a task
keeps its key in every mix, in every process, and under every version that does not change it.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ValidationError

from piv_core.tasksets.knobs import at_least, at_most, integer

Rungs = Mapping[int, Mapping[str, Any]]
C = TypeVar("C", bound=BaseModel)
Level = Annotated[int | None, integer()]
"""The ``level`` knob: a rung number (an integer, never a bool or other text), or None for none."""
Levels = list[Annotated[int, integer()]] | None
"""The ``levels`` knob: the rungs a finite mix serves, or None for no mix."""
MOST_PER_LEVEL = 10_000
TasksPerLevel = Annotated[
    int, integer(), at_least(1), at_most(MOST_PER_LEVEL, "a trainer holds the whole mix")
]
"""The ``tasks_per_level`` knob: how many tasks of each rung a mix serves."""
T = TypeVar("T")


class MixKnobs(BaseModel):
    """The knobs of a finite mix of rungs, for a taskset config to inherit beside ``level``."""

    levels: Levels = None
    """Serve a finite mix of these rungs instead of one (e.g. ``[1, 2, 3]``): ``tasks_per_level``
    tasks of each, interleaved, each the task its rung alone serves and scored as it scores
    (`piv_core.tasksets.ladder`). Excludes ``level``; the knobs given are those of every rung."""
    tasks_per_level: TasksPerLevel = 100
    """With ``levels``: how many tasks of each rung the mix serves."""


def check_rungs(rungs: Rungs) -> None:
    """Rungs are numbered 1..N without gaps (raised at import, where a table is declared)."""
    if sorted(rungs) != list(range(1, len(rungs) + 1)):
        raise ValueError(f"rungs must be numbered 1..{len(rungs)}, got {sorted(rungs)}")


def apply_level(config: C, rungs: Rungs, knob: str = "level") -> C:
    """`config` with its rung's knob values filled in (unchanged when ``level`` is None)."""
    level = getattr(config, knob)
    if level is None:
        return config
    if isinstance(level, bool) or not isinstance(level, int) or level not in rungs:
        raise ValueError(f"{knob} must be between 1 and {len(rungs)}, got {level}")
    for name, value in rungs[level].items():
        if name not in type(config).model_fields:
            raise ValueError(f"{knob} {level} sets unknown knob {name!r}")
        given = getattr(config, name)
        if name in config.model_fields_set and given != value:
            raise ValueError(
                f"{knob} {level} sets {name} to {value!r}, but {name} was given as {given!r}: "
                f"leave {name} unset, or leave {knob} unset"
            )
        object.__setattr__(config, name, value)
    return config


def check_levels(config: BaseModel, rungs: Rungs) -> None:
    """Refuse a bad mix, naming the knob: ``levels`` empty, repeated, outside the table or given
    with ``level``; ``tasks_per_level`` given without ``levels``."""
    levels = config.levels
    if levels is None:
        default = type(config).model_fields["tasks_per_level"].default  # what a re-read dump carries
        if config.tasks_per_level != default:
            raise ValueError(
                "tasks_per_level was given without levels: name the rungs to mix, or leave it unset"
            )
        return
    if config.level is not None:
        raise ValueError("levels and level were both given: a mix names its rungs in levels alone")
    if not levels or len(set(levels)) != len(levels):
        raise ValueError(f"levels must be a non-empty list of distinct rungs, got {levels}")
    if outside := [level for level in levels if level not in rungs]:
        raise ValueError(f"levels must be between 1 and {len(rungs)}, got {outside[0]}")
    for level in levels:  # a knob given that disagrees with a rung fails now, naming both
        try:
            rung_configs(config, [level])
        except ValidationError as error:
            reason = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
            raise ValueError(f"levels {level}: {reason}") from None


def rung_configs(config: C, levels: list[int] | None = None) -> list[C]:
    """The single-rung configs of `config`'s mix (or of `levels`), in order: the knobs `config`
    was given other than at their defaults, at each rung (a given knob that disagrees with a rung
    fails there, naming it). A knob at its default counts as not given, so a mix's config read back
    from its own dump (every knob present) makes the same rungs."""
    fields = type(config).model_fields
    given = {
        name: value
        for name in config.model_fields_set - {"levels", "tasks_per_level"}
        if (value := getattr(config, name)) != fields[name].get_default(call_default_factory=True)
    }
    chosen = config.levels if levels is None else levels
    return [type(config).model_validate({**given, "level": level}) for level in chosen]


def served(config: BaseModel, make: Callable[[Any, int], T], count: int | None = None) -> Iterator[T]:
    """What a taskset of `config` serves: its mix (`interleaved`) when ``levels`` is set, else
    `make(config, i)` for i below `count` (without end when `count` is None)."""
    if config.levels is not None:
        return interleaved(config, make)
    indices = itertools.count() if count is None else range(count)
    return (make(config, idx) for idx in indices)


def interleaved(config: BaseModel, make: Callable[[Any, int], T]) -> Iterator[T]:
    """`make(rung_config, i)` for i below ``tasks_per_level``, every rung of the mix at each i."""
    configs = rung_configs(config)
    for idx in range(config.tasks_per_level):
        for rung in configs:
            yield make(rung, idx)


class FiniteWhenMixed:
    """The mixin of an infinite taskset (``INFINITE = True``) that is finite while its config's
    ``levels`` is set: the instance is then of a subclass with ``INFINITE = False``, which is
    what a trainer reads (`type(taskset).INFINITE`) to decide whether it may list the tasks."""

    def __new__(cls, config: Any = None, *args: Any, **kwargs: Any):
        if getattr(config, "levels", None) is not None and cls.INFINITE:  # type: ignore[attr-defined]
            cls = _finite(cls)
        return super().__new__(cls)


@functools.cache
def _finite(cls: type) -> type:
    return type(
        cls.__name__, (cls,), {"INFINITE": False, "__module__": cls.__module__, "__doc__": cls.__doc__}
    )


class DurableKey:
    """The mixin of a task whose ``key`` is the sha256 of its data as JSON without ``idx``, the
    position verifiers sets while iterating: unique while the data are (they carry the task's id),
    and the same in every mix and process."""

    @property
    def key(self) -> str:
        data = self.data.model_dump(mode="json", exclude_none=True, exclude={"idx"})  # type: ignore[attr-defined]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def rung_table(rungs: Rungs) -> str:
    """The ladder as a markdown table (one row per rung, one column per knob any rung sets)."""
    knobs = list(dict.fromkeys(k for rung in rungs.values() for k in rung))
    lines = ["| level | " + " | ".join(f"`{k}`" for k in knobs) + " |", "|---" * (len(knobs) + 1) + "|"]
    for level in sorted(rungs):
        cells = [_cell(rungs[level].get(k, "—")) for k in knobs]
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)
