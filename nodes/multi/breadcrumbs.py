"""breadcrumbs: leads and key entities of the merged results, each assigned the one source to ask (``follow``).

**Leads** (the design's breadcrumbs). ``rank_leads`` extracts entities (``reading.entities``) from the merged results
and ranks them: **identifiers > organisations > people > other names**, then by
score — the summed task relevance of the results that mention them (task terms
they contain, each weighted by its rarity among the results, a little less for
later results). A candidate must occur in an on-topic result — relevance at
least ``reading.salience.ON_TOPIC`` of the best result's: the bridge to the next hop
sits in the results closest to the task; names found only in off-topic results are noise.
Quantities are facts, not leads, and are never followed; a one-word name the
results also use as a lower-case word ("Good", "List") is no name. Skipped:
names whose words are all in the task or an earlier query, names contained
in the title of a result already in hand (searching them finds that
page again), and names followed in an earlier pass. A weak lead does not win by kind alone: only candidates
scoring at least ``LEAD_FLOOR`` of the best candidate's score are ranked. The top
``breadcrumb_limit`` are followed, each with one targeted query (``LEAD_QUERY``).

**Entity research** (the design's ``_research_entity``). The top ``entity_limit`` key entities
(``reading.actors.key_entities``: named by the most on-topic results, then by the most results) whose own page is not
in hand yet each get one targeted query, their name (``ENTITY_QUERY``): what it is. ``profiles`` then reads
the pages it finds.

**The best source** (the design's ``_follow_breadcrumb``: "determines best source to investigate"): each lead
and entity is asked of one source only (``best_source``), chosen by kind for what the query looks for — a lead's
link to the task is stated in running text (full-text kinds first), an entity's own page is found by its name
(``titles`` and the encyclopedia first: ``AFFINITY``) — then the source whose results name it most, then the
configured order; never a source that already asked that query.

**Passes**: ``BREADCRUMB_PASSES`` (2). The pages a pass finds hold the next hop's names (multi-hop tasks: the
country where a river is → the waterfall in that country), so after their merge the leads of the new results
are ranked and followed once more (no entity research in later passes). Each pass is one concurrent superstep
(``graph/build_multi.py::route_leads``): a pass costs about one search's latency.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from langgraph.runtime import Runtime

from saturate.nodes.reading.actors import key_entities
from saturate.nodes.reading.entities import KIND_RANK, extract_entities, mentions
from saturate.nodes.reading.salience import common_words, is_name, on_topic_floor, relevance_weights, result_text
from saturate.state.context import Context
from saturate.state.multi_state import MultiState
from saturate.state.settings_of import settings_of
from saturate.state.text import scrub_urls, term_set

LEAD_FLOOR = 0.5
LEAD_QUERY = "{name} {task}"
LEADS_KEPT = 10  # ranked leads kept in the state for the record (followed or not)
ENTITY_QUERY = "{name}"
ENTITY_MIN_MENTIONS = 1  # on-topic results naming an entity for it to be researched (the top N are)
BREADCRUMB_PASSES = 2
# source kinds, best first, per purpose: a lead's link to the task is stated in running text; an entity's
# own page is found by its name
AFFINITY = {
    "breadcrumb": ("local", "ddg", "searxng", "wiki", "titles"),
    "entity": ("titles", "wiki", "local", "ddg", "searxng"),
}


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
            if ent.kind == "quantity" or not is_name(ent, common) or not lead_name(ent.name):
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


def lead_name(name: str) -> bool:
    """A lead is a name, never a link or an instruction: no URL or domain (``https://evil-a.com/x``, ``evil.com``,
    ``www.x``), no phrase of several words in capitals ("IGNORE ALL PREVIOUS INSTRUCTIONS": a name in capitals is
    one word, an acronym), nothing tag-like."""
    if scrub_urls(name)[1] or "<" in name or ">" in name:
        return False
    letters = [w for w in name.split() if any(c.isalpha() for c in w)]
    return not (len(letters) >= 3 and all(w.isupper() for w in letters))


def asked_by_source(state: MultiState) -> dict[str, set[str]]:
    """The queries each source already asked (lower-cased), from the audit."""
    asked: dict[str, set[str]] = {}
    for ev in state.get("audit") or []:
        asked.setdefault(ev["source"], set()).add(ev["query"].strip().lower())
    return asked


def best_source(
    name: str, purpose: str, query: str, specs: list[dict], merged: list[dict], asked: dict[str, set[str]]
) -> tuple[str | None, str]:
    """(the source to ask, why): the first kind of ``AFFINITY[purpose]`` among the configured sources, then the
    one whose results name ``name`` most, then the configured order; a source that already asked ``query`` is
    skipped (it would find what it found); None when every source did."""
    order = AFFINITY[purpose]
    open_ = [
        (order.index(spec["kind"]) if spec["kind"] in order else len(order), pos, spec)
        for pos, spec in enumerate(specs)
        if query.strip().lower() not in asked.get(spec["name"], set())
    ]
    if not open_:
        return None, "every source already asked this query"
    first = min(rank for rank, _, _ in open_)
    tied = [(pos, spec) for rank, pos, spec in open_ if rank == first]
    if len(tied) == 1:
        spec = tied[0][1]
        return spec["name"], f"best {purpose} source: {spec['kind']}"
    low = name.lower()
    named = {
        spec["name"]: sum(
            1
            for e in merged
            if any(f["source"] == spec["name"] for f in e.get("found_by") or [])
            and low in result_text(e).lower()
            and mentions(result_text(e), name)
        )
        for _, spec in tied
    }
    _, spec = min(tied, key=lambda t: (-named[t[1]["name"]], t[0]))
    return spec["name"], f"best {purpose} source: {spec['kind']}, {named[spec['name']]} of its results name it"


def entity_items(task: str, merged: list[dict], limit: int, researched: AbstractSet[str] = frozenset()) -> list[dict]:
    """The entities to research: the top ``limit`` key entities whose own page is not in hand (no result is
    titled with the name) and that were not researched before."""
    if limit <= 0:
        return []
    titles = {term_set(_untitled(e.get("title") or "")) for e in merged}
    out = []
    for c in key_entities(task, merged, ENTITY_MIN_MENTIONS):
        terms = term_set(c["name"])
        if not terms or terms in titles or c["name"].lower() in researched or not lead_name(c["name"]):
            continue
        out.append(
            {
                "name": c["name"],
                "kind": c["kind"],
                "score": float(c["on_topic"]),
                "results": len(c["sources"]),
                "purpose": "entity",
                "query": ENTITY_QUERY.format(name=c["name"]),
            }
        )
        if len(out) >= limit:
            break
    return out


def _untitled(title: str) -> str:
    """A title without its trailing parenthesis ("Decade (Neil Young album)" → "Decade")."""
    return title.rsplit(" (", 1)[0] if title.endswith(")") else title


def breadcrumbs(state: MultiState, runtime: Runtime[Context] | None = None) -> dict:
    settings = settings_of(state, runtime.context if runtime else None)
    task, merged, specs = state["task"], state.get("merged") or [], state["sources"]
    before = list(state.get("leads") or [])
    npass = 1 + max((lead.get("pass", 1) for lead in before), default=0)
    followed_before = {(lead["purpose"], lead["name"].lower()) for lead in before if lead.get("followed")}
    ranked = [
        lead
        for lead in rank_leads(task, merged, state.get("queries") or [])
        if ("breadcrumb", lead["name"].lower()) not in followed_before
    ]
    items = [
        {**lead, "purpose": "breadcrumb", "query": LEAD_QUERY.format(name=lead["name"], task=task)}
        for lead in ranked[: max(LEADS_KEPT, settings.breadcrumb_limit)]
    ]
    if npass == 1:
        researched = {name for purpose, name in followed_before if purpose == "entity"}
        items += entity_items(task, merged, settings.entity_limit, researched)
    asked = asked_by_source(state)
    out, leads = [], 0
    for item in items:
        source, why = None, ""
        if item["purpose"] == "entity" or leads < settings.breadcrumb_limit:
            source, why = best_source(item["name"], item["purpose"], item["query"], specs, merged, asked)
        if source:
            asked.setdefault(source, set()).add(item["query"].strip().lower())
            leads += item["purpose"] == "breadcrumb"
        out.append({**item, "followed": source is not None, "source": source, "source_why": why, "pass": npass})
    return {"leads": before + out, "breadcrumbs_done": npass >= BREADCRUMB_PASSES}
