"""``reading.page_names``: which accepted pages a text names, by the page's name."""

from __future__ import annotations

from saturate.nodes.reading.page_names import NAME_MIN_CHARS, mentions, names, page_name, subject


def test_a_pages_name_is_its_title_without_an_aside_or_a_places_qualifier():
    assert subject("Tidewater (album)") == "Tidewater" and subject("Paris") == "Paris"
    assert page_name("Bangor, Maine") == "Bangor" and page_name("Waimea Bay, Hawaii") == "Waimea Bay"
    assert page_name("Harbor Lights (song)") == "Harbor Lights"
    assert subject("Mountbatten-Windsor") == "Mountbatten-Windsor"


def test_a_text_names_a_page_by_whole_words_case_blind():
    text = "It played at Neyland Stadium in Knoxville, as a member of the Southeastern Conference."
    assert mentions(text, "southeastern conference") == [(62, 85)]
    assert names(text, "Knoxville") and not names(text, "Knox") and not names(text, "Conference Call")
    assert not names("the film Up was released", "Up")  # shorter than NAME_MIN_CHARS: too common a word
    assert NAME_MIN_CHARS == 4


def test_a_name_inside_a_longer_named_title_is_that_title_not_the_page():
    task = "Who wrote Pride and Prejudice?"
    assert not names(task, "Prejudice", ["Pride and Prejudice"])
    assert names(task, "Prejudice") and names(f"{task} Prejudice is a bias.", "Prejudice", ["Pride and Prejudice"])
