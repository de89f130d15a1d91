"""SearchCache / CachedSource and SqlitePageStore on real SQLite files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from saturate.sources import CachedSource, LocalCorpus, SearchCache, SqlitePageStore, cache_key
from saturate.state.context import PageStore, SearchError, SearchSource

DOCS = [
    {"id": "falls", "title": "Victoria Falls", "text": "A waterfall on the Zambezi river."},
    {"id": "nile", "title": "Nile", "text": "The Nile flows north to the Mediterranean."},
]


class CountingCorpus(LocalCorpus):
    """A real LocalCorpus that counts searches and can be told to fail."""

    calls = 0
    fail_with: Exception | None = None

    def search(self, query, k):
        self.calls += 1
        if self.fail_with is not None:
            raise self.fail_with
        return super().search(query, k)


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def inner(tmp_path: Path) -> CountingCorpus:
    return CountingCorpus.from_records(DOCS, "tiny", tmp_path / "index")


@pytest.fixture
def cache(tmp_path: Path) -> SearchCache:
    return SearchCache(tmp_path / "cache.db")


def test_hit_does_not_call_inner(inner, cache):
    src = CachedSource(inner, cache, ttl_s=60)
    assert isinstance(src, SearchSource) and src.name == "local:tiny"
    first = src.search("Zambezi waterfall", 5)
    second = src.search("Zambezi waterfall", 5)
    assert first == second and first[0].id == "falls"
    assert inner.calls == 1 and (src.hits, src.misses) == (1, 1)


def test_key_covers_query_k_and_params(inner, cache):
    a = CachedSource(inner, cache, ttl_s=60, params={"region": "us-en"})
    b = CachedSource(inner, cache, ttl_s=60, params={"region": "de-de"})
    a.search("Nile", 5)
    a.search("Nile", 1)
    a.search("nile river", 5)
    b.search("Nile", 5)
    assert inner.calls == 4
    a.search("Nile", 5)
    b.search("Nile", 5)
    assert inner.calls == 4
    assert cache_key("x", "q", 5, {"a": 1, "b": 2}) == cache_key("x", "q", 5, {"b": 2, "a": 1})


def test_expired_entry_calls_inner(inner, cache):
    clock = Clock()
    src = CachedSource(inner, cache, ttl_s=60, clock=clock)
    src.search("Nile", 5)
    clock.now += 59
    src.search("Nile", 5)
    assert inner.calls == 1
    clock.now += 2  # 61 s after the store
    assert src.search("Nile", 5)[0].id == "nile"
    assert inner.calls == 2 and src.misses == 2
    clock.now += 30  # the refreshed entry is fresh again
    src.search("Nile", 5)
    assert inner.calls == 2


def test_errors_are_not_cached(inner, cache):
    src = CachedSource(inner, cache, ttl_s=60)
    inner.fail_with = SearchError("rate limited")
    with pytest.raises(SearchError, match="rate limited"):
        src.search("Nile", 5)
    assert len(cache) == 0
    inner.fail_with = None
    assert src.search("Nile", 5)[0].id == "nile"
    assert inner.calls == 2 and len(cache) == 1


def test_empty_results_are_cached(inner, cache):
    src = CachedSource(inner, cache, ttl_s=60)
    assert src.search("photosynthesis", 5) == []
    assert src.search("photosynthesis", 5) == []
    assert inner.calls == 1


def test_ttl_zero_disables(inner, cache):
    src = CachedSource(inner, cache, ttl_s=0)
    src.search("Nile", 5)
    src.search("Nile", 5)
    assert inner.calls == 2 and src.hits == 0 and len(cache) == 0


def test_survives_reopen_from_disk(inner, tmp_path):
    first = CachedSource(inner, SearchCache(tmp_path / "cache.db"), ttl_s=60)
    stored = first.search("Zambezi", 5)
    first.cache.close()
    again = CachedSource(inner, SearchCache(tmp_path / "cache.db"), ttl_s=60)
    assert again.search("Zambezi", 5) == stored and inner.calls == 1 and again.hits == 1


def test_fetch_passes_through(inner, cache):
    src = CachedSource(inner, cache, ttl_s=60)
    assert src.fetch(src.search("Nile", 1)[0]) == "Nile\n\nThe Nile flows north to the Mediterranean."


def test_wal_mode(cache, tmp_path):
    assert sqlite3.connect(tmp_path / "cache.db").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_shared_by_threads(inner, cache):
    src = CachedSource(inner, cache, ttl_s=60)
    errors: list[BaseException] = []

    def work(n: int):
        try:
            for i in range(30):
                src.search(f"Nile {i % 5} {n % 2}", 3)
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and src.hits + src.misses == 240 and len(cache) == 10


def test_another_process_sees_entries(inner, tmp_path):
    src = CachedSource(inner, SearchCache(tmp_path / "cache.db"), ttl_s=3600)
    src.search("Nile", 5)  # this process holds the file open while the child reads and writes it
    child = f"""
import time
from saturate.sources import CachedSource, LocalCorpus, SearchCache
inner = LocalCorpus.from_records({DOCS!r}, "tiny")
src = CachedSource(inner, SearchCache({str(tmp_path / "cache.db")!r}), ttl_s=3600)
src.search("Nile", 5)
src.search("Zambezi", 5)
print(src.hits, src.misses)
"""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(root)}
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]
    src.search("Zambezi", 5)
    assert inner.calls == 1 and src.hits == 1


def test_prune(inner, cache):
    clock = Clock()
    src = CachedSource(inner, cache, ttl_s=60, clock=clock)
    src.search("Nile", 5)
    clock.now += 100
    src.search("Zambezi", 5)
    assert cache.prune(50, now=clock.now) == 1 and len(cache) == 1


# --- SqlitePageStore ----------------------------------------------------------------------------


def test_page_store(tmp_path):
    pages = SqlitePageStore(tmp_path / "pages.db")
    assert isinstance(pages, PageStore)
    assert pages.get("https://example.org/a") is None
    pages.put("https://example.org/a", "first")
    pages.put("https://example.org/a", "second")
    pages.put("local://c/b", "é" * 10_000)
    assert pages.get("https://example.org/a") == "second" and len(pages) == 2
    pages.close()
    again = SqlitePageStore(tmp_path / "pages.db")
    assert again.get("local://c/b") == "é" * 10_000


def test_documents_come_from_the_inner_corpus_uncached(inner, cache):
    """A local corpus's whole texts pass through the cache wrapper (a lookup, never a search); a source without
    them gives none."""
    src = CachedSource(inner, cache, ttl_s=60)
    assert src.documents(["falls", "nile", "missing"]) == {
        "falls": "A waterfall on the Zambezi river.",
        "nile": "The Nile flows north to the Mediterranean.",
    }
    assert inner.calls == 0  # no search was made

    class NoDocuments:
        name = "web"

        def search(self, query, k):
            return []

        def fetch(self, result):
            return ""

    assert CachedSource(NoDocuments(), cache, ttl_s=60).documents(["x"]) == {}
    many = [f"id{i}" for i in range(1200)]  # more ids than SQLite's host-parameter limit per query
    assert inner.documents(many + ["nile"]) == {"nile": "The Nile flows north to the Mediterranean."}
