"""How the run report shows a geo-reprojection-v1 answer: the numbers written beside the key's,
and the error the environment measured against the task's tolerance (marked `DIFF` beyond it)."""

from __future__ import annotations

from html import escape
from typing import Any

from piv_core.parsing.answer import last_answer_block
from piv_core.runs.reading import last_reply, task_data
from piv_core.runs.report_views import DIFF, css_class, shown


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
        f"<tr><th>{i + 1}</th><td>{shown(pieces[i]) if i < len(pieces) else '(missing)'}</td>"
        f"<td>{k!r}</td></tr>"
        for i, k in enumerate(key)
    )
    error_text = "unanswered" if not isinstance(error, int | float) or error < 0 else f"{error:.6g}{unit}"
    return (
        f"<p>{escape(str(data.get('family')))} on {escape(str(data.get('grid', '')))}, inputs "
        f"{escape(', '.join(map(str, inputs if isinstance(inputs, list) else [inputs])))}</p>"
        f'<table class="coordinates"><tr><th></th><th>answer</th><th>key</th></tr>{rows}'
        f"<tr><th>error</th><td{css_class('error', '' if within else DIFF)}>{escape(error_text)}</td>"
        f"<td>tolerance {tolerance:g}{unit}</td></tr></table>"
    )
