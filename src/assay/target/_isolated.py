"""A program target under ``sandbox: bwrap``: how one call is started inside bubblewrap.

The call's scratch folder is made on the host as for any program target; bwrap then sees
only its ``work/`` (at ``/work``, writable, the working directory) and ``program/`` (at
``/program``, read-only, holding the pinned script's copy) beside the system folders,
with the sandbox provider's namespaces, uid 65534, rlimits and empty-by-default
environment (see ``assay.sandbox._bwrap``). assay's own Python (a virtualenv outside the
system folders) is not visible inside, so a ``.py`` script runs with the system's
``python3``. A timeout kills bwrap, and with it (``--die-with-parent``) the namespace and
every process in it.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from assay.sandbox._bwrap import (
    BWRAP,
    DEFAULT_PATH,
    PRLIMIT,
    SANDBOX_UID,
    BwrapLaunch,
    bwrap_launch,
    require_programs,
)
from assay.sandbox._limits import Limits
from assay.spec import PYTHON, TargetSpec

SANDBOX_PYTHON = "/usr/bin/python3"
WORK = "/work"
PROGRAM = "/program"


class IsolatedProgram:
    """What a bwrap call needs from the target's spec: argv, network, environment."""

    def __init__(self, spec: TargetSpec, script: str | None) -> None:
        self.drop_root = os.geteuid() == 0
        require_programs(BWRAP, PRLIMIT, self.drop_root)
        self.argv = _inside_argv(spec, script)
        self.network = spec.network
        self.allowed = spec.env or {}
        # the CPU limit follows the timeout (a long-lived program has none: its per-call
        # timeout bounds a hang); the other rlimits are the sandbox defaults
        cpu = None if spec.protocol else math.ceil(spec.timeout) + 1
        self.limits = Limits(cpu_seconds=cpu)

    def hand_over(self, scratch: Path) -> None:
        """Give the scratch folder to the sandbox's host user (when assay is root): the
        program may write in ``work/`` and read its script, nothing else of the host."""
        if not self.drop_root:
            return
        for path in (scratch, scratch / "work", *(scratch / "program").glob("*")):
            os.chown(path, SANDBOX_UID, SANDBOX_UID)

    def launch(self, scratch: Path) -> BwrapLaunch:
        """How to start the call whose scratch folder is *scratch*."""
        binds = [(str(scratch / "work"), WORK, True)]
        if (scratch / "program").is_dir():
            binds.append((str(scratch / "program"), PROGRAM, False))
        return bwrap_launch(
            self.argv,
            binds=binds,
            workdir=WORK,
            env=self.environment(),
            network=self.network,
            limits=self.limits,
            drop_root=self.drop_root,
        )

    def environment(self) -> dict[str, str]:
        """``PATH``, ``HOME`` and ``TMPDIR`` as they are inside, ``LANG`` from assay's
        environment, and what the spec's ``env`` names (read now, or written there)."""
        chosen = {"PATH": DEFAULT_PATH, "HOME": WORK, "TMPDIR": "/tmp"}
        if "LANG" in os.environ:
            chosen["LANG"] = os.environ["LANG"]
        for name, value in self.allowed.items():
            value = os.environ.get(name) if value is None else value
            if value is not None:
                chosen[name] = value
        return chosen


def _inside_argv(spec: TargetSpec, script: str | None) -> list[str]:
    """The spec's argv as seen inside: ``{python}`` the system's, the script its copy."""
    argv = [SANDBOX_PYTHON if part in (PYTHON, sys.executable) else part for part in spec.argv]
    if script is not None:
        at = 1 if argv[0] == SANDBOX_PYTHON else 0
        argv[at] = f"{PROGRAM}/{script}"
    return argv
