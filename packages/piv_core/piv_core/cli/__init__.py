"""The suite's commands, each a thin layer over the subpackages below it.

- `commands`: ``piv-eval``, ``piv-validate`` and ``piv-summarize``;
- `signal_health`: ``piv-signal``, the learning signal rung by rung;
- `export`: ``piv-export``, tasks as a dataset and back.

(``piv-baseline`` is `baseline.endpoint` and ``piv-compare`` is `runs.compare`.)

Layer 3: imports any layer below.
"""
