"""au-bas-reconciliation-v1: reconcile a synthetic Australian GST ledger to a corrected BAS.

Task: one quarter's GST-inclusive ledger with planted bookkeeping faults; the model returns
the corrected BAS labels G1 / 1A / 1B / net and every (transaction, fault code) pair.
Reward: ``bas_correct`` (0.6, all four labels cent-exact) + ``fault_audit`` (0.4, F1 over
(transaction, code) pairs; 1.0 when the ledger is clean and nothing is flagged).
The key is re-derived by `rules.reconcile` from the ledger exactly as the prompt shows it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Annotated

import verifiers.v1 as vf
from piv_core.knobs import at_least, at_most, share
from piv_core.ledger_audit import Grade, LedgerData, fault_lists, key_holds
from piv_core.prompt_size import largest_fitting, prompt_bytes
from piv_core.rng import Split, split_rng, task_id

from au_bas_reconciliation_v1 import generator, grading, prompt, rules

DEFAULT_SEED = 20260826


def widest_prompt_bytes(num_transactions: int) -> int:
    """An upper bound on the prompt bytes (system prompt folded in) of any task with this many rows."""
    return prompt_bytes(prompt.SYSTEM_PROMPT, prompt.user_prompt(*generator.widest_ledger(num_transactions)))


MAX_TRANSACTIONS = largest_fitting(widest_prompt_bytes, generator.MIN_ROWS)
"""The most rows whose widest prompt fits one command-line argument (`piv_core.prompt_size`)."""


class AuBasData(LedgerData):
    bas: dict[str, int]
    """The corrected BAS in cents: G1, 1A, 1B, net."""


class AuBasTask(vf.Task[AuBasData, vf.State, vf.TaskConfig]):
    def _grade(self, trace: vf.Trace) -> Grade:
        return grading.grade(trace.last_reply, self.data.bas, self.data.faults)

    @vf.reward(weight=0.6)
    async def bas_correct(self, trace: vf.Trace) -> float:
        return self._grade(trace).figures_correct

    @vf.reward(weight=0.4)
    async def fault_audit(self, trace: vf.Trace) -> float:
        return self._grade(trace).fault_audit

    @vf.metric
    async def audit(self, trace: vf.Trace) -> dict[str, float]:
        return grading.SCHEME.metrics(self._grade(trace))

    async def validate(self, runtime: vf.Runtime) -> bool:
        """Re-derive the key from the ledger as the prompt shows it and compare."""
        return key_holds(
            self.data,
            prompt.SYSTEM_PROMPT,
            self.data.bas,
            lambda text: rules.reconcile(*prompt.read_ledger(text)),
        )


class AuBasConfig(vf.TasksetConfig):
    num_transactions: Annotated[
        int,
        at_least(generator.MIN_ROWS),
        at_most(MAX_TRANSACTIONS, "a longer ledger's prompt would not fit one command-line argument"),
    ] = 24
    """Rows per ledger, from 4 to `MAX_TRANSACTIONS` (1022): the most rows for which the prompt,
    system prompt included and every column at its widest, stays within 112 KiB, so that it fits
    the 128 KiB one command-line argument can hold."""
    fault_rate: Annotated[float, share()] = 0.25
    """Expected share of rows with a planted fault, in [0, 1]; 0 plants none, above 0 at least one."""
    seed: int = DEFAULT_SEED
    """Generator seed; task i depends only on (split, seed, i, num_transactions, fault_rate)."""
    split: Split = "train"
    """``train`` (the default) or ``eval``: two disjoint task streams under every seed
    (`piv_core.rng`); evaluate on ``eval`` what was trained on ``train``."""


def make_task_data(config: AuBasConfig, idx: int) -> AuBasData:
    """Task `idx` of the stream `config` describes."""
    rng = split_rng(config.split, config.seed, idx)
    ledger = generator.generate(rng, config.num_transactions, config.fault_rate)
    key = rules.reconcile(ledger.quarter, ledger.rows)
    return AuBasData(
        idx=idx,
        id=task_id("au-bas", config.split, config.seed, idx),
        name=f"{ledger.business} {ledger.quarter.start:%Y-%m}",
        system_prompt=prompt.SYSTEM_PROMPT,
        prompt=prompt.user_prompt(ledger.business, ledger.quarter, ledger.rows),
        bas=key.figures,
        faults=fault_lists(key.faults),
    )


class AuBasTaskset(vf.Taskset[AuBasTask, AuBasConfig]):
    INFINITE = True

    def load(self) -> Iterator[AuBasTask]:
        for idx in itertools.count():
            yield AuBasTask(make_task_data(self.config, idx), self.config.task)
