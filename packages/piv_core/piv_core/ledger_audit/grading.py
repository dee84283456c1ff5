"""The ledger-audit task the tax environments share: its answer key, and how a reply is read and graded.

A ledger environment reconciles one period's books into a few money figures, each named by a
label, and a fault key ``{txn_id: codes}``. Two codes mean the same in every such ledger: a
row whose invoice already appeared higher up (``duplicate_invoice``) and a row dated outside
the period (``outside_period``) are left out of the figures; `audit_rows` does that walk.

A reply is parsed when its last ``<answer>`` block holds a JSON object whose ``faults`` is a
fault map (`piv_core.ledger_audit.audit`); otherwise every score is 0, ``parsed`` included. A figure that
is missing or not an exact cent amount is simply wrong. A task may also ask for one figure per
row (`Scheme.row_key`: a map {txn_id: amount} in the answer). Then only corrections earn: each
row that has a fault is graded like a label, right when its amount is and the fault map lists it
with a code (a row listed with ``[]`` is not flagged), a row without one is not graded, and a
fault pair counts as found only when its row's amount is right, so that neither the books' column
copied nor flags without the working earn anything; `worksheet` is the closing of such a task's
prompt, each row's line ending on its `verdict`. Such a task may read the faults from the row
figures instead of a fault map (`Claims`; the row map must then be a JSON object). Grading never
raises on a reply (only on a key that asks for no graded figure), and a reply is parsed once however
many rewards and metrics grade it. Each environment keeps its own names for the shared metrics
(`Scheme.metric_names`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from piv_core.compat import TaskData
from piv_core.ledger_audit.audit import code_scores, fault_pairs, pair_scores, read_fault_map
from piv_core.parsing.answer import json_answer, parsed_once
from piv_core.parsing.money import format_cents, parse_cents

DUPLICATE_INVOICE = "duplicate_invoice"
OUTSIDE_PERIOD = "outside_period"
LEFT_OUT = (DUPLICATE_INVOICE, OUTSIDE_PERIOD)
"""The codes whose rows are keyed but left out of the figures (`audit_rows`)."""

RowT = TypeVar("RowT", bound=Any)
"""A NamedTuple row with ``txn_id`` and ``invoice`` fields."""


class Key(NamedTuple):
    """The answer key: figures in cents by label, and the fault key {txn_id: codes}."""

    figures: dict[str, int]
    faults: dict[str, tuple[str, ...]]

    def asking(self, labels: Iterable[str]) -> Key:
        """The key of a task that asks for `labels` only (the fault key is whole)."""
        return Key({label: self.figures[label] for label in labels}, self.faults)


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
            if any(code in LEFT_OUT for code in codes):
                continue
        kept.append((row, codes))
    return faults, kept


Claims = Mapping[str, tuple[int, str]]
"""How a task that reads the faults from the per-row figures reads them: {txn_id: (the figure the
books record for the row, in cents; the fault code a figure other than that reports)}."""


class LedgerData(TaskData):
    level: int | None = None
    """The rung of the ladder the task belongs to; None outside the ladder."""
    faults: dict[str, list[str]]
    """The fault key: txn_id -> fault codes."""
    row_figures: dict[str, int] = {}
    """The per-row figure of every row in cents, txn_id -> cents, when the task asks for them
    (`Scheme.row_key`); empty when it does not."""
    claims: dict[str, tuple[int, str]] | None = None
    """When the task reads the faults from the per-row figures instead of a fault map (`Claims`):
    each row's recorded figure and the code a change to it reports; None when it asks for a map."""


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


def _written(value: int | Decimal) -> str:
    return format_cents(value) if isinstance(value, int) else str(value)


def answer_text(
    figures: Mapping[str, int | Decimal],
    faults: Mapping[str, Iterable[str]] | None,
    rows: tuple[str, Mapping[str, int | Decimal]] | None = None,
) -> str:
    """A well-formed answer block: figures (cents, or Decimals as written), then `rows` when
    given (the per-row figures under their answer key: (key, {txn_id: amount})), and a fault map
    unless `faults` is None (a task that reads the faults from the per-row figures asks none)."""
    body: dict[str, Any] = {label: _written(v) for label, v in figures.items()}
    if rows is not None:
        body[rows[0]] = {txn: _written(v) for txn, v in rows[1].items()}
    if faults is not None:
        body["faults"] = fault_lists(faults)
    return f"<answer>\n{json.dumps(body)}\n</answer>"


def figure_of(name: str, txn_id: str) -> str:
    """How a worksheet names one row's figure (`name`, e.g. ``gst``), in the row's line (`verdict`)
    and in the answer line's placeholder alike: ``gst of T001``."""
    return f"{name} of {txn_id}"


def verdict(recorded: str, figure: str, code: str, named: str, asked: Sequence[tuple[str, str]] = ()) -> str:
    """The end of a worksheet line (`worksheet`): the books' figure (`recorded`, e.g. ``recorded
    gst 4.40``) less the row's correct one (`figure`, e.g. ``<result>`` or ``0.00``) worked out as
    a difference; whether that difference is 0.00, asked as a question of its own (yes or no),
    and the row's faults as its entry in the answer's fault map by that answer, ``[]`` for yes and
    ``["<code>"]`` for no (a small model asked for the faults straight from the difference often
    wrote ``[]`` beside a difference it had worked out as not 0.00); then the correct figure again
    under the name the answer line gives it (`named`, from `figure_of`), so that the last figure of
    a line is the one the answer line takes. A subtraction shows a swapped digit or a slip that a glance at
    two figures misses. `asked`: the yes-or-no questions the line put before this one, each as (what
    it is about, the code a no gives), e.g. ``("the date", "outside_period")``; the faults are then
    the codes of every question answered no."""
    if asked:
        each = ", ".join(f'"{no}" for {about}' for about, no in (*asked, ("the difference", code)))
        faults = f"<the list of the code of each answer that is no: {each}; [] if every answer is yes>"
    else:
        faults = f'<[] if yes, ["{code}"] if no>'
    return (
        f"Difference = {recorded} - {figure} = <difference>. Is the difference 0.00? <yes or no>. "
        f"Faults: {faults}. {named}: {figure}"
    )


def worksheet(
    row_lines: Sequence[str],
    labels: Mapping[str, str],
    row_key: str,
    txn_ids: Sequence[str],
    figure: str,
    stated: Mapping[str, str] = MappingProxyType({}),
    sums: Mapping[str, Sequence[str]] = MappingProxyType({}),
    closing: str | None = None,
    fault_map: bool = True,
) -> str:
    """The closing part of a user prompt that asks for every row's figure: the environment's line
    per row (`row_lines`, each with ``<...>`` left to fill in, ending on its `verdict` named
    by `figure_of`), then the answer line with the labels asked and the rows' ids in
    place, every figure a placeholder (each label's saying how it is worked out from the rows:
    `labels` maps it to those words) and every row's faults the ones its line found (`figure`: the
    name of a row's figure, e.g. ``gst``). A row whose line states its figure outright (`stated`,
    {txn_id: figure as written}, e.g. 0.00 for a GST-free sale) has that figure in place in the
    answer line too. A label in `sums` ({label: the txn_ids whose figures add up to it}) gets a line
    of its own before the answer line, the addition written out with each row's figure as its line
    gives it. All of it is one block to copy, the answer line straight after the rows and sums, so
    that it is the last thing written; a closing sentence asks for the reply to open on the first
    row's line and end on the answer line (a small model otherwise often writes the answer line
    alone, with none of the work, or stops after the sums); `closing`, when given, is said in its
    place. `fault_map` False: the answer line has no fault map (the faults are read from the rows'
    figures, `Claims`), and the row lines need no `verdict`."""
    placeholder = {txn: stated.get(txn, f"<{figure_of(figure, txn)}>") for txn in txn_ids}
    added = [f"{label} = {' + '.join(placeholder[txn] for txn in sums[label])} = <{label}>" for label in sums]
    figures = "".join(
        f'"{label}": "<{label}>", ' if label in sums else f'"{label}": "<{label}: {how}>", '
        for label, how in labels.items()
    )
    per_row = ", ".join(f'"{txn}": "{placeholder[txn]}"' for txn in txn_ids)
    faults = ", ".join(f'"{txn}": <faults of {txn}>' for txn in txn_ids)
    fault_part = f', "faults": {{{faults}}}' if fault_map else ""
    answer = f'<answer>{{{figures}"{row_key}": {{{per_row}}}{fault_part}}}</answer>'
    return (
        "Copy everything below, from the first line to </answer>, replacing each <...>, brackets included, "
        "by what it asks "
        "(the answer line takes its values from your lines; a reply without it scores 0):\n\n"
        + "\n".join([*row_lines, *added])
        + "\n"
        + answer
        + "\n\n"
        + (
            closing
            or f"Start your reply with {txn_ids[0]}'s line and end it with the answer line: every line "
            "above, then <answer>...</answer> (a reply without the answer line scores 0)."
        )
    )


class Answer(NamedTuple):
    figures: Mapping[str, int | None]
    pairs: frozenset[tuple[str, str]] | None
    """The fault map's pairs; None when the answer has no fault map."""
    rows: Mapping[str, int | None] | None
    """The per-row figures under the row key, {txn_id: cents or None}; None when the answer has
    no JSON object there (or no row key was read)."""

    def reported(self, claims: Claims | None) -> frozenset[tuple[str, str]] | None:
        """The fault pairs the answer reports: its fault map's, or under `claims` those its row
        figures claim (each row stated at another figure than the books', with its claim's code);
        None when it reports none in the form the task asks (then it is not parsed)."""
        if claims is None:
            return self.pairs
        if (stated := self.rows) is None:
            return None
        return frozenset(
            (txn, code) for txn, (books, code) in claims.items() if stated.get(txn) not in (None, books)
        )


def read_answer(reply: str | None, labels: tuple[str, ...], row_key: str | None = None) -> Answer | None:
    """The reply's figures (by label), per-row figures (under `row_key`) and fault pairs, or None
    when it holds no JSON object (immutable). A grade reads the faults the task asks for
    (`Answer.reported`): a reply without them is not parsed."""
    obj: Any = json_answer(reply)
    if not isinstance(obj, dict):
        return None
    stated_rows = obj.get(row_key) if row_key is not None else None
    rows = (
        MappingProxyType({txn: parse_cents(v) for txn, v in stated_rows.items()})
        if isinstance(stated_rows, dict)
        else None
    )
    return Answer(
        MappingProxyType({label: parse_cents(obj.get(label)) for label in labels}),
        read_fault_map(obj.get("faults")),
        rows,
    )


class Grade(NamedTuple):
    figures_correct: float
    """1.0 when every graded figure the task asks for (per-row figures included) is right to the
    cent, else 0.0; under partial credit, the share of them that are right (then equal to
    `figure_accuracy`)."""
    fault_audit: float
    """F1 over (txn_id, code) pairs."""
    figure_accuracy: float
    """The share of the graded figures asked for that are right."""
    fault_precision: float
    fault_recall: float
    num_flagged: float
    parsed: float


UNPARSED = Grade(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def metric_key(name: str) -> str:
    """`name` as part of a metric name: lower-cased, every character but a-z and 0-9 as ``_``."""
    return re.sub(r"[^a-z0-9]", "_", name.lower())


@dataclass(frozen=True)
class Scheme:
    """What one environment's answer holds and what its metrics are called.

    Besides the shared metrics under the environment's names, every trace carries, whatever
    the task asked: ``<label>_correct`` per label, and ``precision_<code>``, ``recall_<code>``
    and ``keyed_<code>`` per fault code (`metric_key` spells label and code).
    """

    labels: tuple[str, ...]
    """Every figure an answer may state, in the order the prompt lists them."""
    graded: tuple[str, ...]
    """The figures that count towards the figures reward when the task asks for them."""
    codes: tuple[str, ...]
    """The environment's fault codes."""
    metric_names: Mapping[str, str]
    """The environment's name for each `Grade` field it reports as a metric."""
    row_key: str | None = None
    """The answer key under which a task that asks for per-row figures has them stated."""
    parse: Callable[[str | None], Answer | None] = field(init=False, repr=False, compare=False)
    """`read_answer` for these labels, remembering recent replies (`piv_core.parsing.answer.parsed_once`)."""
    _label_metrics: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _code_metrics: tuple[tuple[str, str, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not set(self.graded) <= set(self.labels):
            raise ValueError(f"graded figures {self.graded} must be among the labels {self.labels}")
        unknown = set(self.metric_names.values()) - set(Grade._fields)
        if unknown:
            raise ValueError(f"metric_names maps to unknown grade fields {sorted(unknown)}")
        labels, row_key = self.labels, self.row_key
        object.__setattr__(self, "parse", parsed_once(lambda reply: read_answer(reply, labels, row_key)))
        object.__setattr__(self, "_label_metrics", tuple(f"{metric_key(label)}_correct" for label in labels))
        object.__setattr__(
            self,
            "_code_metrics",
            tuple(
                tuple(f"{kind}_{metric_key(code)}" for kind in ("precision", "recall", "keyed"))
                for code in self.codes
            ),
        )

    def grade(
        self,
        reply: str | None,
        figures: Mapping[str, int],
        faults: Mapping[str, list[str]],
        partial: bool = False,
        rows: Mapping[str, int] | None = None,
        claims: Claims | None = None,
    ) -> Grade:
        """Score `reply` against the figures asked for (cents by label) and the fault key.

        Only the labels in `figures` were asked for; of those, the ones in `graded` are graded.
        When the task asks for per-row figures (`rows`, {txn_id: cents}), each row the key faults
        is graded too, right when its amount is and the reply's fault map lists it (with any
        codes: the codes are the audit's to grade); a row without a fault is not graded, and a
        fault pair counts as found only when its row's amount is right (every pair listed still
        counts against the precision). So neither copying the books' column nor flagging rows
        without working their figures out earns anything.
        `partial` (partial credit per figure, off by default) makes ``figures_correct`` the share
        of the graded figures that are right instead of all or nothing.
        `claims` (with `rows`): the faults are read from the row figures, not a fault map (`Claims`).
        """
        graded = [label for label in self.graded if label in figures]
        if not graded:
            raise ValueError(f"the key asks for none of the graded figures {self.graded}: {sorted(figures)}")
        answer = self.parse(reply)
        pairs = answer.reported(claims) if answer is not None else None
        if answer is None or pairs is None:
            return UNPARSED
        stated = answer.figures
        asked = rows or {}
        right = sum(stated[label] == figures[label] for label in graded)
        count = len(graded)
        backed = None
        if asked:
            given = answer.rows or {}
            corrected = {txn for txn, cents in asked.items() if given.get(txn) == cents}
            flagged = {txn for txn, _ in pairs}
            faulty = [txn for txn in asked if faults.get(txn)]
            right += sum(txn in corrected and txn in flagged for txn in faulty)
            count += len(faulty)
            backed = lambda pair: pair[0] in corrected  # noqa: E731 - a flag counts with its row's figure
        audit = pair_scores(pairs, fault_pairs(faults), backed)
        return Grade(
            figures_correct=right / count if partial else float(right == count),
            fault_audit=audit.f1,
            figure_accuracy=right / count,
            fault_precision=audit.precision,
            fault_recall=audit.recall,
            num_flagged=float(audit.claimed),
            parsed=1.0,
        )

    def metrics(
        self,
        reply: str | None,
        figures: Mapping[str, int],
        faults: Mapping[str, list[str]],
        partial: bool = False,
        rows: Mapping[str, int] | None = None,
        claims: Claims | None = None,
    ) -> dict[str, float]:
        """Every metric of `reply`: the shared ones under the environment's names, then per label
        and per fault code (``keyed_<code>`` counts the key's rows with that code)."""
        grade = self.grade(reply, figures, faults, partial, rows, claims)
        out = {name: getattr(grade, field) for name, field in self.metric_names.items()}
        answer = self.parse(reply)
        pairs = answer.reported(claims) if answer is not None else None
        stated: Mapping[str, int | None] = answer.figures if pairs is not None and answer is not None else {}
        for label, name in zip(self.labels, self._label_metrics):
            out[name] = float(label in figures and label in stated and stated[label] == figures[label])
        by_code = code_scores(pairs or (), fault_pairs(faults), self.codes)
        for code, (precision, recall, keyed) in zip(self.codes, self._code_metrics):
            scores = by_code[code]
            out[precision] = scores.precision if pairs is not None else 0.0
            out[recall] = scores.recall if pairs is not None else 0.0
            out[keyed] = float(scores.true)
        return out

    def metric_names_all(self) -> list[str]:
        """Every metric name `metrics` reports, in order."""
        return list(self.metrics(None, dict.fromkeys(self.graded, 0), {}))


class ErringAudit(NamedTuple):
    """A scripted auditor's treatment of a ledger, right or wrong row by row."""

    faults: dict[str, tuple[str, ...]]
    """The fault map it reports."""
    kept: list[tuple[Any, tuple[str, ...]]]
    """The rows it keeps in the figures, each with the codes it gave it."""
    trusted: set[str]
    """Rows it took for clean although they carry a fault: their recorded tax is believed."""


def erring_audit(
    rows: Iterable[Any],
    key_faults: Mapping[str, Sequence[str]],
    p: float,
    rng: Any,
    wrong_codes: Callable[[Any], Sequence[str]],
) -> ErringAudit:
    """The key's audit of `rows`, each row mistreated with probability `p`: a faulted row taken
    for clean, a clean row given one of `wrong_codes(row)`. Draws from `rng` in row order (one
    draw a row, and one more for a wrong code), so the same seed gives the same audit; ``p = 0``
    is the key's audit exactly. The scripted ``noisy`` policies of the tax environments use it."""
    from piv_core.ledger_audit.plan import pick

    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p}")
    faults: dict[str, tuple[str, ...]] = {}
    kept: list[tuple[Any, tuple[str, ...]]] = []
    trusted: set[str] = set()
    for row in rows:
        codes = tuple(key_faults.get(row.txn_id, ()))
        if rng.random() < p:
            if codes:
                codes = ()
                trusted.add(row.txn_id)
            else:
                codes = (pick(rng, wrong_codes(row)),)
        if codes:
            faults[row.txn_id] = codes
        if DUPLICATE_INVOICE not in codes and OUTSIDE_PERIOD not in codes:
            kept.append((row, codes))
    return ErringAudit(faults, kept, trusted)
