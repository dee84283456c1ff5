"""Summarize vf-eval run directories: ``python scripts/summarize.py outputs/<run> [...]``.

The same as the ``summarize`` command: a markdown table of episodes, completions, errors,
timeouts and the mean ± stderr of every reward and metric, plus a PNG bar chart.
"""

from piv_core.cli import summarize_main

if __name__ == "__main__":
    summarize_main()
