"""The default harness of the single-reply text environments.

verifiers falls back to the `bash` harness (a coding agent with a shell) unless a taskset
exports a harness of its own. A text environment that needs neither tools nor a container
exports this one, so ``eval <env-id>`` runs verifiers' `null` chat loop by default: one
model reply, no tools.
"""

from verifiers.v1.harnesses.null import NullHarness


class SingleReplyHarness(NullHarness):
    """verifiers' `null` harness, under the environment's own id."""
