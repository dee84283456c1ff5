"""The calculator a text task may offer: one tool, ``calculate(expression)``, and the prompt section
that states it: ``python -m piv_core.runtime.calculator``.

The tool works out exact decimal arithmetic (`piv_core.parsing.arithmetic`: the four operations
on decimal numbers, nothing else read, every cost bounded before any work) and answers in one line:
the value to the cent and, where that rounds it, the unrounded value. It reads no file, state,
environment or secret, and runs no code: the reply is a function of the expression alone, worked
out in microseconds. A bad expression, or an argument that is not text, comes back to the model as
an error line; the episode goes on.

A task offers it when its system prompt ends on `PROMPT_SECTION` (`offered` reads that,
`with_section` writes it) and its user prompt on `USER_NOTE` (`noted`; `with_note` appends it, and a
worksheet says it in place of its closing sentence); such a task gets `rollout_timeout`; its taskset
then declares `CalculatorToolset` taskset-scoped: one server per env worker, shared by every
rollout, holding nothing of any of them (its state is verifiers' empty ``State``, which it never
pulls or pushes). How many calls a reply and an episode may make is `confinement.SingleReply`'s to
hold: `CALLS_PER_TURN` and `TOOL_TURNS`, stated in the section.
"""

from __future__ import annotations

import verifiers.v1 as vf

from piv_core.parsing.arithmetic import MAX_CHARS, PRECISION, SHOWN_DECIMALS, calculation
from piv_core.runtime.timeouts import SINGLE_REPLY_SECONDS, SINGLE_REPLY_TOKENS, rollout_seconds
from piv_core.runtime.tool_server import serve_promptly

TOOL = "calculate"
"""The tool's name, as the model calls it."""
CALLS_PER_TURN = 16
"""The most calls one reply may make."""
TOOL_TURNS = 8
"""The most replies with calls an episode may have."""
ROLLOUT_SECONDS = rollout_seconds(SINGLE_REPLY_TOKENS, TOOL_TURNS + 1)
"""The default rollout timeout of an episode that offers the calculator (19 minutes): a single
reply's tokens, and a turn's allowance for each reply of calls besides the last reply."""

PROMPT_SECTION = f"""CALCULATOR
A tool, {TOOL}, works out arithmetic for you. Its one argument, expression, is text made of numbers \
(digits with at most one decimal point), + - * /, brackets and spaces, at most {MAX_CHARS} \
characters, for example "554.63 / 11". It answers with the value rounded to the cent, half a cent \
up, and where that rounds it, the unrounded value (worked to {PRECISION} significant digits, shown \
to {SHOWN_DECIMALS} decimals). It reads nothing but the expression. A reply may make up to \
{CALLS_PER_TURN} calls, and up to {TOOL_TURNS} replies may make calls; a reply beyond either ends the \
task there and is graded as it stands. Only your last reply is graded: it makes no call and holds \
the answer block."""
"""What a system prompt that offers the calculator ends on."""


USER_NOTE = (
    f"You have the {TOOL} tool, which works out arithmetic exactly: first make a reply of tool calls "
    f"only, calling {TOOL} once for each division or product the work above needs (up to "
    f"{CALLS_PER_TURN} calls a reply, and more such replies if you need them); then, with its "
    "answers, write your reply as asked above."
)
"""What the user prompt of a task that offers the calculator ends on: a small model follows the last
instruction it reads, and the user prompt's own closing asks for the written work at once."""


def with_section(system: str, offered_: bool) -> str:
    """`system` followed by `PROMPT_SECTION` when the calculator is `offered_`."""
    return f"{system}\n\n{PROMPT_SECTION}" if offered_ else system


def with_note(user: str, offered_: bool) -> str:
    """`user` followed by `USER_NOTE` when the calculator is `offered_`."""
    return f"{user}\n\n{USER_NOTE}" if offered_ else user


def noted(user: str) -> tuple[bool, str]:
    """Whether a user prompt ends on `USER_NOTE`, and the prompt without it."""
    tail = f"\n\n{USER_NOTE}"
    return (True, user[: -len(tail)]) if user.endswith(tail) else (False, user)


def rollout_timeout(system: object) -> float:
    """The default rollout timeout of a task whose system prompt is `system` (`ROLLOUT_SECONDS` where
    it offers the calculator, a single reply's otherwise)."""
    return ROLLOUT_SECONDS if offered(system)[0] else SINGLE_REPLY_SECONDS


def offered(system: object) -> tuple[bool, object]:
    """Whether a system prompt offers the calculator, and the prompt without its section (a prompt
    that is not text, or none, offers nothing)."""
    tail = f"\n\n{PROMPT_SECTION}"
    if isinstance(system, str) and system.endswith(tail):
        return True, system[: -len(tail)]
    return False, system


class CalculatorToolset(vf.Toolset[vf.SharedToolsetConfig, vf.State]):
    """The calculator's tool server (taskset-scoped: declare it from ``Taskset.toolsets``)."""

    TOOL_PREFIX = None

    async def setup(self) -> None:
        """Runs in the server's own process before it serves: replies go out at once (`tool_server`)."""
        serve_promptly()

    @vf.tool
    def calculate(self, expression: str) -> str:
        """Exact decimal arithmetic on numbers, + - * / and brackets: the value to the cent."""
        return calculation(expression)


if __name__ == "__main__":
    CalculatorToolset.run()
