"""What the HTML run report shows inside one rollout: the answer beside the key, per environment.

Each view is chosen by the fields the trace's `TaskData` carries, never by environment name, and
reads the reply through `piv_core.answer`:

- figures and faults (``faults`` and a mapping of cent figures, e.g. au-bas's ``bas`` or
  us-sut's ``figures``): each figure as written beside the key's, and every (item, code) pair
  either side claims; a figure that differs and a pair only one side has carry the class
  `DIFF` (and ``data-figure`` / ``data-pair`` attributes naming them);
- a coordinate answer (``family``, ``key``, ``tolerance``): the numbers beside the key and the
  error the environment measured against the tolerance, `DIFF` when it is not within it;
- a ledger (``files``, ``fixes``, ``balances``): each planted discrepancy and whether the
  environment's own scorer (rerun in its sandbox on the ledger the reward scored) found it
  resolved, its penalties and refusals, then the text of the last ``write_ledger`` call against
  the golden ledger as a unified diff; an unresolved fix, a penalty and a changed line carry `DIFF`.

Every other rollout gets no answer view; the report still shows its scores, tool calls and
reply. Everything the model wrote is escaped before it reaches the page.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from piv_core.answer import json_answer, last_answer_block
from piv_core.audit import read_fault_map
from piv_core.money import format_cents, parse_cents
from piv_core.runs import last_reply, task_data, tool_calls

DIFF = "diff"
"""The class on exactly the cells where the answer and the key disagree."""
LEDGER_TOOL = "write_ledger"


RUNTIME_FIELDS = frozenset({"resources", "timeout"})
"""verifiers' own `TaskData` fields that are mappings (what a task asks of its runtime), never a key."""


def _figures_field(data: Mapping[str, Any]) -> str | None:
    """The task-data field holding the key's cent figures: a non-empty mapping of names to ints."""
    for name, value in data.items():
        if (
            name != "faults"
            and name not in RUNTIME_FIELDS
            and isinstance(value, dict)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values())
        ):
            return name
    return None


SHOWN = 80
"""Characters of any one figure, code or number the model wrote that a cell shows."""


def _short(text: str) -> str:
    """`text` escaped, cut to `SHOWN` characters."""
    return escape(text[:SHOWN]) + ("…" if len(text) > SHOWN else "")


def _cls(*names: str) -> str:
    kept = " ".join(n for n in names if n)
    return f' class="{kept}"' if kept else ""


def figures_view(trace: dict[str, Any]) -> str | None:
    data = task_data(trace)
    field = _figures_field(data)
    key = read_fault_map(data.get("faults"))
    if field is None or key is None:
        return None
    answer = json_answer(last_reply(trace))
    answer = answer if isinstance(answer, dict) else None
    rows = []
    for name, cents in data[field].items():
        written = None if answer is None else answer.get(name)
        wrong = parse_cents(written) != cents
        shown = "(missing)" if written is None else str(written)
        rows.append(
            f"<tr><th>{escape(name)}</th><td{_cls('figure', DIFF if wrong else '')} "
            f'data-figure="{escape(name)}">{_short(shown)}</td><td>{format_cents(cents)}</td></tr>'
        )
    parts = []
    if answer is None:
        parts.append(
            '<p class="note">no JSON object in the last answer block: every figure counts as missing</p>'
        )
    parts.append(
        f'<table class="figures"><tr><th>{escape(field)}</th><th>answer</th><th>key</th></tr>'
        + "".join(rows)
        + "</table>"
    )
    claimed = read_fault_map(answer.get("faults")) if answer is not None else None
    if answer is not None and claimed is None:
        parts.append('<p class="note">the answer\'s <code>faults</code> is not a fault map</p>')
    parts.append(_pairs_table(claimed or frozenset(), key))
    return "".join(parts)


def _pairs_table(claimed: frozenset[tuple[str, str]], key: frozenset[tuple[str, str]]) -> str:
    """One row per item either side names; each pair a chip, `DIFF` where only one side has it."""
    items = sorted({item for item, _ in claimed | key})

    def chips(
        side: str, mine: frozenset[tuple[str, str]], other: frozenset[tuple[str, str]], item: str
    ) -> str:
        return " ".join(
            f'<span{_cls("pair", DIFF if (item, code) not in other else "")} data-side="{side}" '
            f'data-pair="{escape(item)}/{escape(code)}">{_short(code)}</span>'
            for code in sorted(code for i, code in mine if i == item)
        )

    rows = "".join(
        f"<tr><th>{_short(item)}</th><td>{chips('answer', claimed, key, item)}</td>"
        f"<td>{chips('key', key, claimed, item)}</td></tr>"
        for item in items
    )
    matched = len(claimed & key)
    caption = f"fault pairs: {matched} matched, {len(claimed - key)} extra, {len(key - claimed)} missed"
    return (
        f'<table class="pairs"><caption>{caption}</caption>'
        f"<tr><th>item</th><th>answer</th><th>key</th></tr>{rows}</table>"
    )


def coordinates_view(trace: dict[str, Any]) -> str | None:
    data = task_data(trace)
    key, tolerance = data.get("key"), data.get("tolerance")
    if not isinstance(key, list) or not isinstance(tolerance, int | float) or "family" not in data:
        return None
    body = last_answer_block(last_reply(trace))
    pieces = body.replace(",", " ").split() if body is not None else []
    metrics = trace.get("metrics") or {}
    error = metrics.get("error")
    unit = "°" if data.get("family") == "bearing" else " m"
    inputs = data.get("inputs") or []
    within = isinstance(error, int | float) and 0 <= error <= tolerance
    rows = "".join(
        f"<tr><th>{i + 1}</th><td>{_short(pieces[i]) if i < len(pieces) else '(missing)'}</td>"
        f"<td>{k!r}</td></tr>"
        for i, k in enumerate(key)
    )
    error_text = "unanswered" if not isinstance(error, int | float) or error < 0 else f"{error:.6g}{unit}"
    return (
        f"<p>{escape(str(data.get('family')))} on {escape(str(data.get('grid', '')))}, inputs "
        f"{escape(', '.join(map(str, inputs if isinstance(inputs, list) else [inputs])))}</p>"
        f'<table class="coordinates"><tr><th></th><th>answer</th><th>key</th></tr>{rows}'
        f"<tr><th>error</th><td{_cls('error', '' if within else DIFF)}>{escape(error_text)}</td>"
        f"<td>tolerance {tolerance:g}{unit}</td></tr></table>"
    )


def submitted_ledger(trace: dict[str, Any]) -> str | None:
    """The text of the last ``write_ledger`` call in the trace, or None when there was none."""
    for name, arguments in reversed(tool_calls(trace)):
        if name != LEDGER_TOOL:
            continue
        try:
            text = json.loads(arguments).get("text")
        except (ValueError, AttributeError):
            continue
        if isinstance(text, str):
            return text
    return None


def golden_ledger(data: Mapping[str, Any]) -> str:
    """The golden ledger of a beancount-ledger task, from the task data alone.

    Imported lazily: `beancount_ledger.golden_ledger` where the package has it, else
    `beancount_ledger.taskset.golden_of`; raises ImportError when the package is not installed.
    """
    import beancount_ledger
    from beancount_ledger.taskset import LedgerData, golden_of

    build: Callable[[Any], str] = getattr(beancount_ledger, "golden_ledger", golden_of)
    return build(LedgerData.model_validate(dict(data)))


def rescored(data: Mapping[str, Any], text: str | None) -> Any:
    """`beancount_ledger.isolated.score` of `text` against the task's key: the environment's own
    scorer, run in its sandbox worker as the reward runs it (model text never loads here)."""
    from beancount_ledger import isolated
    from beancount_ledger.taskset import LedgerData, key_of

    return isolated.score(text, key_of(LedgerData.model_validate(dict(data))))


def _normalized(text: str) -> list[str]:
    """The lines of a ledger with runs of whitespace collapsed and any indentation made two spaces,
    so alignment is no difference."""
    return [("  " if line[:1].isspace() else "") + " ".join(line.split()) for line in text.splitlines()]


def ledger_view(trace: dict[str, Any]) -> str | None:
    data = task_data(trace)
    if not all(isinstance(data.get(f), dict | list) for f in ("files", "fixes", "balances")):
        return None
    submitted = submitted_ledger(trace)
    try:
        golden = golden_ledger(data)
    except ImportError:
        return '<p class="note">beancount-ledger is not installed here: no golden ledger to compare with</p>'
    except Exception as error:  # noqa: BLE001 - a report shows why a key could not be rebuilt
        reason = f"{type(error).__name__}: {error}"
        return f'<p class="note">golden ledger not rebuilt: {escape(reason)}</p>'
    scored = (trace.get("info") or {}).get("ledger")
    scored = scored if isinstance(scored, str) else submitted
    parts = [_resolution(data["fixes"], rescored(data, scored))]
    if submitted is None:
        parts.append(f'<p class="note">no <code>{LEDGER_TOOL}</code> call: nothing was written</p>')
        return "".join(parts)
    if scored != submitted:
        parts.append(
            f'<p class="note">the last <code>{LEDGER_TOOL}</code> call was not the ledger scored '
            "(the scorer reads the latest one the tool accepted)</p>"
        )
    from beancount_ledger.limits import LEDGER_ENVELOPE

    size = len(submitted.encode("utf-8", "surrogatepass"))
    if size > LEDGER_ENVELOPE:  # refused by the tool; a diff of it would only cost time
        parts.append(
            f'<p class="note">the last <code>{LEDGER_TOOL}</code> text is {size:,} bytes, over the '
            f"{LEDGER_ENVELOPE:,}-byte envelope: not diffed</p>"
        )
        return "".join(parts)
    parts.append(_diff(golden, submitted))
    return "".join(parts)


def _diff(golden: str, submitted: str) -> str:
    lines = list(
        difflib.unified_diff(
            _normalized(golden),
            _normalized(submitted),
            "golden",
            f"submitted ({LEDGER_TOOL})",
            n=2,
            lineterm="",
        )
    )
    if not lines:
        return '<p class="same">the submitted ledger is the golden ledger, line for line</p>'
    rendered = []
    for line in lines:
        kind = ""
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("+"):
            kind = f"{DIFF} add"
        elif line.startswith("-"):
            kind = f"{DIFF} del"
        elif line.startswith("@@"):
            kind = "hunk"
        rendered.append(f"<span{_cls('line', kind)}>{escape(line)}</span>")
    caption = "<p>written against golden (whitespace runs collapsed):</p>"
    return caption + '<pre class="ledger-diff">' + "".join(rendered) + "</pre>"


def _resolution(fixes: list[Any], score: Any) -> str:
    """Each planted discrepancy and whether the scored ledger resolved it; what else the scorer saw."""
    resolved = set(getattr(score, "resolved", ()) or ())
    rows = []
    for fix in fixes:
        if not isinstance(fix, dict):
            continue
        ref = str(fix.get("ref"))
        postings = ", ".join(f"{account} {amount}" for account, amount in (fix.get("fix") or {}).items())
        done = ref in resolved
        rows.append(
            f"<tr><td>{escape(ref)}</td><td>{escape(str(fix.get('kind')))}</td>"
            f"<td>{escape(str(fix.get('date')))}</td><td>{escape(postings)}</td>"
            f'<td{_cls("fix", "" if done else DIFF)} data-fix="{escape(ref)}">'
            f"{'resolved' if done else 'not resolved'}</td></tr>"
        )
    findings = [f"balances hit {score.balances_hit}/{score.balances_total}"]
    for name in ("damaged", "fabricated", "invented"):
        count = getattr(score, name, 0)
        findings.append(f"<span{_cls('penalty', DIFF if count else '')}>{name} {count}</span>")
    for reason, label in ((score.refused, "refused"), (score.error, "scorer error")):
        if reason:
            findings.append(f'<span class="{DIFF}">{label}: {escape(str(reason))}</span>')
    findings += [f'<span class="{DIFF}">{escape(str(e))}</span>' for e in (score.errors or [])[:5]]
    return (
        '<table class="fixes"><caption>planted discrepancies, as the scorer judged the ledger</caption>'
        "<tr><th>bank ref</th><th>kind</th><th>date</th><th>fix</th><th>scored</th></tr>"
        + "".join(rows)
        + f'</table><p class="findings">{"; ".join(findings)}</p>'
    )


VIEWS: tuple[Callable[[dict[str, Any]], str | None], ...] = (figures_view, coordinates_view, ledger_view)
"""Tried in order; the first that recognises the task data renders the answer."""


def answer_view(trace: dict[str, Any]) -> str | None:
    """The first view that recognises the trace's task data, or None."""
    for view in VIEWS:
        rendered = view(trace)
        if rendered is not None:
            return rendered
    return None
