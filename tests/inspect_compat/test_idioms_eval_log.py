"""Held-out Inspect idioms, running evals and reading logs: ``eval`` and its options,
``eval_set``, ``eval_retry``, ``task_with``, ``read_eval_log`` and friends, each
written as Inspect's documentation shows it with ``inspect_ai`` changed to ``assay``."""

from __future__ import annotations

from pathlib import Path

from assay import Epochs, Task, eval, eval_set, task, task_with
from assay.dataset import Sample
from assay.log import list_eval_logs, read_eval_log, read_eval_log_samples
from assay.scorer import includes, match
from assay.solver import generate, system_message

DEFAULT = "Default output from mockllm/model"


@task
def hello(count: int = 3):
    return Task(
        dataset=[Sample(input=f"Say hi {i}", target="Default", id=i) for i in range(1, count + 1)],
        solver=[system_message("Be kind."), generate()],
        scorer=includes(),
    )


def test_eval_returns_logs() -> None:
    logs = eval(hello(), model="mockllm/model")
    log = logs[0]
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert log.eval.task == "hello" and log.eval.model == "mockllm/model"


def test_eval_with_log_dir(tmp_path: Path) -> None:
    log = eval(hello(), model="mockllm/model", log_dir=str(tmp_path / "logs"))[0]
    assert Path(log.location).parent == tmp_path / "logs"


def test_eval_limit() -> None:
    log = eval(hello(), model="mockllm/model", limit=2)[0]
    assert len(log.samples) == 2


def test_eval_limit_range() -> None:
    log = eval(hello(), model="mockllm/model", limit=(1, 2))[0]
    assert len(log.samples) == 1


def test_eval_sample_id() -> None:
    log = eval(hello(), model="mockllm/model", sample_id=[1, 3])[0]
    assert sorted(s.id for s in log.samples) == [1, 3] or sorted(
        str(s.id) for s in log.samples
    ) == ["1", "3"]


def test_eval_epochs() -> None:
    log = eval(hello(count=1), model="mockllm/model", epochs=3)[0]
    assert sorted(s.epoch for s in log.samples) == [1, 2, 3]


def test_task_epochs_object() -> None:
    t = Task(
        dataset=[Sample(input="x", target="Default")], scorer=includes(), epochs=Epochs(2, "max")
    )
    log = eval(t, model="mockllm/model")[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_eval_task_args() -> None:
    log = eval(hello, model="mockllm/model", task_args={"count": 2})[0]
    assert len(log.samples) == 2


def test_eval_generate_options() -> None:
    log = eval(hello(), model="mockllm/model", temperature=0.2, max_tokens=100, seed=7)[0]
    assert log.status == "success"


def test_eval_sample_limits() -> None:
    log = eval(hello(), model="mockllm/model", message_limit=10, token_limit=10_000, time_limit=60)[
        0
    ]
    assert log.status == "success"


def test_eval_fail_on_error_and_retry_on_error() -> None:
    log = eval(hello(), model="mockllm/model", fail_on_error=0.5, retry_on_error=2)[0]
    assert log.status == "success"


def test_eval_max_connections_and_samples() -> None:
    log = eval(hello(), model="mockllm/model", max_connections=2, max_samples=2, max_tasks=1)[0]
    assert log.status == "success"


def test_eval_several_tasks() -> None:
    other = Task(
        dataset=[Sample(input="x", target="Default")], scorer=match(location="any"), name="other"
    )
    logs = eval([hello(), other], model="mockllm/model")
    assert [log.eval.task for log in logs] == ["hello", "other"]


def test_eval_several_models() -> None:
    logs = eval(hello(count=1), model=["mockllm/model", "mockllm/other"])
    assert sorted(log.eval.model for log in logs) == ["mockllm/model", "mockllm/other"]


def test_eval_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(
        "from assay import Task, task\n"
        "from assay.dataset import Sample\n"
        "from assay.scorer import includes\n\n\n"
        "@task\n"
        "def greet():\n"
        "    return Task(dataset=[Sample(input='hi', target='Default')], scorer=includes())\n"
    )
    log = eval("tasks.py@greet", model="mockllm/model")[0]
    assert log.status == "success"


def test_eval_with_solver_override() -> None:
    log = eval(hello(count=1), model="mockllm/model", solver=[generate()])[0]
    assert log.status == "success"


def test_task_with() -> None:
    changed = task_with(hello(), solver=generate(), name="hello_plain")
    log = eval(changed, model="mockllm/model")[0]
    assert log.eval.task == "hello_plain"


def test_task_metadata_version_tags() -> None:
    t = Task(
        dataset=[Sample(input="x", target="Default")],
        scorer=includes(),
        version=2,
        tags=["demo"],
        metadata={"k": 1},
    )
    assert eval(t, model="mockllm/model")[0].status == "success"


def test_eval_set(tmp_path: Path) -> None:
    success, logs = eval_set(
        [hello(count=1)], log_dir=str(tmp_path / "set"), model=["mockllm/model"]
    )
    assert success and len(logs) == 1
    again, _ = eval_set([hello(count=1)], log_dir=str(tmp_path / "set"), model=["mockllm/model"])
    assert again


def test_read_eval_log() -> None:
    location = eval(hello(), model="mockllm/model")[0].location
    log = read_eval_log(location)
    assert log.status == "success"
    assert len(log.samples) == 3
    sample = log.samples[0]
    assert sample.output.completion == DEFAULT
    assert sample.scores["includes"].value in ("C", 1, 1.0)
    assert sample.target == "Default"


def test_read_eval_log_header_only() -> None:
    location = eval(hello(), model="mockllm/model")[0].location
    log = read_eval_log(location, header_only=True)
    assert log.samples is None and log.results.scores[0].metrics["accuracy"].value == 1.0


def test_read_eval_log_samples() -> None:
    location = eval(hello(), model="mockllm/model")[0].location
    assert sum(1 for _ in read_eval_log_samples(location)) == 3


def test_list_eval_logs(tmp_path: Path) -> None:
    eval(hello(count=1), model="mockllm/model", log_dir=str(tmp_path / "logs"))
    logs = list_eval_logs(str(tmp_path / "logs"))
    assert len(logs) == 1
    assert read_eval_log(logs[0]).status == "success"


def test_sample_messages_in_the_log() -> None:
    log = eval(hello(count=1), model="mockllm/model")[0]
    roles = [m.role for m in log.samples[0].messages]
    assert roles == ["system", "user", "assistant"]


def test_eval_retry_on_a_finished_log() -> None:
    from assay import eval_retry

    log = eval(hello(count=1), model="mockllm/model")[0]
    retried = eval_retry(log)
    assert retried[0].status == "success"


def test_eval_async() -> None:
    import anyio

    from assay import eval_async

    async def main():
        return await eval_async(hello(count=1), model="mockllm/model")

    assert anyio.run(main)[0].status == "success"


def test_approval_policy_on_a_task() -> None:
    from assay.approval import ApprovalPolicy, auto_approver

    t = Task(
        dataset=[Sample(input="x", target="Default")],
        scorer=includes(),
        approval=[ApprovalPolicy(auto_approver(), "*")],
    )
    assert eval(t, model="mockllm/model")[0].status == "success"


def test_eval_display_and_log_options() -> None:
    log = eval(
        hello(count=1),
        model="mockllm/model",
        display="none",
        log_level="warning",
        log_samples=True,
        score=True,
    )[0]
    assert log.status == "success"


def test_write_eval_log_of_what_eval_returned() -> None:
    import json
    import zipfile

    from assay.log import write_eval_log

    log = eval(hello(), model="mockllm/model")[0]
    write_eval_log(log, "hello.eval")
    with zipfile.ZipFile("hello.eval") as archive:
        header = json.loads(archive.read("header.json"))
        names = archive.namelist()
    assert (header["status"], header["eval"]["task"]) == ("success", "hello")
    assert header["results"]["scores"][0]["metrics"]["accuracy"]["value"] == 1.0
    assert sorted(n for n in names if n.startswith("samples/")) == [
        f"samples/{i}_epoch_1.json" for i in (1, 2, 3)
    ]
