"""The ledger-audit task the tax environments share: its answer key, and how a reply is read and graded.

A ledger environment reconciles one period's books into a few money figures, each named by a
label, and a fault key ``{txn_id: codes}``. Two codes mean the same in every such ledger: a
row whose invoice already appeared higher up (``duplicate_invoice``) and a row dated outside
the period (``outside_period``) are left out of the figures; `audit_rows` does that walk.

A reply is parsed when its last ``<answer>`` block holds a JSON object whose ``faults`` is a
fault map (`piv_core.audit`); otherwise every score is 0, ``parsed`` included. A figure that
is missing or not an exact cent amount is simply wrong. Grading never raises, and a reply is
parsed once however many rewards and metrics grade it. Each environment keeps its own names
for the shared metrics (`Scheme.metric_names`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from piv_core.answer import json_answer, parsed_once
from piv_core.audit import fault_pairs, pair_scores, read_fault_map
from piv_core.compat import TaskData
from piv_core.money import format_cents, parse_cents

DUPLICATE_INVOICE = "duplicate_invoice"
OUTSIDE_PERIOD = "outside_period"

RowT = TypeVar("RowT", bound=Any)
"""A NamedTuple row with ``txn_id`` and ``invoice`` fields."""


class Key(NamedTuple):
    """The answer key: figures in cents by label, and the fault key {txn_id: codes}."""

    figures: dict[str, int]
    faults: dict[str, tuple[str, ...]]


def fault_lists(faults: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """A fault key as task data and answers hold it: {txn_id: [codes]}."""
    return {txn: list(codes) for txn, codes in faults.items()}


def audit_rows(
    rows: Iterable[RowT], faults_of: Callable[[RowT, set[str]], tuple[str, ...]]
) -> tuple[dict[str, tuple[str, ...]], list[tuple[RowT, tuple[str, ...]]]]:
    """The fault key of `rows` and the rows that stay in the figures, each with its codes.

    `faults_of(row, seen)` gives a row's codes, `seen` being the invoices listed above it. A row
    with ``duplicate_invoice`` or ``outside_period`` is keyed but left out of the figures.
    """
    faults: dict[str, tuple[str, ...]] = {}
    kept: list[tuple[RowT, tuple[str, ...]]] = []
    seen: set[str] = set()
    for row in rows:
        codes = faults_of(row, seen)
        seen.add(row.invoice)
        if codes:
            faults[row.txn_id] = codes
            if DUPLICATE_INVOICE in codes or OUTSIDE_PERIOD in codes:
                continue
        kept.append((row, codes))
    return faults, kept


class LedgerData(TaskData):
    faults: dict[str, list[str]]
    """The fault key: txn_id -> fault codes."""


def key_holds(
    data: LedgerData, system_prompt: str, figures: Mapping[str, int], derive: Callable[[str], Key]
) -> bool:
    """Whether `derive`, reading only the prompt text, gives back the key `data` holds."""
    try:
        key = derive(data.prompt_text)
    except ValueError:
        return False
    return (
        data.system_prompt == system_prompt
        and key.figures == figures
        and fault_lists(key.faults) == data.faults
    )


def answer_text(figures: Mapping[str, int | Decimal], faults: Mapping[str, Iterable[str]]) -> str:
    """A well-formed answer block: figures (cents, or Decimals as written) and a fault map."""
    body = {label: format_cents(v) if isinstance(v, int) else str(v) for label, v in figures.items()}
    return f"<answer>\n{json.dumps({**body, 'faults': fault_lists(faults)})}\n</answer>"


class Answer(NamedTuple):
    figures: Mapping[str, int | None]
    pairs: frozenset[tuple[str, str]]


def read_answer(reply: str | None, labels: tuple[str, ...]) -> Answer | None:
    """The reply's figures (by label) and fault pairs, or None when it is unparseable (immutable)."""
    obj: Any = json_answer(reply)
    if not isinstance(obj, dict):
        return None
    pairs = read_fault_map(obj.get("faults"))
    if pairs is None:
        return None
    return Answer(MappingProxyType({label: parse_cents(obj.get(label)) for label in labels}), pairs)


class Grade(NamedTuple):
    figures_correct: float
    """1.0 when every graded figure is right to the cent."""
    fault_audit: float
    """F1 over (txn_id, code) pairs."""
    figure_accuracy: float
    fault_precision: float
    fault_recall: float
    num_flagged: float
    parsed: float


UNPARSED = Grade(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Scheme:
    """What one environment's answer holds and what its metrics are called."""

    labels: tuple[str, ...]
    """Every figure an answer states, in the order the prompt lists them."""
    graded: tuple[str, ...]
    """The figures that count towards the figures reward."""
    metric_names: Mapping[str, str]
    """The environment's name for each `Grade` field it reports as a metric."""
    parse: Callable[[str | None], Answer | None] = field(init=False, repr=False, compare=False)
    """`read_answer` for these labels, remembering recent replies (`piv_core.answer.parsed_once`)."""

    def __post_init__(self) -> None:
        if not set(self.graded) <= set(self.labels):
            raise ValueError(f"graded figures {self.graded} must be among the labels {self.labels}")
        unknown = set(self.metric_names.values()) - set(Grade._fields)
        if unknown:
            raise ValueError(f"metric_names maps to unknown grade fields {sorted(unknown)}")
        labels = self.labels
        object.__setattr__(self, "parse", parsed_once(lambda reply: read_answer(reply, labels)))

    def grade(self, reply: str | None, figures: Mapping[str, int], faults: Mapping[str, list[str]]) -> Grade:
        """Score `reply` against the figures (cents by label) and the fault key."""
        answer = self.parse(reply)
        if answer is None:
            return UNPARSED
        stated = answer.figures
        right = sum(stated[label] == figures[label] for label in self.graded)
        audit = pair_scores(answer.pairs, fault_pairs(faults))
        return Grade(
            figures_correct=float(right == len(self.graded)),
            fault_audit=audit.f1,
            figure_accuracy=right / len(self.graded),
            fault_precision=audit.precision,
            fault_recall=audit.recall,
            num_flagged=float(audit.claimed),
            parsed=1.0,
        )

    def metrics(self, grade: Grade) -> dict[str, float]:
        """The metrics of `grade` under the environment's names."""
        return {name: getattr(grade, field) for name, field in self.metric_names.items()}
