"""The package's harness: verifiers' `null` chat program with the episode contract's chat loop,
run in-process.

The stock `null` harness ends at the first reply without a tool call; this one runs
`chat_loop.run_chat_loop` instead (three idle replies end it, every request is capped at the
tokens left). The program is verifiers' bundled chat program with that loop spliced in; it is
executed in the env server's process by `piv_core.harness.run_chat_program` (no process per
episode), calling the task's tool servers and the interception endpoint exactly as the script
would. Exported from the package, it is the default harness of ``beancount-ledger``.
"""

import inspect
from functools import lru_cache

from piv_core.harness import InProcessNullHarness
from verifiers.v1.harnesses.utils import compaction, core, mcp
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM, bundle_program

from beancount_ledger import chat_loop, contract

_GUARD = 'if __name__ == "__main__":\n    asyncio.run(main())\n'


@lru_cache(maxsize=1)
def program_source() -> str:
    """The bundled chat program with its entry point moved after our `run_chat_loop`."""
    ours = (chat_loop.IDLE_LIMIT, chat_loop.TOKEN_CEILING, chat_loop.CALLS_PER_TURN)
    if ours != (contract.IDLE_TURNS, contract.TOKEN_CEILING, contract.CALLS_PER_TURN):
        raise RuntimeError("chat_loop's limits differ from the episode contract's")
    bundled = bundle_program(CHAT_PROGRAM, mcp, compaction, core)
    if not bundled.rstrip().endswith(_GUARD.rstrip()):
        raise RuntimeError("verifiers' chat program changed shape; chat_loop cannot be spliced in")
    head = bundled.rstrip()[: -len(_GUARD.rstrip())]
    loop = inspect.getsource(chat_loop).replace("if TYPE_CHECKING:", "if False:", 1)
    return f"{head}\n{loop}"


class LedgerHarness(InProcessNullHarness):
    """`null` with the contract's chat loop (idle-turn limit, per-request token cap), in-process."""

    def program_source(self) -> str:
        return program_source()
