"""breadcrumbs: leads found in the accepted results, ranked; the best are followed (``follow``).

``breadcrumbs`` extracts entities (``_entities``) from the merged results
and ranks them: **identifiers > organisations > people > other names**, then by
score — the summed task relevance of the results that mention them (task terms
they contain, each weighted by its rarity among the results, a little less for
later results). A candidate must occur in an on-topic result — relevance at
least ``_salience.ON_TOPIC`` of the best result's: the bridge to the next hop
sits in the results closest to the task; names found only in off-topic results are noise.
Quantities are facts, not leads, and are never followed; a one-word name the
results also use as a lower-case word ("Good", "List") is no name. Skipped:
names whose words are all in the task or an earlier query, and names contained
in the title of a result already in hand (searching them finds that
page again). A weak lead does not win by kind alone: only candidates scoring at
least ``LEAD_FLOOR`` of the best candidate's score are ranked. The top
``breadcrumb_limit`` are followed.
"""

from __future__ import annotations

from saturate.nodes._entities import KIND_RANK, extract_entities
from saturate.nodes._salience import common_words, is_name, on_topic_floor, relevance_weights, result_text
from saturate.state.multi_state import MultiState
from saturate.state.settings import Settings
from saturate.state.text import term_set

LEAD_FLOOR = 0.5
LEAD_QUERY = "{name} {task}"
LEADS_KEPT = 10  # ranked leads kept in the state for the record (followed or not)


def rank_leads(task: str, merged: list[dict], asked: list[str]) -> list[dict]:
    """Every candidate lead, best first: {name, kind, score, results}."""
    used = set(term_set(task))
    for q in asked:
        used |= term_set(q)
    titles = [term_set(e.get("title", "")) for e in merged]
    cands: dict[str, dict] = {}
    weights = relevance_weights(task, merged)
    floor = on_topic_floor(weights)
    common = common_words(merged)
    for pos, weight in enumerate(weights):
        for ent in extract_entities(result_text(merged[pos])):
            if ent.kind == "quantity" or not is_name(ent, common):
                continue
            terms = term_set(ent.name) or frozenset({ent.name.lower()})
            if not (terms - used) or any(terms <= t for t in titles):
                continue
            c = cands.setdefault(
                ent.name.lower(),
                {"name": ent.name, "kind": ent.kind, "score": 0.0, "results": 0, "first": pos, "on_topic": False},
            )
            if KIND_RANK[ent.kind] < KIND_RANK[c["kind"]]:
                c["kind"] = ent.kind
            c["score"] += weight
            c["results"] += 1
            c["on_topic"] = c["on_topic"] or weight >= floor
    cands = {k: c for k, c in cands.items() if c["on_topic"]}
    if not cands:
        return []
    best = max(c["score"] for c in cands.values())
    kept = [c for c in cands.values() if c["score"] >= LEAD_FLOOR * best]
    kept.sort(key=lambda c: (KIND_RANK[c["kind"]], -c["score"], c["first"]))
    return [
        {"name": c["name"], "kind": c["kind"], "score": round(c["score"], 3), "results": c["results"]} for c in kept
    ]


def breadcrumbs(state: MultiState) -> dict:
    settings = Settings.model_validate(state["settings"])
    ranked = rank_leads(state["task"], state.get("merged") or [], state.get("queries") or [])
    leads = [
        {
            **lead,
            "followed": i < settings.breadcrumb_limit,
            "query": LEAD_QUERY.format(name=lead["name"], task=state["task"]),
        }
        for i, lead in enumerate(ranked[: max(LEADS_KEPT, settings.breadcrumb_limit)])
    ]
    return {"leads": leads, "breadcrumbs_done": True}
