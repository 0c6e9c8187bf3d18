"""Helpers for the sandbox tests: host-side process checks and a sandbox per provider."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.sandbox import SandboxEnvironment, make_sandbox
from tests.helpers import wait_for

PROVIDERS = ["local", "bwrap"]


def new_sandbox(provider: str, **options: object) -> SandboxEnvironment:
    return make_sandbox(provider, **options)


def host_processes_with(marker: str) -> list[int]:
    """PIDs of host processes (not zombies) whose command line holds *marker*."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def no_host_process_with(marker: str) -> bool:
    """True once no host process holds *marker* (a SIGKILLed one may take a moment)."""
    return wait_for(lambda: not host_processes_with(marker), timeout=10.0)


def sleeper(marker: str, started: str) -> list[str]:
    """python3 that writes *started* then sleeps forever, *marker* in its argv."""
    code = f"import time; open({started!r}, 'w').close(); time.sleep(100000)"
    return ["/usr/bin/python3", "-c", code, marker]


# What hostile code inside a sandbox tries against the harness (argv: the harness's real
# pid, the run directory's real path). It prints a JSON report of what it saw and did.
# It sends no signal unless its PID 1 is bwrap's: run unsandboxed (as root, by mistake),
# SIGKILL to every pid and to -1 would kill every process on the machine.
HARNESS_ATTACK = r"""
import json, os, signal, sys

def in_a_sandbox():
    try:
        with open("/proc/1/cmdline", "rb") as handle:
            return handle.read().split(b"\0")[0].endswith(b"/bwrap")
    except OSError:
        return False

def signal_everything(pids, me, harness_pid):
    if not in_a_sandbox():
        return {"refused": "PID 1 is not bwrap: not signalling the host's processes"}
    signals = {}
    for pid in [p for p in pids if p != me] + [harness_pid, -1]:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
                signals[f"{pid}/{sig.name}"] = "sent"
            except OSError as exc:
                signals[f"{pid}/{sig.name}"] = type(exc).__name__
    return signals

def attack(harness_pid, run_dir):
    me = os.getpid()
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    dumps = []
    for pid in pids:
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as handle:
                    dumps.append(handle.read().decode("utf-8", "replace"))
            except OSError as exc:
                dumps.append(type(exc).__name__)
    signals = signal_everything(pids, me, harness_pid)
    reach = {}
    for what, action in (
        ("exists", lambda: os.path.exists(run_dir)),
        ("list", lambda: os.listdir(run_dir)),
        ("write", lambda: open(os.path.join(run_dir, "planted"), "w").write("x")),
    ):
        try:
            reach[what] = repr(action())
        except OSError as exc:
            reach[what] = type(exc).__name__
    name = os.path.basename(run_dir)
    found = []
    for root, folders, files in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(root, f) not in ("/proc", "/sys")]
        if name in folders or "spec.json" in files:
            found.append(root)
    return {"me": me, "pids": pids, "dumps": dumps, "signals": signals,
            "run_dir": reach, "found": found}

if __name__ == "__main__":
    if sys.argv[1] == "stdin":  # as a program target: the sample first, then the attack
        sample = json.load(sys.stdin)
        harness_pid, run_dir = int(os.environ["HARNESS_PID"]), os.environ["RUN_DIR"]
    else:
        harness_pid, run_dir = int(sys.argv[1]), sys.argv[2]
    print(json.dumps(attack(harness_pid, run_dir)))
"""


def check_attack_report(report: dict[str, object], harness_pid: int, secret: str) -> None:
    """Assert the harness came through HARNESS_ATTACK untouched (see its comment)."""
    assert report["pids"] != [], report  # the attack did look at /proc
    dumps = "\n".join(report["dumps"])  # type: ignore[arg-type]
    assert "PATH=" in dumps  # it can read the environments it sees (its own)
    assert secret not in dumps and "OPENAI_API_KEY" not in dumps
    # no host temp folder (a sandbox's or a call's) in any command line, bwrap's PID 1 too
    assert "assay-sandbox-" not in dumps and "assay-call-" not in dumps
    signals: dict[str, str] = report["signals"]  # type: ignore[assignment]
    assert "refused" not in signals, signals
    if harness_pid not in report["pids"]:  # type: ignore[operator]
        assert signals[f"{harness_pid}/SIGKILL"] == "ProcessLookupError"
        assert signals[f"{harness_pid}/SIGSTOP"] == "ProcessLookupError"
    assert report["run_dir"] == {
        "exists": "False",
        "list": "FileNotFoundError",
        "write": "FileNotFoundError",
    }
    assert report["found"] == []


@contextmanager
def accepting_server() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on the host's 127.0.0.1 that accepts every connection and keeps the
    first bytes each one sends: (its port, what it received)."""
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(10)
                with contextlib.suppress(OSError):
                    data = connection.recv(1024)
                    if not stop.is_set():  # not the connection that wakes it to stop
                        received.append(data)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    try:
        yield port, received
    finally:
        stop.set()
        socket.create_connection(("127.0.0.1", port)).close()  # wakes the blocked accept()
        thread.join()
        server.close()
