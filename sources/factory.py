"""The one factory of search sources, for both modes: a kind (and corpus) → a source behind the search cache.

``open_source(kind, corpus, settings, home, cache)`` builds a source of any kind of ``state/source_kinds.py``
(``KINDS``) with the builder its row names (``local``, ``titles`` and ``wiki``: ``sources/corpora.py``; ``ddg``:
``sources/ddg.py``; ``searxng``: ``sources/searxng.py``), imported here when first asked for (``kind_builder``:
the table sits in ``state/``, below this layer, so it names them as text), wrapped in ``CachedSource``. A kind
that ranks by meaning (``by_meaning``) gets the embedding model's vectors when ``retrieval`` is ``hybrid``.
``make_source`` is the single loop's (``source``/``corpus``); ``resolve_specs`` + ``open_sources`` are the
multi-source session's (the ``sources`` setting, one cache file shared).
Local indexes live in ``home/index``, the cache in ``home/cache.db``.
"""

from __future__ import annotations

import errno
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from saturate.sources.cache import CachedSource, SearchCache
from saturate.sources.fallback import FallbackSource
from saturate.sources.local import CorpusError, IndexFolderError, LocalCorpus
from saturate.sources.postgres import PgSearchCache
from saturate.state.context import SearchSource
from saturate.state.errors import BadInput
from saturate.state.files import user_path
from saturate.state.settings import Settings
from saturate.state.source_kinds import SourceKind, source_kind
from saturate.state.source_spec import SourceSpec, default_name, resolve

# a kind's builder: (corpus, settings, the folder of the local indexes) -> the source
Builder = Callable[[str | None, Settings, Path], SearchSource]
BUILDER_PACKAGE = "saturate.sources."


@cache
def kind_builder(kind: SourceKind) -> Builder:
    """The function that builds ``kind`` (its row's ``builder``, ``"saturate.sources.<module>:<function>"``)."""
    module, _, function = kind.builder.partition(":")
    if not module.startswith(BUILDER_PACKAGE) or not function:
        raise ValueError(f"source kind {kind.name!r}: builder {kind.builder!r} is not saturate.sources.<module>:<fn>")
    build: Builder | None = getattr(importlib.import_module(module), function, None)
    if build is None:
        raise ValueError(f"source kind {kind.name!r}: {kind.builder!r} names no function")
    return build


def open_source(
    kind: str,
    corpus: str | None,
    settings: Settings,
    home: Path | str,
    cache: SearchCache | PgSearchCache,
    meaning: Meaning | None = None,
) -> CachedSource:
    """A source of ``kind`` over ``corpus`` (local/titles; unset: the embedded corpus), behind ``cache``; with
    ``meaning`` (an embedding model) a local corpus (not a titles view) ranks by meaning as well as words."""
    row = source_kind(kind)  # the settings validate the kind; this guards a future value
    index = user_path(home, "the data directory", BadInput) / "index"
    inner = kind_builder(row)(corpus, settings, index)
    if isinstance(inner, LocalCorpus):
        if meaning is not None and row.by_meaning and settings.retrieval == "hybrid":
            attach_or_note(inner, meaning, settings.hybrid_weight)
        # the index file name carries the corpus version, the retrieval its model and weight: either changed
        # misses the cache
        params: dict = {"index": inner.index_path.name if inner.index_path else None}
        if inner.vector_identity is not None:
            params["retrieval"] = f"{inner.vector_identity}|{settings.hybrid_weight}"
    else:  # a web source: its own settings (region, engines...) key the cache
        params = getattr(inner, "params", None) or {}
    return CachedSource(inner, cache, settings.cache_ttl_s, params=params)


def attach_or_note(corpus: LocalCorpus, meaning: Meaning, weight: float) -> None:
    """The corpus ranks by meaning too; when its vector files fail it (gone while being built, unreadable once
    written: an ``OSError`` other than a full disk, whose one line the command gives), it ranks by words alone and
    its notes say why — the session goes on, as when no model loads (``graph/embeddings.py``)."""
    try:
        corpus.attach_vectors(meaning.embedder, meaning.identity, weight, meaning.progress)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        corpus.notes.append(
            f"retrieval by words only: the corpus's vectors could not be built or read ({type(err).__name__}: "
            f"{str(err)[:200]}); the next session builds them again"
        )


@dataclass
class Meaning:
    """What a local corpus needs to rank by meaning: an embedding model (a LangChain Embeddings), its identity
    (the vector file's key) and a progress callback for a first build (done, total)."""

    embedder: object
    identity: str
    progress: Callable[[int, int], None] | None = None


def make_source(
    settings: Settings,
    home: Path | str,
    cache: SearchCache | PgSearchCache | None = None,
    meaning: Meaning | None = None,
) -> CachedSource | FallbackSource:
    """The single loop's source: ``settings.source`` (over ``settings.corpus``; a comma-separated chain: a
    ``FallbackSource`` of them, each behind the cache), behind ``cache`` (default
    ``home/cache.db``; a PostgreSQL cache when sessions live there, see ``graph.storage``)."""
    home = user_path(home, "the data directory", BadInput)
    home.mkdir(parents=True, exist_ok=True)
    cache = cache if cache is not None else SearchCache(home / "cache.db")
    kinds = settings.source.split(",")
    try:
        chain = [open_source(kind, settings.corpus, settings, home, cache, meaning) for kind in kinds]
    except CorpusError as err:
        where = f"the `corpus` setting, SATURATE_CORPUS, is {settings.corpus!r}" if settings.corpus else None
        raise named(err, where) from None
    return chain[0] if len(chain) == 1 else FallbackSource(chain, settings.source_cooldown_s)


def named(err: CorpusError, where: str | None) -> CorpusError:
    """``err`` saying which setting named the corpus (``where``); as it is when no setting did (the embedded
    corpus) or when the fault is the data directory's index folder, not the corpus (it said "the `corpus` setting
    ... is None" of a folder no setting names)."""
    if where is None or isinstance(err, IndexFolderError):
        return err
    return CorpusError(f"{err} ({where})")


def resolve_specs(
    settings: Settings, names: list[str] | None = None, kinds: dict[str, str] | None = None
) -> list[dict]:
    """Resolved specs from the settings; with ``names`` (sources passed as objects), one per name, its spec
    taken from the settings when they name it, else of kind ``kinds[name]`` (default ``local``)."""
    specs = list(settings.sources or ())
    if names is not None:
        by_name = {s.name: s for s in specs}
        specs = [by_name.get(n) or SourceSpec(name=n, kind=(kinds or {}).get(n, "local")) for n in names]
    elif not specs:
        spec = SourceSpec(kind=settings.source, corpus=settings.corpus if settings.source == "local" else None)
        specs = [spec.model_copy(update={"name": default_name(spec)})]
    out = [resolve(s, settings.source_ceilings, settings.source_descriptions) for s in specs]
    if names is not None:  # objects cannot be rebuilt from the checkpoint: resume needs them passed again
        out = [{**spec, "provided": True} for spec in out]
    return out


def open_sources(
    specs: list[dict],
    settings: Settings,
    home: Path | str,
    cache: SearchCache | PgSearchCache | None = None,
    meaning: Meaning | None = None,
) -> dict[str, SearchSource]:
    """One source per resolved spec, by name (a local spec without a corpus takes the ``corpus`` setting), all
    behind one ``cache`` (default ``home/cache.db``)."""
    home = user_path(home, "the data directory", BadInput)
    home.mkdir(parents=True, exist_ok=True)
    cache = cache if cache is not None else SearchCache(home / "cache.db")
    out: dict[str, SearchSource] = {}
    for spec in specs:
        corpus = spec.get("corpus") or (settings.corpus if spec["kind"] == "local" else None)
        try:
            out[spec["name"]] = open_source(spec["kind"], corpus, settings, home, cache, meaning)
        except CorpusError as err:
            raise named(err, f"source {spec['name']!r} of the `sources` setting") from None
    return out
