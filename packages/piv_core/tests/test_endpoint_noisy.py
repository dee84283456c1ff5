"""Graded-skill policies (``baseline/noisy-<p>``) and replies with a reasoning field, over the wire."""

from __future__ import annotations

import json
import random

import httpx
import pytest
from piv_core.baseline.endpoint import running_endpoint
from piv_core.plugins import Registration
from piv_core.policy import Conversation, Reasoned, ToolCall, noisy_share

SYSTEM = "You are the noisy test environment."
TOOLS_SYSTEM = "You are the noisy tools test environment."


def _noisy_text(conversation: Conversation, p: float, rng: random.Random) -> str:
    return f"<answer>{p}:{rng.random():.12f}</answer>"


def _noisy_tools(conversation: Conversation, p: float, rng: random.Random):
    return [ToolCall("look", {"draw": rng.random()})]


def _thinking(conversation: Conversation):
    return Reasoned("<answer>42</answer>", reasoning="six times seven")


TEXT_ENV = Registration("noisy-text", {"thinking": _thinking}, SYSTEM, _noisy_text)
TOOLS_ENV = Registration("noisy-tools", {}, TOOLS_SYSTEM, _noisy_tools)


@pytest.fixture(scope="module")
def base_url():
    with running_endpoint([TOOLS_ENV, TEXT_ENV]) as url:
        yield url


def _ask(base_url: str, model: str, messages: list[dict], **body) -> httpx.Response:
    return httpx.post(
        f"{base_url}/chat/completions", json={"model": model, "messages": messages, **body}, timeout=10
    )


def _task(user: str, system: str = SYSTEM) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _content(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]["message"]["content"]


def test_noisy_share_parses_and_bounds():
    assert noisy_share("noisy-0.2") == 0.2
    assert noisy_share("noisy-1") == 1.0
    assert noisy_share("oracle") is None
    with pytest.raises(ValueError, match="between 0 and 1"):
        noisy_share("noisy-1.5")


def test_rollouts_of_a_task_get_successive_draws_reproducibly(base_url):
    first = [_content(_ask(base_url, "baseline/noisy-0.3", _task("task A"))) for _ in range(4)]
    assert all(c.startswith("<answer>0.3:") for c in first)
    assert len(set(first)) == 4  # the rollouts of a group differ
    other = [_content(_ask(base_url, "baseline/noisy-0.3", _task("task B"))) for _ in range(4)]
    assert not set(first) & set(other)  # seeded per task
    # A fresh endpoint hands out the same draws again: runs are reproducible.
    with running_endpoint([TEXT_ENV]) as fresh:
        again = [_content(_ask(fresh, "baseline/noisy-0.3", _task("task A"))) for _ in range(4)]
    assert again == first


def test_later_turns_keep_the_rollouts_draw(base_url):
    messages = _task("ledger task", TOOLS_SYSTEM)
    turns = []
    for _ in range(3):  # three rollouts' first turns
        reply = _ask(base_url, "baseline/noisy-0.5", messages).json()["choices"][0]["message"]
        turns.append(reply)
    draws = [json.loads(t["tool_calls"][0]["function"]["arguments"])["draw"] for t in turns]
    assert len(set(draws)) == 3
    ids = [t["tool_calls"][0]["id"] for t in turns]
    assert [i.split("_")[1] for i in ids] == ["n0", "n1", "n2"]
    # Rollout 1's second turn: the same rng as its first turn.
    follow = [
        *messages,
        turns[1],
        {"role": "tool", "tool_call_id": ids[1], "content": "ok"},
    ]
    second = _ask(base_url, "baseline/noisy-0.5", follow).json()["choices"][0]["message"]
    assert json.loads(second["tool_calls"][0]["function"]["arguments"])["draw"] == draws[1]
    assert second["tool_calls"][0]["id"].startswith("call_n1_")


def test_bad_noisy_names_are_refused(base_url):
    response = _ask(base_url, "baseline/noisy-2", _task("x"))
    assert response.status_code == 404 and "between 0 and 1" in response.text
    response = _ask(base_url, "baseline/nosiy-0.2", _task("x"))
    assert response.status_code == 404 and "noisy-<p>" in response.text


def test_environment_without_noisy_refuses_it():
    env = Registration("plain", {"oracle": lambda c: "<answer>1</answer>"}, SYSTEM)
    with running_endpoint([env]) as url:
        response = _ask(url, "baseline/noisy-0.1", _task("x"))
    assert response.status_code == 404 and "unknown baseline policy" in response.text


def test_reasoned_reply_carries_reasoning_content(base_url):
    message = _ask(base_url, "baseline/thinking", _task("q")).json()["choices"][0]["message"]
    assert message["content"] == "<answer>42</answer>"
    assert message["reasoning_content"] == "six times seven"
    events = []
    with httpx.stream(
        "POST",
        f"{base_url}/chat/completions",
        json={"model": "baseline/thinking", "messages": _task("q"), "stream": True},
        timeout=10,
    ) as response:
        events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    deltas = [json.loads(e)["choices"][0]["delta"] for e in events[:-1] if json.loads(e)["choices"]]
    assert deltas[0]["reasoning_content"] == "six times seven"
    assert "".join(d.get("content", "") for d in deltas) == "<answer>42</answer>"


def test_reasoning_counts_against_max_tokens(base_url):
    body = _ask(base_url, "baseline/thinking", _task("q"), max_tokens=3).json()
    assert body["choices"][0]["finish_reason"] == "length"
