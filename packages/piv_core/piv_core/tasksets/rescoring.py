"""Re-scoring saved runs with verifiers' ``vf-replay``: the rules each trace was scored under, and
the run's own scoring knobs kept under the ones a replay changes.

``vf-replay <run> [--taskset.task.<knob> V]`` layers the run's saved config
(``configs/resolved/eval.json``) under its command line and re-scores every saved trace with
``task_type(config.taskset.id)(row, config.taskset.task)``. The saved eval config keeps its taskset
under ``env.taskset``; verifiers' `ReplayConfig` lifts that block onto its own root ``taskset`` only
when the merged config has no root ``taskset`` at all (``_resolve_taskset``, verifiers 0.3.1 and
0.4.0 alike). Any ``--taskset.*`` flag makes one, so the lift is skipped: the replay's taskset is
the flag alone, its ``id`` the empty default, and resolving it imports the module ``""``
(``ValueError: Empty module name``); the run's other taskset and task knobs are dropped with it.
Nothing of verifiers is patched here; the environments meet it on their side:

- `TasksetConfig`: an environment's taskset config whose ``id`` is left empty names the environment
  itself (the module the id resolves to), so the replay resolves the environment's own Task;
- `Rescorable`: the Task records on every trace it scores, in ``trace.info["scored_under"]``,
  the environment, its package version, the contract versions its scorer declares
  (`Rescorable.scoring_rules`) and the value of every scoring knob it scored under; and it scores
  under `merged_config`: each knob given on the command line wins, then what the task's own data
  state (a rung's scoring, in a mix of rungs), then what the run being re-scored recorded, then
  the config. So ``vf-replay <run>`` re-scores under the run's own rules, and
  ``--taskset.task.<knob> V`` changes that knob and keeps every other knob the run had. A config
  read back whole (the saved one a replay lifts, or a served one) counts as given no knob.

Only the task config reaches a replay's scoring: a load-time knob (``--taskset.<knob>``: what a
prompt states, such as geo's tolerances or the tax environments' ``figure_credit``) is stored in
each saved task and is not re-read. The knobs a replay may change are therefore `TaskConfig`
fields; where a load-time knob decides scoring, its environment offers a task knob that overrides
it for scoring alone (``task.figure_credit``, ``task.tolerance_scale``, ``task.scorer_contract``).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import model_validator

SCORED_UNDER = "scored_under"
"""The ``trace.info`` key of the rules a trace was last scored under."""


def environment_id(cls: type) -> str:
    """The environment id of the package that defines `cls`: its top-level module with ``_`` read
    as ``-`` (verifiers resolves an id to its module by the reverse)."""
    return cls.__module__.split(".", 1)[0].replace("_", "-")


@cache
def package_version(distribution: str) -> str | None:
    """The installed version of `distribution` (None when it is not installed as a distribution)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


class TasksetConfig(vf.TasksetConfig):
    """verifiers' taskset config whose empty ``id`` names the environment that subclasses it."""

    @model_validator(mode="before")
    @classmethod
    def _own_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("id"):
            return {**data, "id": environment_id(cls)}
        return data


def scoring_knobs(config_type: type[vf.TaskConfig]) -> list[str]:
    """The fields `config_type` adds to verifiers' `TaskConfig`: the environment's scoring knobs."""
    return [name for name in config_type.model_fields if name not in vf.TaskConfig.model_fields]


def given_knobs(config: vf.TaskConfig) -> set[str]:
    """The scoring knobs `config` was given one by one (flags such as ``--taskset.task.graded``).
    A config read back whole (a saved or served one: verifiers' own task fields are set too) was
    given none of them."""
    if set(vf.TaskConfig.model_fields) <= config.model_fields_set:
        return set()
    return set(scoring_knobs(type(config))) & config.model_fields_set


def merged_config(
    config: vf.TaskConfig, recorded: Any, stated: dict[str, Any] | None = None
) -> vf.TaskConfig:
    """The task config a trace is scored under, each scoring knob from the first of: the knobs
    `config` was given one by one (`given_knobs`), the knobs the task's own data state (`stated`,
    such as a rung's scoring in a mix of rungs), the knobs recorded by the run the trace comes from
    (`recorded`, a ``scored_under`` record), and `config` itself."""
    knobs = scoring_knobs(type(config))
    saved = recorded.get("task") if isinstance(recorded, dict) else None
    layers = [saved if isinstance(saved, dict) else {}, stated or {}]
    given = given_knobs(config)
    current = config.model_dump(mode="json", include=set(knobs))
    kept = {
        name: value
        for layer in layers
        for name, value in layer.items()
        if name in knobs and name not in given
    }
    if all(current.get(name) == value for name, value in kept.items()):
        return config  # nothing differs: the common case, each time a hook of a fresh run asks
    given = {name: current[name] for name in given}
    try:
        merged = type(config).model_validate({**current, **kept, **given})
    except ValueError as error:
        raise ValueError(f"the run's scoring knobs {kept} with the ones given {given}: {error}") from None
    return config.model_copy(update={name: getattr(merged, name) for name in knobs})


class Rescorable:
    """The mixin of a Task that a saved run can be re-scored under (module docstring). Its scoring
    hooks read their knobs from ``self.scoring_config(trace)``, never from ``self.config``."""

    config: vf.TaskConfig

    def scoring_config(self, trace: vf.Trace) -> Any:
        """The task config this trace is scored under (`merged_config`)."""
        return merged_config(self.config, trace.info.get(SCORED_UNDER), self.stated_knobs())

    def stated_knobs(self) -> dict[str, Any]:
        """The scoring knobs the task's own data state (none by default)."""
        return {}

    def scoring_rules(self, config: Any) -> dict[str, Any]:
        """The contract versions the scorer declares under `config` (none by default)."""
        return {}

    def scored_under(self, config: Any) -> dict[str, Any]:
        """What ``trace.info["scored_under"]`` records for scoring under `config`."""
        env_id = environment_id(type(self))
        return {
            "environment": env_id,
            "version": package_version(env_id),
            **self.scoring_rules(config),
            "task": config.model_dump(mode="json", include=set(scoring_knobs(type(config)))),
        }

    async def score(self, trace: vf.Trace, runtime: vf.Runtime | None = None) -> None:
        trace.info[SCORED_UNDER] = self.scored_under(self.scoring_config(trace))
        await super().score(trace, runtime)  # type: ignore[misc]


FigureCredit = Literal["all_or_nothing", "partial"]


class FigureCreditConfig(vf.TaskConfig):
    """The tax environments' task knobs (``--env.taskset.task.*``; ``--taskset.task.*`` in vf-replay)."""

    figure_credit: FigureCredit | None = None
    """Scoring only: grade the figures under this credit, whatever the task's prompt states
    (``all_or_nothing`` or ``partial``); unset (the default), as the prompt states. For re-scoring
    a run (``vf-replay <run> --taskset.task.figure-credit partial``); the taskset's own
    ``figure_credit`` is what a prompt states and is left as it is."""


class Credited(Rescorable):
    """A tax environment's Task: its figures graded under the credit its prompt states, or under the
    task knob ``figure_credit`` when that is set."""

    def stated_credit(self) -> str:
        """The credit the task's prompt states."""
        raise NotImplementedError

    def partial(self, trace: vf.Trace) -> bool:
        """Whether the figures of `trace` are graded with partial credit."""
        return (self.scoring_config(trace).figure_credit or self.stated_credit()) == "partial"

    def scoring_rules(self, config: Any) -> dict[str, Any]:
        return {"figure_credit": config.figure_credit or self.stated_credit()}
