"""hf_dataset: Hugging Face datasets through the real ``datasets`` library, offline.

Each test builds a small dataset folder (JSON Lines files, and a README whose YAML
names configurations, as on the Hub) and loads it with the call a user makes. The Hub
is switched off (``HF_HUB_OFFLINE``, ``HF_DATASETS_OFFLINE``) and the cache lives in
the test's folder, so nothing here can reach the network or the user's cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.dataset import FieldSpec, Sample, hf_dataset
from assay.errors import EXIT_CONFIG, ConfigError
from assay.evidence import read_manifest, verify_run
from tests.helpers import error_line, read_jsonl, run_cli, run_dirs, wait_for

ROWS = [
    {"qid": "q1", "question": "2 + 2?", "answer": "so #### 4", "options": ["3", "4"], "label": "B"},
    {"qid": "q2", "question": "3 + 3?", "answer": "so #### 6", "options": ["6", "7"], "label": "A"},
    {"qid": "q3", "question": "1 + 4?", "answer": "so #### 5", "options": ["4", "5"], "label": "B"},
]
HARD = [{"qid": "h1", "question": "7 * 8?", "answer": "so #### 56", "options": [], "label": ""}]

README = """---
configs:
- config_name: main
  data_files:
  - split: test
    path: main/test.jsonl
  - split: train
    path: main/train.jsonl
- config_name: hard
  data_files:
  - split: test
    path: hard/test.jsonl
---
# quiz
"""

FIELDS = FieldSpec(input="question", target="label", id="qid", choices="options")


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def make_hub_folder(folder: Path) -> Path:
    """A dataset folder laid out as a Hub repository: two configurations, two splits."""
    _jsonl(folder / "main" / "test.jsonl", ROWS)
    _jsonl(folder / "main" / "train.jsonl", ROWS)  # the same rows: only the split differs
    _jsonl(folder / "hard" / "test.jsonl", HARD)
    (folder / "README.md").write_text(README, encoding="utf-8")
    return folder


def offline_env(cache: Path) -> dict[str, str]:
    return {"HF_HOME": str(cache), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


@pytest.fixture(scope="module", autouse=True)
def _offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for key, value in offline_env(tmp_path_factory.mktemp("hf-cache")).items():
            patch.setenv(key, value)
        yield


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hub_folder(tmp_path_factory.mktemp("quiz"))


def record_to_sample(record: dict[str, object]) -> Sample:
    """gsm8k's shape: the number after '####' is the target."""
    return Sample(
        input=str(record["question"]),
        target=str(record["answer"]).split("####")[-1].strip(),
        id=str(record["qid"]),
    )


def test_a_config_and_split_load_as_samples_through_a_fieldspec(hub: Path) -> None:
    dataset = hf_dataset(str(hub), split="test", name="main", sample_fields=FIELDS)
    assert [s.id for s in dataset] == ["q1", "q2", "q3"]
    first = dataset[0]
    assert (first.input, first.target, first.choices) == ("2 + 2?", "B", ["3", "4"])
    assert first.metadata == {"answer": "so #### 4"}  # unmapped columns, as json_dataset
    hard = hf_dataset(str(hub), split="test", name="hard", sample_fields=FIELDS)
    assert [s.id for s in hard] == ["h1"]


def test_data_dir_and_a_sliced_split_choose_the_rows(hub: Path) -> None:
    hard = hf_dataset(path=str(hub), data_dir="hard", split="test", sample_fields=FIELDS)
    assert [s.id for s in hard] == ["h1"]
    assert hard.source == f"hf:{hub} data_dir=hard split=test"
    first_two = hf_dataset(str(hub), split="train[:2]", name="main", sample_fields=FIELDS)
    assert [s.id for s in first_two] == ["q1", "q2"]


def test_a_record_to_sample_function_builds_the_samples(hub: Path) -> None:
    dataset = hf_dataset(str(hub), "test", "main", sample_fields=record_to_sample)
    assert [(s.id, s.target) for s in dataset] == [("q1", "4"), ("q2", "6"), ("q3", "5")]


def test_trust_and_cached_false_load_quietly(hub: Path) -> None:
    code = (
        "from assay.dataset import FieldSpec, hf_dataset\n"
        f"d = hf_dataset({str(hub)!r}, 'test', 'main', trust=True, cached=False,\n"
        "    sample_fields=FieldSpec(input='question', target='label', id='qid'))\n"
        "print([s.id for s in d])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['q1', 'q2', 'q3']"
    assert proc.stderr == ""  # no warning that trust_remote_code is gone, no progress bar


def test_a_limit_without_shuffle_reads_only_the_rows_it_keeps(tmp_path: Path) -> None:
    folder = tmp_path / "long"
    _jsonl(folder / "test.jsonl", [{"question": f"q{i}"} for i in range(1, 7)])

    def refuse_row_6(record: dict[str, object]) -> Sample:
        if record["question"] == "q6":
            raise ValueError("row 6 was read")
        return Sample(input=str(record["question"]))

    with pytest.raises(ConfigError, match=r"\[test\]:6: .*row 6 was read"):
        hf_dataset(str(folder), split="test", sample_fields=refuse_row_6)
    first = hf_dataset(str(folder), split="test", sample_fields=refuse_row_6, limit=3)
    assert [s.input for s in first] == ["q1", "q2", "q3"]
    window = hf_dataset(str(folder), split="test", sample_fields=refuse_row_6, limit=(1, 4))
    assert [(s.id, s.input) for s in window] == [(2, "q2"), (3, "q3"), (4, "q4")]
    assert first.name == "long"
    assert first.location == str(folder.resolve())


@pytest.mark.parametrize("limit", [(), (3, 1), -2, "2", (1, 2, 3)])
def test_a_malformed_limit_is_refused_as_on_any_loader(hub: Path, limit: object) -> None:
    with pytest.raises(ConfigError, match="neither a count nor a"):
        hf_dataset(str(hub), "test", "main", sample_fields=FIELDS, limit=limit)  # type: ignore[arg-type]


def test_auto_decode_json_false_is_refused(hub: Path) -> None:
    with pytest.raises(ConfigError, match="auto_decode_json=False is not supported"):
        hf_dataset(str(hub), "test", "main", auto_decode_json=False)


def test_auto_id_numbers_rows_and_limit_keeps_the_first(hub: Path) -> None:
    dataset = hf_dataset(str(hub), "test", "main", sample_fields=FIELDS, auto_id=True, limit=2)
    assert [(s.id, s.input) for s in dataset] == [(1, "2 + 2?"), (2, "3 + 3?")]


def test_shuffle_with_a_seed_gives_the_same_order_each_time(hub: Path) -> None:
    def order(seed: int) -> list[object]:
        loaded = hf_dataset(str(hub), "test", "main", sample_fields=FIELDS, shuffle=True, seed=seed)
        return [s.id for s in loaded]

    assert order(5) == order(5)
    assert sorted(order(5), key=str) == ["q1", "q2", "q3"]
    assert len({tuple(order(seed)) for seed in range(12)}) > 1  # the seed does decide


def test_shuffle_choices_moves_each_target_letter_with_its_choice(hub: Path) -> None:
    plain = hf_dataset(str(hub), "test", "main", sample_fields=FIELDS)
    right = {s.id: s.choices[ord(s.target) - ord("A")] for s in plain if s.choices}
    orders = set()
    for seed in range(8):
        shuffled = hf_dataset(str(hub), "test", "main", sample_fields=FIELDS, shuffle_choices=seed)
        for sample in shuffled:
            assert sample.choices is not None
            assert sample.choices[ord(sample.target) - ord("A")] == right[sample.id]
            orders.add(tuple(sample.choices))
    assert len(orders) > 3  # the choices did move


def test_the_source_names_path_config_revision_and_split(hub: Path) -> None:
    dataset = hf_dataset(str(hub), "test", "main", revision="v1", sample_fields=FIELDS)
    assert dataset.source == f"hf:{hub} name=main revision=v1 split=test"
    assert dataset.filter(lambda s: s.id != "q2").source == dataset.source
    assert dataset.shuffle(1)[:2].source == dataset.source


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ({"split": "validation", "name": "main"}, 'Unknown split "validation"'),
        ({"split": "test", "name": "easy"}, "'easy' not found"),
        ({"split": "test", "name": "main", "sample_fields": FieldSpec(input="prompt")}, "'prompt'"),
    ],
)
def test_a_bad_split_config_or_field_is_one_config_error(
    hub: Path, call: dict[str, object], says: str
) -> None:
    with pytest.raises(ConfigError) as info:
        hf_dataset(str(hub), **call)  # type: ignore[arg-type]
    assert info.value.exit_code == EXIT_CONFIG
    assert says in str(info.value)
    assert "\n" not in str(info.value)


def test_a_hub_dataset_offline_and_not_cached_is_one_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        hf_dataset("assay-tests/no-such-dataset", split="test")
    assert info.value.exit_code == EXIT_CONFIG
    assert "hf_dataset('assay-tests/no-such-dataset', split='test')" in str(info.value)


def test_a_row_that_is_not_json_is_named_by_its_row(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "bytes"
    datasets.Dataset.from_dict(
        {"input": ["a", "b"], "stamp": [1, 2]},
    ).to_parquet(str(folder / "test.parquet"))
    loaded = hf_dataset(str(folder), split="test")  # plain values: fine
    assert [s.metadata for s in loaded] == [{"stamp": 1}, {"stamp": 2}]

    def with_a_complex(record: dict[str, object]) -> Sample:
        return Sample(input=str(record["input"]), metadata={"z": complex(1, 2)})

    with pytest.raises(ConfigError) as info:
        hf_dataset(str(folder), split="test", sample_fields=with_a_complex)
    assert f"{folder}[test]:1:" in str(info.value)


# -- through the CLI: a task file, a run, a resume ----------------------------------------

TASK = """
import asyncio
from pathlib import Path

from assay import Task, task
from assay.dataset import Sample, hf_dataset
from assay.scorer import match
from assay.solver import generate, solver

DATA = {data!r}
GO = Path(__file__).with_name("go")


def record_to_sample(record):
    return Sample(
        input=record["question"],
        target=record["answer"].split("####")[-1].strip(),
        id=record["qid"],
    )


@solver
def first_then_wait():
    # sample q1 answers at once; the others wait for the file 'go' (the resume's)
    async def solve(state, generate):
        while state.sample_id != "q1" and not GO.exists():
            await asyncio.sleep(0.01)
        return await generate(state)

    return solve


@task
def quiz(split: str = "test", wait: bool = False):
    return Task(
        dataset=hf_dataset(DATA, split=split, name="main", sample_fields=record_to_sample),
        solver=[first_then_wait(), generate()] if wait else [generate()],
        scorer=match(),
    )
"""


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    hub = make_hub_folder(tmp_path / "quiz")
    path = tmp_path / "quiz_task.py"
    path.write_text(TASK.format(data=str(hub)), encoding="utf-8")
    return path


def _cli(task: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = offline_env(task.parent / "hf-cache")
    return run_cli(
        "run",
        f"{task}@quiz",
        "-m",
        "mock/x",
        "-M",
        "default_output=4",
        *args,
        cwd=task.parent,
        env=env,
    )


def _spec(run: Path) -> dict[str, object]:
    spec = json.loads((run / "spec.json").read_text())
    assert isinstance(spec, dict)
    return spec


def test_an_inspect_task_on_hf_dataset_runs_through_the_cli(task_file: Path) -> None:
    proc = _cli(task_file, "--log-dir", str(task_file.parent / "logs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "match: 1/3" in proc.stdout  # the mock answers 4: only q1 is right
    (run,) = run_dirs(task_file.parent / "logs")
    dataset = _spec(run)["dataset"]
    assert dataset == {
        "path": f"hf:{task_file.parent / 'quiz'} name=main split=test",
        "digest": dataset["digest"],  # type: ignore[index]
        "samples": 3,
    }


def test_the_split_is_in_the_spec_digest_even_when_the_rows_are_the_same(
    task_file: Path,
) -> None:
    logs = task_file.parent / "logs"
    for split in ("test", "train"):
        proc = _cli(task_file, "-T", f"split={split}", "--log-dir", str(logs / split))
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (test_run,) = run_dirs(logs / "test")
    (train_run,) = run_dirs(logs / "train")
    test_data, train_data = _spec(test_run)["dataset"], _spec(train_run)["dataset"]
    assert test_data["digest"] == train_data["digest"]  # type: ignore[index]  # same rows
    assert read_manifest(test_run)["spec_digest"] != read_manifest(train_run)["spec_digest"]


def test_an_unknown_split_on_the_cli_is_one_line_exit_2(task_file: Path) -> None:
    proc = _cli(task_file, "-T", "split=validation")
    assert proc.returncode == 2
    assert 'Unknown split "validation"' in error_line(proc)


def test_without_datasets_hf_dataset_says_which_extra_to_install(task_file: Path) -> None:
    code = (
        "import sys; sys.modules['datasets'] = None\n"
        "from assay.cli import main\n"
        f"sys.exit(main(['run', {str(task_file) + '@quiz'!r}, '-m', 'mock/x']))\n"
    )
    env = {**os.environ, **offline_env(task_file.parent / "hf-cache"), "LANG": "C.UTF-8"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 2
    assert "pip install 'assay[hf]'" in error_line(proc)


def _interrupted_run(task: Path) -> Path:
    """A run of the waiting quiz stopped by Ctrl-C once q1's trial is on disk."""
    logs = task.parent / "logs"
    env = {**os.environ, **offline_env(task.parent / "hf-cache"), "LANG": "C.UTF-8"}
    args = ["run", f"{task}@quiz", "-T", "wait=true", "-m", "mock/x", "-M", "default_output=4"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", *args, "--log-dir", str(logs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=task.parent,
    )

    def first_trial_on_disk() -> bool:
        bundles = list(logs.glob("*/bundles.jsonl"))
        return bool(bundles) and bundles[0].stat().st_size > 0

    assert wait_for(first_trial_on_disk, timeout=60), "q1's trial never reached the disk"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    (run,) = run_dirs(logs)
    assert read_manifest(run)["status"] == "interrupted"
    return run


def test_resume_loads_the_same_split_and_finishes_the_run(task_file: Path) -> None:
    run = _interrupted_run(task_file)
    (task_file.parent / "go").touch()
    proc = run_cli("resume", run, env=offline_env(task_file.parent / "hf-cache"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_manifest(run)["status"] == "complete"
    assert verify_run(run).ok
    ids = sorted(b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl"))
    assert ids == ["q1", "q2", "q3"]


def test_resume_after_the_dataset_changed_is_refused(task_file: Path) -> None:
    run = _interrupted_run(task_file)
    rows = [dict(ROWS[0], question="2 + 3?"), *ROWS[1:]]
    _jsonl(task_file.parent / "quiz" / "main" / "test.jsonl", rows)
    proc = run_cli("resume", run, env=offline_env(task_file.parent / "hf-cache"))
    assert proc.returncode == 5
    assert "changed: dataset" in error_line(proc)
