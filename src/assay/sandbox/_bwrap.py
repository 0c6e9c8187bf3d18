"""The ``bwrap`` provider: each command in fresh namespaces made by bubblewrap.

Every ``exec`` starts ``bwrap`` (never a shell) with a clean environment of its own, so
nothing of the harness's environment exists inside (``/proc/1/environ`` is empty). The
command gets new user, PID, network, mount, IPC and UTS namespaces, runs as uid/gid 65534
with no capabilities (as host uid 65534 too, when the harness is root), in a new session
(no terminal to inject keys into), with the
system folders read-only, a few named files of /etc, a fresh /tmp, /proc and /dev, and
the work folder (at ``/work``) as the only writable host folder. The network namespace
is kept from the host only when ``network=True``. rlimits come from ``prlimit`` inside
(see ``_limits``). When the command ends, or is killed for its timeout, bwrap's PID-1
goes and the kernel kills everything left in the namespace, daemons included; so only
``/work`` carries over from one ``exec`` to the next.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from assay.errors import ConfigError
from assay.sandbox._limits import Limits
from assay.sandbox._process import run_capped
from assay.sandbox._result import OUTPUT_LIMIT, ExecResult
from assay.sandbox._workfolder import WorkFolderSandbox

BWRAP = "/usr/bin/bwrap"
PRLIMIT = "/usr/bin/prlimit"
SETPRIV = "/usr/bin/setpriv"
MOUNT = "/work"
SANDBOX_UID = 65534
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need from /etc; the rest (shadow, ssh keys, the harness's config) stays out.
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/mime.types",
)


class BwrapSandbox(WorkFolderSandbox):
    """Commands run isolated by bubblewrap (see the module docstring)."""

    def __init__(
        self,
        *,
        network: bool = False,
        limits: Limits | None = None,
        bwrap: str = BWRAP,
        prlimit: str = PRLIMIT,
        output_limit: int = OUTPUT_LIMIT,
    ) -> None:
        super().__init__(output_limit=output_limit)
        self.network = network
        self.limits = limits or Limits()
        self.bwrap = bwrap
        self.prlimit = prlimit
        # As root, bwrap would map the sandbox user to host root: every root-owned file
        # in the bound system folders would be the sandbox user's own, and the process
        # limit would not bind. So root drops to host uid 65534 first (setpriv).
        self.drop_root = os.geteuid() == 0
        if self.drop_root:
            self.owner = (SANDBOX_UID, SANDBOX_UID)

    @property
    def mount(self) -> str:
        return MOUNT

    def check(self) -> None:
        needed = [(self.bwrap, "bubblewrap"), (self.prlimit, "util-linux")]
        if self.drop_root:
            needed.append((SETPRIV, "util-linux"))
        for program, package in needed:
            if not os.access(program, os.X_OK):
                raise ConfigError("sandbox.program_missing", path=program, package=package)

    async def create(self) -> None:
        self.check()
        await super().create()

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        user: str | None = None,
    ) -> ExecResult:
        if user is not None:
            raise ValueError(
                "the bwrap sandbox runs every command as uid 65534; `user` is not supported"
            )
        return await run_capped(
            self.argv(cmd, cwd=cwd, env=env),
            input=input.encode("utf-8") if isinstance(input, str) else input,
            cwd=None,
            env={},  # bwrap itself starts with nothing of the harness's environment
            timeout=timeout,
            output_limit=self.output_limit,
        )

    def argv(self, cmd: list[str], *, cwd: str | None, env: dict[str, str] | None) -> list[str]:
        """The full bwrap command line for *cmd* (an argv list, never a shell string)."""
        if not cmd:
            raise ValueError("exec needs a command (a non-empty argv list)")
        workdir = os.path.join(MOUNT, cwd) if cwd else MOUNT
        return [
            *_drop_root(self.drop_root),
            self.bwrap,
            *_namespaces(self.network),
            *_filesystem(self.folder),
            "--chdir",
            workdir,
            *_environment({"PATH": DEFAULT_PATH, **(env or {})}),
            "--",
            self.prlimit,
            *self.limits.prlimit_args(),
            "--",
            *cmd,
        ]


def _drop_root(drop: bool) -> list[str]:
    if not drop:
        return []
    ids = [f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
    return [SETPRIV, *ids, "--"]


def _namespaces(network: bool) -> list[str]:
    argv = ["--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    return argv + (["--share-net"] if network else [])


def _filesystem(folder: str) -> list[str]:
    argv = list(_system_folders())
    for path in _ETC_FILES:
        argv += ["--ro-bind-try", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # the root bwrap builds is a tmpfs: read-only once the mounts are in it
    return [*argv, "--bind", folder, MOUNT, "--remount-ro", "/"]


def _system_folders() -> Iterator[str]:
    """Read-only binds of the system folders; a merged-/usr link stays a link."""
    for path in _SYSTEM_FOLDERS:
        if os.path.islink(path):
            yield from ("--symlink", os.readlink(path), path)
        elif os.path.isdir(path):
            yield from ("--ro-bind", path, path)


def _environment(variables: dict[str, str]) -> list[str]:
    argv = ["--clearenv"]
    for name, value in variables.items():
        argv += ["--setenv", name, value]
    return argv
