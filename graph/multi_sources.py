"""The configured sources of a multi-source session, as SearchSource objects behind the search cache.

``resolve_specs(settings)``: the ``sources`` setting with each source's ceiling and
characteristics text filled in from its kind (``source_ceilings``,
``source_descriptions``); unset, the single-loop source (``source``/``corpus``)
alone. ``open_sources(specs, settings, home)``: one object per spec — ``local``
(``LocalCorpus`` over the spec's corpus, else the ``corpus`` setting, else the
embedded corpus), ``titles`` (``sources.titles.TitleCorpus`` over the same
index), ``wiki`` (the embedded corpus), ``ddg`` (``DuckDuckGoSource``) — each
wrapped in ``CachedSource`` sharing one cache file, as ``sources.make_source``
does for the single loop.
"""

from __future__ import annotations

from pathlib import Path

from saturate.sources.cache import CachedSource, SearchCache
from saturate.sources.ddg import DuckDuckGoSource
from saturate.sources.local import CorpusError, LocalCorpus
from saturate.sources.titles import TitleCorpus
from saturate.sources.wiki import open_wiki
from saturate.state.context import SearchSource
from saturate.state.settings import Settings
from saturate.state.source_spec import SourceSpec, default_name, resolve

DDG_TIMEOUT_S = 10


def resolve_specs(settings: Settings, names: list[str] | None = None, kinds: dict[str, str] | None = None) -> list[dict]:
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


def open_sources(specs: list[dict], settings: Settings, home: Path | str) -> dict[str, SearchSource]:
    home = Path(home).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    cache = SearchCache(home / "cache.db")
    out: dict[str, SearchSource] = {}
    for spec in specs:
        kind, corpus = spec["kind"], spec.get("corpus")
        try:
            if kind == "ddg":
                inner = DuckDuckGoSource.from_settings(settings, timeout=DDG_TIMEOUT_S)
                params = inner.params
            else:
                if kind == "wiki" or (kind == "local" and not (corpus or settings.corpus)):
                    inner = open_wiki(home / "index")
                elif kind == "titles":
                    inner = TitleCorpus.open(corpus, home / "index")
                else:
                    inner = LocalCorpus.open(corpus or settings.corpus, home / "index")
                params = {"index": inner.index_path.name if inner.index_path else None}
        except CorpusError as err:
            raise CorpusError(f"{err} (source {spec['name']!r} of the `sources` setting)") from None
        out[spec["name"]] = CachedSource(inner, cache, settings.cache_ttl_s, params=params)
    return out
