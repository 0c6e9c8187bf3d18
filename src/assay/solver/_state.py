"""TaskState: everything a solver needs for one trial, and the Target it is judged by.

Each trial gets its own TaskState, built fresh from the sample, so nothing a solver does
to it can leak into another sample or epoch. The final state is written to the evidence
as a JSON artifact; scorers see a TaskState rebuilt from those bytes, never the live one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import msgspec

from assay._digest import canonical_json
from assay.model import ChatMessage, ModelOutput
from assay.model._bound import BoundScope, bound_now
from assay.solver._tools import Tool, ToolInfo


class _BoundToStore(Protocol):
    def __init__(self, *, store: dict[str, Any], instance: str | None) -> None: ...


S = TypeVar("S", bound=_BoundToStore)
M = TypeVar("M")


class Choice(msgspec.Struct):
    """One option of a multiple-choice sample; ``correct`` is set by the solver's answer."""

    value: str
    correct: bool | None = None
    original_position: int = 0


class Target:
    """The expected answer(s) of a sample: ``text`` for one, ``target`` for the list."""

    def __init__(self, target: Any) -> None:
        if type(target) is str:  # the common case first: made twice a trial
            self.target: list[str] = [target]
        elif target is None:
            target = ""
            self.target = [target]
        else:
            self.target = [str(t) for t in target] if isinstance(target, list) else [str(target)]
        self.raw = target

    @property
    def text(self) -> str:
        """All target values joined into one string."""
        return "".join(self.target)

    def __iter__(self) -> Any:
        return iter(self.target)

    def __repr__(self) -> str:
        return f"Target({self.raw!r})"


class Store(dict[str, Any]):
    """A trial's store: a plain dict (so it is written to the evidence as one) with
    Inspect's ``Store`` methods; its values must be JSON."""

    def set(self, key: str, value: Any) -> None:
        """Keep *value* under *key*."""
        self[key] = value

    def has(self, key: str) -> bool:
        """Whether *key* holds a value."""
        return key in self

    def delete(self, key: str) -> None:
        """Forget *key* (nothing if it holds nothing)."""
        self.pop(key, None)


class TaskState:
    """The state of one trial as the solver chain works on it."""

    def __init__(
        self,
        *,
        model: str,
        sample_id: str | int,
        epoch: int,
        input: str | list[ChatMessage],
        target: Target,
        choices: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.sample_id = sample_id
        self.epoch = epoch
        self.input = input
        self.target = target
        self.messages: list[ChatMessage] = (  # user_message's and empty's, inlined
            [ChatMessage("user", input)] if isinstance(input, str) else list(input)
        )
        self.choices = [Choice(c, None, i) for i, c in enumerate(choices)] if choices else []
        self.metadata: dict[str, Any] = dict(metadata) if metadata else {}
        self._store = Store()
        self.output = ModelOutput(model, ChatMessage("assistant", ""))
        self.completed = False
        self.limit: str | None = None
        self.tools: list[Tool] = []  # offered to the model by generate (see use_tools)
        self.tool_choice: str = "auto"  # "auto", "none", "any", or a tool's name to force

    @property
    def store(self) -> Store:
        """The trial's store: a dict kept in the evidence, with Inspect's ``Store``
        methods (``get``, ``set``, ``has``, ``delete``)."""
        return self._store

    @store.setter
    def store(self, data: dict[str, Any]) -> None:
        self._store = data if isinstance(data, Store) else Store(data)

    @property
    def input_text(self) -> str:
        """The input as text (the last user message's content for chat input)."""
        if isinstance(self.input, str):
            return self.input
        users = [m for m in self.input if m.role == "user"]
        return users[-1].text if users else ""

    @property
    def user_prompt(self) -> ChatMessage:
        """The first user message (solvers that rewrite the prompt edit this one)."""
        for message in self.messages:
            if message.role == "user":
                return message
        raise ValueError("the state has no user message")

    def store_as(self, model_type: type[S], instance: str | None = None) -> S:
        """The state's store seen through *model_type* (an ``assay.util.StoreModel``):
        typed fields kept under ``Type:field`` keys (``Type:instance:field`` with
        *instance*), so what a solver sets is in the evidence and scorers read it back."""
        return model_type(store=self.store, instance=instance)

    def metadata_as(self, metadata_type: type[M]) -> M:
        """The sample's metadata as *metadata_type*: a pydantic model (validated with
        ``model_validate``) or any type msgspec can convert a dict into (a dataclass,
        a ``msgspec.Struct``, a TypedDict)."""
        from assay.dataset._sample import metadata_as

        return metadata_as(self.metadata, metadata_type)

    def to_record(self) -> dict[str, Any]:
        """The state as JSON values: what the evidence keeps and scorers read back
        (the tools by their definitions, and only when there are any)."""
        return self._record(msgspec.to_builtins, self.output.to_record())

    def to_json(self) -> bytes:
        """``canonical_json(self.to_record())``, with the messages, choices and output
        encoded as they are rather than made dicts first: the same bytes (the encoder
        sorts a struct's fields as it sorts dict keys), the evidence a solver target
        writes."""
        output = msgspec.structs.asdict(self.output)  # to_record's, one level deep
        if self.output.alternatives is None:  # only when there are some, as there
            del output["alternatives"]
        return canonical_json(self._record(None, output))

    def json_answered(self, said: tuple[bytes, bytes]) -> bytes:
        """``to_json()`` of a finished state whose last step was one model call that
        *said* its messages (the state's, before the answer) and its output (the
        state's now) as ``Model.answer`` returns them: those encodings joined with the
        other fields' in the keys' sorted order, rather than all encoded again. A state
        with tools, choices, a store, a limit or no messages encodes as ``to_json``."""
        messages, output = said
        if self.tools or self.choices or self._store or self.limit is not None:
            return self.to_json()
        if len(messages) < 3 or self.completed is not True or type(self.epoch) is not int:
            return self.to_json()  # b"[]": no message before the answer to join after
        return _ANSWERED % (
            self.epoch,
            canonical_json(self.input),
            messages[:-1],
            canonical_json(self.output.message),
            canonical_json(self.metadata),
            canonical_json(self.model),
            output,
            canonical_json(self.sample_id),
        )

    def _record(
        self, convert: Callable[[Any], Any] | None, output: dict[str, Any]
    ) -> dict[str, Any]:
        """The record's fields, *convert* applied to the structs (``None``: as they are)."""
        parts = (self.input, self.messages, self.choices)
        prompt, messages, choices = parts if convert is None else map(convert, parts)
        record: dict[str, Any] = {
            "model": self.model,
            "sample_id": self.sample_id,
            "epoch": self.epoch,
            "input": prompt,
            "messages": messages,
            "output": output,
            "choices": choices,
            "metadata": self.metadata,
            "store": self.store,
            "completed": self.completed,
            "limit": self.limit,
        }
        if self.tools:
            record["tools"] = [t.schema for t in self.tools]
            record["tool_choice"] = self.tool_choice
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any], target: Any) -> TaskState:
        """Rebuild a (detached) state from ``to_record`` output, for scorers."""
        raw_input = record["input"]
        state = cls(
            model=record["model"],
            sample_id=record["sample_id"],
            epoch=record["epoch"],
            input=raw_input
            if isinstance(raw_input, str)
            else msgspec.convert(raw_input, list[ChatMessage]),
            target=Target(target),
            metadata=record["metadata"],
        )
        state.messages = msgspec.convert(record["messages"], list[ChatMessage])
        state.output = msgspec.convert(record["output"], ModelOutput)
        state.choices = msgspec.convert(record["choices"], list[Choice])
        state.store = record["store"]
        state.completed = record["completed"]
        state.limit = record.get("limit")
        if "tools" in record:
            definitions = msgspec.convert(record["tools"], list[ToolInfo])
            state.tools = [Tool.unavailable(d) for d in definitions]
            state.tool_choice = record["tool_choice"]
        return state


_ANSWERED = (
    b'{"choices":[],"completed":true,"epoch":%d,"input":%s,"limit":null,"messages":%s,%s],'
    b'"metadata":%s,"model":%s,"output":%s,"sample_id":%s,"store":{}}'
)
"""``TaskState.to_json`` of a finished state without tools, choices, store nor limit:
its record's keys in sorted order, each value a slot (the messages two, joined)."""


def text_state(
    model: str,
    sample_id: str | int,
    epoch: int,
    input: str,
    target: Any,
    metadata: dict[str, Any] | None,
) -> TaskState:
    """``TaskState(...)`` of a text input without choices (a trial's, made once each):
    the same attributes in the same order, set without the keyword call and its tests."""
    state = _new(TaskState)
    state.model = model
    state.sample_id = sample_id
    state.epoch = epoch
    state.input = input
    state.target = Target(target)
    state.messages = [ChatMessage("user", input)]
    state.choices = []
    state.metadata = dict(metadata) if metadata else {}
    state._store = Store()
    state.output = ModelOutput(model, ChatMessage("assistant", ""))
    state.completed = False
    state.limit = None
    state.tools = []
    state.tool_choice = "auto"
    return state


_new = object.__new__


class _StateRecord(msgspec.Struct):
    """``TaskState.to_record`` output as one typed value: decoded in one pass in C."""

    model: str
    sample_id: str | int
    epoch: int
    input: str | list[ChatMessage]
    messages: list[ChatMessage]
    output: ModelOutput
    choices: list[Choice]
    metadata: dict[str, Any]
    store: dict[str, Any]
    completed: bool
    limit: str | None = None
    tools: list[ToolInfo] | None = None
    tool_choice: str = "auto"


_state_record = msgspec.json.Decoder(_StateRecord)


def state_from_json(data: bytes, target: Any) -> TaskState:
    """``TaskState.from_record(loads(data), target)`` for a scorer, built without the
    generic decode and the conversions after it (a scorer judges every trial); bytes
    that are not such a record go the generic way, so its errors are the same."""
    try:
        record = _state_record.decode(data)
    except msgspec.ValidationError:
        return TaskState.from_record(msgspec.json.decode(data), target)
    state = TaskState.__new__(TaskState)
    state.model = record.model
    state.sample_id = record.sample_id
    state.epoch = record.epoch
    state.input = record.input
    state.target = Target(target)
    state.messages = record.messages
    state.choices = record.choices
    state.metadata = record.metadata
    state.store = record.store
    state.output = record.output
    state.completed = record.completed
    state.limit = record.limit
    state.tools = [Tool.unavailable(d) for d in record.tools] if record.tools else []
    state.tool_choice = record.tool_choice if record.tools is not None else "auto"
    return state


def completion_from_json(data: bytes) -> str | None:
    """``state_from_json(data, ...).output.completion`` when *data* is a state record
    (the same typed decode), without the state built; ``None`` when it is not, where
    ``state_from_json`` would go the generic way or raise."""
    try:
        message = _state_record.decode(data).output.message
    except msgspec.MsgspecError:
        return None
    content = message.content  # ``completion``, without its two properties for text
    return content if type(content) is str else message.text


def answer_in_json(state: TaskState) -> str | None:
    """``completion_from_json(state.to_json())`` without the encode and decode, when it
    is sure to be the state's answer text: a text answer (a JSON string decodes to the
    same text) in a record the typed decode takes (text input, a str or int sample id,
    an int epoch, a str model name, no tools (whose ``tool_choice`` may be a struct):
    the fields it could refuse; messages and output are the structs it decodes).
    ``None`` otherwise: the judge then decodes the bytes, as
    re-scoring from the evidence does (``tests/pipeline/test_lean_handed_answer.py``)."""
    content = state.output.message.content
    if type(content) is not str or type(state.input) is not str or state.tools:
        return None
    if type(state.sample_id) not in _IDS or type(state.epoch) is not int:
        return None
    return content if type(state.model) is str else None


_IDS = (str, int)  # exact types: a bool id is encoded ``true``, which the decode refuses


def current_state() -> TaskState | None:
    """The state of the trial whose solvers (or scorers) run in this context, if any:
    what ``assay.util.store()`` reads, as Inspect's ``store()`` finds the sample's."""
    state: TaskState | None = bound_now().state
    return state


def state_scope(state: TaskState) -> BoundScope[TaskState]:
    """Make *state* the current one while the block runs."""
    return BoundScope("state", state)
