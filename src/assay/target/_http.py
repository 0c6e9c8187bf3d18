"""An HTTP endpoint as a target: the sample as JSON in a POST, JSON back.

A 2xx answer is the product's result (JSON that does not parse is a product failure, as
is a 4xx other than 408/429: the service refused this input). 408, 429, 5xx, timeouts
and connection failures mean the service could not be asked: infrastructure, retried
with backoff, honouring ``Retry-After``. Credentials come from the environment at call
time (``headers_from_env``), never from the spec.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from assay._digest import fast_json
from assay._infra import retry_after_seconds
from assay.dataset import Sample
from assay.spec import TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome, target_payload

_JSON = "application/json"
_RETRYABLE = {408, 429}
_decode = msgspec.json.Decoder().decode


class HttpTarget:
    """POSTs each sample to ``url``; one connection pool for the whole run."""

    def __init__(self, spec: TargetSpec) -> None:
        self.id = spec.id
        self.url = spec.url or ""
        self.timeout = spec.timeout
        self.max_output = spec.max_output_bytes
        self.header_env = dict(spec.headers_from_env or {})
        self._client: Any = None

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": _JSON}
        for header, variable in self.header_env.items():
            value = os.environ.get(variable)
            if value is not None:
                headers[header] = value
        return headers

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """POST the sample; classify the answer."""
        import httpx  # deferred: only runs with HTTP targets need it

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        try:
            response = await self._client.post(
                self.url, content=fast_json(target_payload(sample)), headers=self._headers()
            )
        except httpx.TimeoutException:
            raise InfrastructureError("timeout", f"no answer within {self.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise InfrastructureError("connection", f"{type(exc).__name__}: {exc}") from None
        status = response.status_code
        if status in _RETRYABLE or status >= 500:
            raise InfrastructureError(
                "rate_limited" if status == 429 else f"http_{status}",
                response.text[:200],
                retry_after=retry_after_seconds(response.headers.get("retry-after")),
                status=status,
            )
        body = response.content
        if len(body) > self.max_output:
            return _failure(
                body[: self.max_output], status, f"output exceeded {self.max_output} bytes"
            )
        if status >= 400:
            return _failure(body, status, f"HTTP {status}")
        try:
            value = _decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            return _failure(body, status, f"response is not JSON ({exc})")
        return TargetOutcome("answered", body, _JSON, value=value, exit_code=status)

    async def aclose(self) -> None:
        """Close the connection pool (the pipeline calls this when the run ends)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _failure(body: bytes, status: int, why: str) -> TargetOutcome:
    return TargetOutcome("product_failure", body, _JSON, failure=why, exit_code=status)
