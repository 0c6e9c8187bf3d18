"""Usage and cost through ``assay.eval``: each call priced on its ``sampling`` event from
the built-in table, ``set_price`` or a price file; unknown models cost ``None``; a
cost_limit cuts a trial off; report.json's usage is the sum over the sampling events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, TaskState, eval, includes
from assay.errors import ConfigError
from assay.evidence import verify_run
from assay.model import BUILTIN_PRICES, GenerateConfig, MockAPI, Model, set_price, user_message
from assay.solver import Generate
from tests.helpers import events_of, read_jsonl, state_of


async def keep_asking(state: TaskState, generate: Generate) -> TaskState:
    for turn in range(10):
        state.messages.append(user_message(f"and again {turn}"))
        state = await generate(state)
    return state


def quiz(**task: Any) -> Task:
    return Task(
        dataset=[
            Sample(input=f"what is two plus {i}", target="four", id=f"s{i}") for i in range(3)
        ],
        scorer=includes(),
        name="priced",
        **task,
    )


def run(task: Task, model: str | Model, log_dir: Path, **options: Any) -> Path:
    options.setdefault(
        "model_args", {} if isinstance(model, Model) else {"outputs": lambda m: "four it is"}
    )
    (result,) = eval(task, model=model, log_dir=log_dir, **options)
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    return result.path


def calls_of(path: Path) -> list[dict[str, Any]]:
    return [e["data"] for e in events_of(path, "sampling") if "model" in e["data"]]


def expected_cost(call: dict[str, Any], price_in: float, price_out: float) -> float:
    usage = call["usage"]
    return (usage["input_tokens"] * price_in + usage["output_tokens"] * price_out) / 1e6


def test_a_model_in_the_built_in_table_is_priced_per_call(tmp_path: Path) -> None:
    api = MockAPI("x", GenerateConfig(), outputs=lambda m: "four it is")
    path = run(quiz(), Model("openai/gpt-4o-mini", api), tmp_path)
    price = BUILTIN_PRICES["openai/gpt-4o-mini"]
    calls = calls_of(path)
    assert len(calls) == 3
    for call in calls:
        assert call["cost"] == pytest.approx(expected_cost(call, price.input, price.output))
        assert call["cost"] > 0


def test_an_unknown_model_costs_none_not_zero(tmp_path: Path) -> None:
    path = run(quiz(), "mock/unpriced", tmp_path)
    assert [c["cost"] for c in calls_of(path)] == [None, None, None]
    report = json.loads((path / "report.json").read_text())
    assert report["usage"]["mock/unpriced"]["cost"] is None
    assert report["usage_total"]["cost"] is None
    assert report["usage_total"]["calls"] == 3
    assert "unknown" in (path / "report.md").read_text()


def test_set_price_prices_a_model(tmp_path: Path) -> None:
    set_price("mock/x", input=2.0, output=8.0)
    path = run(quiz(), "mock/x", tmp_path)
    for call in calls_of(path):
        assert call["cost"] == pytest.approx(expected_cost(call, 2.0, 8.0))


def test_a_price_file_beats_set_price_and_the_environment_works_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_price("mock/x", input=2.0, output=8.0)
    prices = tmp_path / "prices.yaml"
    prices.write_text("mock/x: {input: 1000000, output: 3000000}\n")
    path = run(quiz(), "mock/x", tmp_path / "file", prices=prices)
    for call in calls_of(path):
        usage = call["usage"]
        assert call["cost"] == pytest.approx(usage["input_tokens"] + 3 * usage["output_tokens"])

    as_json = tmp_path / "prices.json"
    as_json.write_text(json.dumps({"mock/x": {"input": 5.0, "output": 0.0}}))
    monkeypatch.setenv("ASSAY_PRICES", str(as_json))
    path = run(quiz(), "mock/x", tmp_path / "env")
    for call in calls_of(path):
        assert call["cost"] == pytest.approx(call["usage"]["input_tokens"] * 5.0 / 1e6)


@pytest.mark.parametrize(
    "text",
    [
        "mock/x: {input: -1, output: 1}",
        "mock/x: {input: 1}",
        "[1, 2",
        "mock/x: {input: a, output: 1}",
        "mock/x: {input: 1, output: 1, extra: 2}",
    ],
    ids=["negative", "missing", "yaml", "type", "unknown-field"],
)
def test_a_bad_price_file_is_one_config_error_before_the_run(tmp_path: Path, text: str) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    with pytest.raises(ConfigError) as caught:
        eval(quiz(), model="mock/x", log_dir=tmp_path / "runs", prices=prices)
    assert "\n" not in caught.value.one_line()
    assert not (tmp_path / "runs").exists()


def test_a_cost_limit_without_a_price_is_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        eval(quiz(cost_limit=0.5), model="mock/nope", log_dir=tmp_path / "runs")
    line = caught.value.one_line()
    assert "mock/nope" in line and "set_price" in line and "--prices" in line
    assert not (tmp_path / "runs").exists()


def test_a_cost_limit_cuts_the_trial_off_and_it_is_scored(tmp_path: Path) -> None:
    set_price("mock/x", input=0.0, output=1_000_000.0)  # $1 per output token
    task = Task(
        dataset=[Sample(input="what is two plus two", target="four", id="s0")],
        solver=keep_asking,
        scorer=includes(),
        name="capped",
        cost_limit=10.0,
    )
    path = run(task, "mock/x", tmp_path)
    (bundle,) = read_jsonl(path / "bundles.jsonl")
    state = state_of(path, bundle)
    assert state["limit"] == "cost"
    costs = [c["cost"] for c in calls_of(path)]
    assert costs == [3.0] * len(costs)  # "four it is": three output tokens a call
    assert sum(costs[:-1]) <= 10.0 < sum(costs)  # the last call is the one that went over
    assert len(costs) < 10  # the chain did not run to the end
    (score,) = read_jsonl(path / "scores.jsonl")
    assert score["status"] == "passed"
    # the price that decided the cut-off is frozen into the spec
    spec = json.loads((path / "spec.json").read_text())
    assert spec["targets"][0]["limits"]["price"] == {"input": 0.0, "output": 1_000_000.0}


def test_report_usage_is_the_sum_over_the_sampling_events(tmp_path: Path) -> None:
    set_price("mock/x", input=0.5, output=1.5)
    path = run(quiz(solver=keep_asking, epochs=2), "mock/x", tmp_path, cache=True)
    path_again = run(quiz(solver=keep_asking, epochs=2), "mock/x", tmp_path / "again", cache=True)
    for run_dir in (path, path_again):
        calls = calls_of(run_dir)
        report = json.loads((run_dir / "report.json").read_text())
        usage = report["usage"]["mock/x"]
        assert usage == report["usage_total"]
        assert usage["calls"] == len(calls) == 60
        assert usage["input_tokens"] == sum(c["usage"]["input_tokens"] for c in calls)
        assert usage["output_tokens"] == sum(c["usage"]["output_tokens"] for c in calls)
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
        assert usage["cached_calls"] == sum(bool(c.get("cached")) for c in calls)
        assert usage["cost"] == pytest.approx(sum(c["cost"] for c in calls))
        cached = sum(c["cost"] for c in calls if c.get("cached"))
        assert usage["cached_cost"] == pytest.approx(cached)
        # per trial: each row's usage is the sum over that trial's events
        by_trial: dict[str, int] = {}
        for event in events_of(run_dir, "sampling"):
            if "model" in event["data"]:
                by_trial[event["trial"]] = by_trial.get(event["trial"], 0) + 1
        assert {r["trial_id"]: r["usage"]["calls"] for r in report["trials"]} == by_trial
        assert "## Usage" in (run_dir / "report.md").read_text()
        assert 'id="usage"' in (run_dir / "report.html").read_text()
    report = json.loads((path_again / "report.json").read_text())
    assert report["usage_total"]["cached_calls"] == 60


def test_a_run_without_model_calls_has_empty_usage(tmp_path: Path) -> None:
    from tests.helpers import callable_spec, run_spec_at

    spec = callable_spec(tmp_path, "def answer(sample):\n    return 'four'\n")
    run_spec_at(spec, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["usage_total"]["calls"] == 0
    assert "## Usage" not in (tmp_path / "out" / "report.md").read_text()
