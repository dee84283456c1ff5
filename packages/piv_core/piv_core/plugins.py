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

The registry holds only what it has loaded and checked. Loading an environment runs its
distribution's code, so a registration is refused, with one line naming its distribution (and the
other claimant's, for a contest), and the other environments go on working, when:

- importing or reading it raises anything at all (`SystemExit` and `KeyboardInterrupt` included),
  or does not finish within `LOAD_TIMEOUT_S` (it is loaded in a daemon thread, left behind, after
  `SHARED_IMPORTS` are imported in the calling thread);
- its object does not meet `EnvironmentPlugin`;
- two distributions claim its id: both are refused, never the first one found kept (one
  distribution seen twice on the path, same name and same entry point, registers once);
- it must share an endpoint (`load_all` with more than one environment registered, `load_served`
  with several ids) and has no mark, or its mark overlaps another's (`marks_overlap`): both of such
  a pair are refused.

A command about some environments loads those and no other (``eval`` the one it evaluates,
``signal`` and the run report the ones they name), so nothing else installed can stop it; only a
command that serves every environment at once (``piv-baseline`` with no ``--env``) loads them all.

What is loaded is a `Registration` copied from the object, so nothing the plugin's code does later
changes which environment a request reaches.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import operator
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol, TypeVar, runtime_checkable

from piv_core.policy import SOLVER_NAMES, NoisyPolicy, Policy

ENTRY_POINT_GROUP = "piv.environments"

LOAD_TIMEOUT_S = 60.0
"""The longest one environment's registration may take to import and read before it is refused: a
bound on a registration that hangs, wide enough for a legitimate one's own imports (pyproj,
beancount) on a machine whose cores are all busy."""
SHARED_IMPORTS = ("verifiers.v1",)
"""What every environment's registration imports, imported in the calling thread before any
registration is loaded: its cost is not the registration's, and a registration left behind by the
timeout can never be half-way through importing it when the command imports it too."""

SHOWN_CHARS = 80
"""How much of a plugin-supplied text (a mark, an error message) a refusal line quotes."""

AnswerView = Callable[[dict[str, Any]], str | None]
"""Renders one trace's answer beside its key as HTML (None when the trace is not one it knows)."""


@runtime_checkable
class EnvironmentPlugin(Protocol):
    """What an environment registers.

    - `id`: its environment id, the entry point's name.
    - `policies`: its scripted policies by name, including a solver (``oracle`` or ``reference``).
    - `mark`: the text every one of its system prompts starts with, so that one endpoint can tell
      its requests from other environments' (None: it can only be served alone). The rule is exact:
      a request carries the mark when the text of its first system (or developer) message, or of
      its first user message where a harness folds the system prompt into it, starts with the mark
      (`carries`). A request that carries the marks of two served environments, or of none, is
      refused, never routed by guess; and since a text that starts with a longer mark starts with
      every prefix of it too, two environments whose marks overlap (one starts with the other,
      equal included: `marks_overlap`) are never served together.
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


def carries(text: str, mark: str) -> bool:
    """Whether a request's system prompt `text` carries `mark`: it starts with it, exactly."""
    return text.startswith(mark)


def marks_overlap(a: str, b: str) -> bool:
    """Whether some text carries both marks (`carries`): one starts with the other."""
    return a.startswith(b) or b.startswith(a)


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


class Refused(RuntimeError):
    """A registration the registry will not load; the message is one line naming its distribution."""


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` on one line, cut to `limit` characters: how a refusal quotes what a plugin supplied."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ----------------------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class Claim:
    """One distribution's entry point claiming an environment id."""

    env_id: str
    distribution: str
    value: str
    entry: importlib.metadata.EntryPoint = field(compare=False)

    def __str__(self) -> str:
        return f"distribution {self.distribution!r} ({shown(self.value)})"


def _distribution(entry: importlib.metadata.EntryPoint) -> str:
    try:
        name = entry.dist.name if entry.dist is not None else None
    except Exception:  # unreadable metadata names no one
        name = None
    return shown(name) if isinstance(name, str) and name.strip() else "an unnamed distribution"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def claims() -> dict[str, list[Claim]]:
    """Every claim in the group, by environment id (read from metadata; nothing is imported). Every
    distribution on the path is read, same-named ones too, so a second claimant is never hidden;
    one distribution seen twice (the same name, the same entry point) claims once. A distribution
    whose entry points cannot be read claims nothing."""
    found: dict[str, list[Claim]] = {}
    for dist in importlib.metadata.distributions():
        try:
            entries = list(dist.entry_points.select(group=ENTRY_POINT_GROUP))
        except Exception:  # malformed metadata registers nothing and breaks nothing
            continue
        for entry in entries:
            claim = Claim(entry.name, _distribution(entry), entry.value, entry)
            held = found.setdefault(entry.name, [])
            if not any(
                _canonical(c.distribution) == _canonical(claim.distribution) and c.value == claim.value
                for c in held
            ):
                held.append(claim)
    return found


def environment_ids() -> list[str]:
    """The ids of every registered environment (read from metadata; nothing is imported)."""
    return sorted(claims())


def _claim_of(env_id: str, registered: Mapping[str, list[Claim]]) -> Claim:
    """The one claim on `env_id`; NotRegistered when there is none, Refused when it is contested."""
    held = registered.get(env_id)
    if not held:
        known = ", ".join(sorted(registered)) or "none"
        raise NotRegistered(
            f"{env_id!r} is not registered in the {ENTRY_POINT_GROUP!r} entry-point group "
            f"(registered: {known}); an environment declares itself there in its pyproject.toml"
        )
    if len(held) > 1:
        raise Refused(
            f"refused {env_id}: claimed by {' and by '.join(str(c) for c in held)}; neither is loaded "
            "until all but one are uninstalled"
        )
    return held[0]


# ---------------------------------------------------------------------------------------- loading

T = TypeVar("T")


def _described(exc: BaseException) -> str:
    try:
        return shown(f"{type(exc).__name__}: {exc}")
    except BaseException:  # a message that cannot be shown is still a refusal
        return f"{type(exc).__name__} (its message cannot be shown)"


def _bounded(work: Callable[[], T], timeout: float, name: str) -> T | str:
    """`work()` run in a daemon thread for at most `timeout` seconds: its value, or one line saying
    what it raised (anything at all) or that it did not finish."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # SystemExit, KeyboardInterrupt...: still its refusal
            box["error"] = f"raised {_described(exc)}"

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return f"did not finish loading within {timeout:g} s"
    if "error" in box:
        return box["error"]
    return box["value"]


def _snapshot(plugin: Any, env_id: str) -> Registration | list[str]:
    """`plugin` copied into a `Registration`, each field read once and every text, number and
    mapping copied to its plain type; or what keeps it from meeting `EnvironmentPlugin`."""
    fields = list(EnvironmentPlugin.__annotations__)
    missing = [n for n in fields if not hasattr(plugin, n)]
    if missing:
        return [f"it lacks {', '.join(missing)}"]
    read = {n: getattr(plugin, n) for n in fields}
    problems = []
    ident = _text(read["id"])
    if ident != env_id:
        problems.append(f"its id is {shown(repr(read['id']))}, not the entry point's name")
    items = list(read["policies"].items()) if isinstance(read["policies"], Mapping) else None
    policies = {_text(k): v for k, v in items or ()}
    if items is None or None in policies or not all(map(callable, policies.values())):
        problems.append("policies is not a mapping of names to callables")
    mark = _text(read["mark"])
    if read["mark"] is not None and not (mark and mark.strip()):
        problems.append("mark is neither None nor a non-blank text")
    for name in ("noisy", "answer_view"):
        if read[name] is not None and not callable(read[name]):
            problems.append(f"{name} is not callable")
    naive = _text(read["naive"])
    if read["naive"] is not None and naive not in policies:
        problems.append(f"its naive policy {shown(repr(read['naive']))} is not one of its policies")
    listed = _items(read["levels"])
    levels = None if listed is None else [_whole(v) for v in listed]
    if levels is None or not all(v is not None and v > 0 for v in levels):
        problems.append("levels are not positive integers")
    listed = _items(read["skill_prefixes"])
    prefixes = None if listed is None else [_text(p) for p in listed]
    if prefixes is None or not all(prefixes):
        problems.append("skill_prefixes are not non-empty texts")
    if problems:
        return problems
    return Registration(
        id=env_id,  # its own id, checked equal above
        policies=policies,  # type: ignore[arg-type]  # no None key once no problem is found
        mark=mark,
        noisy=read["noisy"],
        naive=naive,
        levels=tuple(v for v in levels or () if v is not None),
        answer_view=read["answer_view"],
        skill_prefixes=tuple(p for p in prefixes or () if p),
    )


def _text(value: Any) -> str | None:
    """`value` as a plain `str` when it is a text (a subclass's overrides dropped), else None."""
    return str.__str__(value) if isinstance(value, str) else None


def _whole(value: Any) -> int | None:
    """`value` as a plain `int` when it is an integer and not a bool, else None."""
    return operator.index(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _items(value: Any) -> list[Any] | None:
    """`value`'s items when it is a sequence and not a text, else None."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str | bytes) else None


def _import_shared() -> None:
    for name in SHARED_IMPORTS:
        importlib.import_module(name)


def _load_claim(claim: Claim, timeout: float) -> Registration:
    _import_shared()

    def work() -> Registration | list[str]:
        return _snapshot(claim.entry.load(), claim.env_id)

    loaded = _bounded(work, timeout, f"piv-load-{claim.env_id}")
    if isinstance(loaded, str):
        raise Refused(f"refused {claim.env_id} from {claim}: its registration {loaded}")
    if isinstance(loaded, list):
        raise Refused(f"refused {claim.env_id} from {claim}: it is no EnvironmentPlugin: {'; '.join(loaded)}")
    return loaded


def load(env_id: str, timeout: float | None = None) -> Registration:
    """The registration of `env_id`, loaded in at most `timeout` seconds (`LOAD_TIMEOUT_S`):
    NotRegistered when no entry point has that name, Refused (one line naming the distribution
    and why) when it is contested, raises, hangs or does not meet `EnvironmentPlugin`."""
    claim = _claim_of(env_id, claims())
    return _load_claim(claim, LOAD_TIMEOUT_S if timeout is None else timeout)


def _together(
    loaded: dict[str, tuple[Registration, Claim]], shared: bool
) -> tuple[dict[str, Registration], list[str]]:
    """The environments of `loaded` that can share one endpoint, and a line for each refusal: when
    the endpoint is `shared` (it answers for more than one registered environment), each needs a
    mark, and two whose marks overlap are both left out."""
    if not shared:
        return {env_id: r for env_id, (r, _) in loaded.items()}, []
    refusals = [
        f"refused {env_id} from {claim}: it has no mark, so it can be served alone (eval {env_id}, "
        f"piv-baseline --env {env_id}) but not on an endpoint that tells environments apart"
        for env_id, (r, claim) in sorted(loaded.items())
        if r.mark is None
    ]
    marked = {env_id: pair for env_id, pair in loaded.items() if pair[0].mark is not None}
    contested: set[str] = set()
    for a, b in combinations(sorted(marked), 2):
        (ra, ca), (rb, cb) = marked[a], marked[b]
        if marks_overlap(ra.mark or "", rb.mark or ""):
            longer = max(ra.mark or "", rb.mark or "", key=len)
            refusals.append(
                f"refused {a} from {ca} and {b} from {cb}: their marks overlap (a system prompt "
                f"starting {shown(longer)!r} carries both), so neither is served beside the other"
            )
            contested |= {a, b}
    return {env_id: r for env_id, (r, _) in marked.items() if env_id not in contested}, refusals


def _load_many(
    env_ids: Iterable[str], timeout: float | None, strict: bool, shared: bool
) -> dict[str, Registration]:
    registered = claims()
    wait = LOAD_TIMEOUT_S if timeout is None else timeout
    loaded: dict[str, tuple[Registration, Claim]] = {}
    for env_id in env_ids:
        try:
            claim = _claim_of(env_id, registered)
            loaded[env_id] = (_load_claim(claim, wait), claim)
        except (NotRegistered, Refused) as exc:
            if strict:
                raise
            print(f"piv: {exc}", file=sys.stderr)
    kept, refusals = _together(loaded, shared)
    if refusals and strict:
        raise Refused("; ".join(refusals))
    for line in refusals:
        print(f"piv: {line}", file=sys.stderr)
    return kept


def load_all(timeout: float | None = None) -> dict[str, Registration]:
    """Every registered environment that loads and can share one endpoint with the others, by id
    (with more than one registered, each needs a mark that overlaps no other's). One that is refused
    is reported on stderr (one line naming its distribution) and left out, so one broken or hostile
    install never takes the others down. For a command that serves every environment at once
    (``piv-baseline`` with no ``--env``); a command about some environments loads only those
    (`load`, `load_served`)."""
    ids = environment_ids()
    return _load_many(ids, timeout, strict=False, shared=len(ids) > 1)


def load_served(env_ids: Iterable[str], timeout: float | None = None) -> dict[str, Registration]:
    """The environments `env_ids` names, loaded to share one endpoint (alone, one needs no mark):
    NotRegistered or Refused, naming the distribution(s), for the first that cannot be served."""
    ids = list(dict.fromkeys(env_ids))
    return _load_many(ids, timeout, strict=True, shared=len(ids) > 1)


def find(env_id: str, timeout: float | None = None) -> Registration | None:
    """`load(env_id)`, or None when it is not registered or is refused (reported on stderr)."""
    try:
        return load(env_id, timeout)
    except NotRegistered:
        return None
    except Refused as exc:  # a report or table goes on without that environment's extras
        print(f"piv: {exc}", file=sys.stderr)
        return None
