"""Helpers for the sandbox tests: host-side process checks and a sandbox per provider."""

from __future__ import annotations

import os
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
