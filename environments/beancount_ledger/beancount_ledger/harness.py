"""The package's harness: verifiers' `null` chat program with the episode contract's chat loop.

The stock `null` harness ends at the first reply without a tool call; this one runs
`chat_loop.run_chat_loop` instead (three idle replies end it, every request is capped at the
tokens left). Exported from the package, it is the default harness of ``beancount-ledger``.
"""

import inspect

from verifiers.v1.clients import ModelContext
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.harnesses.utils import compaction, core, mcp
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM, bundle_program, launch_chat_program
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

from beancount_ledger import chat_loop, contract

_GUARD = 'if __name__ == "__main__":\n    asyncio.run(main())\n'


def program_source() -> str:
    """The bundled chat program with its entry point moved after our `run_chat_loop`."""
    assert chat_loop.IDLE_LIMIT == contract.IDLE_TURNS and chat_loop.TOKEN_CEILING == contract.TOKEN_CEILING
    bundled = bundle_program(CHAT_PROGRAM, mcp, compaction, core)
    if not bundled.rstrip().endswith(_GUARD.rstrip()):
        raise RuntimeError("verifiers' chat program changed shape; chat_loop cannot be spliced in")
    head = bundled.rstrip()[: -len(_GUARD.rstrip())]
    loop = inspect.getsource(chat_loop).replace("if TYPE_CHECKING:", "if False:", 1)
    return f"{head}\n{loop}"


class LedgerHarness(NullHarness):
    """`null` with the contract's chat loop (idle-turn limit, per-request token cap)."""

    async def setup(self, runtime: Runtime) -> None:
        await runtime.prepare_uv_script(program_source(), self.config.resolved_env)

    async def launch(
        self,
        ctx: ModelContext,
        trace: Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        system_prompt, prompt = self.resolve_prompt(data)
        return await launch_chat_program(
            program_source(),
            self.config,
            ctx,
            trace,
            runtime,
            endpoint,
            secret,
            mcp_urls,
            system_prompt,
            prompt,
            extra_args=[f"--tool-interception-url={tool_interception_url}"] if tool_interception_url else (),
        )
