"""Named OpenAI-compatible services, as Inspect names them: ``groq/<model>``, ``ollama/<model>``...

Each is the ``openai`` provider with two defaults: the server (``<NAME>_BASE_URL``, else
the service's own address) and the environment variable the key is read from
(``<NAME>_API_KEY``). ``--model-base-url`` (``-M base_url=``) wins over both URLs. A key
is read from that one variable only, never from ``OPENAI_API_KEY``: a key for one
service is not sent to another. ``openai-api/<service>/<model>`` reaches any other
service the same way (``<SERVICE>_BASE_URL``, which it needs, and ``<SERVICE>_API_KEY``).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from assay.errors import ConfigError
from assay.model._config import GenerateConfig
from assay.model._model import ModelAPI
from assay.model._openai import NO_KEY, openai_provider
from assay.model._registry import modelapi
from assay.model._replay import replaying_only


class Profile(NamedTuple):
    """A service: its default server, its variables' prefix, whether it needs a key."""

    url: str | None
    prefix: str
    needs_key: bool = True


PROFILES: dict[str, Profile] = {
    "vllm": Profile(None, "VLLM", needs_key=False),
    "sglang": Profile(None, "SGLANG", needs_key=False),
    "ollama": Profile("http://localhost:11434/v1", "OLLAMA", needs_key=False),
    "groq": Profile("https://api.groq.com/openai/v1", "GROQ"),
    "together": Profile("https://api.together.xyz/v1", "TOGETHER"),
    "openrouter": Profile("https://openrouter.ai/api/v1", "OPENROUTER"),
    "fireworks": Profile("https://api.fireworks.ai/inference/v1", "FIREWORKS"),
    "deepseek": Profile("https://api.deepseek.com", "DEEPSEEK"),
    "sambanova": Profile("https://api.sambanova.ai/v1", "SAMBANOVA"),
    "moonshot": Profile("https://api.moonshot.ai/v1", "MOONSHOT"),
    "perplexity": Profile("https://api.perplexity.ai", "PERPLEXITY"),
    "grok": Profile("https://api.x.ai/v1", "XAI"),
}
"""Inspect's OpenAI-compatible providers (vLLM and SGLang: a server already running)."""


def profile_api(
    provider: str,
    profile: Profile,
    name: str,
    config: GenerateConfig,
    base_url: str | None,
    **args: Any,
) -> ModelAPI:
    """The ``openai`` provider on *profile*'s server with *profile*'s key."""
    model = f"{provider}/{name}"
    url = base_url or os.environ.get(f"{profile.prefix}_BASE_URL") or profile.url
    if url is None:
        raise ConfigError("model.profile_url", model=model, env=f"{profile.prefix}_BASE_URL")
    key_env = f"{profile.prefix}_API_KEY"
    key = os.environ.get(key_env)
    if key is None and profile.needs_key and not replaying_only():
        raise ConfigError("model.profile_key", model=model, env=key_env)
    return openai_provider(name, config, base_url=url, api_key=key or NO_KEY, **args)


def _register(provider: str, profile: Profile) -> None:
    def factory(
        name: str, config: GenerateConfig, *, base_url: str | None = None, **args: Any
    ) -> ModelAPI:
        return profile_api(provider, profile, name, config, base_url, **args)

    factory.__doc__ = f"``{provider}/<model>``: an OpenAI-compatible service ({profile.prefix}_*)."
    # named as the module-level definition it is (made once, at import), not a local
    factory.__name__ = factory.__qualname__ = f"{provider}_provider"
    modelapi(provider)(factory)


for _provider, _profile in PROFILES.items():
    _register(_provider, _profile)


@modelapi("openai-api")
def openai_api_provider(
    name: str, config: GenerateConfig, *, base_url: str | None = None, **args: Any
) -> ModelAPI:
    """``openai-api/<service>/<model>``: any OpenAI-compatible service, its server in
    ``<SERVICE>_BASE_URL`` (or ``--model-base-url``) and its key in ``<SERVICE>_API_KEY``."""
    service, sep, model = name.partition("/")
    if not sep or not model:
        raise ConfigError("model.name", model=f"openai-api/{name}")
    prefix = service.upper().replace("-", "_")
    return profile_api(
        f"openai-api/{service}", Profile(None, prefix), model, config, base_url, **args
    )
