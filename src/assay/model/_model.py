"""``Model``: one named model behind a provider, with a connection gate and evidence.

Every call goes through ``Model.generate``, which waits for a connection slot (the
third concurrency gate: at most ``max_connections`` calls to this model at once, fewer
while the provider rate-limits), asks the provider with retries, charges the trial's
budget and records a ``sampling`` event with the prompt and the answer as artifacts.
Providers only translate; they record nothing.

With a response cache in force (``cache_scope``), a call it can answer is answered before
waiting for a connection; every call is priced from the price table (``_prices``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from assay._digest import canonical_json, sha256_hex
from assay.evidence._recorder import _current as _recorder
from assay.model._bound import bound_now
from assay.model._cache import _cache
from assay.model._cache_key import shown_url
from assay.model._calls import ModelError, call_with_retries, settle_try
from assay.model._config import GenerateConfig
from assay.model._gate import AdaptiveGate
from assay.model._messages import ChatMessage, user_message, with_images_inlined
from assay.model._output import ModelOutput
from assay.model._prices import get_price
from assay.model._replay import _replay
from assay.model._scoped_limits import _active as _scoped
from assay.model._scoped_limits import charge_scoped_limits

if TYPE_CHECKING:
    from assay.evidence import TrialRecorder

DEFAULT_MAX_CONNECTIONS = 10
_PROMPT = b'{"config":%s,"messages":%s,"tools":%s}'

Said = tuple[bytes, bytes]
"""What a recorded model call encoded: its messages (``canonical_json``) and its output
(``ModelOutput.record_json``), for a caller writing them again in a larger record."""

# ``current_replay``, ``current_cache``, ``current_recorder`` and the scoped limits (and
# ``current_budget``: ``bound_now().budget``) without a Python frame around each: the
# context variables' own ``get``, asked on every model call.
_replay_now = _replay.get
_cache_now = _cache.get
_recorder_now = _recorder.get
_scoped_now = _scoped.get


class ModelAPI(Protocol):
    """What a provider implements: one call, messages in, output out."""

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """Answer *messages*; raise ``InfrastructureError`` for failures worth retrying
        and ``ModelError`` for the rest. (An optional ``async def aclose()`` releases
        the provider's connections; the pipeline calls it when a run ends.)"""
        ...


class Model:
    """A model by name (``provider/name``), its default config and its provider."""

    def __init__(self, name: str, api: ModelAPI, config: GenerateConfig | None = None) -> None:
        self.name = name
        self.api = api
        self.config = config or GenerateConfig()
        self.gate = AdaptiveGate(self.config.max_connections or DEFAULT_MAX_CONNECTIONS)
        self._rng = random.Random()
        self._config_json = _encoded_once(self.config)  # for _prompt_json

    @property
    def endpoint(self) -> str | None:
        """Where this model's answers come from, as it may be written down: the
        provider's base URL (however it was chosen: an argument, ``$OPENAI_BASE_URL``,
        the default) without credentials, query or fragment; None if it has none."""
        url = getattr(self.api, "base_url", None)
        return shown_url(str(url)) if url is not None else None

    def __str__(self) -> str:
        """``provider/name``, as Inspect's ``str(model)``."""
        return self.name

    def __repr__(self) -> str:
        return f"Model({self.name!r})"

    async def generate(
        self,
        input: str | list[ChatMessage],
        tools: list[dict[str, Any]] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelOutput:
        """Ask the model; record the call in the current trial's evidence (images given
        as files are read into data URIs first, so the evidence and the cache key hold
        what was sent)."""
        messages = [user_message(input)] if isinstance(input, str) else input
        merged = self.config if config is None else self.config.merge(config)
        output, _ = await self.answer(messages, tools, merged)
        return output

    async def answer(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None,
        merged: GenerateConfig,
    ) -> tuple[ModelOutput, Said | None]:
        """``generate`` of *messages* with *merged* (the model's config with the call's
        over it), with what its evidence was encoded from (``Said``, None when nothing
        recorded it or what was sent is not *messages*) for a caller that writes them
        again (a solver target's state): this call's own value, never kept on the model
        (shared by every trial in flight)."""
        try:
            sent = with_images_inlined(messages)
        except ValueError as exc:
            raise ModelError(None, self.name, str(exc)) from None
        if _replay_now() is not None or _cache_now() is not None:
            return await self._generate_kept(sent, tools, merged)
        listed = tools or []
        gate = self.gate
        generation = gate.enter() if merged.timeout is None else None
        if generation is None:  # a wait, or a timeout: the retry loop from the start
            output = await call_with_retries(
                self.api, gate, self.name, sent, listed, merged, self._rng
            )
        else:  # a free slot, no timeout: the first try here (one frame less a call)
            failure = None
            try:
                output = await self.api.generate(sent, listed, merged)
            except BaseException as exc:
                failure = settle_try(gate, generation, self.name, 1, exc)
            else:
                gate.answered(generation)
            if failure is not None:  # retried as call_with_retries retries its own
                output = await call_with_retries(
                    self.api, gate, self.name, sent, listed, merged, self._rng, failure
                )
        said = self._finish(sent, tools, merged, output)
        return output, (said if sent is messages else None)  # images inlined: not theirs

    async def _generate_kept(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None,
        merged: GenerateConfig,
    ) -> tuple[ModelOutput, None]:
        """``answer`` with a replay or a response cache in force: a recorded or cached
        answer if there is one, else the call (its answer kept in the cache); nothing
        said for a caller to reuse (the unusual way: its general path)."""
        replay = _replay_now()
        if replay is not None:
            prompt = self._prompt_json(canonical_json(messages), tools, merged)
            recorded = replay.answer(self.name, sha256_hex(prompt))
            if recorded is not None:
                return recorded, None
        cache = _cache_now()  # response cache: answer before waiting for a connection
        key = cache.key(self, messages, tools, merged) if cache is not None else ""
        cached = cache.get(key) if cache is not None else None
        if cached is not None:
            self._finish(messages, tools, merged, cached)
            return cached, None
        output = await call_with_retries(
            self.api, self.gate, self.name, messages, tools or [], merged, self._rng
        )
        if cache is not None:  # response cache: keep the answer
            cache.put(key, self, output)
        self._finish(messages, tools, merged, output)
        return output, None

    def _finish(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None,
        config: GenerateConfig,
        output: ModelOutput,
    ) -> Said | None:
        """Price the call, record it and charge the trial's budget (a cached answer too,
        so a limit cuts a trial off at the same point whether or not the cache answered);
        what the record said (None without a recorder)."""
        usage = output.usage
        price = get_price(self.name)  # cost_of's, inlined (once a call)
        cost = None if price is None else price.cost(usage)
        recorder = _recorder_now()
        said = None
        if recorder is not None:
            said = self._record(recorder, messages, tools, config, output, cost)
        budget = bound_now().budget
        if budget is not None:
            budget.spend(usage, cost or 0.0)
        if _scoped_now():  # a block's limits (``with token_limit(...)``) to count
            charge_scoped_limits(len(messages), usage)
        return said

    async def aclose(self) -> None:
        """Release the provider's connections, unless calls are still in flight (a model
        shared by units running at once is closed by the last one to finish; a closed
        provider reconnects if it is called again)."""
        closer = getattr(self.api, "aclose", None)
        if closer is not None and self.gate.in_flight == 0:
            await closer()

    def _prompt_json(
        self, said: bytes, tools: list[dict[str, Any]] | None, config: GenerateConfig
    ) -> bytes:
        """``canonical_json({"messages": messages, "tools": tools or [], "config":
        config})`` (the prompt artifact, the replay key) given the messages' encoding
        *said*, joined from its values' encodings in the keys' sorted order: the same
        bytes, without a dict whose keys the encoder sorts on every call. The model's
        own config is encoded once (``_encoded_once``) if nothing in it can change."""
        listed = canonical_json(tools) if tools else b"[]"
        known, encoded = self._config_json
        config_json = encoded if config is known else canonical_json(config)
        return _PROMPT % (config_json, said, listed)

    def _record(
        self,
        recorder: TrialRecorder,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None,
        config: GenerateConfig,
        output: ModelOutput,
        cost: float | None = None,
    ) -> Said:
        """The call's ``sampling`` event, its prompt and answer stored as artifacts;
        the messages' and the answer's encodings they were made from."""
        store = recorder.store
        said = canonical_json(messages)
        answer = output.record_json()
        data: dict[str, Any] = {
            "model": self.name,
            "prompt": store.put_digest(self._prompt_json(said, tools, config)),
            "output": store.put_digest(answer),
            "usage": msgspec.structs.asdict(output.usage),
            "stop_reason": output.stop_reason,
            "cost": cost,
        }
        if output.cached:
            data["cached"] = True
        recorder.sampled(data)  # record_if_open("sampling", data), in one frame
        return said, answer


_SCALARS = (str, int, float, bool, type(None))


def _encoded_once(config: GenerateConfig) -> tuple[GenerateConfig | None, bytes]:
    """*config* with its canonical JSON when every field holds a scalar (the struct is
    frozen, so its encoding cannot change), else ``(None, b"")``: a list or a dict in it
    (``stop``, ``extra_body``...) could be changed in place, so it is encoded each call."""
    if all(isinstance(v, _SCALARS) for v in msgspec.structs.astuple(config)):
        return config, canonical_json(config)
    return None, b""
