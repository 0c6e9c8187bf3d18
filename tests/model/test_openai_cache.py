"""The response cache through the real openai provider: two models on the same server
never share an answer, and a model asked again is answered from the cache (the server
sees no new request) with its evidence saying so."""

from __future__ import annotations

from pathlib import Path

from assay import Sample, Task, eval, includes
from assay.evidence import verify_run
from tests.helpers import events_of
from tests.servers.openai_compat import OpenAICompatServer


def quiz() -> Task:
    samples = [Sample(input=f"question {i}", target="question", id=f"s{i}") for i in range(3)]
    return Task(dataset=samples, scorer=includes(), name="quiz")


def run(model: str, server: OpenAICompatServer, log_dir: Path) -> Path:
    (result,) = eval(quiz(), model=model, model_base_url=server.url, log_dir=log_dir, cache=True)
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path


def model_calls(path: Path) -> list[dict[str, object]]:
    """The ``sampling`` events of model calls (a trial's own outcome is one too)."""
    return [e["data"] for e in events_of(path, "sampling") if "model" in e["data"]]


def test_two_models_on_one_server_never_share_a_cached_answer(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    run("openai/model-a", openai_server, tmp_path / "a1")
    assert [s.body["model"] for s in openai_server.requests] == ["model-a"] * 3
    second = run("openai/model-b", openai_server, tmp_path / "b")
    assert [s.body["model"] for s in openai_server.requests][3:] == ["model-b"] * 3
    calls = model_calls(second)
    assert len(calls) == 3 and not any(data.get("cached") for data in calls)

    again = run("openai/model-a", openai_server, tmp_path / "a2")
    assert len(openai_server.requests) == 6  # model-a's answers came from the cache
    calls = model_calls(again)
    assert len(calls) == 3 and all(data.get("cached") is True for data in calls)
    assert verify_run(again).ok
