"""The cache key separates everything that decides an answer, and nothing else.

(A well-known harness keys its cache without the model and hands one model's answers to
another: these tests pin that two models, two endpoints or two epochs never share one.)
"""

from __future__ import annotations

from assay.model import GenerateConfig, cache_key, user_message
from assay.model._cache_key import shown_url

MESSAGES = [user_message("what is two plus two")]
SAMPLED = GenerateConfig(temperature=0.7)


def key(**changes: object) -> str:
    args: dict[str, object] = {
        "model": "openai/gpt-4o-mini",
        "base_url": "http://127.0.0.1:8000/v1",
        "messages": MESSAGES,
        "tools": None,
        "config": SAMPLED,
        "epoch": 1,
    }
    args.update(changes)
    return cache_key(**args)  # type: ignore[arg-type]


def test_the_same_call_gives_the_same_key() -> None:
    assert key() == key()
    assert len(key()) == 64 and int(key(), 16) >= 0


def test_two_models_never_share_a_key() -> None:
    assert key(model="openai/gpt-4o-mini") != key(model="openai/gpt-4o")
    # the same name behind two providers is two models
    assert key(model="openai/llama") != key(model="local/llama")


def test_two_base_urls_never_share_a_key() -> None:
    assert key(base_url="http://127.0.0.1:8000/v1") != key(base_url="http://127.0.0.1:8001/v1")
    assert key(base_url=None) != key(base_url="http://127.0.0.1:8000/v1")


def test_messages_tools_and_answer_settings_are_in_the_key() -> None:
    assert key(messages=[user_message("what is two plus three")]) != key()
    tool = {"name": "add", "parameters": {"type": "object"}}
    assert key(tools=[tool]) != key()
    for changed in (
        GenerateConfig(temperature=0.8),
        GenerateConfig(temperature=0.7, max_tokens=5),
        GenerateConfig(temperature=0.7, stop=["\n"]),
        GenerateConfig(temperature=0.7, seed=3),
        GenerateConfig(temperature=0.7, top_p=0.5),
    ):
        assert key(config=changed) != key(), changed


def test_how_a_call_is_made_is_not_in_the_key() -> None:
    plumbing = GenerateConfig(temperature=0.7, max_connections=3, max_retries=9, timeout=4.0)
    assert key(config=plumbing) == key()


def test_epochs_get_their_own_answer_unless_sampling_is_deterministic() -> None:
    assert key(epoch=1) != key(epoch=2)
    assert key(config=GenerateConfig(), epoch=1) != key(config=GenerateConfig(), epoch=2)
    greedy = GenerateConfig(temperature=0)
    assert key(config=greedy, epoch=1) == key(config=greedy, epoch=2)


def test_a_shown_url_keeps_no_credentials() -> None:
    url = "https://user:s3cret@api.example.test:8443/v1?api-key=s3cret#frag"
    shown = shown_url(url)
    assert shown == "https://api.example.test:8443/v1"
    assert "s3cret" not in str(shown)
    assert shown_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert shown_url(None) is None
