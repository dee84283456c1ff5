"""The baseline endpoint speaks the OpenAI chat-completions wire, streamed and not."""

from __future__ import annotations

import json

import httpx
import pytest
from piv_core.endpoint import BaselineEndpoint, Conversation, ToolCall, running_endpoint


def _echo(conversation: Conversation) -> str:
    return f"<answer>{len(conversation.messages)}:{conversation.user_text}</answer>"


def _tools(conversation: Conversation):
    return [ToolCall("read_file", {"name": "ledger.beancount"}), ToolCall("submit")]


def _broken(conversation: Conversation) -> str:
    raise RuntimeError("boom")


@pytest.fixture(scope="module")
def base_url():
    with running_endpoint({"echo": _echo, "tools": _tools, "broken": _broken}) as url:
        yield url


def _stream(base_url: str, body: dict) -> list:
    events = []
    with httpx.stream(
        "POST", f"{base_url}/chat/completions", json={**body, "stream": True}, timeout=10
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(line[6:])
    return events


def test_streamed_text_reply_ends_with_done(base_url):
    events = _stream(
        base_url,
        {
            "model": "baseline/echo",
            "messages": [{"role": "user", "content": "hi"}],
            "stream_options": {"include_usage": True},
        },
    )
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "<answer>1:hi</answer>"}
    assert chunks[1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[2]["usage"]["completion_tokens"] > 0


def test_streamed_tool_calls(base_url):
    events = _stream(base_url, {"model": "tools", "messages": [{"role": "user", "content": "go"}]})
    delta = json.loads(events[0])["choices"][0]["delta"]
    calls = delta["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["read_file", "submit"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"name": "ledger.beancount"}
    assert [c["index"] for c in calls] == [0, 1] and all(c["id"].startswith("call_") for c in calls)
    assert json.loads(events[1])["choices"][0]["finish_reason"] == "tool_calls"


def test_plain_json_reply_and_model_list(base_url):
    reply = httpx.post(
        f"{base_url}/chat/completions",
        json={
            "model": "baseline/echo",
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
        },
    ).json()
    assert reply["choices"][0]["message"]["content"] == "<answer>2:q</answer>"
    models = httpx.get(f"{base_url}/models").json()["data"]
    assert {m["id"] for m in models} == {"baseline/echo", "baseline/tools", "baseline/broken"}


def test_max_tokens_cuts_a_reply_like_a_model_would(base_url):
    url = f"{base_url}/chat/completions"
    text = {"model": "echo", "messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 10}
    reply = httpx.post(url, json=text).json()["choices"][0]
    assert reply["finish_reason"] == "length"
    assert reply["message"]["content"] == "<answer>1:" + "x" * 30
    calls = {"model": "tools", "messages": [], "max_completion_tokens": 3}
    reply = httpx.post(url, json=calls).json()["choices"][0]
    assert reply["finish_reason"] == "length" and "tool_calls" not in reply["message"]
    roomy = httpx.post(url, json={**text, "max_tokens": 1000}).json()["choices"][0]
    assert roomy["finish_reason"] == "stop"


def test_errors_name_the_problem(base_url):
    unknown = httpx.post(f"{base_url}/chat/completions", json={"model": "baseline/nope", "messages": []})
    assert unknown.status_code == 404 and "baseline/echo" in unknown.json()["error"]["message"]
    broken = httpx.post(f"{base_url}/chat/completions", json={"model": "broken", "messages": []})
    assert broken.status_code == 500 and "boom" in broken.json()["error"]["message"]


def test_every_environment_registers_its_policies():
    from piv_core.endpoint import load_policies

    policies = load_policies("au-bas-reconciliation-v1")
    assert {"oracle", "column-sums", "silent", "blanket", "garbage"} <= set(policies)
    with pytest.raises(SystemExit, match="no baseline policies"):
        load_policies("no-such-env")


def test_endpoint_app_is_constructible_without_serving():
    assert BaselineEndpoint({"echo": _echo}).app is not None


# ----------------------------------------------------------------------- several environments, one endpoint

A_PROMPT = "You reconcile ledgers of kind A."
B_PROMPT = "You reconcile ledgers of kind B."


def _named(text: str):
    return lambda conversation: text


@pytest.fixture(scope="module")
def shared_url():
    from piv_core.endpoint import Environment

    environments = [
        Environment("env-a", {"oracle": _named("A oracle"), "silent": _named("A silent")}, A_PROMPT),
        Environment("env-b", {"reference": _named("B reference"), "silent": _named("B silent")}, B_PROMPT),
    ]
    with running_endpoint(environments) as url:
        yield url


def _ask(url: str, model: str, messages: list) -> httpx.Response:
    return httpx.post(f"{url}/chat/completions", json={"model": model, "messages": messages}, timeout=10)


def test_the_request_itself_names_its_environment(shared_url):
    def content(model: str, messages: list) -> str:
        return _ask(shared_url, model, messages).json()["choices"][0]["message"]["content"]

    a = [{"role": "system", "content": A_PROMPT}, {"role": "user", "content": "q"}]
    b = [{"role": "system", "content": B_PROMPT}, {"role": "user", "content": "q"}]
    assert content("baseline/silent", a) == "A silent"
    assert content("baseline/silent", b) == "B silent"
    # A harness that folds the system prompt into the user turn is recognised too.
    assert content("silent", [{"role": "user", "content": f"{B_PROMPT}\n\nq"}]) == "B silent"
    # `oracle` and `reference` both reach an environment's solver: one model name for a whole run.
    assert content("baseline/oracle", b) == "B reference"
    assert content("baseline/reference", a) == "A oracle"


def test_an_unrecognised_request_is_refused_naming_the_served_environments(shared_url):
    unknown = _ask(shared_url, "baseline/silent", [{"role": "system", "content": "other"}])
    assert unknown.status_code == 400
    assert "env-a, env-b" in unknown.json()["error"]["message"]
    missing = _ask(shared_url, "baseline/nope", [{"role": "system", "content": A_PROMPT}])
    assert missing.status_code == 404 and "for env-a" in missing.json()["error"]["message"]
    models = {m["id"] for m in httpx.get(f"{shared_url}/models").json()["data"]}
    assert models == {"baseline/oracle", "baseline/silent", "baseline/reference"}


def test_environments_must_be_told_apart():
    from piv_core.endpoint import Environment

    with pytest.raises(ValueError, match="share a system prompt"):
        BaselineEndpoint([Environment("a", {}, A_PROMPT), Environment("b", {}, A_PROMPT)])
    with pytest.raises(ValueError, match="without a system prompt"):
        BaselineEndpoint([Environment("a", {}, A_PROMPT), Environment("b", {}, None)])
    with pytest.raises(ValueError, match="no environment to serve"):
        BaselineEndpoint([])


def test_an_environment_whose_prompt_varies_is_recognised_by_its_mark(tmp_path, monkeypatch):
    """``SYSTEM_PROMPT_MARK`` wins over ``SYSTEM_PROMPT``: every rung's prompt contains the mark."""
    from piv_core.endpoint import system_prompt_of

    package = tmp_path / "varying_prompt_env"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "prompt.py").write_text(
        'SYSTEM_PROMPT_MARK = "You audit varying ledgers."\n'
        'SYSTEM_PROMPT = SYSTEM_PROMPT_MARK + " Rung 4 rules."\n'
    )
    (package / "baselines.py").write_text('SYSTEM_PROMPT = "a baselines prompt, found after the mark"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert system_prompt_of("varying-prompt-env") == "You audit varying ledgers."
