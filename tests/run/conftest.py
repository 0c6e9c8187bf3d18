"""Fixtures of the run tests: a real Dask cluster, one per test module that asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dask_cluster import DaskCluster, started_cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """``dask scheduler`` and ``dask worker --nworkers 2`` on 127.0.0.1, for the module."""
    pytest.importorskip("distributed")
    with started_cluster(tmp_path_factory.mktemp("dask")) as started:
        yield started
