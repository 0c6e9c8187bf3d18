"""A model-graded scorer's graders are closed when the run ends: ``assay.eval`` returns
with no connection of theirs left open on the server (the real openai SDK, a real
server on 127.0.0.1), and a grader that is asked again reconnects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import Sample, Task, eval, generate, model_graded_qa
from assay.model import Model, get_model
from tests.helpers import graded_reply, wait_for
from tests.servers.openai_compat import OpenAICompatServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer(reply=graded_reply) as running:
        monkeypatch.setenv("OPENAI_BASE_URL", running.url)
        yield running


def graded_task(grader: str | Model) -> Task:
    return Task(
        dataset=[Sample(input=f"Capital of France? ({i})", target="Paris") for i in range(4)],
        solver=generate(),
        scorer=model_graded_qa(model=grader),
        name="capitals",
    )


def test_graders_built_by_name_are_closed_when_eval_returns(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    task = graded_task("openai/grader")  # kept alive here: only a close can end them
    (result,) = eval(task, model="mock/echo", log_dir=tmp_path, max_samples=4)
    assert result.status == "success", result.error
    assert len(server.requests) == 4
    assert {r.body["model"] for r in server.requests} == {"grader"}
    assert wait_for(lambda: server.open_connections == 0), server.open_connections

    # the same task again: the closed grader reconnects, and is closed again at the end
    (again,) = eval(task, model="mock/echo", log_dir=tmp_path, max_samples=4)
    assert again.status == "success", again.error
    assert len(server.requests) == 8
    assert wait_for(lambda: server.open_connections == 0), server.open_connections


def test_a_grader_model_passed_in_is_closed_too_and_reconnects(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    # eval's event loop ends when it returns, and the connections with it: only the run
    # can close them, as it closes a Model given as the model under test
    grader = get_model("openai/grader")
    task = graded_task(grader)
    for round in (1, 2):
        (result,) = eval(task, model="mock/echo", log_dir=tmp_path, max_samples=4)
        assert result.status == "success", result.error
        assert len(server.requests) == 4 * round
        assert wait_for(lambda: server.open_connections == 0)


def test_a_local_grader_server_stops_when_the_eval_returns(tmp_path: Path) -> None:
    """A llama.cpp grader (a real GGUF model on 127.0.0.1) is stopped with the run."""
    from assay.model import GenerateConfig
    from assay.model import _local_server as servers
    from tests.helpers import events_of

    pytest.importorskip("xllamacpp")
    before = servers.running()
    grader = get_model("local/smollm2", GenerateConfig(max_tokens=8, temperature=0), ctx_size=1024)
    (result,) = eval(graded_task(grader), model="mock/echo", log_dir=tmp_path, limit=1)
    assert result.status == "success", result.error
    assert result.path is not None
    graded = events_of(result.path, "score_sampling")
    assert [e["data"]["model"] for e in graded] == ["local/smollm2"]  # it did run
    assert servers.running() == before


def test_a_model_a_user_scorer_makes_itself_is_closed_when_eval_returns(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    """A scorer of the user's that calls ``get_model`` during the run (no ``aclose`` of
    its own): the run closes every model made on its behalf."""
    from assay import Score, Target, TaskState, accuracy, scorer

    @scorer(metrics=[accuracy()])
    def asks_a_grader():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            grader = get_model("openai/grader")  # a new Model for every trial
            reply = await grader.generate(f"Is {state.output.completion!r} right?")
            return Score(value="C" if "GRADE: C" in reply.completion else "I")

        return score

    task = Task(
        dataset=[Sample(input=f"Capital of France? ({i})", target="Paris") for i in range(3)],
        solver=generate(),
        scorer=asks_a_grader(),
        name="own-grader",
    )
    (result,) = eval(task, model="mock/echo", log_dir=tmp_path, max_samples=3)
    assert result.status == "success", result.error
    assert len(server.requests) == 3
    assert wait_for(lambda: server.open_connections == 0), server.open_connections
