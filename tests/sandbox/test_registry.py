"""Providers by name, and a third-party provider found through its entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from assay.errors import ConfigError
from assay.sandbox import (
    ENTRY_POINT_GROUP,
    BwrapSandbox,
    ExecResult,
    LocalSandbox,
    make_sandbox,
    sandbox_providers,
)


def test_the_built_in_providers_by_name_and_bwrap_by_default() -> None:
    assert isinstance(make_sandbox("local"), LocalSandbox)
    assert isinstance(make_sandbox("bwrap", network=True), BwrapSandbox)
    assert type(make_sandbox()) is BwrapSandbox


def test_an_unknown_provider_is_a_one_line_error_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        make_sandbox("nope")
    assert "'nope'" in str(caught.value) and "bwrap, local" in str(caught.value)


PLUGIN = '''
from assay.sandbox import LocalSandbox


class EchoSandbox(LocalSandbox):
    """A plugin provider: the local one under another name."""
'''


def test_a_plugin_registers_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "assay_echo_plugin.py").write_text(PLUGIN)
    dist = tmp_path / "assay_echo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-echo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\necho = assay_echo_plugin:EchoSandbox\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "echo" in sandbox_providers()

    async def main() -> ExecResult:
        async with make_sandbox("echo") as sandbox:
            assert type(sandbox).__name__ == "EchoSandbox"
            return await sandbox.exec(["echo", "plugged"])

    assert anyio.run(main).stdout == "plugged\n"
    sys.modules.pop("assay_echo_plugin", None)
