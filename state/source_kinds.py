"""The source kinds: one table (``KINDS``) that every other place derives from.

What a kind is named, whether it takes a corpus, its default ceiling, description and depth, whether it may be
the single loop's ``source``, and which function builds it: the ``sources`` and ``source`` settings validate
against this table (``state/source_spec.py``, ``state/settings.py``: their messages, the CLI's help and the
settings table in docs/configuration.md follow), and the factory (``sources/factory.py``) builds a kind by the
builder its row names. It sits in ``state/`` (the lowest layer: the settings need it) and so names its builder as text
(``"saturate.sources.<module>:<function>"``, a function ``(corpus, settings, index_dir) -> SearchSource``), which
the factory imports; ``state/`` never imports ``sources/``.

A new kind takes three files:

1. ``sources/<kind>.py``: the source (a ``SearchSource``) and its builder function;
2. its row in ``KINDS`` below;
3. ``tests/test_<kind>.py``: its own tests. ``tests/test_source_kinds.py`` checks, with no edit, that every row
   builds, parses as a spec and a setting, and is documented.

Then ``saturate settings --markdown`` regenerates the settings table in docs/configuration.md (a generated block:
the ``source`` help and the ``source_ceilings`` and ``source_descriptions`` defaults name every kind). Optional:
the order of kinds the multi-source breadcrumbs prefer (``AFFINITY`` in ``nodes/multi/breadcrumbs.py``; a kind
it does not name comes after those it does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SourceKind:
    """One kind of source and everything the settings, the specs and the factory know of it."""

    name: str  # the KIND of a spec (``KIND[:CORPUS][@CEILING]``) and of the ``source`` setting
    builder: str  # "saturate.sources.<module>:<function>": (corpus, settings, index_dir) -> SearchSource
    corpus: Literal["none", "optional", "required"]  # may a spec name a corpus (``KIND:CORPUS``)?
    ceiling: int  # most queries its saturation loop asks (``source_ceilings`` default)
    depth: Literal["shallow", "rich"]  # the design's typical depth (``DEFAULT_DEPTHS``)
    description: str  # its characteristics, stated to the per-source decision (``source_descriptions`` default)
    summary: str = ""  # the ``source`` setting's help for it; "" when it cannot be the single loop's source
    by_meaning: bool = False  # ranks by meaning as well as words when ``retrieval`` is ``hybrid`` (a corpus)
    needs_network: bool = False  # asks a service over the network (web search)

    @property
    def single(self) -> bool:
        """May be the single loop's ``source`` (or one of its fallback chain)."""
        return bool(self.summary)


KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        name="local",
        builder="saturate.sources.corpora:build_local",
        corpus="optional",
        ceiling=6,
        depth="rich",
        description="Local corpus, full-text BM25 over titles and text: deep and precise for facts stated in the "
        "documents; repeats itself quickly once the topic's documents are found.",
        summary="SQLite FTS5 corpus (offline)",
        by_meaning=True,
    ),
    SourceKind(
        name="titles",
        builder="saturate.sources.corpora:build_titles",
        corpus="required",
        ceiling=3,
        depth="shallow",
        description="Shallow: matches words of document titles only; precise for names (people, places, works, "
        "organisations), blind to facts inside documents. Best queries are one or two names.",
    ),
    SourceKind(
        name="wiki",
        builder="saturate.sources.corpora:build_wiki",
        corpus="optional",  # accepted and not read (the embedded corpus is the corpus), as it always was
        ceiling=6,
        depth="shallow",  # broad, short introductions
        description="Embedded Wikipedia vital-article summaries (about 10,000 short introductions): broad, general, "
        "shallow on specifics.",
        by_meaning=True,
    ),
    SourceKind(
        name="ddg",
        builder="saturate.sources.ddg:build",
        corpus="none",
        ceiling=6,
        depth="rich",
        description="DuckDuckGo web search: broad and current, mixed reliability, many near-duplicate pages.",
        summary="DuckDuckGo web search",
        needs_network=True,
    ),
    SourceKind(
        name="searxng",
        builder="saturate.sources.searxng:build",
        corpus="none",
        ceiling=6,
        depth="rich",
        description="SearXNG metasearch (several web engines at once): broad and current, mixed reliability.",
        summary="a SearXNG instance's JSON API (`searxng_url`)",
        needs_network=True,
    ),
)

BY_NAME: dict[str, SourceKind] = {k.name: k for k in KINDS}
SOURCE_KINDS: tuple[str, ...] = tuple(BY_NAME)
# the kinds the single loop's `source` setting takes (a comma-separated list of them is a fallback chain)
SOURCE_CHOICES: tuple[str, ...] = tuple(k.name for k in KINDS if k.single)
CHAIN_EXAMPLE = "ddg,searxng,local"  # a fallback chain, in the help and the messages (tests/test_source_kinds.py)
DEFAULT_CEILINGS: dict[str, int] = {k.name: k.ceiling for k in KINDS}
DEFAULT_DESCRIPTIONS: dict[str, str] = {k.name: k.description for k in KINDS}
# the design's source_depth_expectation: full text and the web are rich; titles-only and the embedded
# summaries (broad, short introductions) are shallow
DEFAULT_DEPTHS: dict[str, str] = {k.name: k.depth for k in KINDS}


def source_kind(name: str) -> SourceKind:
    """The row of kind ``name``; ValueError for a kind the table does not have."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown source kind {name!r}") from None


def source_help() -> str:
    """The ``source`` setting's description: each single-loop kind's summary, then what a chain does."""
    kinds = "; ".join(f"`{k.name}`: {k.summary}" for k in KINDS if k.single)
    return (
        f"{kinds}. A comma-separated list is a fallback chain (e.g. `{CHAIN_EXAMPLE}`): each query goes to the first "
        "source able to answer; one that fails is skipped for `source_cooldown_s`."
    )
