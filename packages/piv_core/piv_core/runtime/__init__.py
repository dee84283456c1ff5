"""Running an episode: the in-process harnesses, the model request, what a rollout may reach, how long
it may take, and verifiers' env-server pool.

- `harness` runs verifiers' chat program in the env server's process (verifiers 0.4);
- `chat_request` makes one model turn as that program requests it, without the SDK's per-call cost;
- `openai_internals` holds the openai SDK's private pieces `chat_request` uses, behind a probe;
- `confinement` refuses a harness that would run model-written commands on the host;
- `timeouts` is the rollout timeout every environment ships;
- `serving` starts and stops verifiers' env-server pool, as a trainer runs it.

`SingleReplyHarness` is the harness a text environment runs under: the in-process one where the
installed verifiers ships the chat program it runs (`compat.IN_PROCESS_HARNESS`), else verifiers' own
``null`` harness under the environment's id (one process per episode).

Layer 1: imports `compat` and `parsing`.
"""

from piv_core.compat import IN_PROCESS_HARNESS

if IN_PROCESS_HARNESS:
    from piv_core.runtime.harness import SingleReplyHarness
else:
    from verifiers.v1.harnesses.null import NullHarness

    class SingleReplyHarness(NullHarness):  # type: ignore[no-redef]
        """verifiers' `null` harness (one process per episode) under the environment's own id."""


__all__ = ["SingleReplyHarness"]
