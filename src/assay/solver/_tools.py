"""``@tool``: a Python function a model may call, and the JSON Schema it is told about.

The name, the description (the docstring's first paragraph) and the parameters' JSON
Schema (from the signature's type hints, with each parameter's description from the
docstring's ``Args:`` section) are worked out once, when the function is decorated; a
definition a model could not call (a parameter without a type hint, of a type with no
JSON Schema, ``*args``) fails there, with one line naming the function and its file.

The same parameter types check each call: a model's arguments are converted with msgspec
against them, so a wrong or missing argument reaches the tool as a ``ToolCallError``
the model is shown, never as a crash.

``@tool`` also takes Inspect's form: an outer (sync) function, the *factory*, whose call
returns the async ``execute`` the model calls (its docstring and hints give the schema).
A sync function annotated ``-> Tool`` or defining an ``async def`` inside is taken as a
factory: decorating it gives a registered factory whose calls make Tools named after it.
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, ParamSpec, Protocol

import anyio
import msgspec

from assay._digest import canonical_json, sha256_hex
from assay._registry import registered, registry_info
from assay.errors import ConfigError

P = ParamSpec("P")

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_BY_NAME = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
RAW_ARGUMENTS = "_raw"
"""The key a provider keeps a tool call's arguments under when they were not JSON."""


_NO_ARGUMENTS = msgspec.defstruct("no_arguments", [], forbid_unknown_fields=True)


class ToolError(Exception):
    """Raised by a tool to tell the model its call failed: the model sees the message
    (as the tool's answer) and may try again. Any other exception fails the trial."""


class ToolCallError(Exception):
    """A model's call did not fit the tool (unknown tool, arguments of the wrong shape)."""


class ToolInfo(msgspec.Struct, frozen=True):
    """What a model is told about a tool: OpenAI's function schema, field for field."""

    name: str
    description: str
    parameters: dict[str, Any]


class Tool:
    """A function a model may call, with its definition. Calling the object calls the
    function itself, so a decorated function still works as plain Python."""

    def __init__(
        self,
        function: Callable[..., Any],
        definition: ToolInfo,
        arguments: type[Any],
        parallel: bool = True,
    ) -> None:
        self.function = function
        self.definition = definition
        # Inspect's flag; calls here always run one after another, so it changes nothing
        self.parallel = parallel
        # Inspect's ToolCallViewer (how a display shows a call): approvers see calls as it
        # shows them; never sent or digested
        self.viewer: Any = None
        self.schema: dict[str, Any] = msgspec.to_builtins(definition)  # sent to the model
        self._arguments = arguments
        self._fields: tuple[str, ...] = getattr(arguments, "__struct_fields__", ())
        self._is_async = inspect.iscoroutinefunction(function)
        functools.update_wrapper(self, function)

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self.definition.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        # stable (no address) and changed by any change to the definition, or to the
        # arguments of the factory that made it: it is what a spec records of use_tools(...)
        digest = sha256_hex(canonical_json(self.schema))[:12]
        info = registry_info(self)
        if info is None:
            return f"Tool({self.name!r}, sha256:{digest})"
        made = canonical_json(info.args).decode()
        return f"Tool({self.name!r}, sha256:{digest}, {info.name}{made})"

    async def execute(self, arguments: dict[str, Any]) -> str:
        """Check *arguments* against the parameters, call the function, and return its
        answer as text (``ToolCallError`` for arguments that do not fit)."""
        values = self.arguments_of(arguments)
        if self._is_async:
            result = await self.function(**values)
        else:  # a worker thread: a slow sync tool does not stall the other trials
            call = functools.partial(self.function, **values)
            result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            if inspect.isawaitable(result):
                result = await result
        return result_text(self.name, result)

    def arguments_of(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """*arguments* converted to the parameters' types, defaults filled in."""
        if set(arguments) == {RAW_ARGUMENTS} and RAW_ARGUMENTS not in self._fields:
            raise ToolCallError(f"the arguments are not a JSON object: {arguments[RAW_ARGUMENTS]}")
        try:
            parsed = msgspec.convert(arguments, self._arguments)
        except msgspec.ValidationError as exc:
            raise ToolCallError(f"invalid arguments to {self.name}: {exc}") from None
        return {field: getattr(parsed, field) for field in self._fields}

    @classmethod
    def unavailable(cls, definition: ToolInfo) -> Tool:
        """A tool known only by its definition (a state read back from evidence)."""

        def absent(**arguments: Any) -> Any:
            raise ToolError(f"tool {definition.name!r} is not available here")

        return cls(absent, definition, _NO_ARGUMENTS)


def result_text(name: str, result: Any) -> str:
    """A tool's answer as the text of its tool message: text as it is, ``None`` as
    nothing, anything else as JSON."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    try:
        return msgspec.json.encode(result).decode()
    except (TypeError, ValueError) as exc:
        kind = type(result).__name__
        raise TypeError(
            f"tool {name!r} returned a {kind}, which is not text or JSON: {exc}"
        ) from None


class ToolDecorator(Protocol):
    """What ``@tool(name=..., ...)`` returns: a decorator taking either form."""

    @typing.overload
    def __call__(self, function: Callable[P, Tool], /) -> Callable[P, Tool]: ...

    @typing.overload
    def __call__(self, function: Callable[..., Any], /) -> Tool: ...

    def __call__(self, function: Callable[..., Any], /) -> Any: ...


@typing.overload
def tool(function: Callable[P, Tool], /) -> Callable[P, Tool]: ...


@typing.overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@typing.overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool = True,
    viewer: Any = None,
) -> ToolDecorator: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool = True,
    viewer: Any = None,
) -> Any:
    """Make a function (sync or async) a tool: ``@tool`` or ``@tool(name=..., description=...)``.

    The parameters need type hints; the docstring's first paragraph is the description
    and its ``Args:`` section describes the parameters. On an Inspect-style factory (see
    the module docstring) it gives the factory back, registered, each call making a Tool.
    *viewer* (Inspect's ``ToolCallViewer``, how a display shows a call) is kept as the
    Tool's ``viewer``: approvers are shown the tool's calls as it views them. It is not
    sent to the model nor part of the tool's digest.
    """
    if function is None:
        return lambda f: _decorate(f, name, description, parallel, viewer)
    return _decorate(function, name, description, parallel, viewer)


def _decorate(
    function: Callable[..., Any],
    name: str | None,
    description: str | None,
    parallel: bool,
    viewer: Any = None,
) -> Any:
    """A Tool for a tool function, a registered Tool factory for a factory."""
    if is_tool_factory(function):
        return tool_factory(function, name, description, parallel, viewer)
    made = define_tool(function, name, description, parallel)
    made.viewer = viewer
    return made


def is_tool_factory(function: Any) -> bool:
    """True for Inspect's form: a sync function annotated ``-> Tool`` or with an
    ``async def`` inside it (the ``execute`` it returns)."""
    if not inspect.isfunction(function) or inspect.iscoroutinefunction(function):
        return False
    returns = function.__annotations__.get("return")
    if returns is Tool or getattr(returns, "__name__", None) == "Tool":
        return True
    if isinstance(returns, str) and returns.rsplit(".", 1)[-1] == "Tool":
        return True
    nested = (c for c in function.__code__.co_consts if isinstance(c, types.CodeType))
    return any(code.co_flags & inspect.CO_COROUTINE for code in nested)


def tool_factory(
    factory: Callable[P, Any],
    name: str | None = None,
    description: str | None = None,
    parallel: bool = True,
    viewer: Any = None,
) -> Callable[P, Tool]:
    """*factory* registered as a tool factory: each call makes a Tool of what it returns
    (the ``execute`` function, or a Tool), named *name* or after the factory, carrying
    *viewer*."""
    label = name or factory.__name__
    where = _where(factory)
    if not _NAME.match(label):  # now, not at the first call
        raise ConfigError("tool.bad_name", name=label, where=where)

    @functools.wraps(factory)
    def make(*args: P.args, **kwargs: P.kwargs) -> Tool:
        made = factory(*args, **kwargs)
        if isinstance(made, Tool):
            if name is None and description is None and parallel and viewer is None:
                return made
            summary = made.definition.description if description is None else description
            made = define_tool(made.function, name or made.name, summary, parallel)
        elif callable(made):
            made = define_tool(made, label, description, parallel)
        else:
            raise ConfigError("tool.factory_result", name=label, value=repr(made), where=where)
        made.viewer = viewer
        return made

    made_by: Callable[P, Tool] = registered("tool", label)(make)
    return made_by


def define_tool(
    function: Callable[..., Any],
    name: str | None = None,
    description: str | None = None,
    parallel: bool = True,
) -> Tool:
    """The Tool for *function* (see ``tool``); a ConfigError for a bad definition."""
    where = _where(function)
    made_by_factory = getattr(function, "__assay_kind__", None) == "tool"
    if (
        not callable(function)
        or inspect.isclass(function)
        or isinstance(function, Tool)
        or made_by_factory
    ):
        raise ConfigError("tool.not_function", value=repr(function), where=where)
    label = str(name or getattr(function, "__name__", ""))
    if not _NAME.match(label):
        raise ConfigError("tool.bad_name", name=label, where=where)
    summary, documented = _docs(function)
    fields = _fields(function, label, where, documented)
    arguments = msgspec.defstruct(f"{label}_arguments", fields, forbid_unknown_fields=True)
    definition = ToolInfo(
        label,
        summary if description is None else description,
        _parameters_schema(arguments),
    )
    return Tool(function, definition, arguments, parallel)


def _fields(
    function: Callable[..., Any], label: str, where: str, documented: dict[str, str]
) -> list[tuple[str, Any, Any]]:
    """The ``defstruct`` fields of the parameters: name, type (described), default."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:  # a hint naming something that does not exist
        every = ", ".join(signature.parameters)
        raise ConfigError(
            "tool.unsupported_type", name=label, parameter=every, reason=exc, where=where
        ) from None
    fields: list[tuple[str, Any, Any]] = []
    for parameter in signature.parameters.values():
        if parameter.kind not in _BY_NAME:
            raise ConfigError(
                "tool.parameter_kind", name=label, parameter=parameter.name, where=where
            )
        if parameter.name not in hints:
            raise ConfigError(
                "tool.no_type_hint", name=label, parameter=parameter.name, where=where
            )
        hint = hints[parameter.name]
        try:
            msgspec.json.schema(hint)
        except (TypeError, ValueError) as exc:
            reason = str(exc).splitlines()[-1]
            raise ConfigError(
                "tool.unsupported_type",
                name=label,
                parameter=parameter.name,
                reason=reason,
                where=where,
            ) from None
        if parameter.name in documented:
            hint = Annotated[hint, msgspec.Meta(description=documented[parameter.name])]
        fields.append((parameter.name, hint, _default(parameter.default)))
    return fields


def _default(default: Any) -> Any:
    """A parameter's default as a field default; a mutable one is copied for each call."""
    if default is inspect.Parameter.empty:
        return msgspec.NODEFAULT
    if isinstance(default, list | dict | set):
        return msgspec.field(default_factory=lambda: copy.deepcopy(default))
    return default


def _parameters_schema(arguments: type[Any]) -> dict[str, Any]:
    """The JSON Schema of the parameters object, with any types it refers to in ``$defs``."""
    _, components = msgspec.json.schema_components([arguments], ref_template="#/$defs/{name}")
    schema = dict(components.pop(arguments.__name__))
    schema.pop("title", None)
    schema.setdefault("required", [])
    if components:
        schema["$defs"] = components
    return schema


def _docs(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph, and each parameter's description in it."""
    text = inspect.getdoc(function)
    if not text:
        return "", {}
    import docstring_parser  # only when a tool is defined: it costs ~20 ms to import

    parsed = docstring_parser.parse(text)
    summary = parsed.short_description or ""
    if parsed.long_description and not parsed.blank_after_short_description:
        summary = f"{summary}\n{parsed.long_description.split(chr(10) * 2)[0]}"
    described = {
        p.arg_name: " ".join(p.description.split()) for p in parsed.params if p.description
    }
    return " ".join(summary.split()), described


def _where(function: Any) -> str:
    """``file:line`` of a function's definition, or its repr."""
    code = getattr(function, "__code__", None)
    if code is None:
        return repr(function)
    return f"{code.co_filename}:{code.co_firstlineno}"
