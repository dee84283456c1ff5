"""What the suite's tasksets are built from: knobs, ladders, seeded streams, prompt budgets, re-scoring.

- `knobs` validates taskset knobs, each error naming the knob;
- `ladder` turns a ``level`` knob into a rung of other knobs' values, and serves mixes of rungs;
- `rng` gives seeded per-task random streams and the train / eval split;
- `prompt_size` bounds the size knobs by what verifiers' pipeline can carry;
- `rescoring` records the rules a trace was scored under and merges a replay's knobs over them.

Layer 0: imports nothing of piv_core.
"""
