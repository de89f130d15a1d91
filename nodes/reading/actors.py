"""Key entities of the merged results: who and what the on-topic results keep naming.

Shared by ``breadcrumbs`` (which researches the top ones: the design's entity
research) and ``profiles`` (which writes their "Key actors" profiles).

Key entities are organisations, people and other names (``reading.entities``;
identifiers and quantities are not actors, nor one-word "names" the results also
use as lower-case words). A one-word name that is the last word of a person's
name in the same results (``Bonetti`` / ``Peter Bonetti``) counts for that
person. An entity's standing is its frequency among the on-topic results —
task relevance (idf-weighted task terms, as for breadcrumbs) at least
``reading.salience.ON_TOPIC`` of the best result's — then among all results
(the design's "rank by frequency + relevance"), organisations and people
before other names.
"""

from __future__ import annotations

from saturate.nodes.reading.entities import KIND_RANK, extract_entities
from saturate.nodes.reading.salience import common_words, is_name, on_topic_floor, relevance_weights

ACTOR_KINDS = ("organisation", "person", "other")
MIN_MENTIONS = 2  # on-topic results that must name an entity for it to be a key entity


def actor_candidates(task: str, merged: list[dict]) -> dict[str, dict]:
    """Every entity of the results: lower-cased name -> {name, kind, sources: [n, ...] (1-based), on_topic}."""
    found: dict[str, dict] = {}
    weights = relevance_weights(task, merged)
    floor = on_topic_floor(weights)
    common = common_words(merged)
    for n, e in enumerate(merged, start=1):
        on_topic = weights[n - 1] >= floor
        ents = [
            x
            for x in extract_entities(f"{e.get('title', '')}. {e.get('snippet', '')}")
            if x.kind in ACTOR_KINDS and is_name(x, common)
        ]
        people = {x.name.split()[-1].lower(): x for x in ents if x.kind == "person" and len(x.name.split()) > 1}
        for x in ents:
            key = x.name.lower()
            if x.kind != "person" and " " not in key and key in people:
                x, key = people[key], people[key].name.lower()
            c = found.setdefault(key, {"name": x.name, "kind": x.kind, "sources": [], "on_topic": 0})
            if KIND_RANK[x.kind] < KIND_RANK[c["kind"]]:
                c["kind"] = x.kind
            if n not in c["sources"]:
                c["sources"].append(n)
                c["on_topic"] += on_topic
    return found


def key_entities(task: str, merged: list[dict], min_mentions: int = MIN_MENTIONS) -> list[dict]:
    """The key entities, best first: named by at least ``min_mentions`` on-topic results."""
    cands = [c for c in actor_candidates(task, merged).values() if c["on_topic"] >= min_mentions]
    cands.sort(key=lambda c: (-c["on_topic"], -len(c["sources"]), c["kind"] == "other", c["sources"][0]))
    return cands
