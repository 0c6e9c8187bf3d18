"""Reading a spec's YAML: PyYAML's safe loader, made strict, with errors that name a line.

PyYAML reports bad syntax as a ``YAMLError`` carrying a position, but a value its
constructor cannot convert (``!!int abc``, ``!!timestamp nope``, an integer longer
than Python reads from text) escapes as a bare ``ValueError``, ``TypeError`` or
``AttributeError`` with no position at all, and a list used as a mapping key breaks
the duplicate-key check with ``TypeError``. Here every node is constructed through one
guard that turns such an error into a ``ConfigError`` naming the file, the line, the
text and the key it is the value of.
"""

from __future__ import annotations

import sys
from typing import Any

from assay.errors import ConfigError

_YAML_TAG = "tag:yaml.org,2002:"
_SHOWN = 40  # characters of a bad value quoted in a message


class _BadValue(Exception):
    """A node the constructor could not convert; *field* is filled in on the way out."""

    def __init__(self, node: Any, error: Exception) -> None:
        super().__init__(str(error))
        self.node = node
        self.error = error
        self.field: str | None = None


class _BadKey(Exception):
    """A mapping key that is not text or a number (so it cannot be a key)."""

    def __init__(self, node: Any, kind: str) -> None:
        super().__init__(kind)
        self.node = node
        self.kind = kind


def parse_yaml(text: str, display: str) -> Any:
    """The document in *text*; a ConfigError naming *display* and the line if it is bad."""
    import yaml  # deferred: only spec loading needs it, and it slows start-up

    try:
        return yaml.load(text, Loader=_strict_loader())
    except _BadValue as bad:
        raise _value_error(bad, display) from None
    except _BadKey as bad:
        line = bad.node.start_mark.line + 1
        raise ConfigError("spec.yaml_key", path=display, line=line, kind=bad.kind) from None
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise ConfigError("spec.yaml", path=display, reason=reason) from None
    except RecursionError:
        reason = "it is nested too deeply"
        raise ConfigError("spec.yaml", path=display, reason=reason) from None


def _strict_loader() -> Any:
    """A SafeLoader that refuses a key given twice (plain YAML keeps the last silently)
    and reports values it cannot construct with their position."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep=deep)
            except (ValueError, TypeError, AttributeError, OverflowError, LookupError) as exc:
                raise _BadValue(node, exc) from None

    def mapping(loader: StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise _BadKey(key_node, type(key).__name__) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        try:
            # deep: a bad value anywhere below passes through here, which names its key
            return loader.construct_mapping(node, deep=True)
        except _BadValue as bad:
            if bad.field is None:
                bad.field = _key_holding(node, bad.node)
            raise

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return StrictLoader


def _key_holding(mapping: Any, inner: Any) -> str | None:
    """The key of *mapping* whose value contains *inner* (by position in the text)."""
    at = inner.start_mark.index
    for key_node, value_node in mapping.value:
        if value_node.start_mark.index <= at <= value_node.end_mark.index:
            return str(getattr(key_node, "value", key_node))
    return None


def _value_error(bad: _BadValue, display: str) -> ConfigError:
    node = bad.node
    line = node.start_mark.line + 1
    raw = str(node.value) if isinstance(node.value, str) else "..."
    if "integer string conversion" in str(bad.error):
        digits = f"{sum(c.isdigit() for c in raw):,}"
        limit = f"{sys.get_int_max_str_digits():,}"
        field = bad.field or "?"
        return ConfigError(
            "spec.yaml_number", path=display, line=line, digits=digits, limit=limit, field=field
        )
    text = raw if len(raw) <= _SHOWN else raw[: _SHOWN - 3] + "..."
    tag = "!!" + node.tag[len(_YAML_TAG) :] if node.tag.startswith(_YAML_TAG) else node.tag
    if bad.field is None:
        return ConfigError("spec.yaml_tag_item", path=display, line=line, text=text, tag=tag)
    return ConfigError(
        "spec.yaml_tag", path=display, line=line, text=text, tag=tag, field=bad.field
    )
