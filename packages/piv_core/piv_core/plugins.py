"""The one door between the core and the environments: the ``piv.environments`` entry-point group.

An environment package says what it offers in its distribution metadata::

    [project.entry-points."piv.environments"]
    my-env-v1 = "my_env_v1.plugin:PLUGIN"

The entry point's name is the environment id (the one verifiers resolves by import); the object
it names satisfies `EnvironmentPlugin`, most simply as a `Registration`. Everything in the core
that needs an environment reads it here and nowhere else: the baseline endpoint its policies and
the text that marks its requests, ``signal`` its ladder, naive policy and skill metrics, ``export``
the ids of the suite, the run report its answer view. The core imports no environment by name:
listing the ids imports nothing, and loading one imports only what its entry point names.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from piv_core.policy import SOLVER_NAMES, NoisyPolicy, Policy

ENTRY_POINT_GROUP = "piv.environments"

AnswerView = Callable[[dict[str, Any]], str | None]
"""Renders one trace's answer beside its key as HTML (None when the trace is not one it knows)."""


@runtime_checkable
class EnvironmentPlugin(Protocol):
    """What an environment registers.

    - `id`: its environment id, the entry point's name.
    - `policies`: its scripted policies by name, including a solver (``oracle`` or ``reference``).
    - `mark`: a text every one of its system prompts contains, so that one endpoint can tell its
      requests from other environments' (None: it can only be served alone).
    - `noisy`: its solver of graded skill, served as ``noisy-<p>`` (None: it has none).
    - `naive`: the name of its policy that answers well-formed by the obvious, wrong method.
    - `levels`: the rungs of its ``level`` knob, lowest first (empty: it has no ladder).
    - `answer_view`: how the run report shows a rollout's answer beside the key.
    - `skill_prefixes`: the prefixes of its per-skill metrics (``recall_``, ``pass_``, ...).
    """

    id: str
    policies: Mapping[str, Policy]
    mark: str | None
    noisy: NoisyPolicy | None
    naive: str | None
    levels: Sequence[int]
    answer_view: AnswerView | None
    skill_prefixes: Sequence[str]


@dataclass(frozen=True)
class Registration:
    """An `EnvironmentPlugin` as plain data."""

    id: str
    policies: Mapping[str, Policy]
    mark: str | None = None
    noisy: NoisyPolicy | None = None
    naive: str | None = None
    levels: Sequence[int] = ()
    answer_view: AnswerView | None = None
    skill_prefixes: Sequence[str] = field(default_factory=tuple)


def policy_of(plugin: EnvironmentPlugin, name: str) -> Policy | None:
    """`plugin`'s policy called `name`; either solver name reaches the solver it has."""
    if name in plugin.policies:
        return plugin.policies[name]
    if name in SOLVER_NAMES:
        return next((plugin.policies[n] for n in SOLVER_NAMES if n in plugin.policies), None)
    return None


def policy_names(plugin: EnvironmentPlugin) -> list[str]:
    """The policy names `plugin` serves, ``noisy-<p>`` standing for its graded-skill family."""
    return sorted(plugin.policies) + (["noisy-<p>"] if plugin.noisy else [])


class NotRegistered(LookupError):
    """An environment id with no entry point in the group."""


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry)  # a distribution seen twice on the path registers once
    return found


def environment_ids() -> list[str]:
    """The ids of every registered environment (read from metadata; nothing is imported)."""
    return sorted(_entry_points())


def _problems(plugin: Any, env_id: str) -> list[str]:
    """Why `plugin` does not meet `EnvironmentPlugin` (none: it does)."""
    if not isinstance(plugin, EnvironmentPlugin):
        missing = [n for n in EnvironmentPlugin.__annotations__ if not hasattr(plugin, n)]
        return [f"it lacks {', '.join(missing)}"]
    problems = []
    if plugin.id != env_id:
        problems.append(f"its id is {plugin.id!r}, not the entry point's name")
    if not isinstance(plugin.policies, Mapping) or not all(
        isinstance(k, str) and callable(v) for k, v in plugin.policies.items()
    ):
        problems.append("policies is not a mapping of names to callables")
    if plugin.mark is not None and not (isinstance(plugin.mark, str) and plugin.mark.strip()):
        problems.append("mark is neither None nor a non-empty text")
    for name in ("noisy", "answer_view"):
        if getattr(plugin, name) is not None and not callable(getattr(plugin, name)):
            problems.append(f"{name} is not callable")
    if plugin.naive is not None and plugin.naive not in plugin.policies:
        problems.append(f"its naive policy {plugin.naive!r} is not one of its policies")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in plugin.levels):
        problems.append("levels are not positive integers")
    if not all(isinstance(p, str) and p for p in plugin.skill_prefixes):
        problems.append("skill_prefixes are not non-empty texts")
    return problems


def load(env_id: str) -> EnvironmentPlugin:
    """The registration of `env_id`: NotRegistered when no entry point has that name, TypeError
    naming what is wrong when its object does not meet `EnvironmentPlugin`."""
    entries = _entry_points()
    entry = entries.get(env_id)
    if entry is None:
        known = ", ".join(sorted(entries)) or "none"
        raise NotRegistered(
            f"{env_id!r} is not registered in the {ENTRY_POINT_GROUP!r} entry-point group "
            f"(registered: {known}); an environment declares itself there in its pyproject.toml"
        )
    plugin = entry.load()
    problems = _problems(plugin, env_id)
    if problems:
        raise TypeError(f"{env_id} ({entry.value}) is no EnvironmentPlugin: {'; '.join(problems)}")
    return plugin


def load_all() -> dict[str, EnvironmentPlugin]:
    """Every registered environment that loads, by id. One that fails is reported on stderr and
    left out, so one broken install never takes the others down."""
    found: dict[str, EnvironmentPlugin] = {}
    for env_id in environment_ids():
        try:
            found[env_id] = load(env_id)
        except Exception as exc:  # reported, not fatal: the other environments still load
            print(f"piv: leaving out {env_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return found


def find(env_id: str) -> EnvironmentPlugin | None:
    """`load(env_id)`, or None when it is not registered or does not load (reported on stderr)."""
    if env_id not in _entry_points():
        return None
    try:
        return load(env_id)
    except Exception as exc:  # a report or table goes on without that environment's extras
        print(f"piv: {env_id} did not load: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
