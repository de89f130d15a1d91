"""``reading.actors``: the entities the on-topic results keep naming (the key entities of a multi-source session)."""

from __future__ import annotations

from saturate.nodes.reading.actors import actor_candidates, key_entities

TASK = "Which engineer designed the Sydney Harbour Bridge?"


def entry(n: int, title: str, snippet: str) -> dict:
    return {"key": f"k{n}", "url": f"local://c/{n}", "title": title, "snippet": snippet}


MERGED = [
    entry(
        1,
        "Sydney Harbour Bridge",
        "The Sydney Harbour Bridge opened in 1932. John Bradfield designed the Sydney Harbour Bridge.",
    ),
    entry(2, "John Bradfield", "John Bradfield was an Australian engineer. Bradfield was born in 1867 in Sandgate."),
    entry(
        3, "Bradfield Highway", "The Bradfield Highway crosses the Sydney Harbour Bridge, named after John Bradfield."
    ),
    entry(4, "Bananas", "Bananas are grown in Queensland by Chiquita Brands International."),
]


def test_a_surname_alone_counts_for_the_person_and_sources_are_numbered_from_one():
    found = actor_candidates(TASK, MERGED)
    assert "bradfield" not in found  # "Bradfield was born ..." is John Bradfield's mention
    john = found["john bradfield"]
    assert (john["name"], john["kind"], john["sources"]) == ("John Bradfield", "person", [1, 2, 3])
    assert found["queensland"]["sources"] == [4] and found["queensland"]["on_topic"] == 0  # an off-topic result
    assert not any(c["name"] in ("1932", "1867") for c in found.values())  # quantities and years are no actors


def test_key_entities_are_named_by_enough_on_topic_results_most_first():
    keys = key_entities(TASK, MERGED)
    assert [c["name"] for c in keys] == ["John Bradfield", "Sydney Harbour Bridge"]  # a person before a tie's other
    assert all(c["on_topic"] >= 2 for c in keys)
    assert key_entities(TASK, MERGED, min_mentions=3) == []
    one = [c["name"] for c in key_entities(TASK, MERGED, min_mentions=1)]
    assert one[:2] == ["John Bradfield", "Sydney Harbour Bridge"] and "Bradfield Highway" in one
    assert "Queensland" not in one and "Chiquita Brands International" not in one
