"""Summarize vf-eval run directories: ``python scripts/summarize.py outputs/<run> [...]``.

The same as the ``summarize`` command: a markdown table of episodes, completions, errors,
timeouts, stop reasons and the mean ± stderr of every reward and metric, plus a PNG bar chart
(``--html`` also writes the run report).
"""

from piv_core.cli.commands import summarize_main

if __name__ == "__main__":
    summarize_main()
