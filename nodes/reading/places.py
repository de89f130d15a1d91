"""What a place name is, from ISO 3166 and ISO 639 (pycountry): "Zimbabwe" → country, "Kansas" → state.

The one gazetteer of the slot filler (``reading.slots.typed``): a candidate for "the country where …" that no
retrieved page describes is still known to be a country. Country names (short, official and common), the
subdivisions of every country with their type (state, province, county, region …) and language names;
nothing else (cities are not in ISO 3166: their own pages type them).
"""

from __future__ import annotations

import functools
import json

from saturate.nodes.reading.question import stem


@functools.cache
def _table() -> dict[str, frozenset[str]]:
    # pycountry's ISO databases, read as the records they hold: pycountry builds an object and its lookup indexes for
    # each of its 26,000 records when a database is first iterated, and keeps them; only four fields are needed here
    # (3x the CPU, and 15 MB held for the life of the process: issue 46). The same names and types
    # (tests/reading/test_places.py compares the two).
    import pycountry  # the package itself is light: its databases load when first used

    out: dict[str, set[str]] = {}

    def add(name: str | None, *types: str) -> None:
        if name:
            out.setdefault(name.lower(), set()).update(stem(t) for t in types)

    for c in _records(pycountry.countries):
        for attr in ("name", "official_name", "common_name"):
            add(c.get(attr), "country", "nation")
    for c in _records(pycountry.historic_countries):
        add(c.get("name"), "country", "nation")
    for s in _records(pycountry.subdivisions):
        add(s["name"], *s["type"].lower().split())
    for lang in _records(pycountry.languages):
        add(lang.get("name"), "language")
    return {k: frozenset(v) for k, v in out.items()}


def _records(database) -> list[dict[str, str]]:
    """The records of one of pycountry's databases (its JSON file, under its root key), without loading the
    database's objects."""
    with open(database.filename, encoding="utf-8") as fh:
        return json.load(fh)[database.root_key]


def place_types(name: str) -> frozenset[str]:
    """Stems of what ``name`` is as a country, subdivision or language (empty when none)."""
    return _table().get(name.lower(), frozenset())
