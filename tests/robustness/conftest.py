"""Shared by the robustness tests."""

import contextlib
import warnings

# When a Hypothesis test fails, its pytest plugin imports hypothesis.extra._patching,
# which imports libcst, whose use of mypy_extensions.TypedDict warns; filterwarnings=error
# turns that into an INTERNALERROR. Importing it once here, with that warning silenced,
# keeps the report intact.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    with contextlib.suppress(ImportError):
        import hypothesis.extra._patching  # noqa: F401
