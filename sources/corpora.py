"""The builders of the corpus kinds (``local``, ``titles``, ``wiki``; their rows in ``state/source_kinds.py``).

One module for the three: ``local`` without a corpus is the embedded Wikipedia corpus (``sources/wiki.py``), which
is itself a ``LocalCorpus`` (``sources/local.py``), so the builder cannot live in either. Each takes the kind's
corpus (a JSONL file or a folder; None: unset), the settings and the folder of the local indexes.
"""

from __future__ import annotations

from pathlib import Path

from saturate.sources.local import CorpusError, LocalCorpus
from saturate.sources.titles import TitleCorpus
from saturate.sources.wiki import open_wiki
from saturate.state.settings import Settings


def build_local(corpus: str | None, settings: Settings, index_dir: Path) -> LocalCorpus:
    """``local``: full-text BM25 over ``corpus``; unset, the embedded Wikipedia corpus."""
    return LocalCorpus.open(corpus, index_dir) if corpus else open_wiki(index_dir)


def build_titles(corpus: str | None, settings: Settings, index_dir: Path) -> LocalCorpus:
    """``titles``: the titles of ``corpus`` (its spec needs one)."""
    if not corpus:
        raise CorpusError("a titles source needs a corpus: titles:FILE")
    return TitleCorpus.open(corpus, index_dir)


def build_wiki(corpus: str | None, settings: Settings, index_dir: Path) -> LocalCorpus:
    """``wiki``: the embedded Wikipedia summaries (a corpus given is not read)."""
    return open_wiki(index_dir)
