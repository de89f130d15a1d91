"""Shared fixtures: real local corpora (SQLite FTS5), a fresh data directory per test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path} (expected ../shared/data beside the checkout)")
    return path


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh SATURATE_HOME; SATURATE_* settings from the caller's environment are cleared."""
    import os

    for key in list(os.environ):
        if key.startswith("SATURATE_"):
            monkeypatch.delenv(key)
    h = tmp_path / "home"
    monkeypatch.setenv("SATURATE_HOME", str(h))
    return h


@pytest.fixture(scope="session")
def musique_corpus() -> Path:
    return shared_file("musique", "corpus.jsonl")


@pytest.fixture(scope="session")
def musique_tasks() -> list[dict]:
    return [json.loads(line) for line in shared_file("musique", "tasks.jsonl").open()]


@pytest.fixture(scope="session")
def musique_source(musique_corpus, tmp_path_factory):
    from saturate.sources import LocalCorpus

    return LocalCorpus.open(musique_corpus, tmp_path_factory.mktemp("musique-index"))


@pytest.fixture(scope="session")
def wiki_source(tmp_path_factory):
    from saturate.sources import open_wiki

    return open_wiki(tmp_path_factory.mktemp("wiki-index"))


def strip_timings(state: dict) -> dict:
    """A state without wall-clock fields, for comparing runs."""

    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("durations_ms", "ms")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return clean({k: v for k, v in state.items() if not k.startswith("_")})
