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

bwrap's options (the host path of the work folder, the variables set inside) are read
from a memory file descriptor (``--args FD``), not its command line: a command line is
readable by every process on the host, and inside the sandbox bwrap's own copy is PID 1,
whose ``/proc/1/cmdline`` would otherwise show host temp paths and every value set.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence

from assay._infra import InfrastructureError
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
# `user=` names the sandbox understands, and the uid each runs as inside
USERS = {"nobody": SANDBOX_UID, str(SANDBOX_UID): SANDBOX_UID, "root": 0, "0": 0}
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

Bind = tuple[str, str, bool]
"""A host folder, where the sandbox sees it, and whether the sandbox may write there."""


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
        require_programs(self.bwrap, self.prlimit, self.drop_root)
        if self.drop_root:
            require_reachable(tempfile.gettempdir())

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
        launch = self.launch(cmd, cwd=cwd, env=env, user=user)
        with launch.started_with_status() as (argv, fds, status):
            result = await run_capped(
                argv,
                input=input.encode("utf-8") if isinstance(input, str) else input,
                cwd=None,
                env={},  # bwrap itself starts with nothing of the harness's environment
                timeout=timeout,
                output_limit=self.output_limit,
                pass_fds=fds,
            )
            if not result.timed_out and not status.command_ran():
                raise InfrastructureError("sandbox_failed", bwrap_failure(result.stderr))
        return result

    def launch(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> BwrapLaunch:
        """How to start *cmd* (an argv list, never a shell string) in this sandbox."""
        workdir = os.path.join(MOUNT, cwd) if cwd else MOUNT
        return bwrap_launch(
            cmd,
            binds=[(self.folder, MOUNT, True)],
            workdir=workdir,
            env={"PATH": DEFAULT_PATH, **(env or {})},
            network=self.network,
            limits=self.limits,
            uid=sandbox_uid(user),
            drop_root=self.drop_root,
            programs=(self.bwrap, self.prlimit),
        )


class BwrapLaunch:
    """A bwrap command line split in two: the options, handed over in a memory file so
    no command line shows them, and the short rest (``bwrap --args FD -- prlimit ...``)."""

    def __init__(self, prefix: list[str], options: list[str], command: list[str]) -> None:
        if any("\0" in option for option in options):
            raise ValueError("a sandbox path or variable contains a NUL byte")
        self.prefix = prefix
        self.options = options
        self.command = command

    @contextlib.contextmanager
    def started(self, *extra: str) -> Iterator[tuple[list[str], int]]:
        """The argv to run and the descriptor to pass it (closed when the block ends:
        the child has its own copy once started); *extra* options go first."""
        options = [*extra, *self.options]
        fd = _memory_file(b"".join(option.encode() + b"\0" for option in options))
        try:
            yield [*self.prefix, "--args", str(fd), "--", *self.command], fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def started_with_status(self) -> Iterator[tuple[list[str], tuple[int, int], BwrapStatus]]:
        """``started``, plus bwrap's status pipe (``--json-status-fd``): the argv, the
        descriptors to pass, and what tells afterwards whether the command ran at all."""
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(read_end, False)
        status = BwrapStatus(read_end)
        try:
            with self.started("--json-status-fd", str(write_end)) as (argv, fd):
                yield argv, (fd, write_end), status
        finally:
            os.close(write_end)
            status.close()


class BwrapStatus:
    """bwrap's status lines: ``{"exit-code": N}`` comes only once the command has run, so
    without it bwrap failed before starting it (no user namespaces, a bind that failed),
    which is the sandbox's failure, not the command's. The command cannot write here."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()

    def command_ran(self) -> bool:
        """True once bwrap has reported the command's exit (read after bwrap exited)."""
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(self.fd, 65_536):
                self.data += chunk
        return b'"exit-code"' in self.data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def bwrap_launch(
    cmd: Sequence[str],
    *,
    binds: Sequence[Bind],
    workdir: str,
    env: Mapping[str, str],
    network: bool,
    limits: Limits,
    uid: int = SANDBOX_UID,
    drop_root: bool | None = None,
    programs: tuple[str, str] = (BWRAP, PRLIMIT),
    sealed: bool = False,
) -> BwrapLaunch:
    """How to run *cmd* isolated with *binds* as the only host folders (see the module
    docstring); *drop_root* defaults to "the harness is root". *sealed* makes ``/tmp``
    and ``/dev`` read-only too (they live in the host's memory): nothing is writable but
    the writable binds."""
    if not cmd:
        raise ValueError("exec needs a command (a non-empty argv list)")
    bwrap, prlimit = programs
    drop = os.geteuid() == 0 if drop_root is None else drop_root
    options = [
        *_namespaces(network, uid),
        *_filesystem(binds, sealed),
        "--chdir",
        workdir,
        *_environment(env),
    ]
    command = [prlimit, *limits.prlimit_args(), "--", *cmd]
    return BwrapLaunch([*_drop_root(drop), bwrap], options, command)


def bwrap_failure(stderr: str) -> str:
    """Why bwrap could not start a command: its own last ``bwrap:`` line (the command never
    ran, so nothing else wrote to stderr)."""
    said = [line for line in stderr.splitlines() if line.startswith("bwrap:")]
    return f"the sandbox could not start: {said[-1][:300] if said else 'bwrap failed'}"


def require_programs(bwrap: str, prlimit: str, drop_root: bool) -> None:
    """A one-line error naming the package to install when a program bwrap needs is missing
    (never a fallback to running unisolated)."""
    needed = [(bwrap, "bubblewrap"), (prlimit, "util-linux")]
    if drop_root:
        needed.append((SETPRIV, "util-linux"))
    for program, package in needed:
        if not os.access(program, os.X_OK):
            raise ConfigError("sandbox.program_missing", path=program, package=package)


def require_reachable(folder: str) -> None:
    """A one-line error when the sandbox user (uid 65534, as a root harness drops to it)
    cannot enter *folder*, where work folders are made: every command would fail."""
    path = os.path.abspath(folder)
    while True:
        mode = os.stat(path)
        enters = mode.st_mode & stat.S_IXOTH or mode.st_uid == SANDBOX_UID
        if not enters and not (mode.st_gid == SANDBOX_UID and mode.st_mode & stat.S_IXGRP):
            raise ConfigError("sandbox.temp_unreachable", folder=folder, path=path)
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


def sandbox_uid(user: str | None) -> int:
    """The uid inside for Inspect's ``user=``: ``nobody`` (the default) or ``root``, who is
    root in name only (no capabilities, host uid 65534 when the harness is root)."""
    if user is None:
        return SANDBOX_UID
    uid = USERS.get(user)
    if uid is None:
        raise ValueError(
            f"the bwrap sandbox runs commands as 'nobody' (uid 65534) or 'root' (uid 0 with "
            f"no capabilities), not {user!r}"
        )
    return uid


def _memory_file(data: bytes) -> int:
    """An anonymous in-memory file holding *data*, read from its start (never on disk)."""
    fd = os.memfd_create("assay-bwrap-args", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _drop_root(drop: bool) -> list[str]:
    if not drop:
        return []
    ids = [f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
    return [SETPRIV, *ids, "--"]


def _namespaces(network: bool, uid: int) -> list[str]:
    argv = ["--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    # --cap-drop ALL: root inside (user="root") gets no capability, even in its namespace
    argv += ["--uid", str(uid), "--gid", str(uid), "--cap-drop", "ALL"]
    return argv + (["--share-net"] if network else [])


def _filesystem(binds: Sequence[Bind], sealed: bool = False) -> list[str]:
    argv = list(_system_folders())
    for path in _ETC_FILES:
        argv += ["--ro-bind-try", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for host, inside, writable in binds:
        argv += ["--bind" if writable else "--ro-bind", host, inside]
    if sealed:
        argv += ["--remount-ro", "/tmp", "--remount-ro", "/dev"]
    # the root bwrap builds is a tmpfs: read-only once the mounts are in it
    return [*argv, "--remount-ro", "/"]


def _system_folders() -> Iterator[str]:
    """Read-only binds of the system folders; a merged-/usr link stays a link."""
    for path in _SYSTEM_FOLDERS:
        if os.path.islink(path):
            yield from ("--symlink", os.readlink(path), path)
        elif os.path.isdir(path):
            yield from ("--ro-bind", path, path)


def _environment(variables: Mapping[str, str]) -> list[str]:
    argv = ["--clearenv"]
    for name, value in variables.items():
        argv += ["--setenv", name, value]
    return argv
