"""How large a task may grow: what verifiers' pipeline can carry, and the largest size knob that fits.

One prompt. verifiers' `null` harness, and every harness built on its chat program, starts
that program with the system prompt and the prompt as command-line arguments
(``--system-prompt=...``, ``--prompt=...``); a harness that cannot place a system prompt folds
it into the prompt as ``system + "\\n\\n" + prompt``. Any task may be run under such a
harness. Linux refuses to start a program with an argument longer than MAX_ARG_STRLEN, 131,072
bytes with its terminating NUL (``OSError: [Errno 7] Argument list too long``), and the episode
dies with an error that names no knob. So the folded prompt of the widest task a configuration
can produce must stay within `PROMPT_BUDGET`, which leaves 16 KiB of the limit for the flag
name and for a harness that adds text of its own.

A whole set. verifiers holds every task of a finite taskset in memory at once when it is shuffled
or run without a limit; the prompt text of the set stays within `SET_BUDGET`.

An environment bounds its size knobs with `largest_fitting` over a worst-case size it derives
from its own renderer, and checks the bound at load with `piv_core.tasksets.knobs.at_most`.
"""

from __future__ import annotations

from collections.abc import Callable

ARG_STRLEN_MAX = 131_072
"""Linux MAX_ARG_STRLEN: the most bytes of one command-line argument, its terminating NUL included."""
PROMPT_BUDGET = 112 * 1024
"""The most UTF-8 bytes of one task's folded prompt (system prompt, blank line, prompt)."""
SET_BUDGET = 512 * 1024 * 1024
"""The most UTF-8 bytes of prompt text a finite taskset may hold in all."""


def prompt_bytes(system_prompt: str | None, prompt: str) -> int:
    """UTF-8 bytes of the prompt as one argument, with the system prompt folded in as verifiers folds it."""
    folded = f"{system_prompt}\n\n{prompt}" if system_prompt else prompt
    return len(folded.encode())


def largest_fitting(size: Callable[[int], int], low: int, budget: int = PROMPT_BUDGET) -> int:
    """The largest ``n >= low`` with ``size(n) <= budget``, for a `size` that never decreases as n grows.

    Raises ValueError when even ``size(low)`` is over `budget`.
    """
    if size(low) > budget:
        raise ValueError(f"size({low}) = {size(low)} bytes is already over the budget of {budget}")
    fits, step = low, 1
    while size(fits + step) <= budget:  # gallop up, then halve the step back down
        fits, step = fits + step, step * 2
    while step > 1:
        step //= 2
        if size(fits + step) <= budget:
            fits += step
    return fits


__all__ = ["ARG_STRLEN_MAX", "PROMPT_BUDGET", "SET_BUDGET", "largest_fitting", "prompt_bytes"]
