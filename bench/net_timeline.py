"""Where a network run's fixed wall time goes (issue 19, item 2): the timeline of the
``assay.eval`` call against ``bench/server.py`` (50 ms), variants taking turns in fresh
processes.

    python bench/net_timeline.py --variant main=/work/main/src --variant this=src \\
        [--connections 200,500] [--samples 5000] [--rounds 3] [--profile start|end]

A variant is ``NAME=SRC``, the ``src`` folder put first on ``PYTHONPATH``. The child
marks (``time.perf_counter``, CLOCK_MONOTONIC, and the process's CPU by ``os.times``)
the eval call's start, the provider's first call, every answer, ``conclude`` and the
call's return; nothing of assay is imported before the call (the patches go in by an
import hook), so *start* includes the imports. Printed a run: *start* (call to first
request), *flow* (first request to last answer) and its rate over the middle 80 % of
the answers, *end* (last answer to return) with ``conclude`` inside it, the fsyncs'
wall time (``fsync_wall_*``: their times summed, so fsyncs waited for together count
each; ``fsync_span_end``: the end's first fsync to its last) and the cyclic
collector's (``gc_*``) in each part, and samples/s over the whole call. The first
round (the ramp), from the first call: ``round1`` the C-th call
into the provider, ``wrote1`` / ``wrote_round1`` the first and C-th request written
(the direct pool's ``_send``), ``answer1`` / ``answer_round1``, ``round2`` the 2C-th
call, ``second_lag`` the first answer to the (C+1)-th call. ``--profile
start|end|after`` writes a cProfile of that part (``after``: from ``conclude``'s
return) of the last round's runs to ``prof-NAME-C-PART.pstats`` in the current folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _common import child_figures, inspect_env, source_variants
from network import Server

BENCH = Path(__file__).resolve().parent
TASK = f"{BENCH / 'tasks' / 'assay_network.py'}@network"

CHILD = r"""
import importlib.abc, importlib.machinery, json, os, sys, time

def cpu():
    t = os.times()
    return t.user + t.system

task, out, samples, conns, base_url, profile, prof_out = sys.argv[1:8]
samples, conns = int(samples), int(conns)
marks, answers, fsyncs, sent, wrote = {}, [], [], [], []
prof = None
if profile:
    import cProfile
    prof = cProfile.Profile()

def patch_openai(module):
    generate = module.OpenAIAPI.generate
    async def timed(self, *args, **kwargs):
        if "first" not in marks:
            marks["first"], marks["first_cpu"] = time.perf_counter(), cpu()
            if profile == "start":
                prof.disable()
        sent.append(time.perf_counter())
        try:
            return await generate(self, *args, **kwargs)
        finally:
            answers.append(time.perf_counter())
            if len(answers) == samples:
                marks["last"], marks["last_cpu"] = answers[-1], cpu()
                if profile == "end":
                    prof.enable()
    module.OpenAIAPI.generate = timed

def patch_execute(module):
    conclude = module.conclude
    def concluded(*args, **kwargs):
        marks["conclude"], marks["conclude_cpu"] = time.perf_counter(), cpu()
        try:
            return conclude(*args, **kwargs)
        finally:
            marks["concluded"], marks["concluded_cpu"] = time.perf_counter(), cpu()
            if profile == "after":
                prof.enable()
    module.conclude = concluded

def patch_direct(module):
    send = module.DirectPost._send
    def timed_send(self, *args, **kwargs):
        wrote.append(time.perf_counter())
        return send(self, *args, **kwargs)
    module.DirectPost._send = timed_send

PATCHES = {
    "assay.model._openai_direct": patch_direct,
    "assay.model._openai": patch_openai,
    "assay.pipeline._execute": patch_execute,
}

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in PATCHES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            PATCHES[name](module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Hook())
import gc
collections_ = []
def on_gc(phase, info, started=[0.0]):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        collections_.append((started[0], time.perf_counter(), info["generation"]))
gc.callbacks.append(on_gc)
fsync = os.fsync
def timed_fsync(fd):
    begin = time.perf_counter()
    try:
        return fsync(fd)
    finally:
        fsyncs.append((begin, time.perf_counter()))
os.fsync = timed_fsync

begin, begin_cpu = time.perf_counter(), cpu()
if profile == "start":
    prof.enable()
import assay
results = assay.eval(task, model="openai/bench", task_args={"samples": samples},
                     model_args={"base_url": base_url}, log_dir=out,
                     max_samples=conns, max_connections=conns)
end, end_cpu = time.perf_counter(), cpu()
if profile in ("end", "after"):
    prof.disable()
if prof is not None:
    prof.dump_stats(prof_out)
assert results[0].status == "success", results[0].error
low, high = len(answers) // 10, len(answers) - 1 - len(answers) // 10
last = marks["last"]
end_fsyncs = [(a, b) for a, b in fsyncs if a >= last]
start_fsyncs = [(a, b) for a, b in fsyncs if b <= marks["first"]]
gcs = {part: [(b - a, g) for a, b, g in collections_ if low <= a < high] for part, low, high in
       (("start", begin, marks["first"]), ("flow", marks["first"], last), ("end", last, end))}
print(json.dumps({
    "start": marks["first"] - begin, "start_cpu": marks["first_cpu"] - begin_cpu,
    "flow": last - marks["first"], "flow_cpu": marks["last_cpu"] - marks["first_cpu"],
    "to_10": answers[low] - marks["first"],
    "flow_rate": (high - low) / (answers[high] - answers[low]),
    "end": end - last, "end_cpu": end_cpu - marks["last_cpu"],
    "before_conclude": marks["conclude"] - last,
    "conclude": marks["concluded"] - marks["conclude"],
    "conclude_cpu": marks["concluded_cpu"] - marks["conclude_cpu"],
    "after_conclude": end - marks["concluded"],
    **{f"gc_{part}": sum(d for d, _ in rows) for part, rows in gcs.items()},
    **{f"gc2_{part}": sum(g == 2 for _, g in rows) for part, rows in gcs.items()},
    "fsyncs_start": len(start_fsyncs),
    "fsync_wall_start": sum(b - a for a, b in start_fsyncs),
    "fsyncs_end": len(end_fsyncs), "fsync_wall_end": sum(b - a for a, b in end_fsyncs),
    "fsync_span_end": max(b for _, b in end_fsyncs) - min(a for a, _ in end_fsyncs),
    "round1": sent[min(conns, samples) - 1] - marks["first"],
    "answer1": answers[0] - marks["first"],
    "wrote1": wrote[0] - marks["first"],
    "wrote_round1": wrote[min(conns, samples) - 1] - marks["first"],
    "answer_round1": answers[min(conns, samples) - 1] - marks["first"],
    "second_lag": sent[min(conns, samples)] - answers[0],
    "round2": sent[min(2 * conns, samples) - 1] - marks["first"],
    "total": end - begin, "cpu": end_cpu - begin_cpu, "rate": samples / (end - begin),
    "cpu_ms": 1000 * (end_cpu - begin_cpu) / samples,
}))
"""


def once(
    src: Path, server: Server, conns: int, samples: int, base: Path, profile: str, prof: str
) -> dict[str, float]:
    """One fresh process's timeline (seconds; ``rate`` in samples/s)."""
    out = base / "log"
    env = {**inspect_env(), "PYTHONPATH": str(src.resolve())}
    argv = [sys.executable, "-c", CHILD, TASK, str(out), str(samples), str(conns)]
    argv += [server.base_url, profile, prof]
    return child_figures(argv, env, out)


SHOWN = ("start", "start_cpu", "fsync_wall_start", "round1", "to_10", "flow", "flow_rate")
SHOWN += ("end", "end_cpu")
SHOWN += ("conclude",)
SHOWN += ("conclude_cpu", "fsync_wall_end", "fsync_span_end", "rate", "cpu_ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", required=True, help="NAME=SRC")
    parser.add_argument("--connections", default="200,500")
    parser.add_argument("--samples", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=("", "start", "end", "after"), default="")
    args = parser.parse_args()
    variants = source_variants(args.variant)
    conns = [int(c) for c in args.connections.split(",")]
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    with Server() as server, tempfile.TemporaryDirectory(prefix="assay-tl-") as base:
        for round_ in range(1, args.rounds + 1):
            for c in conns:
                for name, src in variants:
                    last = round_ == args.rounds
                    profile = args.profile if last else ""
                    prof = f"prof-{name}-{c}-{args.profile}.pstats"
                    figures = once(src, server, c, args.samples, Path(base), profile, prof)
                    results.setdefault((name, c), []).append(figures)
                    shown = "  ".join(f"{k} {figures[k]:.3f}" for k in SHOWN)
                    print(f"round {round_} C={c} {name:>6}: {shown}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"medians at N = {args.samples:,} (s; rates /s; cpu_ms a sample):")
    for (name, c), rows in results.items():
        medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        shown = "  ".join(f"{k} {medians[k]:.3f}" for k in medians)
        print(f"  C={c} {name:>6}: {shown}")


if __name__ == "__main__":
    main()
