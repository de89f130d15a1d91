"""The source kinds table (``state/source_kinds.py``): every row builds, parses and is documented.

Parametrized over ``KINDS``: a kind added to the table is checked here with no edit of this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from saturate.sources.cache import SearchCache
from saturate.sources.factory import kind_builder, open_source
from saturate.state.context import SearchSource
from saturate.state.settings import Settings, SettingsError, load_settings
from saturate.state.source_kinds import (
    CHAIN_EXAMPLE,
    DEFAULT_CEILINGS,
    DEFAULT_DEPTHS,
    DEFAULT_DESCRIPTIONS,
    KINDS,
    SOURCE_CHOICES,
    SourceKind,
    source_kind,
)
from saturate.state.source_spec import SourceSpec, parse_sources

from conftest import ROOT

IDS = [k.name for k in KINDS]


def one(value: object) -> SourceSpec:
    """The one source a ``sources`` value names."""
    specs = parse_sources(value)
    assert specs is not None and len(specs) == 1
    return specs[0]


@pytest.fixture
def index_home(tmp_path: Path, wiki_source) -> Path:
    """A home whose index/ is the session's Wikipedia index dir (conftest's ``wiki_source``): ``wiki`` and a
    ``local`` without a corpus open it instead of building it again."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "index").symlink_to(wiki_source.index_path.parent, target_is_directory=True)
    return home


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "rivers.jsonl"
    docs = [
        {"id": "z", "title": "Zambezi", "text": "The Zambezi flows over Victoria Falls into Mozambique."},
        {"id": "n", "title": "Nile", "text": "The Nile flows north through Egypt into the Mediterranean."},
    ]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def test_the_table_is_consistent():
    assert len(set(IDS)) == len(IDS) and all(k.name.isalpha() and k.name.islower() for k in KINDS)
    for kind in KINDS:
        assert 1 <= kind.ceiling <= 50 and kind.depth in ("shallow", "rich") and kind.description.strip()
        assert kind.corpus in ("none", "optional", "required")
        assert not (kind.single and kind.corpus == "required"), "the single loop's source takes the `corpus` setting"
        assert source_kind(kind.name) is kind
    assert DEFAULT_CEILINGS == {k.name: k.ceiling for k in KINDS}
    assert DEFAULT_DESCRIPTIONS == {k.name: k.description for k in KINDS}
    assert DEFAULT_DEPTHS == {k.name: k.depth for k in KINDS}
    with pytest.raises(ValueError, match="unknown source kind 'bing'"):
        source_kind("bing")


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_kind_parses_as_a_spec(kind: SourceKind):
    spec = one(kind.name if kind.corpus != "required" else f"{kind.name}:a.jsonl")
    assert spec.kind == kind.name
    if kind.corpus == "none":
        with pytest.raises(ValueError, match=f"a {kind.name} source takes no corpus"):
            parse_sources(f"{kind.name}:a.jsonl")
    else:
        spec = one(f"{kind.name}:a.jsonl@2")
        assert (spec.name, spec.corpus, spec.ceiling) == (f"{kind.name}:a", "a.jsonl", 2)
    if kind.corpus == "required":
        with pytest.raises(ValueError, match=f"a {kind.name} source needs a corpus: {kind.name}:FILE"):
            parse_sources(kind.name)
    spec = one([{"kind": kind.name, "name": "mine"} | ({"corpus": "a"} if kind.corpus == "required" else {})])
    assert spec.name == "mine"


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_kind_is_a_setting_value(kind: SourceKind):
    settings = load_settings({"sources": kind.name if kind.corpus != "required" else f"{kind.name}:a"}, env={})
    assert [s.kind for s in settings.sources or ()] == [kind.name]
    assert settings.source_ceilings[kind.name] == kind.ceiling
    if kind.single:
        assert load_settings({"source": kind.name}, env={}).source == kind.name
    else:
        with pytest.raises(SettingsError, match=f"unknown source '{kind.name}': choose from "):
            load_settings({"source": kind.name}, env={})


def test_the_kinds_of_the_single_loop_and_the_chain_example():
    assert SOURCE_CHOICES == tuple(k.name for k in KINDS if k.single) and "local" in SOURCE_CHOICES
    assert load_settings({"source": CHAIN_EXAMPLE}, env={}).source == CHAIN_EXAMPLE
    with pytest.raises(SettingsError, match=f"choose from {', '.join(SOURCE_CHOICES)} .*e.g. {CHAIN_EXAMPLE}"):
        load_settings({"source": "bing"}, env={})
    with pytest.raises(SettingsError, match="kind: Input should be 'local', 'titles', "):
        load_settings({"sources": '[{"kind": "bing"}]'}, env={})


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_kind_builds_offline(kind: SourceKind, index_home: Path, corpus_file: Path):
    """Built through the factory as a session builds it (no network: a web source connects when it searches)."""
    assert callable(kind_builder(kind))
    settings = load_settings({"retrieval": "lexical"}, env={})
    corpus = str(corpus_file) if kind.corpus != "none" else None
    cache = SearchCache(index_home / "cache.db")
    try:
        source = open_source(kind.name, corpus, settings, index_home, cache)
        assert isinstance(source, SearchSource) and isinstance(source.inner, SearchSource)
        if not kind.needs_network:  # a corpus answers here
            assert source.search("Zambezi" if corpus else "Zambezi River", 3)
    finally:
        cache.close()


def test_a_builder_outside_the_sources_package_is_refused():
    rogue = SourceKind("rogue", "os:system", "none", 1, "rich", "not a source")
    with pytest.raises(ValueError, match="is not saturate.sources.<module>:<fn>"):
        kind_builder(rogue)
    missing = SourceKind("missing", "saturate.sources.ddg:no_such_builder", "none", 1, "rich", "not a source")
    with pytest.raises(ValueError, match="names no function"):
        kind_builder(missing)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_kind_is_documented(kind: SourceKind):
    """The documentation names it, with its description (the settings table's ``source_descriptions`` default,
    docs/configuration.md); a single-loop kind is in the ``source`` setting's help (the CLI's --source and that
    table)."""
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert f"`{kind.name}`" in readme or f'"{kind.name}"' in readme
    assert json.dumps(kind.description)[1:-1] in readme, "regenerate the table with: saturate settings --markdown"
    if kind.single:
        assert f"`{kind.name}`: {kind.summary}" in (Settings.model_fields["source"].description or "")


def test_the_table_says_which_files_a_new_kind_takes():
    import saturate.state.source_kinds as table

    doc = table.__doc__ or ""
    assert "A new kind takes three files" in doc
    for where in ("sources/<kind>.py", "``KINDS``", "tests/test_<kind>.py", "tests/test_source_kinds.py"):
        assert where in doc
