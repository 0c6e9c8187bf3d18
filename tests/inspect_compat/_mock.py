"""Inspect's scripted mock model, as the usages build it."""

from __future__ import annotations

from assay.model import Model, ModelOutput, get_model


def mockllm(*answers: str) -> Model:
    """``mockllm/model`` whose each call answers the next of *answers*."""
    return get_model(
        "mockllm/model",
        custom_outputs=[
            ModelOutput.from_content(model="mockllm/model", content=a) for a in answers
        ],
    )
