"""``json_schema(MyModel)``: the JSON Schema a ``ResponseSchema`` asks an answer to match,
made from a type, as Inspect's ``inspect_ai.util.json_schema`` is used."""

from __future__ import annotations

from typing import Any


def json_schema(t: Any) -> dict[str, Any]:
    """The JSON Schema of *t*, as a dict: a pydantic model's own
    (``model_json_schema``), else msgspec's for a dataclass, ``msgspec.Struct``,
    ``TypedDict`` or plain type. A schema that is only a reference to one definition is
    that definition (servers read the top level as the answer's shape)."""
    own = getattr(t, "model_json_schema", None)
    if callable(own):
        schema: dict[str, Any] = own()
        return schema
    import msgspec

    return _inlined_top(msgspec.json.schema(t))


def _inlined_top(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": "#/$defs/X", "$defs": {...}}`` as X itself, other definitions kept."""
    ref = schema.get("$ref")
    definitions = dict(schema.get("$defs") or {})
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    name = ref[len("#/$defs/") :]
    if name not in definitions or ref in str(list(definitions.values())):
        return schema  # referred to from inside (recursive): kept as msgspec made it
    top = dict(definitions.pop(name))
    if definitions:
        top["$defs"] = definitions
    return top
