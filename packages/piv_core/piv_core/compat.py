"""What differs between the verifiers versions piv supports, decided in one place.

The text environments and piv-core run on verifiers 0.3.1 (PyPI, and the 0.3.1 development
commit prime-rl pins) and on 0.4.x. The public ``verifiers.v1`` API they use (``Taskset``,
``Task``, rewards, metrics, the env server) is the same in both; two things are not:

- verifiers 0.4 sets each task's ``idx`` while iterating a taskset; 0.3.1 keeps what
  ``load()`` gave. The tasksets therefore set ``idx`` themselves (the same value 0.4 would).
- verifiers 0.4's ``TaskData`` has a durable ``id``; 0.3.1's has none and silently drops
  one. `TaskData` here is verifiers' own, with that field added where it is missing, so a
  task's id reaches its trace on both.
- The in-process harness (`piv_core.runtime.harness`) runs verifiers 0.4's bundled chat program,
  which 0.3.1 does not ship (``verifiers.v1.harnesses.utils`` arrived in 0.4.0).
  `IN_PROCESS_HARNESS` says which; `piv_core.runtime` picks the harness from it.

Each is decided from the installed verifiers (its release number, or the fields its
``TaskData`` declares), never from a failed import, so a broken 0.4 install fails loudly
instead of silently falling back.
"""

from __future__ import annotations

import re
from importlib.metadata import version

import verifiers.v1 as vf

SUPPORTED = ">=0.3.1.dev62,<0.5"
"""The verifiers range the text environments and piv-core declare."""


def release(text: str) -> tuple[int, ...]:
    """The release numbers of a version string: ``"0.3.1.dev62+g1a2b"`` -> ``(0, 3, 1)``."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    if match is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


VERIFIERS_VERSION = version("verifiers")
VERIFIERS_RELEASE = release(VERIFIERS_VERSION)
IN_PROCESS_HARNESS = VERIFIERS_RELEASE >= (0, 4)
"""Whether verifiers ships the bundled chat program `piv_core.runtime.harness` runs in-process."""

if "id" in vf.TaskData.model_fields:
    TaskData = vf.TaskData
else:

    class TaskData(vf.TaskData):  # type: ignore[no-redef]
        """verifiers 0.3.1's ``TaskData`` with verifiers 0.4's durable ``id``."""

        id: str | None = None
        """Optional durable id of the task, as in verifiers 0.4."""


__all__ = [
    "IN_PROCESS_HARNESS",
    "SUPPORTED",
    "TaskData",
    "VERIFIERS_VERSION",
    "release",
]
