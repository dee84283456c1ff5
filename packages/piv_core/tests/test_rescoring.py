"""`piv_core.tasksets.rescoring`: what a scored trace records, and the knobs a re-scoring scores under
(the run's own, with the ones the re-scoring was given on top), on a toy task."""

from __future__ import annotations

import asyncio

import pytest
import verifiers.v1 as vf
from piv_core.tasksets.rescoring import SCORED_UNDER, Rescorable, TasksetConfig, environment_id, merged_config


class ToyConfig(vf.TaskConfig):
    strict: bool = False
    scale: float = 1.0


class ToyData(vf.TaskData):
    answer: float


class ToyTask(Rescorable, vf.Task[ToyData, vf.State, ToyConfig]):
    def scoring_rules(self, config: ToyConfig) -> dict[str, int]:
        return {"scorer": 3}

    @vf.reward(weight=1.0)
    async def right(self, trace: vf.Trace) -> float:
        config = self.scoring_config(trace)
        error = abs(float(trace.last_reply or "nan") - self.data.answer)
        return float(error == 0) if config.strict else float(error <= config.scale)


class ToyTasksetConfig(TasksetConfig):
    seed: int = 0


def _trace(task: ToyTask, reply: str) -> vf.Trace:
    trace = vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        state=vf.State(),
    )
    trace.nodes.append(vf.MessageNode(message=vf.AssistantMessage(content=reply), sampled=True))
    return trace


def _score(config: ToyConfig, trace: vf.Trace) -> float:
    trace.rewards, trace.metrics = {}, {}
    asyncio.run(ToyTask(ToyData(answer=10.0), config).score(trace))
    return float(trace.reward)


def test_a_scored_trace_records_the_environment_its_rules_and_every_scoring_knob():
    trace = _trace(ToyTask(ToyData(answer=10.0)), "10.5")
    assert _score(ToyConfig(strict=True), trace) == 0.0
    recorded = trace.info[SCORED_UNDER]
    assert recorded["environment"] == environment_id(ToyTask) and "version" in recorded
    assert recorded["scorer"] == 3 and recorded["task"] == {"strict": True, "scale": 1.0}


def test_a_rescoring_given_one_knob_keeps_the_runs_other_knobs():
    trace = _trace(ToyTask(ToyData(answer=10.0)), "11.5")
    assert _score(ToyConfig(strict=False, scale=2.0), trace) == 1.0  # the run: loose, within 2
    # What vf-replay builds from `--taskset.task.strict True` alone: one knob given.
    assert _score(ToyConfig.model_validate({"strict": True}), trace) == 0.0
    assert trace.info[SCORED_UNDER]["task"] == {"strict": True, "scale": 2.0}
    # Given `scale` only: the strict recorded by the last scoring is kept, and 11.5 fails it.
    assert _score(ToyConfig.model_validate({"scale": 5.0}), trace) == 0.0
    # A config given every knob (a replay of the saved config as it is) scores under it alone.
    assert _score(ToyConfig.model_validate({"strict": False, "scale": 1.0}), trace) == 0.0
    assert _score(ToyConfig.model_validate({"strict": False, "scale": 2.0}), trace) == 1.0


def test_a_trace_without_a_record_scores_under_the_config_as_it_is():
    config = ToyConfig.model_validate({"scale": 3.0})
    assert merged_config(config, None) is config
    assert merged_config(config, {"task": "not a record"}) is config
    assert merged_config(config, {"task": {"strict": True, "unknown": 1}}).model_dump(
        include={"strict", "scale"}
    ) == {"strict": True, "scale": 3.0}


def test_recorded_knobs_that_do_not_validate_fail_naming_them():
    with pytest.raises(ValueError, match="scoring knobs"):
        merged_config(ToyConfig(), {"task": {"scale": "wide"}})


def test_an_empty_taskset_id_names_the_environment_that_defines_the_config():
    assert ToyTasksetConfig().id == environment_id(ToyTasksetConfig)
    assert ToyTasksetConfig.model_validate({"task": {}, "id": ""}).id == environment_id(ToyTasksetConfig)
    assert ToyTasksetConfig(id="owner/other@1").id == "owner/other@1"
    assert environment_id(vf.Task) == "verifiers"


def test_knobs_come_from_the_flags_then_the_task_then_the_run_then_the_config():
    recorded = {"task": {"strict": True, "scale": 2.0}}
    whole = ToyConfig.model_validate(ToyConfig(scale=9.0).model_dump())  # read back whole: no knob given
    assert merged_config(whole, recorded).model_dump(include={"strict", "scale"}) == {
        "strict": True,
        "scale": 2.0,
    }
    stated = {"scale": 4.0}  # what the task's own data state (a rung's scoring in a mix)
    assert merged_config(whole, recorded, stated).scale == 4.0
    assert merged_config(whole, None, stated).model_dump(include={"strict", "scale"}) == {
        "strict": False,
        "scale": 4.0,
    }
    flagged = ToyConfig.model_validate({"scale": 0.5})  # one knob given on the command line
    assert merged_config(flagged, recorded, stated).model_dump(include={"strict", "scale"}) == {
        "strict": True,
        "scale": 0.5,
    }
