"""What a place name is, from ISO 3166 and ISO 639 (pycountry): "Zimbabwe" → country, "Kansas" → state.

The one gazetteer of the slot filler (``reading.slots.typed``): a candidate for "the country where …" that no
retrieved page describes is still known to be a country. Country names (short, official and common), the
subdivisions of every country with their type (state, province, county, region …) and language names;
nothing else (cities are not in ISO 3166: their own pages type them).
"""

from __future__ import annotations

import functools

from saturate.nodes.reading.question import stem


@functools.cache
def _table() -> dict[str, frozenset[str]]:
    # heavy: pycountry reads its JSON databases (~50 ms) the first time a place is typed
    import pycountry

    out: dict[str, set[str]] = {}

    def add(name: str | None, *types: str) -> None:
        if name:
            out.setdefault(name.lower(), set()).update(stem(t) for t in types)

    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            add(getattr(c, attr, None), "country", "nation")
    for c in pycountry.historic_countries:
        add(getattr(c, "name", None), "country", "nation")
    for s in pycountry.subdivisions:
        add(s.name, *s.type.lower().split())
    for lang in pycountry.languages:
        add(getattr(lang, "name", None), "language")
    return {k: frozenset(v) for k, v in out.items()}


def place_types(name: str) -> frozenset[str]:
    """Stems of what ``name`` is as a country, subdivision or language (empty when none)."""
    return _table().get(name.lower(), frozenset())
