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
