"""beancount-ledger: multi-turn bank reconciliation on a Beancount ledger.

Task: a small trading company's month. Eight public files (the ledger with five planted
discrepancies, the bank statement, chart, counterparties, prior-period archive, policy,
manifest) are seeded into the rollout's state and written into its workspace; the model works
through six tools (rungs 1 to 12: five, with ``correct_bank_line`` or ``book_correction``; one server
per env worker, shared by its rollouts, serving each rollout's files from its state: `tools.py`)
and writes the corrected ledger.
Reward (`ledger`, weight 1): `scorer.score` of the latest ledger accepted by `write_ledger` (or by
the rung's appending tool), run in a sandbox worker off the event loop (`isolated.ascore`) and
computed once per trace for the reward and the metrics: parse-gated, 0.5 x balances hit + 0.5 x
discrepancies resolved - 0.1 per penalty; 0 when nothing was written, and 0 with ``scorer_error`` 1
when the worker failed on the ledger.
Metrics (`components`): the score's parts, the per-skill ``has_<kind>``, ``resolved_<kind>`` and
``balances_hit_share`` (`scorer.skill_metrics`), and the episode's tool use.
Knobs: ``selectors`` (list; default the shipped ``bank_recon_001``; keyed ``train:<n>``,
``eval:<n>``, ``train:<n>:hard`` and ranges such as ``eval:0-199``, see `keys.py`), ``level``
(a rung of the difficulty ladder applied to every selector, see `ladder.py`; unset: none) and
``manifest`` (the signed release manifest keyed selectors must be in, see `release.py`).
"""

import asyncio
import dataclasses
import datetime
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator
from functools import cached_property
from typing import Annotated, Literal

import verifiers.v1 as vf
from piv_core.runtime.confinement import refuse_host_commands
from piv_core.runtime.timeouts import rollout_seconds, with_rollout_timeout
from piv_core.tasksets.knobs import integer
from piv_core.tasksets.ladder import DurableKey, Level
from piv_core.tasksets.rescoring import Rescorable, TasksetConfig
from pydantic import field_validator, model_validator

from beancount_ledger import answer, contract, isolated, keys, ladder, release, world
from beancount_ledger.answer import Fix
from beancount_ledger.keys import SHIPPED, Refused
from beancount_ledger.release import public_id, task_digest
from beancount_ledger.render import LEDGER
from beancount_ledger.scorer import Score, score, skill_metrics
from beancount_ledger.statement_view import side_by_side
from beancount_ledger.tools import LedgerState, LedgerToolsConfig, LedgerToolset


class LedgerData(vf.TaskData):
    public_id: str
    """Derived from the eight public files alone (`public_id`)."""
    files: dict[str, str]
    """The eight public files, by name."""
    balances: dict[str, str]
    """Expected balance of every chart account at the period end."""
    fixes: list[Fix]
    """The planted discrepancies: kind, bank ref, date and net correcting postings."""
    period_end: str


class LedgerTaskConfig(vf.TaskConfig):
    scorer_contract: Annotated[Literal[5, 6] | None, integer()] = None
    """Scoring only: the scorer contract to score under; unset (the default), the current one
    (`contract.SCORER_CONTRACT`, 6). 5 is the score before the low rungs credited a located
    discrepancy: 0.5 x balances hit + 0.5 x resolved - 0.1 per penalty at every rung, whatever the
    world's policy states (for re-scoring a run: ``vf-replay <run> --taskset.task.scorer-contract 5``)."""


key_of = answer.key_of
golden_of = answer.golden_ledger
"""The key and the golden ledger of task data (`answer.key_of`, `answer.golden_ledger`)."""


class LedgerTask(Rescorable, DurableKey, vf.Task[LedgerData, LedgerState, LedgerTaskConfig]):
    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        """The eight files into the rollout's state, which the shared tools serve them from (before
        any tool server is reached), and into its workspace, for harnesses that read files. A
        harness that runs model-written commands is refused here on a host runtime
        (`piv_core.runtime.confinement`)."""
        refuse_host_commands(trace, runtime)
        trace.state.files = dict(self.data.files)
        for name, text in self.data.files.items():
            await runtime.write(name, text.encode())

    @vf.stop
    async def submitted(self, trace: vf.Trace) -> bool:
        return bool(getattr(trace.state, "submitted", False))

    @vf.stop
    async def turn_limit(self, response: vf.Response, trace: vf.Trace) -> bool:
        """The last turn's reply is recorded, but its tool calls are never executed."""
        return trace.num_turns + 1 >= contract.MAX_TURNS

    @vf.stop
    async def token_ceiling(self, response: vf.Response, trace: vf.Trace) -> bool:
        spent = response.usage.completion_tokens if response.usage else 0
        return trace.num_output_tokens + spent >= contract.TOKEN_CEILING

    @vf.stop
    async def idle_turns(self, response: vf.Response, trace: vf.Trace) -> bool:
        if response.message.tool_calls:
            return False
        previous = [m for m in trace.assistant_messages][-(contract.IDLE_TURNS - 1) :]
        return len(previous) == contract.IDLE_TURNS - 1 and not any(m.tool_calls for m in previous)

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        state = trace.state
        trace.info["ledger"] = getattr(state, "ledger", None)
        trace.info["submitted"] = bool(getattr(state, "submitted", False))
        trace.info["revision"] = getattr(state, "revision", 0)
        trace.info["observation_bytes"] = getattr(state, "observation_bytes", 0)
        trace.info["budget_hits"] = getattr(state, "budget_hits", 0)
        trace.info["tool_calls"] = dict(getattr(state, "tool_calls", {}))
        replay = trace.info.get("replay_reasoning", contract.REPLAY_REASONING)
        trace.info["episode_contract"] = json.loads(contract.recorded_digest(bool(replay)))
        trace.info["public_id"] = self.data.public_id

    def scoring_rules(self, config: LedgerTaskConfig) -> dict[str, int]:
        return {
            "scorer_contract": config.scorer_contract or contract.SCORER_CONTRACT,
            "episode_contract": contract.EPISODE_CONTRACT,
            "generator": contract.GENERATOR_VERSION,
        }

    @cached_property
    def _keys(self) -> dict[bool, str]:
        """The key as JSON, as the world's policy states it (True) and under scorer contract 5 (False)."""
        key = key_of(self.data)
        return {
            True: json.dumps(isolated.key_json(key)),
            False: json.dumps(isolated.key_json(dataclasses.replace(key, located_credit=False))),
        }

    async def _score(self, trace: vf.Trace) -> Score:
        stated = self.scoring_config(trace).scorer_contract != 5
        return await _isolated_score(trace.info.get("ledger"), self._keys[stated])

    @vf.reward(weight=1.0)
    async def ledger(self, trace: vf.Trace) -> float:
        return (await self._score(trace)).reward

    @vf.metric
    async def components(self, trace: vf.Trace) -> dict[str, float]:
        scored = await self._score(trace)
        metrics = scored.metrics()
        metrics.update(skill_metrics(scored, self.data.fixes))
        metrics["submitted"] = float(bool(trace.info.get("submitted")))
        metrics["observation_bytes"] = float(trace.info.get("observation_bytes", 0))
        metrics["budget_hits"] = float(trace.info.get("budget_hits", 0))
        for tool, count in (trace.info.get("tool_calls") or {}).items():
            metrics[f"calls_{tool}"] = float(count)
        return metrics

    async def validate(self, runtime: vf.Runtime) -> bool:
        """The prompts are the ones its rung renders from the files, the company its name gives and
        the month it ends, character for character; the golden ledger scores 1.0 and the ledger as
        given below 1.0."""
        data = self.data
        company, _, month = data.name.rpartition(" ")
        try:
            end = datetime.date.fromisoformat(data.period_end)
            rendered = prompts_of(data.id or "", data.files, company, end)
        except (KeyError, ValueError):
            return False
        if month != f"{end:%Y-%m}" or (data.system_prompt, data.prompt_text) != rendered:
            return False
        key = key_of(data)
        return score(golden_of(data), key).reward == 1.0 and score(key.original, key).reward < 1.0


SCORES_KEPT = 256
"""Scores remembered per process, by (ledger, task) digest (least recently used forgotten first)."""
_scores: OrderedDict[tuple[str, str], asyncio.Future[Score]] = OrderedDict()


async def _isolated_score(text: str | None, key: str) -> Score:
    """One sandboxed score per (ledger, task), shared by the reward and the metrics even when they
    run at once: the first caller starts it, every other awaits the same one. The sandbox request
    waits and runs in a thread (`isolated.ascore`): the event loop never waits on it."""
    ledger = hashlib.sha256(text.encode()).hexdigest() if text is not None else ""
    digest = (ledger, hashlib.sha256(key.encode()).hexdigest())
    loop = asyncio.get_running_loop()
    flight = _scores.get(digest)
    if flight is None or (not flight.done() and flight.get_loop() is not loop):
        flight = _scores[digest] = loop.create_task(
            isolated.ascore(text, isolated.key_from_json(json.loads(key)))
        )
        while len(_scores) > SCORES_KEPT:
            _scores.popitem(last=False)
    _scores.move_to_end(digest)
    return await asyncio.shield(flight)  # one caller cancelled never cancels the others' score


class LedgerConfig(TasksetConfig):
    selectors: list[str] = [SHIPPED]
    """Worlds to serve: 'bank_recon_001', 'train:<n>', 'eval:<n>', 'train:<n>:hard' or a range
    such as 'eval:0-199' (expanded on validation)."""
    level: Level = None
    """A rung of the difficulty ladder (1 .. `ladder.RUNGS`), applied to every selector: 'train:<n>'
    becomes 'train:<n>:level<k>' (unset: the selectors' own worlds)."""
    manifest: str | None = None
    """The signed release manifest (default ~/.piv/beancount-ledger/manifest.json)."""
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()
    """Where the shared tool server runs (default: a host subprocess per env worker)."""
    task: LedgerTaskConfig = LedgerTaskConfig()

    @field_validator("selectors")
    @classmethod
    def _expand(cls, value: list[str]) -> list[str]:
        out = keys.expand_all(value)  # bounded (keys.MAX_WORLDS) before any range is expanded
        if not out:
            raise ValueError("selectors: name at least one world")
        return out

    @model_validator(mode="after")
    def _admitted(self) -> "LedgerConfig":
        if self.level is not None:
            ladder.check(self.level)
            # Given selectors take the level now; the default (the shipped world, which takes none)
            # is refused when the taskset loads, so that every rung can be named without a world. The
            # default given back by a dumped and re-read config counts as not given.
            default = type(self).model_fields["selectors"].default
            if "selectors" in self.model_fields_set and self.selectors != default:
                levelled = [ladder.levelled(s, self.level) for s in self.selectors]
                object.__setattr__(self, "selectors", levelled)
        ladder.surface(self.selectors)  # one server serves every selector: one surface
        try:
            release.admit(self.selectors, self.manifest)
        except Refused as refusal:
            raise ValueError(f"selectors refused, {refusal}") from None
        return self


def make_task_data(selector: str, secret: bytes | None = None) -> LedgerData:
    """The task data of canonical `selector` (keyed ones need the secret; read when not given)."""
    return data_of(selector, keys.resolve(selector, secret))


def data_of(selector: str, w: world.World) -> LedgerData:
    """The task data of world `w`, served under `selector`."""
    projected = answer.project(w)
    files = projected.files
    if problems := contract.envelope_problems(files):
        raise ValueError(f"{selector}: {'; '.join(problems)}")
    system, user = prompts_of(selector, files, w.company, w.start)
    return LedgerData(
        id=selector,
        public_id=public_id(files),
        name=f"{w.company} {w.start:%Y-%m}",
        system_prompt=system,
        prompt=user,
        files=files,
        balances=projected.balances,
        fixes=projected.fixes,
        period_end=projected.period_end,
    )


def prompts_of(selector: str, files: dict[str, str], company: str, month: datetime.date) -> tuple[str, str]:
    """The system and user prompts of `selector`'s rung for a world's files, its company and a day of
    its month: the rung's prompt pair (`contract.PROMPTS`), the user one given the files quoted and the
    statement view its rung shows (`contract.VIEWS`)."""
    prompt = ladder.prompt_of(selector)
    system, user = contract.PROMPTS[prompt]
    matched = (
        side_by_side(files[LEDGER], files["bank_statement.csv"], **contract.VIEWS[prompt])
        if prompt in contract.VIEWS
        else ""
    )
    return system, user.format(
        company=company, month=f"{month:%B %Y}", files=contract.quoted_files(files, prompt), matched=matched
    )


class LedgerTaskset(vf.Taskset[LedgerTask, LedgerConfig]):
    @classmethod
    def toolsets(cls, config: LedgerConfig) -> list[vf.Toolset]:
        """The tools of the selectors' surface (`ladder.surface`: the six tools, or the low rungs'): one
        server per env worker, reused by all its rollouts (each call sees its own rollout's state
        only)."""
        selectors = config.selectors
        if config.level is not None:
            try:
                selectors = [ladder.levelled(s, config.level) for s in selectors]
            except ValueError:
                pass  # `load` refuses these selectors, naming the knob
        placement = config.tools.model_dump(mode="json")
        return [LedgerToolset(LedgerToolsConfig(**placement, surface=ladder.surface(selectors)))]

    def load(self) -> Iterator[LedgerTask]:
        """Every selector, admitted by `release.admit`, its world checked against its certified digest."""
        selectors = self.config.selectors
        if self.config.level is not None:
            selectors = [ladder.levelled(s, self.config.level) for s in selectors]
        certified = release.admit(selectors, self.config.manifest)
        secret = keys.read_secret() if any(keys.is_keyed(s) for s in selectors) else None
        for selector in selectors:
            data = make_task_data(selector, secret)
            if selector in certified and task_digest(data) != certified[selector]:
                raise Refused(
                    "version mismatch",
                    f"{selector!r} no longer regenerates the world its manifest certified "
                    "(the generator changed without a version bump); run the preflight again",
                )
            timeout = rollout_seconds(
                contract.TOKEN_CEILING, contract.MAX_TURNS
            )  # 1800 s, piv_core.runtime.timeouts
            yield LedgerTask(with_rollout_timeout(data, timeout), self.config.task)
