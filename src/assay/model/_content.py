"""Message content parts: text, images and a model's reasoning, as Inspect names them.

A message's ``content`` is either plain text or a list of these parts (tagged by
``type`` in JSON, so a dataset can hold them as ``{"type": "image", "image": ...}``).
An image is a file path, a ``data:`` URI or a URL: a file is read into a data URI when
the model is asked (so the evidence and the response cache hold the bytes that were
sent, not a path whose file may change); a URL is passed on as is, never fetched.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Literal

import msgspec

ImageDetail = Literal["auto", "low", "high"]


class ContentText(msgspec.Struct, tag="text", tag_field="type", omit_defaults=True):
    """A piece of text; ``refusal`` when the model declined to answer."""

    text: str
    refusal: bool | None = None


class ContentImage(msgspec.Struct, tag="image", tag_field="type", omit_defaults=True):
    """An image: a file path, a ``data:`` URI or a URL; ``detail`` as OpenAI takes it."""

    image: str
    detail: ImageDetail = "auto"


class ContentReasoning(msgspec.Struct, tag="reasoning", tag_field="type", omit_defaults=True):
    """A model's reasoning (``reasoning_content``, Anthropic's thinking), kept apart from
    its answer; ``signature`` and ``redacted`` are Anthropic's, sent back as they came."""

    reasoning: str
    signature: str | None = None
    redacted: bool = False


Content = ContentText | ContentImage | ContentReasoning


def is_url(image: str) -> bool:
    """True for an image given as an http(s) URL (passed on, never fetched)."""
    return image.startswith(("http://", "https://"))


def image_data_uri(image: str) -> str:
    """*image* as a data URI: a data URI or URL as given, a file read and encoded.

    Raises ``ValueError`` naming the file when it cannot be read or is not an image.
    """
    if image.startswith("data:") or is_url(image):
        return image
    path = Path(image).expanduser()
    mime = mimetypes.guess_type(path.name)[0]
    if mime is None or not mime.startswith("image/"):
        raise ValueError(f"image {image!r} is not a data: URI, a URL or an image file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"image {image!r} cannot be read ({exc.strerror})") from None
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def split_data_uri(uri: str) -> tuple[str, str]:
    """``(media type, base64 data)`` of a base64 ``data:`` URI; ``ValueError`` if not one."""
    head, sep, data = uri.partition(",")
    if not (sep and head.startswith("data:") and head.endswith(";base64")):
        raise ValueError(f"not a base64 data: URI ({uri[:40]}...)")
    return head[len("data:") : -len(";base64")], data


def shown_content(content: object) -> object:
    """A message's content as a person reads it: text as is; a list of parts (as JSON
    dicts) as their text, with ``[image: …]`` and ``[reasoning: …]`` in place, an image
    given as data summarised by its type and size (the bytes stay in the evidence)."""
    if not isinstance(content, list):
        return content
    return "\n".join(_shown_part(part) for part in content)


def _shown_part(part: object) -> str:
    if not isinstance(part, dict):
        return str(part)
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "reasoning":
        return f"[reasoning: {part.get('reasoning', '')}]"
    if kind == "image":
        image = str(part.get("image", ""))
        if image.startswith("data:"):
            head, _, data = image.partition(",")
            size = len(data) * 3 // 4 - data[-2:].count("=")  # base64: 4 chars, 3 bytes
            return f"[image: {head[len('data:') :].split(';')[0]}, {size} bytes]"
        return f"[image: {image}]"
    return str(part)
