"""``reading.places``: what a place or language name is, from ISO 3166 and ISO 639 (the slot filler's gazetteer)."""

from __future__ import annotations

from saturate.nodes.reading.places import place_types
from saturate.nodes.reading.question import stem


def test_countries_by_any_of_their_names_case_blind():
    country = {stem("country"), stem("nation")}
    assert place_types("Zimbabwe") == place_types("zimbabwe") == country
    assert place_types("Republic of Zimbabwe") == country  # the official name


def test_subdivisions_have_their_type_and_languages_are_languages():
    assert stem("state") in place_types("Kansas")
    assert stem("province") in place_types("Ontario")
    assert place_types("French") == {stem("language")}


def test_cities_and_unknown_names_are_nothing():
    assert place_types("Springfield") == frozenset()  # cities are not in ISO 3166: their own pages type them
    assert place_types("Gwanda District") == frozenset()
    assert place_types("") == frozenset()


def test_the_table_holds_what_pycountrys_objects_say():
    """The table is read from pycountry's database files (its objects are not built: issue 46); it is the table the
    objects give, name for name and type for type."""
    import pycountry

    from saturate.nodes.reading.places import _table

    want: dict[str, set[str]] = {}

    def add(name, *types):
        if name:
            want.setdefault(name.lower(), set()).update(stem(t) for t in types)

    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            add(getattr(c, attr, None), "country", "nation")
    for c in pycountry.historic_countries:
        add(getattr(c, "name", None), "country", "nation")
    for s in pycountry.subdivisions:
        add(s.name, *s.type.lower().split())
    for lang in pycountry.languages:
        add(getattr(lang, "name", None), "language")
    assert len(want) > 10000
    assert _table() == {k: frozenset(v) for k, v in want.items()}
