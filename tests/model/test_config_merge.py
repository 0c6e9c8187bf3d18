"""``GenerateConfig.merge``: a call's config over a model's, field by field."""

from __future__ import annotations

from assay.model import GenerateConfig


def test_the_fields_a_call_sets_win_and_the_rest_are_kept() -> None:
    model = GenerateConfig(temperature=0.5, max_connections=200, timeout=30)
    merged = model.merge(GenerateConfig(timeout=7, seed=1))
    assert (merged.temperature, merged.max_connections) == (0.5, 200)
    assert (merged.timeout, merged.seed) == (7, 1)


def test_a_call_that_sets_nothing_keeps_the_models_config() -> None:
    """Every field defaults to None, so a config equal to the default sets nothing (the
    shortcut ``merge`` takes for it relies on that)."""
    default = GenerateConfig()
    assert all(getattr(default, f) is None for f in GenerateConfig.__struct_fields__)
    model = GenerateConfig(temperature=0.0, max_retries=2)
    assert model.merge(GenerateConfig()) == model
    assert model.merge(None) == model
