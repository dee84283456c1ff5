"""`piv_core.compat` and the harness `piv_core.runtime` picks: what differs between the supported
verifiers versions, from the installed one."""

from __future__ import annotations

import pytest
import verifiers.v1 as vf
from piv_core import compat, runtime


@pytest.mark.parametrize(
    ("text", "numbers"),
    [("0.4.0", (0, 4, 0)), ("0.3.1", (0, 3, 1)), ("0.3.1.dev62+ga60a606ec", (0, 3, 1)), ("v1.2", (1, 2))],
)
def test_release_numbers(text, numbers):
    assert compat.release(text) == numbers


def test_release_refuses_what_is_no_version():
    with pytest.raises(ValueError, match="not a version"):
        compat.release("main")


def test_the_choices_follow_the_installed_verifiers():
    assert compat.IN_PROCESS_HARNESS == (compat.release(compat.VERIFIERS_VERSION) >= (0, 4))
    assert issubclass(runtime.SingleReplyHarness, vf.Harness)
    if compat.IN_PROCESS_HARNESS:
        from piv_core.runtime.harness import SingleReplyHarness

        assert runtime.SingleReplyHarness is SingleReplyHarness
    assert issubclass(compat.TaskData, vf.TaskData) and "id" in compat.TaskData.model_fields
    assert compat.TaskData(id="x", prompt="p").id == "x"
