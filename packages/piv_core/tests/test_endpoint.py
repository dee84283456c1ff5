"""The baseline endpoint speaks the OpenAI chat-completions wire, streamed and not."""

from __future__ import annotations

import json

import httpx
import pytest
from piv_core import plugins
from piv_core.baseline.endpoint import BaselineEndpoint, Unrecognised, running_endpoint
from piv_core.plugins import NotRegistered, Registration, environment_ids
from piv_core.policy import Conversation, ToolCall
from piv_core.testing import register_environment


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


def test_an_unregistered_environment_is_refused_naming_the_entry_point_group():
    with pytest.raises(NotRegistered, match="piv.environments"):
        running_endpoint("no-such-env").__enter__()


def test_endpoint_app_is_constructible_without_serving():
    assert BaselineEndpoint({"echo": _echo}).app is not None


# ----------------------------------------------------------------------- several environments, one endpoint

A_PROMPT = "You reconcile ledgers of kind A."
B_PROMPT = "You reconcile ledgers of kind B."


def _named(text: str):
    return lambda conversation: text


@pytest.fixture(scope="module")
def shared_url():
    environments = [
        Registration("env-a", {"oracle": _named("A oracle"), "silent": _named("A silent")}, A_PROMPT),
        Registration("env-b", {"reference": _named("B reference"), "silent": _named("B silent")}, B_PROMPT),
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
    # A mark counts where the system prompt starts with it, nowhere else.
    inside = _ask(shared_url, "baseline/silent", [{"role": "system", "content": f"Note: {A_PROMPT}"}])
    assert inside.status_code == 400 and "none of the served" in inside.json()["error"]["message"]
    # Two served marks in one request (system prompt and folded user turn): neither answers it.
    both = [{"role": "system", "content": A_PROMPT}, {"role": "user", "content": f"{B_PROMPT}\n\nq"}]
    ambiguous = _ask(shared_url, "baseline/silent", both)
    assert ambiguous.status_code == 400 and "env-a, env-b" in ambiguous.json()["error"]["message"]
    missing = _ask(shared_url, "baseline/nope", [{"role": "system", "content": A_PROMPT}])
    assert missing.status_code == 404 and "for env-a" in missing.json()["error"]["message"]
    models = {m["id"] for m in httpx.get(f"{shared_url}/models").json()["data"]}
    assert models == {"baseline/oracle", "baseline/silent", "baseline/reference"}


def test_environments_must_be_told_apart():
    with pytest.raises(ValueError, match="share a mark"):
        BaselineEndpoint([Registration("a", {}, A_PROMPT), Registration("b", {}, A_PROMPT)])
    with pytest.raises(ValueError, match="a and b share a mark"):  # every text starting with b's has a's
        BaselineEndpoint([Registration("a", {}, A_PROMPT), Registration("b", {}, A_PROMPT + " More.")])
    with pytest.raises(ValueError, match="without a mark"):
        BaselineEndpoint([Registration("a", {}, A_PROMPT), Registration("b", {}, None)])
    with pytest.raises(ValueError, match="no environment to serve"):
        BaselineEndpoint([])


def test_an_environment_registered_by_entry_point_is_served_by_its_mark(tmp_path, monkeypatch):
    """A distribution that registers a plugin in the group is served with every other one, and its
    requests are told apart by its mark, whatever the system prompt says after it."""
    (tmp_path / "varying_prompt_env.py").write_text(
        '"""A test environment."""\n'
        "from piv_core.plugins import Registration\n"
        'PLUGIN = Registration("varying-prompt-env", {"oracle": lambda c: "varying oracle"}, '
        'mark="You audit varying ledgers.")\n'
    )
    register_environment(tmp_path, "varying-prompt-env", "varying_prompt_env:PLUGIN")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "varying-prompt-env" in environment_ids()
    with running_endpoint() as url:
        system = "You audit varying ledgers. Rung 4 rules."
        answer = _ask(url, "baseline/oracle", [{"role": "system", "content": system}])
        assert answer.json()["choices"][0]["message"]["content"] == "varying oracle"


def test_a_registration_that_breaks_the_protocol_is_refused_naming_what_is_wrong(tmp_path, monkeypatch):
    (tmp_path / "broken_env.py").write_text(
        '"""A broken test environment."""\n'
        "from piv_core.plugins import Registration\n"
        'PLUGIN = Registration("other-id", {"oracle": 3}, naive="nope", levels=(0,))\n'
        "NOT_A_PLUGIN = object()\n"
    )
    register_environment(tmp_path, "broken-env", "broken_env:PLUGIN")
    register_environment(tmp_path / "second", "bare-env", "broken_env:NOT_A_PLUGIN")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path / "second"))
    with pytest.raises(plugins.Refused) as refused:
        plugins.load("broken-env")
    for problem in ("its id is 'other-id'", "not a mapping of names to callables", "'nope'", "levels"):
        assert problem in str(refused.value)
    with pytest.raises(plugins.Refused, match="it lacks id, policies"):
        plugins.load("bare-env")
    assert {"broken-env", "bare-env"}.isdisjoint(plugins.load_all())  # left out, the others kept


def test_one_environment_answers_every_request_unless_it_stands_for_every_registered_one():
    env = Registration("env-a", {"oracle": _named("A oracle")}, A_PROMPT)
    other = Conversation([{"role": "system", "content": B_PROMPT}], [])
    assert BaselineEndpoint([env]).recognise(other) is env  # `eval env-a` serves env-a alone
    with pytest.raises(Unrecognised, match="none of the served"):  # the others were refused
        BaselineEndpoint([env], shared=True).recognise(other)
    unmarked = Registration("env-u", {"oracle": _named("U oracle")})
    assert BaselineEndpoint([unmarked], shared=True).recognise(other) is unmarked  # the only one registered
