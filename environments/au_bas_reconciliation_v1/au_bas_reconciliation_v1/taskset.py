"""au-bas-reconciliation-v1: reconcile a synthetic Australian GST ledger to a corrected BAS.

Task: one quarter's GST-inclusive ledger with planted bookkeeping faults; the model returns
the corrected BAS labels G1 / 1A / 1B / net and every (transaction, fault code) pair.
Reward: ``bas_correct`` (0.6, all four labels cent-exact) + ``fault_audit`` (0.4, F1 over
(transaction, code) pairs; 1.0 when the ledger is clean and nothing is flagged).
The key is re-derived by `rules.reconcile` from the ledger exactly as the prompt shows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal

import verifiers.v1 as vf
from piv_core.ledger_audit.grading import Grade, Key, LedgerData, fault_lists, key_holds
from piv_core.runtime import calculator
from piv_core.runtime.calculator import CalculatorToolset
from piv_core.runtime.confinement import SingleReply
from piv_core.runtime.timeouts import with_rollout_timeout
from piv_core.tasksets.knobs import at_least, at_most, integer, number, share, some_of
from piv_core.tasksets.ladder import (
    DurableKey,
    FiniteWhenMixed,
    Level,
    MixKnobs,
    apply_level,
    check_levels,
    served,
)
from piv_core.tasksets.prompt_size import largest_fitting, prompt_bytes
from piv_core.tasksets.rescoring import Credited, FigureCreditConfig, TasksetConfig
from piv_core.tasksets.rng import Split, split_rng, task_id
from pydantic import model_validator

from au_bas_reconciliation_v1 import generator, grading, prompt, rules
from au_bas_reconciliation_v1.levels import RUNGS

DEFAULT_SEED = 20260826


WIDEST_ASKED = max(
    (tuple(label for label in rules.LABELS if label != left_out) for left_out in rules.LABELS),
    key=lambda labels: len(", ".join(labels)),
)
"""The subset of labels with the longest "labels to report" line (written only for a subset)."""


LONGEST_SYSTEM_PROMPT = max(
    (
        prompt.system_prompt(style, rules.FAULT_CODES, rules.LABELS, credit)
        for style in prompt.PROMPT_STYLES
        for credit in prompt.FIGURE_CREDITS
    ),
    key=lambda text: len(text.encode()),
)
"""The longest system prompt any configuration gives (a focused one states at most every code and label)."""


def widest_prompt_bytes(
    num_transactions: int, system: str = prompt.SYSTEM_PROMPT, style: str = prompt.FULL, offered: bool = False
) -> int:
    """An upper bound on the prompt bytes (system prompt `system` folded in) of any task with
    this many rows whose user prompt is of style `style`; `offered`: with the calculator's section
    and note."""
    widest = generator.widest_ledger(num_transactions)
    user = prompt.user_prompt(*widest, WIDEST_ASKED, style, calculator_offered=offered)
    return prompt_bytes(calculator.with_section(system, offered), user)


MAX_TRANSACTIONS = largest_fitting(widest_prompt_bytes, generator.MIN_ROWS)
"""The most rows whose widest prompt fits one command-line argument (`piv_core.tasksets.prompt_size`),
under the full system prompt with all-or-nothing credit (the default)."""
MAX_TRANSACTIONS_ANY_PROMPT = largest_fitting(
    lambda n: widest_prompt_bytes(n, LONGEST_SYSTEM_PROMPT, prompt.FOCUSED), generator.MIN_ROWS
)
"""The same bound under the longest system prompt of any `prompt_style` and `figure_credit`."""
MAX_TRANSACTIONS_CALCULATOR = largest_fitting(
    lambda n: widest_prompt_bytes(n, LONGEST_SYSTEM_PROMPT, prompt.FOCUSED, offered=True), generator.MIN_ROWS
)
"""The same bound with the calculator offered (its section and note), under any prompt."""


class AuBasData(LedgerData):
    bas: dict[str, int]
    """The corrected BAS in cents: G1, 1A, 1B, net."""


class AuBasTask(Credited, DurableKey, SingleReply, vf.Task[AuBasData, vf.State, FigureCreditConfig]):
    def stated_credit(self) -> str:
        """The credit per label the task's prompt grants (the prompt is the authority; the task knob
        ``figure_credit`` overrides it for re-scoring, `piv_core.tasksets.rescoring`)."""
        return prompt.read_scope(self.data.system_prompt).credit

    def _graded(self, trace: vf.Trace) -> tuple:
        """What grading reads of a trace and the task: the reply, the key, the credit and how the
        faults are read (`grading.grade`'s arguments)."""
        data = self.data
        return trace.last_reply, data.bas, data.faults, self.partial(trace), data.row_figures, data.claims

    def _grade(self, trace: vf.Trace) -> Grade:
        return grading.grade(*self._graded(trace))

    @vf.reward(weight=0.6)
    async def bas_correct(self, trace: vf.Trace) -> float:
        return self._grade(trace).figures_correct

    @vf.reward(weight=0.4)
    async def fault_audit(self, trace: vf.Trace) -> float:
        return self._grade(trace).fault_audit

    @vf.metric
    async def audit(self, trace: vf.Trace) -> dict[str, float]:
        return grading.SCHEME.metrics(*self._graded(trace))

    async def validate(self, runtime: vf.Runtime) -> bool:
        """Re-derive the key from the prompt alone and compare: the system prompt must be the one
        its own style, fault codes and credit give for the labels the user prompt asks, and the
        ledger under the rules of those codes only must give the key."""
        return holds(self.data)


def holds(data: AuBasData) -> bool:
    """Whether `data`'s prompt, read alone, states its key (what `validate` checks): the system
    prompt is the one its own style, codes and credit give, the user prompt is the one what it
    states renders (its header, ledger and worksheet alike), and the key follows from the ledger."""
    scope = prompt.read_scope(data.system_prompt)
    try:
        labels = prompt.read_labels(data.prompt_text)
        stated = prompt.system_prompt(
            scope.style, scope.codes, labels, scope.credit, scope.rows, scope.from_figures
        )
        quarter, ledger = prompt.read_ledger(data.prompt_text)
    except ValueError:
        return False
    offered = calculator.offered(data.system_prompt)[0]
    business = prompt.read_business(data.prompt_text)
    stated_parts = (business, quarter, ledger, labels, scope.style, scope.rows, offered)
    # with per-row figures: the worksheet, or the request to work one line per row first
    closes = (True, False) if scope.rows else (True,)
    shown = {prompt.user_prompt(*stated_parts, sheet, scope.from_figures) for sheet in closes}
    if data.prompt_text not in shown:
        return False
    rows = rules.row_gst(ledger) if scope.rows else {}
    claims = rules.row_claims(ledger) if scope.from_figures else None
    return (
        data.row_figures == rows
        and data.claims == claims
        and key_holds(
            data, calculator.with_section(stated, offered), data.bas, lambda text: key_of(text, scope.codes)
        )
    )


def key_of(text: str, codes: tuple[str, ...] = rules.FAULT_CODES) -> Key:
    """The key of the task whose user prompt is `text`, under the rules of fault codes `codes`
    (those its system prompt states): the labels it asks for, and the faults."""
    return rules.reconcile(*prompt.read_ledger(text), codes).asking(prompt.read_labels(text))


class AuBasConfig(TasksetConfig, MixKnobs):
    num_transactions: Annotated[
        int,
        integer(),
        at_least(generator.MIN_ROWS),
        at_most(MAX_TRANSACTIONS, "a longer ledger's prompt would not fit one command-line argument"),
    ] = 24
    """Rows per ledger, from 4 to `MAX_TRANSACTIONS` (1020): the most rows for which the prompt,
    system prompt included and every column at its widest, stays within 112 KiB, so that it fits
    the 128 KiB one command-line argument can hold."""
    fault_rate: Annotated[float, number(), share()] = 0.25
    """Expected share of rows with a planted fault, in [0, 1]; 0 plants none, above 0 at least one."""
    fault_codes: Annotated[list[str], some_of(rules.FAULT_CODES)] = list(rules.FAULT_CODES)
    """The fault codes the generator may plant (default: all five). The key still applies every
    rule, so a code not planted can only be found where it genuinely holds."""
    labels: Annotated[list[str], some_of(rules.LABELS)] = list(rules.LABELS)
    """The BAS labels the task asks for and grades (default: all four). When fewer, the task
    names them, and only they count towards ``bas_correct`` and ``bas_label_accuracy``."""
    row_mix: Literal["mixed", "sales", "round_sales", "sales_and_purchases"] = "mixed"
    """What the rows are (`generator.ROW_MIXES`): sales and purchases of every category (``mixed``,
    the default); sales only, of every treatment, at any price (``sales``) or at 11 times a whole
    number of dollars, so that every correct GST, and every miscalculated one, is whole dollars
    (``round_sales``); or sales and purchases at any price (``sales_and_purchases``). In every mix
    but ``mixed`` whether a row is faulty does not depend on its treatment, and a miscalculated GST
    takes one of several forms."""
    prompt_style: Literal["full", "focused"] = "full"
    """``full`` (the default): the system prompt states every fault code and label. ``focused``:
    it states only the codes of `fault_codes` (no other holds in a generated ledger) and the
    labels asked, invites working row by row before the answer, and shows the answer's shape
    with placeholders instead of figures."""
    figure_credit: Literal["all_or_nothing", "partial"] = "all_or_nothing"
    """``all_or_nothing`` (the default): ``bas_correct`` is 1.0 only when every label asked is
    right. ``partial``: it is the share of the labels asked that are right, and the system
    prompt says so."""
    row_figures: bool = False
    """Ask for every row's correct GST too, as a map {txn_id: amount} under the answer key
    ``gst``; each row's entry is graded like a label (under ``partial`` credit, one share of the
    figures). Needs prompt_style ``focused``."""
    worksheet: bool = True
    """With row_figures: end the user prompt on the worksheet of the rows to complete (the default),
    or, False, on the request to write one line per row first, as a focused prompt without per-row
    figures does (`prompt.WORK_FIRST`, or `prompt.WORK_FIRST_FIGURES` with faults_from_figures); the
    answer, its per-row figures and its score are the same. False needs row_figures."""
    faults_from_figures: bool = False
    """With row_figures: read the faults from the per-row figures instead of asking for them. The
    answer holds no fault map; a row whose ``gst`` entry differs from its recorded gst is reported
    with its treatment's code (``gst_miscalculated`` taxable, ``gst_on_gst_free`` otherwise), and
    the score is otherwise the same, each flag still counting only beside its row's correct GST.
    Without the worksheet the request to work first asks each row's treatment, division and figure.
    Needs row_figures, partial figure credit and fault_codes exactly those two."""
    calculator: bool = False
    """Offer the calculator (`piv_core.runtime.calculator`): the system prompt ends on its section
    and the user prompt on a note asking for a reply of calls first (a worksheet's, in place of its
    closing sentence), and a reply may call ``calculate(expression)`` for exact decimal arithmetic
    within the calls the section states; the last reply, which makes no call, is graded. Off (the
    default): one reply, no tool. It sets nothing else: ledgers, keys and scoring are unchanged."""
    level: Level = None
    """A rung of `levels.RUNGS` (1 easiest, 10 hardest): sets num_transactions, fault_rate,
    fault_codes and labels, and at the lowest rungs row_mix, prompt_style, figure_credit, row_figures
    and worksheet. Unset: every knob as given. Task ids read ``au-bas-level<N>-...``."""
    seed: Annotated[int, integer()] = DEFAULT_SEED
    """Generator seed; task i depends only on (split, seed, i) and the knobs above."""
    split: Split = "train"
    """``train`` (the default) or ``eval``: two disjoint task streams under every seed
    (`piv_core.tasksets.rng`); evaluate on ``eval`` what was trained on ``train``."""
    task: FigureCreditConfig = FigureCreditConfig()
    """Scoring knobs (``task.figure_credit``: re-score under a credit the prompt does not state)."""

    @model_validator(mode="after")
    def _level(self) -> AuBasConfig:
        check_levels(self, RUNGS)
        apply_level(self, RUNGS)
        if self.row_figures and self.prompt_style != "focused":
            raise ValueError(
                f"row_figures needs prompt_style 'focused', got {self.prompt_style!r}: the full prompt "
                "asks for the BAS labels only"
            )
        if not self.worksheet and not self.row_figures:
            raise ValueError(
                "worksheet=False needs row_figures, got row_figures=False: only a task asking "
                "every row's GST has a worksheet"
            )
        if self.faults_from_figures and not (
            self.row_figures
            and self.figure_credit == "partial"
            and sorted(self.fault_codes) == sorted(prompt.CLAIMED_CODES)
        ):
            raise ValueError(
                "faults_from_figures needs row_figures true, figure_credit 'partial' and "
                f"fault_codes {list(prompt.CLAIMED_CODES)}, got row_figures={self.row_figures}, "
                f"figure_credit={self.figure_credit!r}, fault_codes={self.fault_codes}: "
                "a row given another GST than the books' reports the code of its treatment"
            )
        if self.row_figures and not set(self.fault_codes) <= set(prompt.COMPARED_CODES):
            raise ValueError(
                f"row_figures needs fault_codes among {list(prompt.COMPARED_CODES)}, got {self.fault_codes}: "
                "each row's worksheet line decides its audit from the recorded gst alone"
            )
        default_prompt = (self.prompt_style, self.figure_credit) == ("full", "all_or_nothing")
        if not default_prompt and self.num_transactions > MAX_TRANSACTIONS_ANY_PROMPT:
            raise ValueError(
                f"num_transactions must be <= {MAX_TRANSACTIONS_ANY_PROMPT} with prompt_style="
                f"{self.prompt_style!r} and figure_credit={self.figure_credit!r}, got "
                f"{self.num_transactions}: a longer ledger's prompt would not fit one command-line argument"
            )
        if self.calculator and self.num_transactions > MAX_TRANSACTIONS_CALCULATOR:
            raise ValueError(
                f"num_transactions must be <= {MAX_TRANSACTIONS_CALCULATOR} with calculator=True, got "
                f"{self.num_transactions}: a longer ledger's prompt would not fit one command-line argument"
            )
        return self


def make_task_data(config: AuBasConfig, idx: int) -> AuBasData:
    """Task `idx` of the stream `config` describes."""
    rng = split_rng(config.split, config.seed, idx)
    ledger = generator.generate(
        rng, config.num_transactions, config.fault_rate, config.fault_codes, config.row_mix
    )
    system = calculator.with_section(
        prompt.system_prompt(
            config.prompt_style,
            config.fault_codes,
            config.labels,
            config.figure_credit,
            config.row_figures,
            config.faults_from_figures,
        ),
        config.calculator,
    )
    key = rules.reconcile(ledger.quarter, ledger.rows, prompt.read_scope(system).codes).asking(config.labels)
    prefix = "au-bas" if config.level is None else f"au-bas-level{config.level}"
    return AuBasData(
        idx=idx,
        id=task_id(prefix, config.split, config.seed, idx),
        level=config.level,
        name=f"{ledger.business} {ledger.quarter.start:%Y-%m}",
        system_prompt=system,
        prompt=prompt.user_prompt(
            ledger.business,
            ledger.quarter,
            ledger.rows,
            config.labels,
            config.prompt_style,
            config.row_figures,
            config.calculator,
            config.worksheet,
            config.faults_from_figures,
        ),
        bas=key.figures,
        faults=fault_lists(key.faults),
        row_figures=rules.row_gst(ledger.rows) if config.row_figures else {},
        claims=rules.row_claims(ledger.rows) if config.faults_from_figures else None,
    )


class AuBasTaskset(FiniteWhenMixed, vf.Taskset[AuBasTask, AuBasConfig]):
    INFINITE = True

    @classmethod
    def toolsets(cls, config: AuBasConfig) -> list[vf.Toolset]:
        """The calculator's server when the configuration offers it (one per env worker, shared by its
        rollouts, holding nothing of any); no tool otherwise."""
        return [CalculatorToolset(vf.SharedToolsetConfig())] if config.calculator else []

    def load(self) -> Iterator[AuBasTask]:
        for data in served(self.config, make_task_data):
            yield AuBasTask(
                with_rollout_timeout(data, calculator.rollout_timeout(data.system_prompt)), self.config.task
            )
