"""The episode contract's numbers, defined once: the turn, token, idle-turn and per-turn call limits
of the chat loop, and the observation envelopes of the tools.

`contract` states them in the prompt and folds them into the episode digest, the tools
(`tools`) and the chat loop (`chat_loop`) enforce them, and the task's stops read them; every
one of those imports them from here, so no copy can drift from another. This module imports
nothing of the package, so it can never close an import circle.
"""

MAX_TURNS = 25
"""Model turns per episode; tool calls made on the last turn are not executed."""
TOKEN_CEILING = 40_000
"""Completion tokens (hidden reasoning included) over the whole episode."""
IDLE_TURNS = 3
"""Consecutive turns without a tool call that end the episode."""
CALLS_PER_TURN = 16
"""Tool calls run per turn; the rest of a turn's calls are answered with an error, not run."""
LEDGER_ENVELOPE = 48_000
"""Largest ledger, in bytes, that `read_file` returns whole and `write_ledger` accepts."""
SLICE_LINES = 200
"""Lines per numbered slice of the other files."""
REPLY_CAP = 52_000
"""Largest tool reply, in bytes."""
OBSERVATION_BUDGET = 768_000
"""Tool-reply bytes per episode; past it, read tools answer with a short refusal."""
FILE_ENVELOPE = 16_000
"""Largest other public file, in bytes (each must also fit in one slice)."""
MAX_CHECK_COST = 3_000
"""What booking and checking one ledger may cost, in `gate.check_cost` units (one unit is about one
account's balance summed by an assertion, a few microseconds), counted from beancount's parse before
anything is booked. The generated ledgers, as given and corrected, cost at most 1,485 (bank_recon_001
493; every rung, 150 worlds each); the bound keeps the heaviest admissible ledger's check within a
few times theirs (`bench/ledger_check_cost.py`). Without it an assertion on a parent account sums
every account beneath it, so checking is quadratic: 650 assertions on a parent of 1,000 posted
sub-accounts, 44 KB, cost over 2 s."""
