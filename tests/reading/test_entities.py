"""``reading.entities``: the names in a text and their kinds."""

from __future__ import annotations

from saturate.nodes.reading.entities import extract_entities, mentions


def test_entity_kinds():
    text = (
        "Dr. Jane Smith joined the Tennessee Bureau of Investigation (TBI) in 2001. The SR-71 was built by "
        "Lockheed Corporation; see ISBN 978-0-689-71173-5 and doi 10.1000/xyz123. Peter Bonetti (born 1941) is "
        "an English goalkeeper. The bridge over the Tully River is 8 km long."
    )
    kinds = {e.name: e.kind for e in extract_entities(text)}
    assert kinds["Jane Smith"] == "person" and kinds["Peter Bonetti"] == "person"
    assert kinds["Tennessee Bureau of Investigation"] == "organisation" and kinds["TBI"] == "organisation"
    assert kinds["Lockheed Corporation"] == "organisation"
    assert kinds["SR-71"] == kinds["ISBN 978-0-689-71173-5"] == kinds["10.1000/xyz123"] == "identifier"
    assert kinds["Tully River"] == "other" and kinds["8 km"] == "quantity"
    assert "English" not in kinds and "ISBN" not in kinds


def test_a_mention_is_whole_words_case_blind():
    assert mentions("Victoria Falls lies on the border of ZIMBABWE.", "Zimbabwe")
    assert not mentions("Zimbabwean music", "Zimbabwe")
    assert mentions("the SR-71 flew", "SR-71") and not mentions("the SR-711 flew", "SR-71")
