"""Evaluate any Python function: ``module:function``, sync or async, input in, output out.

The function receives the sample's input and returns a string (a completion), a list of
strings (several completions), any JSON value, or an object with ``get_completions()``.
An exception it raises is a product failure (the product crashed), except
``InfrastructureError``, ``ConnectionError`` and ``TimeoutError``, which mean the
function could not reach what it depends on, and are retried.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from assay._digest import canonical_json
from assay._import_path import folder_on_path
from assay.dataset import Sample
from assay.errors import ConfigError
from assay.spec import TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome

_TEXT = "text/plain; charset=utf-8"
_JSON = "application/json"


class CallableTarget:
    """A Python function under test."""

    def __init__(self, spec: TargetSpec, root: Path | None) -> None:
        self.id = spec.id
        self.timeout = spec.timeout
        self.function = load_callable(spec.callable or "", root, spec.id)
        self.is_async = inspect.iscoroutinefunction(self.function)

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Call the function on the sample's input and classify the result."""
        try:
            with anyio.fail_after(self.timeout):
                if self.is_async:
                    result = await self.function(sample.input)
                else:
                    result = await anyio.to_thread.run_sync(
                        self.function, sample.input, abandon_on_cancel=True
                    )
            return outcome_from_value(result)
        except TimeoutError:
            raise InfrastructureError("timeout", f"no answer within {self.timeout:g} s") from None
        except InfrastructureError:
            raise
        except ConnectionError as exc:
            raise InfrastructureError("connection", repr(exc)) from None
        except Exception as exc:
            failure = f"raised {type(exc).__name__}: {exc}"
            return TargetOutcome("product_failure", b"", _TEXT, failure=failure)


def outcome_from_value(result: Any) -> TargetOutcome:
    """Turn what a function returned into exact bytes and a value for scorers."""
    if hasattr(result, "get_completions"):
        result = list(result.get_completions())
    if isinstance(result, str):
        return TargetOutcome("answered", result.encode("utf-8"), _TEXT, value=result)
    try:
        data = canonical_json(result)
    except (TypeError, ValueError) as exc:
        failure = f"returned a value that is not JSON: {exc}"
        return TargetOutcome("product_failure", b"", _TEXT, failure=failure)
    return TargetOutcome("answered", data, _JSON, value=result)


def load_callable(ref: str, root: Path | None, target_id: str) -> Callable[..., Any]:
    """Import ``module:function``, looking in the spec's folder first.

    The folder is on ``sys.path`` only while the module loads (see ``_import_path``):
    the module can import the modules beside it at its top, but a sibling it imports
    only inside the function, at call time, is not found there."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            "target.callable", target=target_id, ref=ref, reason="expected 'module:function'"
        )
    # Importing must not write __pycache__ into the spec's folder: a run writes only
    # into its own directory.
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        with folder_on_path(root):
            module = _import(module_name, root)
        function: Any = module
        for part in attr.split("."):
            function = getattr(function, part)
    except (Exception, SystemExit) as exc:  # importing failed: the spec's problem, not ours
        raise ConfigError("target.callable", target=target_id, ref=ref, reason=str(exc)) from None
    finally:
        sys.dont_write_bytecode = saved
    if not callable(function):
        raise ConfigError("target.callable", target=target_id, ref=ref, reason="it is not callable")
    return function  # type: ignore[no-any-return]


def _import(module_name: str, root: Path | None) -> ModuleType:
    """Import *module_name*; a top-level module file in the spec folder is loaded under
    a name unique to that file, so two specs with an ``answers.py`` each get their own."""
    path = root / f"{module_name}.py" if root is not None and "." not in module_name else None
    if path is None or not path.is_file():
        return importlib.import_module(module_name)
    unique = f"_assay_target_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]}"
    name = f"{unique}.{module_name}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
