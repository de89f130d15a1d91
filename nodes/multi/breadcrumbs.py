"""breadcrumbs and follow: leads found in the accepted results, followed with targeted queries.

``breadcrumbs`` extracts entities (``state.entities``) from the merged results
and ranks them: **identifiers > organisations > people > other names**, then by
score — the summed task relevance of the results that mention them (task terms
they contain, each weighted by its rarity among the results, a little less for
later results). A candidate must occur in an on-topic result — relevance at
least ``ON_TOPIC`` of the best result's: the bridge to the next hop sits in the
results closest to the task; names found only in off-topic results are noise.
Quantities are facts, not leads, and are never followed; a one-word name the
results also use as a lower-case word ("Good", "List") is no name. Skipped: names whose words are all in the task or an earlier query, and names
contained in the title of a result already in hand (searching them finds that
page again). A weak lead does not win by kind alone: only candidates scoring at
least ``LEAD_FLOOR`` of the best candidate's score are ranked. The top
``breadcrumb_limit`` are followed.

``route_leads`` sends one ``follow`` branch per source (in parallel, like the
loops); each asks its source one targeted query per lead (``LEAD_QUERY``: the
lead with the task, so BM25 and web search stay on topic), skipping a query
that source already asked. Bounded: at most ``breadcrumb_limit`` queries per
source, under the same wall-clock limit, two empty answers in a row end it.
Every query leaves an audit event (phase ``breadcrumb``); what they find is
merged with attribution like everything else.
"""

from __future__ import annotations

import math
import re
import time

from langgraph.runtime import Runtime
from langgraph.types import Send

from saturate.nodes._budget import used_in_state
from saturate.nodes.multi._loop_decision import rule_stop
from saturate.nodes.multi.source_loop import SourceRun
from saturate.state.context import Context
from saturate.nodes._entities import KIND_RANK, extract_entities
from saturate.state.multi_state import MultiState
from saturate.state.settings import Settings
from saturate.state.text import term_set

LEAD_FLOOR = 0.5
ON_TOPIC = 0.5
LEAD_QUERY = "{name} {task}"
_LOWER_WORD = re.compile(r"\b[a-z][a-z'-]+\b")
LEADS_KEPT = 10  # ranked leads kept in the state for the record (followed or not)


def entry_text(entry: dict) -> str:
    return f"{entry.get('title', '')}. {entry.get('snippet', '')}"


def relevance_weights(task: str, merged: list[dict]) -> list[float]:
    """Task relevance of each result: 0.1 + the idf-weighted task terms it contains, a little less further down."""
    task_terms = term_set(task)
    tsets = [term_set(entry_text(e)) for e in merged]
    n = len(merged)
    df = {t: sum(1 for ts in tsets if t in ts) for t in task_terms}
    idf = {t: math.log(1 + n / df[t]) for t in task_terms if df[t]}
    return [(0.1 + sum(idf.get(t, 0.0) for t in task_terms & ts)) / (1 + 0.05 * pos) for pos, ts in enumerate(tsets)]


def common_words(merged: list[dict]) -> set[str]:
    """Words the results also use in lower case: a capitalised one-word "name" among them ("Good", "List",
    "Games") is a sentence start or a title fragment, not a name."""
    return set(_LOWER_WORD.findall(" ".join(entry_text(e) for e in merged)))


def is_name(ent, common: set[str]) -> bool:
    return not (ent.kind == "other" and " " not in ent.name and ent.name.lower() in common)


def rank_leads(task: str, merged: list[dict], asked: list[str]) -> list[dict]:
    """Every candidate lead, best first: {name, kind, score, results}."""
    used = set(term_set(task))
    for q in asked:
        used |= term_set(q)
    titles = [term_set(e.get("title", "")) for e in merged]
    cands: dict[str, dict] = {}
    weights = relevance_weights(task, merged)
    floor = ON_TOPIC * max(weights, default=0.0)
    common = common_words(merged)
    for pos, weight in enumerate(weights):
        for ent in extract_entities(entry_text(merged[pos])):
            if ent.kind == "quantity" or not is_name(ent, common):
                continue
            terms = term_set(ent.name) or frozenset({ent.name.lower()})
            if not (terms - used) or any(terms <= t for t in titles):
                continue
            c = cands.setdefault(ent.name.lower(), {"name": ent.name, "kind": ent.kind, "score": 0.0, "results": 0,
                                                    "first": pos, "on_topic": False})
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
    return [{"name": c["name"], "kind": c["kind"], "score": round(c["score"], 3), "results": c["results"]} for c in kept]


def breadcrumbs(state: MultiState) -> dict:
    settings = Settings.model_validate(state["settings"])
    ranked = rank_leads(state["task"], state.get("merged") or [], state.get("queries") or [])
    leads = [{**lead, "followed": i < settings.breadcrumb_limit,
              "query": LEAD_QUERY.format(name=lead["name"], task=state["task"])}
             for i, lead in enumerate(ranked[:max(LEADS_KEPT, settings.breadcrumb_limit)])]
    return {"leads": leads, "breadcrumbs_done": True}


def route_leads(state: MultiState) -> list[Send] | str:
    followed = [lead for lead in state.get("leads") or [] if lead.get("followed")]
    if not followed:
        return "triangulate"
    hits = state.get("hits") or []
    asked: dict[str, list[str]] = {}
    for ev in state.get("audit") or []:
        asked.setdefault(ev["source"], []).append(ev["query"])
    seed = used_in_state(state)
    return [
        Send("follow", {"task": state["task"], "settings": state["settings"], "source": spec, "leads": followed,
                        "seen": [h["result"]["url"] for h in hits if h["source"] == spec["name"]],
                        "asked": asked.get(spec["name"], []), "budget_seed": seed})
        for spec in state["sources"]
    ]


def follow_leads(payload: dict, runtime: Runtime[Context]) -> dict:
    settings = Settings.model_validate(payload["settings"])
    spec = payload["source"]
    run = SourceRun(payload["task"], spec, settings, (runtime.context.sources or {}).get(spec["name"]), "breadcrumb",
                    getattr(runtime.execution_info, "thread_id", None),
                    time.monotonic() + settings.source_loop_timeout_s, seen=payload.get("seen") or (),
                    writer=runtime.stream_writer)
    asked = {q.strip().lower() for q in payload.get("asked") or []}
    leads = [lead for lead in payload["leads"] if lead["query"].strip().lower() not in asked]
    skipped = len(payload["leads"]) - len(leads)
    stop, why = "leads_done", f"{len(leads)} lead(s) followed" + (f", {skipped} already asked" if skipped else "")
    for i, lead in enumerate(leads):
        run.ask(lead["query"])
        rule = rule_stop(run.history, settings.breadcrumb_limit + 1, settings.empty_stop_queries,
                         run.timed_out or run.remaining() <= 0)
        if rule:
            run.timed_out = run.timed_out or rule[0] == "timeout"
            stop, why = rule
            run.decide("stop", "rule", f"breadcrumb {lead['name']} ({lead['kind']}); {why}")
            break
        last = i == len(leads) - 1
        run.decide("stop" if last else "continue", "lead", f"breadcrumb {lead['name']} ({lead['kind']}, score {lead['score']:g})")
    return {
        "hits": run.hits,
        "audit": run.audit,
        "queries": [s.query for s in run.history],
        "loops": [run.summary(stop, why, settings.breadcrumb_limit)],
        "safety": run.safety([]),
    }
