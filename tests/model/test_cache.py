"""The response cache on disk: round trip, expiry, prune, corrupt entries, atomic writes."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.errors import ConfigError
from assay.model import (
    GenerateConfig,
    MockAPI,
    Model,
    ModelOutput,
    ResponseCache,
    _cache,
    default_cache_dir,
    parse_expiry,
    user_message,
)

CONFIG = GenerateConfig(temperature=0)


def model(name: str = "x", base_url: str | None = None) -> Model:
    api = MockAPI(name, CONFIG)
    if base_url is not None:
        api.base_url = base_url
    return Model(f"mock/{name}", api)


def stored(cache: ResponseCache, m: Model, text: str, prompt: str = "q") -> str:
    key = cache.key(m, [user_message(prompt)], None, CONFIG)
    cache.put(key, m, ModelOutput.from_content(m.name, text))
    return key


def test_an_answer_comes_back_marked_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, expiry="1d").open()
    m = model()
    key = stored(cache, m, "four")
    answer = cache.get(key)
    assert answer is not None and answer.completion == "four" and answer.cached
    (path,) = tmp_path.glob("??/*.json")
    assert path.name == f"{key}.json" and path.parent.name == key[:2]
    entry = json.loads(path.read_bytes())
    assert entry["model"] == "mock/x" and entry["output"]["cached"] is False
    assert entry["expires"] - entry["created"] == pytest.approx(86400, abs=1)


def test_a_miss_is_none(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path).open()
    assert cache.get("0" * 64) is None


def test_models_and_base_urls_get_their_own_entries(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path).open()
    a, b = model("a"), model("b")
    here, there = model("a", "http://127.0.0.1:1/v1"), model("a", "http://127.0.0.1:2/v1")
    keys = [
        stored(cache, m, m.name + (getattr(m.api, "base_url", None) or ""))
        for m in (a, b, here, there)
    ]
    assert len(set(keys)) == 4
    answers = [cache.get(k) for k in keys]
    assert [x.completion for x in answers if x] == [
        "mock/a",
        "mock/b",
        "mock/ahttp://127.0.0.1:1/v1",
        "mock/ahttp://127.0.0.1:2/v1",
    ]


def test_no_credentials_of_a_base_url_reach_the_entry(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path).open()
    stored(cache, model("a", "https://me:sk-s3cret@127.0.0.1:9/v1?key=sk-s3cret"), "four")
    (path,) = tmp_path.glob("??/*.json")
    assert b"s3cret" not in path.read_bytes()
    assert json.loads(path.read_bytes())["base_url"] == "https://127.0.0.1:9/v1"


def test_an_expired_entry_is_a_miss_and_prune_removes_only_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = ResponseCache(tmp_path, expiry="1h").open()
    short = ResponseCache(tmp_path, expiry="1m")
    keep = stored(fresh, model("a"), "kept")
    gone = stored(short, model("b"), "gone")
    assert fresh.get(gone) is not None  # fresh for a minute yet
    # Two minutes on, as the cache reads its clock: past the short expiry, not the hour.
    later = time.time() + 120
    monkeypatch.setattr(_cache, "time", SimpleNamespace(time=lambda: later))
    assert fresh.get(gone) is None
    assert fresh.get(keep) is not None
    assert fresh.prune() == 1
    assert [e.info.model for e in fresh.entries() if e.info] == ["mock/a"]


def test_never_expires(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, expiry="never").open()
    key = stored(cache, model(), "four")
    (path,) = tmp_path.glob("??/*.json")
    assert json.loads(path.read_bytes())["expires"] is None
    assert cache.prune() == 0 and cache.get(key) is not None


@pytest.mark.parametrize(
    "damage",
    [b"", b"{", b"not json at all", b'{"model": 3}', b"\x00\xff" * 10, b"[]"],
    ids=["empty", "torn", "text", "wrong-type", "binary", "array"],
)
def test_a_corrupt_entry_is_a_miss_not_a_crash(tmp_path: Path, damage: bytes) -> None:
    cache = ResponseCache(tmp_path).open()
    key = stored(cache, model(), "four")
    (path,) = tmp_path.glob("??/*.json")
    path.write_bytes(damage)
    assert cache.get(key) is None
    (listed,) = cache.entries()
    assert listed.info is None  # listed as unreadable
    assert cache.prune() == 1 and not path.exists()
    # the next answer simply replaces it
    stored(cache, model(), "four again")
    answer = cache.get(key)
    assert answer is not None and answer.completion == "four again"


def test_clear_by_model_glob(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path).open()
    for name in ("a", "b", "c"):
        stored(cache, model(name), name)
    assert cache.clear("mock/a") == 1
    assert sorted(e.info.model for e in cache.entries() if e.info) == ["mock/b", "mock/c"]
    assert cache.clear("mock/*") == 2
    assert list(cache.entries()) == []


def test_concurrent_writers_and_readers_never_see_half_an_entry(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path).open()
    m = model()
    key = cache.key(m, [user_message("q")], None, CONFIG)
    texts = [chr(ord("a") + i) * 200_000 for i in range(4)]
    seen: list[str | None] = []
    stop = threading.Event()

    def write(text: str) -> None:
        for _ in range(20):
            cache.put(key, m, ModelOutput.from_content(m.name, text))

    def read() -> None:
        while not stop.is_set():
            answer = cache.get(key)
            seen.append(None if answer is None else answer.completion)

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(t,)) for t in texts]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    stop.set()
    reader.join()
    assert all(s is None or s in texts for s in seen)
    assert any(s in texts for s in seen) or cache.get(key) is not None
    assert len(list(tmp_path.rglob("*.json"))) == 1  # no temporary file left behind


def test_an_unusable_folder_is_one_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ConfigError) as caught:
        ResponseCache(blocker / "cache").open()
    assert "ASSAY_CACHE_DIR" in caught.value.one_line()


def test_the_cache_folder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ASSAY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "assay" / "responses"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "assay" / "responses"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30),
        ("30m", 1800),
        ("12h", 43200),
        ("1d", 86400),
        ("2w", 1209600),
        ("90", 90),
        (1.5, 1.5),
        ("never", None),
    ],
)
def test_expiry_durations(text: str | float, seconds: float | None) -> None:
    assert parse_expiry(text) == seconds


@pytest.mark.parametrize("text", ["", "3x", "-1d", "0", "1.2.3h", "inf", "d", True])
def test_bad_expiry_is_a_config_error(text: object) -> None:
    with pytest.raises(ConfigError):
        parse_expiry(text)  # type: ignore[arg-type]
