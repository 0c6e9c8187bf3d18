"""Evidence: verifying, re-scoring and reading a 100,000-trial run.

On one run directory (made here with the overhead workload, or given with ``--run``):

- ``verify_run`` (``assay.evidence``) in a fresh process: wall s → trials/s, peak RSS;
- ``rescore_run`` (``assay.pipeline``; it verifies first, then re-scores) the same way,
  and the re-scoring part alone (rescore − verify);
- the CLI as a user runs it, ``assay verify RUN`` and ``assay score RUN`` (process wall,
  interpreter start included);
- reading one trial's bundle by trial id. The run has no index from trial id to bundle
  (bundles are appended in completion order), so the lookup scans ``bundles.jsonl``:
  (a) line by line, decoding each line; (b) one ``bytes.find`` over the file for the
  trial id, decoding only that line. Both for trials at the start, middle and end of
  the file (the end is the worst case); (b) plus reading the trial's output artifact is
  the gated figure. Also shown: an in-memory offset index (what an on-disk index would
  give) and finding the trial's events by scanning ``events.jsonl``.

Files are read warm (the run was just written or read); the page cache is not dropped.

    python bench/evidence.py [--run RUN] [--samples 100000] [--runs 3] [--json F]
"""

from __future__ import annotations

import argparse
import mmap
from pathlib import Path
from typing import Any

from _common import (
    ChildResult,
    Row,
    assay_command,
    checked,
    make_spec,
    median,
    remove,
    run_child,
    scratch_dir,
    settle,
    show_rows,
    timed,
)

TARGET_VERIFY = 50_000.0  # trials/s (issue 6)
TARGET_SCORE = 20_000.0  # trials/s (issue 6)
TARGET_LOOKUP_MS = 50.0  # reading one trial's bundle (issue 6)


def make_run(base: Path, samples: int) -> Path:
    """Run the overhead workload at *samples* into *base*/run and return the run folder."""
    from overhead import run_once

    spec = make_spec(base / "spec", samples)
    out = base / "run"
    run_once(spec, out, 16)
    return out


def _bundle_line_scan(path: Path, tid: str) -> dict[str, Any]:
    """(a) Line by line, decoding every bundle until the trial id matches."""
    from assay._digest import loads

    with open(path, "rb") as handle:
        for line in handle:
            bundle = loads(line)
            if bundle["trial"]["trial_id"] == tid:
                return bundle  # type: ignore[no-any-return]
    raise KeyError(tid)


def _bundle_find(path: Path, tid: str) -> dict[str, Any]:
    """(b) One substring search over the mapped file, then decode that one line."""
    from assay._digest import loads

    needle = b'"trial_id":"' + tid.encode() + b'"'
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        at = m.find(needle)
        if at < 0:
            raise KeyError(tid)
        start = m.rfind(b"\n", 0, at) + 1
        end = m.find(b"\n", at)
        return loads(m[start : end if end >= 0 else len(m)])  # type: ignore[no-any-return]


def _bundle_and_output(run: Path, tid: str) -> tuple[dict[str, Any], bytes]:
    """Through assay's own lookup (bundles.idx and the pack indexes of a sealed run)."""
    from assay.evidence import read_trial

    found = read_trial(run, tid)
    assert found is not None and found[1] is not None, tid
    return found[0], found[1]


def _events_find(path: Path, tid: str) -> int:
    """Every event line of trial *tid* (substring search over the mapped file)."""
    needle = b'"trial":"' + tid.encode() + b'"'
    count = 0
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        at = m.find(needle)
        while at >= 0:
            count += 1
            at = m.find(needle, at + len(needle))
    return count


def _offset_index(path: Path) -> dict[str, int]:
    """trial id → byte offset of its bundle line (what an on-disk index would hold)."""
    index: dict[str, int] = {}
    marker = b'"trial_id":"'
    offset = 0
    with open(path, "rb") as handle:
        for line in handle:
            at = line.find(marker) + len(marker)
            index[line[at : line.index(b'"', at)].decode()] = offset
            offset += len(line)
    return index


def _read_at(path: Path, offset: int) -> dict[str, Any]:
    from assay._digest import loads

    with open(path, "rb") as handle:
        handle.seek(offset)
        return loads(handle.readline())  # type: ignore[no-any-return]


def _positions(run: Path) -> dict[str, str]:
    """Trial ids of the first, middle and last bundle lines."""
    with open(run / "bundles.jsonl", "rb") as handle:
        lines = handle.readlines()
    from assay._digest import loads

    pick = {"first": lines[0], "middle": lines[len(lines) // 2], "last": lines[-1]}
    return {k: loads(v)["trial"]["trial_id"] for k, v in pick.items()}


def plain(run: Path) -> Path:
    """*run* with its files plain: the scans here compare ways of reading them, and a
    sealed run of some size is compacted (``NAME.zst``; bench/evidence_size.py measures
    that), so it is expanded back in place."""
    from assay.evidence._framed import expand_run

    expand_run(run)
    return run


def lookup_rows(run: Path, repeat: int = 5) -> list[Row]:
    """Timings of reading one trial's bundle by id, without and with an index."""
    plain(run)
    bundles = run / "bundles.jsonl"
    ids = _positions(run)
    rows: list[Row] = []
    scan = {k: median(timed(lambda t=t: _bundle_line_scan(bundles, t), 3)) for k, t in ids.items()}
    find = {k: median(timed(lambda t=t: _bundle_find(bundles, t), repeat)) for k, t in ids.items()}
    full = {
        k: median(timed(lambda t=t: _bundle_and_output(run, t), repeat)) for k, t in ids.items()
    }
    events = median(timed(lambda: _events_find(run / "events.jsonl", ids["last"]), repeat))
    build = timed(lambda: _offset_index(bundles), 1)[0]
    index = _offset_index(bundles)
    seek = median(timed(lambda: _read_at(bundles, index[ids["last"]]), repeat))
    name = "evidence: one trial"
    spread = ", ".join(f"{k} {1000 * v:.1f}" for k, v in scan.items())
    rows.append(
        Row(name, "bundle by id, decode every line (last)", 1000 * scan["last"], "ms", note=spread)
    )
    spread = ", ".join(f"{k} {1000 * v:.1f}" for k, v in find.items())
    rows.append(
        Row(name, "bundle by id, bytes.find (last)", 1000 * find["last"], "ms", note=spread)
    )
    rows.append(
        Row(
            name,
            "bundle + output artifact by id (worst)",
            1000 * max(full.values()),
            "ms",
            target=f"<= {TARGET_LOOKUP_MS:.0f} ms",
            ok=1000 * max(full.values()) <= TARGET_LOOKUP_MS,
            note="through bundles.idx and the pack .idx files (assay.evidence.read_trial)",
        )
    )
    rows.append(Row(name, "its events, bytes.find over events.jsonl", 1000 * events, "ms"))
    rows.append(Row(name, "offset index: build once (info)", 1000 * build, "ms"))
    rows.append(Row(name, "offset index: seek + decode (info)", 1000 * seek, "ms"))
    return rows


def _read_all_bundles(run: Path) -> int:
    """Decode every bundle of a run (what reading a whole Inspect log compares with)."""
    from assay._digest import loads

    count = 0
    with open(run / "bundles.jsonl", "rb") as handle:
        for line in handle:
            loads(line)
            count += 1
    return count


def compare_rows(assay_run: Path | None, inspect_log: str | None, repeat: int = 3) -> list[Row]:
    """Reading a whole 10,000-sample log and one sample from it: assay's run folder
    (``bundles.jsonl``; ``read_trial``) beside Inspect's ``.eval`` log
    (``read_eval_log``; ``read_eval_log_sample``), both warm."""
    from _common import inspect_env, inspect_python, run_process

    python = inspect_python()
    if assay_run is None or inspect_log is None or python is None:
        return []
    from assay._digest import loads

    bundles = plain(assay_run) / "bundles.jsonl"
    with open(bundles, "rb") as handle:
        lines = handle.readlines()
    samples = len(lines)
    last = loads(lines[-1])
    tid, sample_id = last["trial"]["trial_id"], last["trial"]["sample_id"]
    whole = median(timed(lambda: _read_all_bundles(assay_run), repeat))
    one = median(timed(lambda: _bundle_and_output(assay_run, tid), repeat))
    child = Path(__file__).resolve().parent / "_inspect_child.py"
    argv = [str(python), str(child), "readlog", inspect_log, sample_id]
    reads = [
        checked(run_process(argv, inspect_env()), "Inspect read_eval_log").report
        for _ in range(repeat)
    ]
    name = f"evidence: a {samples:,}-sample log"
    return [
        Row(
            name,
            "read the whole log",
            1000 * whole,
            "ms",
            inspect=1000 * median(r["whole_s"] for r in reads),
            note="assay: decode every line of bundles.jsonl; Inspect: read_eval_log",
        ),
        Row(
            name,
            "read one sample by id (the last)",
            1000 * one,
            "ms",
            inspect=1000 * median(r["sample_s"] for r in reads),
            note="assay: read_trial (bundle + output); Inspect: read_eval_log_sample",
        ),
        Row(
            name,
            "read the header (info)",
            float("nan"),
            "ms",
            inspect=1000 * median(r["header_s"] for r in reads),
            note="Inspect: read_eval_log(header_only=True); assay: manifest.json",
        ),
    ]


def _cli_wall(command: str, run: Path) -> tuple[float, int]:
    import subprocess
    import time

    start = time.perf_counter()
    proc = subprocess.run(
        [*assay_command(), command, str(run)], capture_output=True, check=False, env=None
    )
    return time.perf_counter() - start, proc.returncode


def measure(
    run: Path | None = None,
    samples: int = 100_000,
    runs: int = 3,
    base: Path | None = None,
    progress: bool = True,
) -> list[Row]:
    """Every evidence figure on *run* (made here at *samples* trials if not given)."""
    own = base is None and run is None
    folder = scratch_dir() if base is None else base
    try:
        if run is None:
            if progress:
                print(f"  evidence: making a {samples:,}-trial run …", flush=True)
            run = make_run(folder, samples)
        return _measure(run, runs, progress)
    finally:
        if own:
            remove(folder)


def _in_process_rows(
    name: str, figure: str, results: list[ChildResult], trials: int, target: float
) -> list[Row]:
    """The rate and peak RSS rows of ``verify_run`` or ``rescore_run`` in fresh processes."""
    seconds = median(r.report["seconds"] for r in results)
    cpu = median(r.report["cpu_s"] for r in results)
    worker = median(r.report["worker_cpu_s"] for r in results)
    return [
        Row(
            name,
            figure,
            trials / seconds,
            "/s",
            target=f">= {target:,.0f}/s",
            ok=trials / seconds >= target,
            note=f"{seconds:.2f} s; cpu {cpu:.2f} s here + {worker:.2f} s in the event worker",
            extra={"seconds": [r.report["seconds"] for r in results]},
        ),
        Row(name, f"{figure.split()[0]} peak RSS", median(r.maxrss_mb for r in results), "MB"),
    ]


def _measure(run: Path, runs: int, progress: bool) -> list[Row]:
    settle()
    verify = [checked(run_child(["verify", str(run)]), "verify") for _ in range(runs)]
    if not verify[0].report["ok"]:
        raise RuntimeError(f"the run does not verify: {verify[0].report['problems']}")
    trials = int(verify[0].report["trials"])
    rescore = [checked(run_child(["rescore", str(run)]), "rescore") for _ in range(runs)]
    v_s = median(r.report["seconds"] for r in verify)
    r_s = median(r.report["seconds"] for r in rescore)
    cli_v = [_cli_wall("verify", run) for _ in range(runs)]
    cli_s = [_cli_wall("score", run) for _ in range(runs)]
    if any(code != 0 for _, code in cli_v + cli_s):
        raise RuntimeError("assay verify / assay score did not exit 0 on the bench run")
    if progress:
        print(
            f"  evidence: verify {trials / v_s:,.0f} trials/s, rescore {trials / r_s:,.0f} "
            "trials/s",
            flush=True,
        )
    name = f"evidence N={trials:,}" + (" (1 run)" if runs == 1 else "")
    rows = [
        *_in_process_rows(name, "verify_run trials/s", verify, trials, TARGET_VERIFY),
        *_in_process_rows(
            name, "rescore_run trials/s (verify + score)", rescore, trials, TARGET_SCORE
        ),
        Row(
            name,
            "re-score part alone (rescore - verify)",
            trials / max(r_s - v_s, 1e-9),
            "/s",
            note=f"{r_s - v_s:.2f} s",
        ),
    ]
    cv = median(t for t, _ in cli_v)
    cs = median(t for t, _ in cli_s)
    rows.append(
        Row(
            name,
            "`assay verify RUN` trials/s (process)",
            trials / cv,
            "/s",
            target=f">= {TARGET_VERIFY:,.0f}/s",
            ok=trials / cv >= TARGET_VERIFY,
            note=f"{cv:.2f} s",
        )
    )
    rows.append(
        Row(
            name,
            "`assay score RUN` trials/s (process)",
            trials / cs,
            "/s",
            target=f">= {TARGET_SCORE:,.0f}/s",
            ok=trials / cs >= TARGET_SCORE,
            note=f"{cs:.2f} s",
        )
    )
    rows.extend(lookup_rows(run))  # after verify and score: they timed the run as sealed
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, help="an existing run folder (default: make one)")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each timed command")
    parser.add_argument("--quick", action="store_true", help="1 run of each timed command")
    parser.add_argument("--tmp", help="folder for the generated run (default: temp dir)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    if args.run and not (args.run / "manifest.json").is_file():
        parser.error(
            f"--run {args.run}: not a run folder (no manifest.json); omit --run to make one"
        )
    runs = 1 if args.quick else args.runs
    base = None if args.run else scratch_dir(args.tmp)
    try:
        rows = measure(args.run, args.samples, runs, base)
    finally:
        if base is not None:
            remove(base)
    show_rows(rows, args.json)


if __name__ == "__main__":
    main()
