"""``assay view`` over HTTP: a real server on 127.0.0.1, real runs made with the CLI.

Each page is fetched with httpx and read for what it must show: the run list (newest
first, status, gate, rates with intervals, trials), the run page (gate and why, targets
× scorers), the sample table (filters, search, sort, paging done by the server), the
trial page (input, expected, answer, scores with reasons, events paged, raw artifacts),
the comparison of two runs, and the security headers on every response.
"""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import (
    SHIPPING,
    bundles_by_sample,
    edit_artifact,
    read_jsonl,
    run_cli,
    wait_for,
    write_dataset,
    write_module,
    write_spec,
)
from tests.view._support import many_trials_run, plan, served, shipping_run, verified_page

CSP_START = "default-src 'none'"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of runs: the shipping example, then 120 one-target trials."""
    root = tmp_path_factory.mktemp("view")
    runs = root / "runs"
    shipping_run(runs)
    many_trials_run(root / "many-spec", runs)
    return runs


def _text(html: str) -> str:
    """The page's text, tags dropped and entities decoded (what a reader sees)."""
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def _from_table(client: httpx.Client, url: str) -> httpx.Response:
    """*url* once the run's table is built: with ``quick_from_bytes=0`` the first
    unfiltered pages are served through the indexes meanwhile."""
    assert wait_for(lambda: 'id="building"' not in client.get(url).text, 60, step=0.02)
    return client.get(url)


def _trial_ids(html: str) -> list[str]:
    return re.findall(r'class="trial-link mono" href="/runs/[^/]+/trials/(t-[0-9a-f]{24})"', html)


def test_the_run_list_shows_each_run_newest_first(runs: Path) -> None:
    with served(runs) as client:
        response = client.get("/")
    assert response.status_code == 200
    names = re.findall(r'<tr data-run="([^"]+)">', response.text)
    assert names == ["many", "shipping"]  # many was started last
    text = _text(response.text)
    assert "shipping-fee" in text and "buggy-release, fixed-release" in text
    assert "buggy-release · fee-matches: 0.667 [0.208, 0.939]" in text  # rate [interval]
    row = response.text.split('data-run="shipping"')[1].split("</tr>")[0]
    assert 'class="badge complete status"' in row and 'class="badge failed gate"' in row
    assert re.search(r'class="trials">6<', row)


def test_the_run_page_shows_the_gate_and_why(runs: Path) -> None:
    with served(runs) as client:
        response = verified_page(client, "/runs/shipping/")
    text = _text(response.text)
    assert response.status_code == 200
    assert 'id="gate-status">failed<' in response.text
    assert "buggy-release failed fee-matches: pass rate 2/3 = 0.6667 is below the minimum 1" in text
    assert "95% wilson [0.2077, 0.9385]" in text  # the interval of each target × scorer
    assert 'id="interval-chart"' in response.text
    assert 'id="verify-banner"' not in response.text  # it verifies: no banner


def test_a_run_url_without_its_last_slash_leads_to_the_run_page(runs: Path) -> None:
    with served(runs) as client:
        response = client.get("/runs/shipping")
    assert response.status_code == 302
    assert response.headers["location"] == "/runs/shipping/"


def test_the_sample_table_pages_on_the_server(runs: Path) -> None:
    planned = [t["trial_id"] for t in plan(runs / "many")]
    with served(runs) as client:
        first = client.get("/runs/many/trials")
        third = client.get("/runs/many/trials?page=3")
    assert _trial_ids(first.text) == planned[:50]
    assert "120 trials of 120" in _text(first.text)
    assert '<a href="/runs/many/trials?page=2" id="next">' in first.text
    assert _trial_ids(third.text) == planned[100:]
    assert 'id="next"' not in third.text
    row = first.text.split(f">{planned[1]}</a>")[1].split("</tr>")[0]
    assert "question number 1<" in row  # the input and the answer are in the row


def test_the_sample_table_filters_by_score_status_and_target(runs: Path) -> None:
    failing = [
        t["trial_id"]
        for t in plan(runs / "many")
        if int(t["sample_id"][1:]) % 3 == 0 or int(t["sample_id"][1:]) % 7 == 0
    ]
    with served(runs) as client:
        failed = client.get("/runs/many/trials?scorer=exact&status=failed")
        second = client.get("/runs/many/trials?scorer=exact&status=failed&page=2")
        elsewhere = client.get("/runs/shipping/trials?target=fixed-release")
        no_such = client.get("/runs/many/trials?target=nobody")
    assert "52 trials of 120" in _text(failed.text)
    assert _trial_ids(failed.text) + _trial_ids(second.text) == failing
    fixed = [t["trial_id"] for t in plan(runs / "shipping") if t["target_id"] == "fixed-release"]
    assert _trial_ids(elsewhere.text) == fixed
    assert _trial_ids(no_such.text) == [] and "0 trials of 120" in _text(no_such.text)


def test_the_sample_table_searches_inputs_and_outputs(runs: Path) -> None:
    by_sample = {t["sample_id"]: t["trial_id"] for t in plan(runs / "many")}
    with served(runs) as client:
        in_input = client.get("/runs/many/trials", params={"q": "NUMBER 11"})
        in_output = client.get("/runs/many/trials", params={"q": "wrong 9"})
    # the input "question number 11", then 110..119 (their inputs hold "number 11")
    assert _trial_ids(in_input.text) == [by_sample[f"s{n:03d}"] for n in [11, *range(110, 120)]]
    # the answers "wrong 9", "wrong 90", "wrong 93", "wrong 96", "wrong 99"
    assert _trial_ids(in_output.text) == [by_sample[f"s{n:03d}"] for n in (9, 90, 93, 96, 99)]


def test_the_sample_table_sorts(runs: Path) -> None:
    planned = plan(runs / "many")
    by_sample = sorted(planned, key=lambda t: t["sample_id"], reverse=True)
    with served(runs) as client:
        descending = client.get("/runs/many/trials?sort=-sample")
        by_score = client.get("/runs/many/trials?sort=score")
    assert _trial_ids(descending.text) == [t["trial_id"] for t in by_sample[:50]]
    scores = {r["trial_id"]: r["status"] for r in read_jsonl(runs / "many" / "scores.jsonl")}
    statuses = [scores[t] for t in _trial_ids(by_score.text)]
    assert statuses == ["failed"] * 50  # 0.0 before 1.0: the 52 failures come first


def test_the_trial_page_shows_input_expected_answer_and_scores(runs: Path) -> None:
    trial = next(
        t["trial_id"]
        for t in plan(runs / "shipping")
        if t["sample_id"] == "order-100" and t["target_id"] == "buggy-release"
    )
    bundles = read_jsonl(runs / "shipping" / "bundles.jsonl")
    bundle = next(b for b in bundles if b["trial"]["trial_id"] == trial)
    with served(runs) as client:
        page = client.get(f"/runs/shipping/trials/{trial}")
        output = bundle["observation"]["output"]
        raw = client.get(f"/runs/shipping/artifacts/{output}")
    text = _text(page.text)
    assert page.status_code == 200
    assert '<pre id="expected">{\n "fee": 0\n}</pre>' in page.text
    assert "fee-matches failed" in text
    assert f'href="/runs/shipping/artifacts/{output}"' in page.text
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/plain")
    assert raw.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert re.search(r'<pre id="output">\{[^<]*&#34;fee&#34;', page.text), page.text


def test_a_trial_with_thousands_of_events_is_paged(tmp_path: Path) -> None:
    write_module(
        tmp_path / "spec",
        "chatty",
        "from assay.evidence import record_event\n\n"
        "def answer(text):\n"
        "    for i in range(2_500):\n"
        "        record_event('extra', {'step': i})\n"
        "    return text\n",
    )
    write_dataset(tmp_path / "spec", [{"id": "one", "input": "x", "expected": "x"}])
    spec = write_spec(
        tmp_path / "spec",
        {
            "evaluation": "chatty",
            "dataset": "data.jsonl",
            "targets": [{"id": "chatty", "callable": "chatty:answer"}],
            "scorers": [{"id": "exact", "type": "exact"}],
        },
    )
    proc = run_cli("run", spec, "-o", tmp_path / "runs" / "chatty")
    assert proc.returncode == 0, proc.stderr
    trial = plan(tmp_path / "runs" / "chatty")[0]["trial_id"]
    listed = bundles_by_sample(tmp_path / "runs" / "chatty")["one"]["events"][-1][0]  # last n
    assert listed > 2_500
    with served(tmp_path / "runs") as client:
        first = client.get(f"/runs/chatty/trials/{trial}")
        last_page = -(-listed // 200)
        last = client.get(f"/runs/chatty/trials/{trial}?events={last_page}")
    assert f"{listed} events" in _text(first.text)
    assert first.text.count("<td>extra</td>") == 200 - 2  # after trial and attempt started
    assert 'id="events-next" href="?events=2"' in first.text
    rows = re.findall(r"<tr><td>(\d+)</td><td>", last.text.split('id="events"')[1])
    assert [int(n) for n in rows] == list(range((last_page - 1) * 200 + 1, listed + 1))
    assert 'id="events-next"' not in last.text


def test_compare_shows_flipped_samples_side_by_side(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name, source in (("before", "return text"), ("after", "return text.upper()")):
        folder = tmp_path / name
        write_module(folder, "target", f"def answer(text):\n    {source}\n")
        write_dataset(
            folder,
            [
                {"id": "low", "input": "abc", "expected": "abc"},
                {"id": "up", "input": "ABC", "expected": "ABC"},
            ],
        )
        spec = write_spec(
            folder,
            {
                "evaluation": "flip",
                "dataset": "data.jsonl",
                "targets": [{"id": "t", "callable": "target:answer"}],
                "scorers": [{"id": "exact", "type": "exact"}],
            },
        )
        assert run_cli("run", spec, "-o", runs / name).returncode == 0
    with served(runs) as client:
        page = client.get("/compare", params={"a": "before", "b": "after"})
    assert page.status_code == 200
    flips = page.text.split('<tr class="flip">')[1:]
    assert len(flips) == 1 and "<td>low</td>" in flips[0]
    before = plan(runs / "before")[0]["trial_id"]
    after = plan(runs / "after")[0]["trial_id"]
    assert f'href="/runs/before/trials/{before}"' in flips[0]
    assert f'href="/runs/after/trials/{after}"' in flips[0]
    assert "<pre>abc</pre>" in flips[0] and "<pre>ABC</pre>" in flips[0]


def test_a_tampered_run_shows_a_banner_naming_what_changed(runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs" / "shipping"
    shutil.copytree(runs / "shipping", copy)
    bundle = bundles_by_sample(copy)["order-100"]
    output = bundle["observation"]["output"]
    edit_artifact(copy, output, lambda data: data.replace(b"0", b"7"))
    trial = bundle["trial"]["trial_id"]
    with served(tmp_path / "runs") as client:
        run_page = verified_page(client, "/runs/shipping/")
        trial_page = client.get(f"/runs/shipping/trials/{trial}")
        raw = client.get(f"/runs/shipping/artifacts/{output}")
    banner = _text(run_page.text.split('id="verify-banner"')[1].split("</div>")[0])
    assert "does not verify" in banner and output in banner
    assert trial_page.status_code == 409 and raw.status_code == 409
    assert f"the output {output} of {trial} changed" in _text(trial_page.text)
    assert '<pre id="output">' not in trial_page.text  # the edited bytes are never shown


def test_an_edited_scores_file_is_named_above_the_sample_table(runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs" / "shipping"
    shutil.copytree(runs / "shipping", copy)
    scores = copy / "scores.jsonl"
    scores.write_bytes(scores.read_bytes().replace(b'"status":"failed"', b'"status":"passed"'))
    with served(tmp_path / "runs") as client:
        table = client.get("/runs/shipping/trials")
    banner = _text(table.text.split('id="verify-banner"')[1].split("</div>")[0])
    assert "scores.jsonl does not match the digest in manifest.json" in banner


def test_every_response_carries_the_security_headers(runs: Path) -> None:
    trial = plan(runs / "shipping")[0]["trial_id"]
    with served(runs) as client:
        responses = [
            client.get(url)
            for url in (
                "/",
                "/view.css",
                "/runs/shipping/",
                "/runs/shipping/trials",
                f"/runs/shipping/trials/{trial}",
                "/runs/nothing-here/",
                "/runs/shipping/trials/t-000000000000000000000000",
                "/runs/shipping/artifacts/not-a-digest",
            )
        ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 404, 404, 404]
    for response in responses:
        assert response.headers["content-security-policy"].startswith(CSP_START)
        assert "script-src" not in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "<script" not in "".join(r.text for r in responses)


def test_a_path_outside_the_runs_is_not_served(runs: Path) -> None:
    with served(runs) as client:
        dotted = client.get("/runs/..%2F..%2Fetc/")
        spec = client.get("/runs/shipping/artifacts/" + "0" * 64)
    assert dotted.status_code == 404
    assert spec.status_code == 409  # a digest the run does not hold: gone, never a path


def test_the_first_pages_are_served_before_the_table(runs: Path) -> None:
    """A fresh server that reads every sealed run's first pages through the indexes (by
    default only runs of about 7,000 trials or more): the first request finds no table
    yet and gets its rows that way, the same rows the table gives once built."""
    planned = plan(runs / "many")
    scores = {r["trial_id"]: r["status"] for r in read_jsonl(runs / "many" / "scores.jsonl")}
    with served(runs, quick_from_bytes=0) as client:
        early = client.get("/runs/many/trials?page=2")
        late = _from_table(client, "/runs/many/trials?page=2")
    assert 'id="building"' in early.text  # nothing asked for the table before
    assert (
        _trial_ids(early.text) == [t["trial_id"] for t in planned[50:100]] == _trial_ids(late.text)
    )
    assert "50 trials on this page, more after it" in _text(early.text)
    for trial_id in _trial_ids(early.text):
        row = early.text.split(f">{trial_id}</a>")[1].split("</tr>")[0]
        assert f'<span class="badge {scores[trial_id]}">{scores[trial_id]}</span> exact' in row
    assert early.text.split("<tbody>")[1] == late.text.split("<tbody>")[1]


def _merged_run(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A folder of runs holding ``merged`` (the shipping example run as two shards and
    joined with ``assay merge``), and the shards' bundles."""
    runs = tmp_path / "runs"
    shards = []
    for index in (1, 2):
        shard = tmp_path / f"shard-{index}"
        proc = run_cli("run", SHIPPING / "eval.yaml", "--shard", f"{index}/2", "-o", shard)
        assert proc.returncode == 3, proc.stdout + proc.stderr  # a shard's gate is partial
        shards.append(shard)
    merged = run_cli("merge", *shards, "-o", runs / "merged")
    assert merged.returncode == 1, merged.stdout + merged.stderr  # buggy-release fails
    return runs, [b for shard in shards for b in read_jsonl(shard / "bundles.jsonl")]


def test_a_merged_run_shows_every_trial_from_its_shards(tmp_path: Path) -> None:
    """``assay merge`` keeps the trials' records in the shards it holds (``shards/K``):
    the table, a trial page and its raw artifacts are read there."""
    runs, bundles = _merged_run(tmp_path)
    failed = next(
        b
        for b in bundles
        if b["state"] == "completed"
        and b["trial"]["sample_id"] == "order-100"
        and b["trial"]["target_id"] == "buggy-release"
    )
    trial, output = failed["trial"]["trial_id"], failed["observation"]["output"]
    with served(runs) as client:
        table = _from_table(client, "/runs/merged/trials")
        page = client.get(f"/runs/merged/trials/{trial}")
        raw = client.get(f"/runs/merged/artifacts/{output}")
    rows = _text(table.text)
    assert "6 trials of 6" in rows and rows.count(" completed {") == 6, rows  # none pending
    assert sorted(_trial_ids(table.text)) == sorted(b["trial"]["trial_id"] for b in bundles)
    assert page.status_code == 200, page.text
    assert "fee-matches failed" in _text(page.text)
    assert raw.status_code == 200 and b"fee" in raw.content


def test_a_merged_run_s_first_pages_are_read_from_its_shards(tmp_path: Path) -> None:
    """The first page of a merged run, served through the indexes before its table is
    built (``quick_from_bytes=0``: as for a run of about 7,000 trials or more), reads
    each trial in the shard that holds it: no row pending, each with its scores, the
    same rows the table gives once built."""
    runs, bundles = _merged_run(tmp_path)
    with served(runs, quick_from_bytes=0) as client:
        early = client.get("/runs/merged/trials")
        late = _from_table(client, "/runs/merged/trials")
    assert early.status_code == 200, early.text
    assert 'id="building"' in early.text  # served before the table
    assert _trial_ids(early.text) == [t["trial_id"] for t in plan(runs / "merged")]
    assert sorted(_trial_ids(early.text)) == sorted(b["trial"]["trial_id"] for b in bundles)
    rows = _text(early.text.split("<tbody>")[1])
    assert rows.count(" completed ") == 6 and "pending" not in rows, rows
    assert rows.count("fee-matches") == 6, rows
    assert early.text.split("<tbody>")[1] == late.text.split("<tbody>")[1]
