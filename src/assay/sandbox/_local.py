"""The ``local`` provider: a temp folder and plain child processes. UNSAFE.

It isolates nothing: a command runs as the harness's own user, sees the whole file
system and network, can read other processes' ``/proc/*/environ`` (the harness's keys
included) and signal the harness. It only gives an empty environment (PATH and what
is named), a fresh folder as cwd, output caps, and a timeout that kills the process
group and every tagged descendant. Use it for trusted code, or where bubblewrap cannot
run; never for model-written code you do not trust.
"""

from __future__ import annotations

import os
import pwd

from assay._reap import Reaper
from assay.sandbox._process import run_capped
from assay.sandbox._result import ExecResult
from assay.sandbox._workfolder import WorkFolderSandbox

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


class LocalSandbox(WorkFolderSandbox):
    """Commands run on the host in a temp folder (see the module docstring: unsafe)."""

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        user: str | None = None,
    ) -> ExecResult:
        if user is not None and user != _harness_user():
            raise ValueError(
                f"the local sandbox runs as the harness's user ({_harness_user()!r}), not {user!r}"
            )
        reaper = Reaper()
        environment = reaper.environment({"PATH": DEFAULT_PATH, **(env or {})})
        return await run_capped(
            cmd,
            input=input.encode("utf-8") if isinstance(input, str) else input,
            cwd=os.path.join(self.folder, cwd) if cwd else self.folder,
            env=environment,
            timeout=timeout,
            output_limit=self.output_limit,
            kill=reaper.kill,
        )


def _harness_user() -> str:
    """The name of the user the harness (and so every local command) runs as."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())
