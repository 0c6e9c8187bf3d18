"""llama.cpp servers in this process: one per model file and settings, shared by its users.

``xllamacpp.Server`` runs llama.cpp's own HTTP server on threads of this process, bound
to 127.0.0.1 on a free port. A server is started on first use (loading a model takes a
moment and a run may never call it), shared by every model object that names the same
file with the same settings (units and tasks of one eval, a critic, a grader), and
stopped when its last user lets go. An ``atexit`` hook stops whatever is left: a server
still running when the interpreter finalises keeps the process from exiting.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

import msgspec

from assay.errors import RunError

_WARMUP = {"prompt": "Hi", "max_tokens": 1}


class ServerSettings(msgspec.Struct, frozen=True):
    """What decides a server: the model file and how llama.cpp runs it.

    Attributes:
        path: the GGUF file.
        threads: CPU threads for generation and prompt processing.
        ctx_size: context tokens in total, shared by the parallel slots.
        parallel: requests decoded at once (continuous batching).
    """

    path: str
    threads: int
    ctx_size: int
    parallel: int


class LlamaServer:
    """One llama.cpp server: started on demand, stopped by the last ``release``."""

    def __init__(self, model: str, settings: ServerSettings) -> None:
        self.model = model
        self.settings = settings
        self.users = 0
        self.starts = 0
        self._server: Any = None
        self._base_url: str | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:<port>`` while running, else None."""
        return self._base_url

    def start(self) -> str:
        """Start the server unless it runs; return its address. Blocks while loading."""
        with self._lock:
            if self._base_url is not None:
                return self._base_url
            import xllamacpp  # deferred: native code, loaded only for local models

            params = self._params(xllamacpp.CommonParams())
            try:
                server = xllamacpp.Server(params)
                # a request through the task queue: the server's main loop is running,
                # so a stop right after this is seen (a stop before it can be missed)
                server.handle_completions(dict(_WARMUP))
            except (RuntimeError, ValueError) as exc:
                raise RunError(
                    "local.start", model=self.model, path=self.settings.path, reason=str(exc)
                ) from None
            self._server = server
            self.starts += 1
            self._base_url = str(server.listening_address)
            return self._base_url

    def _params(self, params: Any) -> Any:
        settings = self.settings
        params.model.path = settings.path
        params.model_alias = {Path(settings.path).name}  # answers name the file, not its path
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, chosen by the system
        params.n_ctx = settings.ctx_size
        params.n_parallel = settings.parallel
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.threads
        params.ui = False
        params.offline = True  # never reach for a model hub
        params.verbosity = 0
        return params

    def stop(self) -> None:
        """Stop the server if it runs (its port closes); it may be started again."""
        with self._lock:
            server, self._server, self._base_url = self._server, None, None
            del server  # the native destructor stops the HTTP server and joins its loop


_servers: dict[ServerSettings, LlamaServer] = {}
_registry = threading.Lock()


def acquire(model: str, settings: ServerSettings) -> LlamaServer:
    """The shared server for *settings*, counted as used once more (it is not started)."""
    with _registry:
        server = _servers.get(settings)
        if server is None:
            server = _servers[settings] = LlamaServer(model, settings)
        server.users += 1
        return server


def release(server: LlamaServer) -> None:
    """One user fewer; the last one stops the server."""
    with _registry:
        server.users -= 1
        if server.users > 0:
            return
        _servers.pop(server.settings, None)
    server.stop()


def running() -> list[str]:
    """Addresses of the servers running now (for tests and benchmarks)."""
    with _registry:
        servers = list(_servers.values())
    return [url for s in servers if (url := s.base_url) is not None]


@atexit.register
def stop_all() -> None:
    """Stop every server still running (at exit, or after an interrupted run)."""
    with _registry:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()
