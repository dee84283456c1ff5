"""us-sut-reconciliation-v1: prepare a US state sales & use tax return from a synthetic ledger.

Task: one quarter's ledger for a business in the illustrative State of Lone Pine, with planted
bookkeeping faults; the model returns the corrected quarterly return and every (transaction,
fault code) pair. Reward: ``return_correct`` (0.6; gross_sales, taxable_sales, sales_tax_due,
use_tax_due and net_remittance all cent-exact) + ``fault_audit`` (0.4; F1 over the pairs, 1.0
when the quarter is clean and nothing is flagged). The key is re-derived by `rules.reconcile`
from the ledger exactly as the prompt shows it.
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
    Level,
    MixKnobs,
    apply_level,
    check_levels,
    served,
)
from piv_core.tasksets.prompt_size import SET_BUDGET, largest_fitting, prompt_bytes
from piv_core.tasksets.rescoring import Credited, FigureCreditConfig, TasksetConfig
from piv_core.tasksets.rng import Split, split_rng, task_id
from pydantic import model_validator

from us_sut_reconciliation_v1 import generator, grading, prompt, rules, worksheet
from us_sut_reconciliation_v1.levels import RUNGS

DEFAULT_SEED = 20260701


WIDEST_ASKED = max(
    (tuple(name for name in rules.FIGURES if name != left_out) for left_out in rules.FIGURES),
    key=lambda figures: len(", ".join(figures)),
)
"""The subset of figures with the longest "figures to report" line (written only for a subset)."""


LONGEST_SYSTEM_PROMPT = max(
    (
        prompt.system_prompt(style, rules.FAULT_CODES, rules.FIGURES, credit)
        for style in prompt.PROMPT_STYLES
        for credit in prompt.FIGURE_CREDITS
    ),
    key=lambda text: len(text.encode()),
)
"""The longest system prompt any configuration gives (a focused one states at most every code and figure)."""


def widest_prompt_bytes(
    num_rows: int, system: str = prompt.SYSTEM_PROMPT, style: str = prompt.FULL, offered: bool = False
) -> int:
    """An upper bound on the prompt bytes (system prompt `system` folded in) of any task with
    this many rows whose user prompt is of style `style`; `offered`: with the calculator's section
    and note."""
    widest = generator.widest_ledger(num_rows)
    user = prompt.user_prompt(*widest, WIDEST_ASKED, style, calculator_offered=offered)
    return prompt_bytes(calculator.with_section(system, offered), user)


MAX_ROWS = largest_fitting(widest_prompt_bytes, generator.MIN_ROWS)
"""The most rows whose widest prompt fits one command-line argument (`piv_core.tasksets.prompt_size`),
under the full system prompt with all-or-nothing credit (the default)."""
MAX_ROWS_ANY_PROMPT = largest_fitting(
    lambda n: widest_prompt_bytes(n, LONGEST_SYSTEM_PROMPT, prompt.FOCUSED), generator.MIN_ROWS
)
"""The same bound under the longest system prompt of any `prompt_style` and `figure_credit`."""
MAX_ROWS_CALCULATOR = largest_fitting(
    lambda n: widest_prompt_bytes(n, LONGEST_SYSTEM_PROMPT, prompt.FOCUSED, offered=True), generator.MIN_ROWS
)
"""The same bound with the calculator offered (its section and note), under any prompt."""


def max_tasks(num_rows: int, offered: bool = False) -> int:
    """The most tasks of `num_rows` rows whose prompts, at their widest, fit `SET_BUDGET` together
    (`offered`: with the calculator's section and note)."""
    return SET_BUDGET // widest_prompt_bytes(num_rows, offered=offered)


class UsSutData(LedgerData):
    figures: dict[str, int]
    """The corrected return in cents, by figure name."""


class UsSutTask(Credited, DurableKey, SingleReply, vf.Task[UsSutData, vf.State, FigureCreditConfig]):
    def stated_credit(self) -> str:
        """The credit per figure the task's prompt grants (the prompt is the authority; the task knob
        ``figure_credit`` overrides it for re-scoring, `piv_core.tasksets.rescoring`)."""
        return prompt.read_scope(self.data.system_prompt).credit

    def _grade(self, trace: vf.Trace) -> Grade:
        data = self.data
        return grading.grade(
            trace.last_reply, data.figures, data.faults, self.partial(trace), data.row_figures
        )

    @vf.reward(weight=0.6)
    async def return_correct(self, trace: vf.Trace) -> float:
        return self._grade(trace).figures_correct

    @vf.reward(weight=0.4)
    async def fault_audit(self, trace: vf.Trace) -> float:
        return self._grade(trace).fault_audit

    @vf.metric
    async def audit(self, trace: vf.Trace) -> dict[str, float]:
        data = self.data
        return grading.SCHEME.metrics(
            trace.last_reply, data.figures, data.faults, self.partial(trace), data.row_figures
        )

    async def validate(self, runtime: vf.Runtime) -> bool:
        """Re-derive the key from the prompt alone and compare: the system prompt must be the one
        its own style, fault codes and credit give for the figures the user prompt asks, and the
        ledger under the rules of those codes must give the key."""
        return holds(self.data)


def holds(data: UsSutData) -> bool:
    """Whether `data`'s prompt, read alone, states its key (what `validate` checks): the system
    prompt is the one its own style, codes and credit give, the user prompt is the one what it
    states renders (its header, ledger and worksheet alike), and the key follows from the ledger."""
    scope = prompt.read_scope(data.system_prompt)
    try:
        figures = prompt.read_figures(data.prompt_text)
        stated = prompt.system_prompt(scope.style, scope.codes, figures, scope.credit, scope.rows)
        quarter, business_zip, ledger = prompt.read_ledger(data.prompt_text)
        business = prompt.read_business(data.prompt_text, business_zip)
    except ValueError:
        return False
    offered = calculator.offered(data.system_prompt)[0]
    stated_parts = (business, business_zip, quarter, ledger, figures, scope.style, scope.rows, offered)
    closes = (True, False) if scope.rows else (True,)  # with per-row figures: the worksheet, or not
    shown = {prompt.user_prompt(*stated_parts, dated(scope.codes), sheet) for sheet in closes}
    if data.prompt_text not in shown:
        return False
    rows = rules.row_taxes(ledger, business_zip) if scope.rows else {}
    return data.row_figures == rows and key_holds(
        data, calculator.with_section(stated, offered), data.figures, lambda text: key_of(text, scope.codes)
    )


def dated(codes: tuple[str, ...]) -> bool:
    """Whether a worksheet under fault codes `codes` asks each row's date (`prompt.user_prompt`)."""
    return rules.OUTSIDE_PERIOD in codes


def key_of(text: str, codes: tuple[str, ...] = rules.FAULT_CODES) -> Key:
    """The key of the task whose user prompt is `text`, under the rules of fault codes `codes`
    (those its system prompt states): the figures it asks for, and the faults."""
    return rules.reconcile(*prompt.read_ledger(text), codes).asking(prompt.read_figures(text))


class UsSutConfig(TasksetConfig, MixKnobs):
    num_tasks: Annotated[int, integer(), at_least(1)] = 50
    """Tasks in the set, from 1 to `max_tasks(num_rows)` (54366 at the default 30 rows, 4684 at
    `MAX_ROWS`): verifiers holds the whole set at once to shuffle it or to run it without a
    limit, and its prompts, at their widest, stay within 512 MiB together."""
    num_rows: Annotated[
        int,
        integer(),
        at_least(generator.MIN_ROWS),
        at_most(MAX_ROWS, "a longer ledger's prompt would not fit one command-line argument"),
    ] = 30
    """Rows per ledger, from 5 to `MAX_ROWS` (1098): the most rows for which the prompt, system
    prompt included and every column at its widest, stays within 112 KiB, so that it fits the
    128 KiB one command-line argument can hold."""
    fault_rate: Annotated[float, number(), share()] = 0.25
    """Expected share of rows with a planted fault, in [0, 1]; 0 plants none, above 0 at least one."""
    fault_codes: Annotated[list[str], some_of(rules.FAULT_CODES)] = list(rules.FAULT_CODES)
    """The fault codes the generator may plant (default: all six). The key still applies every
    rule, so a code not planted can only be found where it genuinely holds."""
    figures: Annotated[list[str], some_of(rules.FIGURES)] = list(rules.FIGURES)
    """The figures the task asks for (default: all six). When fewer, the task names them; the
    graded ones among them (all but exempt_sales) count towards ``return_correct`` and
    ``fields_correct``. At least one graded figure must be asked for."""
    row_mix: Literal[
        "mixed", "sales", "tenth_rate_sales", "home_sales", "dollar_home_sales", "round_home_sales"
    ] = "mixed"
    """What the rows are (`generator.ROW_MIXES`): sales and purchases of every kind (``mixed``, the
    default); or sales with no claim only, of every category, at any price and delivered to any ZIP
    (``sales``) or to a ZIP whose combined rate has at most one decimal (``tenth_rate_sales``), or
    delivered to the business ZIP, taxed there at a whole percent, at any price
    (``home_sales``), at whole dollars (``dollar_home_sales``) or at whole fifties of dollars
    (``round_home_sales``).
    In the sales-only mixes whether a row is faulty does not depend on its category, and a
    miscalculated tax takes one of several forms."""
    prompt_style: Literal["full", "focused"] = "full"
    """``full`` (the default): the system prompt states every fault code and figure. ``focused``:
    it states only the codes of `fault_codes` (the key applies only their rules) and the figures
    asked, invites working row by row before the answer, and shows the answer's shape with
    placeholders instead of figures."""
    figure_credit: Literal["all_or_nothing", "partial"] = "all_or_nothing"
    """``all_or_nothing`` (the default): ``return_correct`` is 1.0 only when every graded figure
    asked is right. ``partial``: it is the share of them that are right, and the system prompt
    says so."""
    row_figures: bool = False
    """Ask for every row's correct tax too, as a map {transaction_id: amount} under the answer key
    ``tax``; each row's entry is graded like a figure (under ``partial`` credit, one share) and
    counts only with the row listed in the faults exactly when it has a fault. Needs
    prompt_style ``focused`` and fault_codes among `worksheet.WORKSHEET_CODES`."""
    worksheet: bool = True
    """With row_figures: end the user prompt on the worksheet of the rows to complete (the default),
    or, False, on the request to write one line per row first, as a focused prompt without per-row
    figures does; the answer, its per-row figures and its score are the same. False needs row_figures."""
    calculator: bool = False
    """Offer the calculator (`piv_core.runtime.calculator`): the system prompt ends on its section
    and the user prompt on a note asking for a reply of calls first (a worksheet's, in place of its
    closing sentence), and a reply may call ``calculate(expression)`` for exact decimal arithmetic
    within the calls the section states; the last reply, which makes no call, is graded. Off (the
    default): one reply, no tool. It sets nothing else: ledgers, keys and scoring are unchanged."""
    level: Level = None
    """A rung of `levels.RUNGS` (1 easiest, 11 hardest): sets num_rows, fault_rate, fault_codes
    and figures, and at the lowest rungs row_mix, prompt_style, figure_credit, row_figures and
    worksheet. Unset: every knob as given. Task ids read ``us-sut-level<N>-...``."""
    seed: Annotated[int, integer()] = DEFAULT_SEED
    """Generator seed; task i depends only on (split, seed, i) and the knobs above."""
    split: Split = "train"
    """``train`` (the default) or ``eval``: two disjoint task sets under every seed
    (`piv_core.tasksets.rng`); evaluate on ``eval`` what was trained on ``train``."""
    task: FigureCreditConfig = FigureCreditConfig()
    """Scoring knobs (``task.figure_credit``: re-score under a credit the prompt does not state)."""

    @model_validator(mode="after")
    def _level_and_bounds(self) -> UsSutConfig:
        """The level's knobs filled in first, then the checks across knobs."""
        check_levels(self, RUNGS)
        apply_level(self, RUNGS)
        if self.row_figures and self.prompt_style != "focused":
            raise ValueError(
                f"row_figures needs prompt_style 'focused', got {self.prompt_style!r}: the full prompt "
                "asks for the return's figures only"
            )
        if not self.worksheet and not self.row_figures:
            raise ValueError(
                "worksheet=False needs row_figures, got row_figures=False: only a task asking "
                "every row's tax has a worksheet"
            )
        if self.row_figures and not set(self.fault_codes) <= set(worksheet.WORKSHEET_CODES):
            raise ValueError(
                f"row_figures needs fault_codes among {list(worksheet.WORKSHEET_CODES)}, got "
                f"{self.fault_codes}: each row's worksheet line decides its audit from its recorded tax "
                "and its date alone"
            )
        if not set(self.figures) & set(rules.GRADED_FIGURES):
            raise ValueError(
                f"figures must include a graded figure (any but exempt_sales), got {self.figures}"
            )
        default_prompt = (self.prompt_style, self.figure_credit) == ("full", "all_or_nothing")
        if not default_prompt and self.num_rows > MAX_ROWS_ANY_PROMPT:
            raise ValueError(
                f"num_rows must be <= {MAX_ROWS_ANY_PROMPT} with prompt_style={self.prompt_style!r} and "
                f"figure_credit={self.figure_credit!r}, got {self.num_rows}: a longer ledger's prompt "
                "would not fit one command-line argument"
            )
        if self.calculator and self.num_rows > MAX_ROWS_CALCULATOR:
            raise ValueError(
                f"num_rows must be <= {MAX_ROWS_CALCULATOR} with calculator=True, got {self.num_rows}: "
                "a longer ledger's prompt would not fit one command-line argument"
            )
        if self.levels is not None:
            widest = sum(
                widest_prompt_bytes(RUNGS[level]["num_rows"], offered=self.calculator)
                for level in self.levels
            )
            if self.tasks_per_level * widest > SET_BUDGET:
                raise ValueError(
                    f"tasks_per_level must be <= {SET_BUDGET // widest} with levels={self.levels}, got "
                    f"{self.tasks_per_level}: the mix's prompts would exceed {SET_BUDGET >> 20} MiB"
                )
        most = max_tasks(self.num_rows, self.calculator)
        if self.num_tasks > most:
            raise ValueError(
                f"num_tasks must be <= {most} with num_rows={self.num_rows}, got {self.num_tasks}: "
                f"the set's prompts would exceed {SET_BUDGET >> 20} MiB, and verifiers holds the whole "
                "set at once to shuffle it or to run it without a limit"
            )
        return self


def make_task_data(config: UsSutConfig, idx: int) -> UsSutData:
    """Task `idx` of the set `config` describes."""
    rng = split_rng(config.split, config.seed, idx)
    ledger = generator.generate(rng, config.num_rows, config.fault_rate, config.fault_codes, config.row_mix)
    system = calculator.with_section(
        prompt.system_prompt(
            config.prompt_style,
            config.fault_codes,
            config.figures,
            config.figure_credit,
            config.row_figures,
        ),
        config.calculator,
    )
    codes = prompt.read_scope(system).codes
    key = rules.reconcile(ledger.quarter, ledger.business_zip, ledger.rows, codes).asking(config.figures)
    prefix = "us-sut" if config.level is None else f"us-sut-level{config.level}"
    return UsSutData(
        idx=idx,
        id=task_id(prefix, config.split, config.seed, idx),
        level=config.level,
        name=f"{ledger.business} {ledger.quarter.year} Q{ledger.quarter.number}",
        system_prompt=system,
        prompt=prompt.user_prompt(
            ledger.business,
            ledger.business_zip,
            ledger.quarter,
            ledger.rows,
            config.figures,
            config.prompt_style,
            config.row_figures,
            config.calculator,
            dated(codes),
            config.worksheet,
        ),
        figures=key.figures,
        faults=fault_lists(key.faults),
        row_figures=rules.row_taxes(ledger.rows, ledger.business_zip) if config.row_figures else {},
    )


class UsSutTaskset(vf.Taskset[UsSutTask, UsSutConfig]):
    @classmethod
    def toolsets(cls, config: UsSutConfig) -> list[vf.Toolset]:
        """The calculator's server when the configuration offers it (one per env worker, shared by its
        rollouts, holding nothing of any); no tool otherwise."""
        return [CalculatorToolset(vf.SharedToolsetConfig())] if config.calculator else []

    def load(self) -> Iterator[UsSutTask]:
        for data in served(self.config, make_task_data, self.config.num_tasks):
            yield UsSutTask(
                with_rollout_timeout(data, calculator.rollout_timeout(data.system_prompt)), self.config.task
            )
