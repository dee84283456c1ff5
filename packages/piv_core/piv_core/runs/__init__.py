"""What a run leaves behind, read without trusting it, summarised, compared and reported.

- `files` reads a run directory's files within bounds;
- `reading` reads ``traces.jsonl`` from vf-eval and ``summary.json`` from vf-validate;
- `skills` says which metrics are about one skill and which tasks have it;
- `summary` writes the markdown tables and the bar chart;
- `compare` pairs two runs over the tasks both ran;
- `report`, `report_failures` and `report_views` make the self-contained HTML run report.

Layer 2: imports `parsing`, `tasksets`, `ledger_audit` and `plugins`.
"""
