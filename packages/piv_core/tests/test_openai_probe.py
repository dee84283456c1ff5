"""The probe of the OpenAI SDK's private pieces (`piv_core.runtime.openai_internals`): each way a release of
the SDK could break one turns the fast model-turn path off, with one warning naming it, and the
probe itself leaves the program's random state alone."""

from __future__ import annotations

import asyncio
import json
import random

import openai
import pytest
from piv_core.compat import IN_PROCESS_HARNESS

if not IN_PROCESS_HARNESS:
    pytest.skip("the in-process harness runs verifiers 0.4's chat program", allow_module_level=True)

from openai._base_client import BaseClient  # noqa: E402
from piv_core.runtime import chat_request  # noqa: E402
from piv_core.runtime import openai_internals as sdk_internals  # noqa: E402


def _no_event_names(monkeypatch):
    class Decoder(openai._streaming.SSEDecoder):
        def decode(self, line):
            return None if line.startswith("event:") else super().decode(line)

    monkeypatch.setattr(openai._streaming, "SSEDecoder", Decoder)


BREAKAGES = {
    "openapi_dumps": lambda mp: mp.delattr(openai._utils._json, "openapi_dumps"),
    "openapi_dumps escaping": lambda mp: mp.setattr(
        openai._utils._json, "openapi_dumps", lambda obj: json.dumps(obj).encode()
    ),
    "SSEDecoder": lambda mp: mp.delattr(openai._streaming, "SSEDecoder"),
    "SSEDecoder without event names": _no_event_names,
    "FinalRequestOptions": lambda mp: mp.delattr(openai._models, "FinalRequestOptions"),
    "_should_retry": lambda mp: mp.delattr(BaseClient, "_should_retry"),
    "_should_retry never": lambda mp: mp.setattr(BaseClient, "_should_retry", lambda self, r: False),
    "_calculate_retry_timeout": lambda mp: mp.setattr(
        BaseClient, "_calculate_retry_timeout", lambda self, remaining, options, headers=None: 0.5
    ),
    "_make_status_error_from_response": lambda mp: mp.setattr(
        BaseClient,
        "_make_status_error_from_response",
        lambda self, response: openai.APIStatusError("failed", response=response, body=None),
    ),
    "_process_response_data": lambda mp: mp.setattr(
        BaseClient, "_process_response_data", lambda self, *, data, cast_to, response: data
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_private_piece_turns_the_fast_path_off_with_one_warning(monkeypatch, caplog, breakage):
    sdk_internals.available.cache_clear()
    assert sdk_internals.available()
    with monkeypatch.context() as broken:
        BREAKAGES[breakage](broken)
        sdk_internals.available.cache_clear()
        with caplog.at_level("WARNING", logger=sdk_internals.__name__):
            assert not sdk_internals.available() and not chat_request.fast_path()
            assert not sdk_internals.available()
        warnings = [r for r in caplog.records if r.name == sdk_internals.__name__]
        assert len(warnings) == 1 and breakage.split()[0] in warnings[0].getMessage()
        assert sdk_internals._found == {}
        with pytest.raises(RuntimeError, match="fast model-turn path is off"):
            asyncio.run(chat_request.request_turn("http://127.0.0.1:1/v1", "k", "m", [], None))
    sdk_internals.available.cache_clear()
    assert sdk_internals.available()


def test_the_probe_leaves_the_random_state_alone():
    random.seed(5)
    state = random.getstate()
    sdk_internals.available.cache_clear()
    assert sdk_internals.available() and random.getstate() == state
