"""decide: the final result, built only from what the session retrieved.

A question gets a short answer (1-3 sentences, at most 400 characters) citing
only accepted sources, or says the sources do not answer it (``_answer``: the
chat model's, checked in code, or extractive); every accepted source stays in
the result, marked cited / on topic with its relevance. A claim (``verify``) turns
every accepted result into an evidence hit — stance (``reading.stance``: recorded,
model or heuristic), tier and weight (``reading.tiers``) — and the decision rule
(``reading.verdict``) answers True / False / Invalid with a checked proof, or sends the
session back for more search while attempts remain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from saturate.nodes._answer import answer_task, cited_refs, cited_sources, trained_reader
from saturate.nodes._brief_model import model_brief
from saturate.nodes._judge import UNQUOTED, model_stance, write_proof
from saturate.nodes._model import ModelUsage, error_text
from saturate.nodes._notes import drain_notes
from saturate.nodes.reading.answer import LIKELY_PREFIX, doc_meaning, reads_question
from saturate.nodes.reading.brief import build_brief, overview
from saturate.nodes.reading.crosslingual import is_english
from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS
from saturate.nodes.reading.parts import question_parts
from saturate.nodes.reading.slots import Reading, describe, fill_chains, result_texts, short_answer, yes_no
from saturate.nodes.reading.stance import heuristic_stance
from saturate.nodes.reading.tiers import load_tier_table, registrable_domain, tier_of
from saturate.nodes.reading.verdict import NEED_MORE_SEARCH, VerifyRules, decide_from_history
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.records import AgentResult, EvidenceHit, SourceRef
from saturate.state.settings import Settings
from saturate.state.settings_of import settings_of
from saturate.state.text import clip, scrub_urls


def evidence_hits(
    state: ResearchState,
    runtime: Runtime[Context],
    settings: Settings,
    attempt: int,
    usage: ModelUsage,
    notes: list[str],
) -> list[EvidenceHit]:
    """New evidence: accepted results not judged in an earlier attempt, with stance, tier and weight."""
    claim = state["task"]
    known = {h["url"] for h in state.get("evidence") or []}
    store = runtime.context.pages
    stored = {p["url"] for p in state.get("pages") or [] if p.get("status") == "stored"}
    table = load_tier_table(settings.source_tiers)
    oracle = runtime.context.stance_oracle
    model = runtime.context.chat_model
    hits = []
    unquoted = 0  # model stances with no quote from their passage (counted as irrelevant)
    for r in (state.get("results") or {}).values():
        if r["url"] in known:
            continue
        text = r.get("snippet", "")
        if r["url"] in stored and store is not None:
            text = store.get(r["url"]) or text
        judged, by = None, "heuristic"
        if oracle is not None and oracle(r["url"]) is not None:
            judged, by = (oracle(r["url"]), heuristic_stance(claim, text)[1], "recorded stance"), "gold"
        elif model is not None and settings.model_stances:
            try:
                judged, by = model_stance(model, claim, text, usage), "model"
                if judged is not None and judged[2] == UNQUOTED:
                    unquoted += 1
                if judged is None:
                    notes.append(f"stance reply for {r['url']} unusable: heuristic stance used")
                    by = "heuristic"
            except Exception as exc:  # recorded; the heuristic judges this hit
                notes.append(f"stance model: {error_text(exc)}; heuristic stance used")
                by = "heuristic"
        stance, excerpt, reason = judged or heuristic_stance(claim, text)
        domain = registrable_domain(r["url"])
        tier, why = tier_of(domain, claim, table)
        # validated, not constructed: a recorded (gold) stance is the replay's unchecked string
        hits.append(
            EvidenceHit.model_validate(
                {
                    "url": r["url"],
                    "title": r.get("title", ""),
                    "pub_date": r.get("pub_date"),
                    "excerpt": clip(excerpt, 400) if len(excerpt) > 400 else excerpt,
                    "text": text[:4000],
                    "stance": stance,
                    "stance_by": by,
                    "stance_reason": reason,
                    "domain": domain,
                    "tier": tier,
                    "weight": settings.tier_weights[tier],
                    "attempt": attempt,
                }
            )
        )
    if unquoted:
        notes.append(f"{unquoted} model stance(s) quoted nothing from their passage: counted as irrelevant")
    return hits


CHECKPOINT_TEXT_CHARS = 500


def full_text(hits: list[EvidenceHit], state: ResearchState, runtime: Runtime[Context]) -> None:
    """Restore each hit's text from the page store (enriched) or its accepted result's snippet."""
    store = runtime.context.pages
    results = state.get("results") or {}
    for h in hits:
        text = store.get(h.url) if store is not None else None
        h.text = text or (results.get(h.url) or {}).get("snippet") or h.text


def decide_claim(state: ResearchState, runtime: Runtime[Context]) -> dict:
    settings = settings_of(state, runtime.context)
    claim = state["task"]
    attempt = state.get("attempts", 0) + 1
    usage = ModelUsage("decide")
    notes: list[str] = []
    new = evidence_hits(state, runtime, settings, attempt, usage, notes)
    history = [EvidenceHit.model_validate(h) for h in state.get("evidence") or []]
    full_text(history, state, runtime)  # the checkpoint keeps only a short text per hit
    history += new
    rules = VerifyRules.from_settings(settings)
    verdict = decide_from_history(claim, history, attempt, settings.verify_max_attempts, rules)
    # full page texts stay out of the checkpoint: a hit keeps its excerpt and a snippet-sized text
    update: dict = {
        "evidence": [h.model_copy(update={"text": clip(h.text, CHECKPOINT_TEXT_CHARS)}).model_dump() for h in new],
        "attempts": attempt,
    }
    if verdict.outcome == NEED_MORE_SEARCH:
        return {
            **update,
            "attempt_start": state.get("round", 0),
            "result": None,
            "notes": [f"attempt {attempt}: need more search — {verdict.reason}"] + notes + usage.notes,
            "decide_calls": usage.calls,  # the stances asked so far count in the result's model_calls
        }
    proof, method = write_proof(claim, verdict, history, runtime.context.chat_model, usage, notes)
    records = state.get("records") or []
    result = AgentResult(
        outcome=verdict.outcome,
        task=claim,
        answer=f"{verdict.outcome}: {verdict.reason}",
        proof=proof,
        sources=[
            SourceRef(n=i + 1, url=h.url, title=h.title, pub_date=h.pub_date, excerpt=h.excerpt)
            for i, h in enumerate(verdict.counted)
        ],
        stop_reason=records[-1].get("reason", "") if records else "",  # the gate's words: why it stopped
        rounds=len(records),
        debug={
            "total_queries": len(state.get("queries") or []),
            "total_pages_visited": sum(1 for p in state.get("pages") or [] if p.get("status") == "stored"),
            "attempts": attempt,
            "rules": rules.describe(),
            "support": verdict.support,
            "refute": verdict.refute,
            "evidence": len(history),
            "stances": {s: sum(h.stance == s for h in history) for s in ("support", "partial", "refute", "irrelevant")},
            "proof": method,
            "model_calls": sum(r.get("model_calls", 0) for r in records)
            + (state.get("decide_calls") or 0)
            + usage.calls,
            "errors": [e for r in records for e in r.get("errors", [])],
            "notes": list(state.get("notes") or []) + notes + usage.notes,
        },
    )
    return {**update, "result": result.model_dump()}


def question_brief(
    state: ResearchState,
    runtime: Runtime[Context],
    settings: Settings,
    accepted: Sequence[Mapping[str, Any]],
    texts: dict[str, str],
    answered,
    usage: ModelUsage,
    for_overview: bool = False,
) -> tuple[list[dict], list[str]]:
    """(the brief, notes): the extractive brief by the trained reader (``reading.brief``), as prose by the chat model
    when there is one (``_brief_model``); none with ``reader rules`` or a reader that cannot load (noted), nor with
    ``brief`` false unless the answer is to be the brief's overview (``wants_overview``: then the extractive one,
    which decide does not show)."""
    if not (settings.brief or for_overview) or not accepted:
        return [], []
    reader, notes = trained_reader(settings)
    if reader is None:
        return [], notes
    parts = state.get("parts") or question_parts(state["task"])
    on_topic = [bool(ref.on_topic) for ref in answered.sources]
    # every source the answer cites is cited in the brief too (both gold paragraphs of hotpotqa 0.413 -> 0.430,
    # A 0.47 -> 0.49 / B 0.35 -> 0.36, the open questions' nuggets the same: `saturate bench brief`)
    cited = cited_sources(answered.answer, len(accepted))
    brief = build_brief(reader, state["task"], parts, accepted, texts, on_topic, settings.brief_min_p, cited)
    sources = {r["url"] for r in accepted}
    brief = without_links(brief, sources, notes)  # before the model reads it, too
    if runtime.context.chat_model is not None and brief and settings.brief:
        numbered = {
            i + 1: f"{r.get('title', '')}. {r.get('snippet', '')} {texts.get(r['url']) or ''}"
            for i, r in enumerate(accepted)
        }
        brief = model_brief(runtime.context.chat_model, reader, state["task"], brief, numbered, usage, notes)
        brief = without_links(brief, sources, notes)
    return brief, notes


def without_links(brief: list[dict], sources: set[str], notes: list[str]) -> list[dict]:
    """``brief`` with every link that is no retrieved source's removed from its sentences (``scrub_urls``, as the
    answer's are), noted: the brief quotes the sources' text, which is untrusted and can carry links."""
    removed = 0
    out = []
    for part in brief:
        sentences = []
        for x in part.get("sentences") or []:
            text, gone = scrub_urls(str(x.get("text", "")), sources)
            removed += len(gone)
            sentences.append({**x, "text": text} if gone else x)
        out.append({**part, "sentences": sentences})
    if removed:
        notes.append(f"brief carried {removed} link(s) that are no retrieved source's: removed")
    return out


def wants_overview(state: ResearchState, answered) -> bool:
    """Whether the answer is to be the brief's overview (``reading.brief.overview``): the reader read no sentence
    that answers a question of several parts (a comparison, causes and effects, how or why)."""
    parts = state.get("parts") or question_parts(state["task"])
    return answered.method == "reader" and not answered.answered and len(parts) >= 2


def with_overview(answered, brief: list[dict]):
    """``answered`` with the brief's overview as its answer, as likely, where ``wants_overview`` and the brief holds
    every part; else ``answered`` as it is."""
    text = overview(brief, LIKELY_PREFIX, ANSWER_MAX_CHARS)
    if not text:
        return answered
    note = (
        f"reader: no one sentence answers the question as a whole; the answer is, for each of its {len(brief)} parts, "
        f"the brief's first sentence that fits in the part's share of the answer, as likely"
    )
    sources = cited_refs(answered.sources, text)
    return replace(answered, answer=text, sources=sources, answered=True, level="likely", notes=[*answered.notes, note])


def shown_slots(chains: list, answered) -> list[dict]:
    """The question's slots as the result shows them. Where the reader's answer stands for the question's one slot,
    the slot's line only when its value is in that answer (a value the answer does not hold is never shown as the
    answer: "What causes earthquakes?" → not found, the slot "= Andaman") and agrees with what the reader read as
    the value (its best sentence's span, where it has one: "Who painted the Sistine Chapel ceiling?" showed "(a
    person) = Last Judgment", a name of the same sentence, under the reader's Michelangelo), and none when no value
    filled it and the answer explains ("an explanation": no slot line says "not found yet" under an answer)."""
    slots = describe(chains)
    if answered.method == "reader" and len(slots) == 1:
        value = str(slots[0].get("value") or "")
        if value and value.casefold() not in answered.answer.casefold():
            return []
        if value and answered.span and not same_value(value, answered.span):
            return []
        if not value and answered.answered:
            return []
    return slots


def same_value(a: str, b: str) -> bool:
    """Whether two values name the same thing: one holds the other (case and spaces aside)."""
    x, y = (" ".join(v.split()).casefold() for v in (a, b))
    return bool(x and y) and (x in y or y in x)


def multilingual_reader(context: Context, settings: Settings, task: str):
    """The model that reads a question not in English (``reading.crosslingual``), when the trained reader is on;
    None for an English question."""
    if settings.reader != "trained" or context.multilingual is None or is_english(task):
        return None
    return context.multilingual()


def decide(state: ResearchState, runtime: Runtime[Context]) -> dict:
    if state.get("kind") == "claim":
        return decide_claim(state, runtime)
    task = state["task"]
    accepted = list((state.get("results") or {}).values())
    records = state.get("records") or []
    pages = [p for p in state.get("pages") or [] if p.get("status") == "stored"]
    store = runtime.context.pages
    texts = {p["url"]: store.get(p["url"]) or "" for p in pages} if store is not None else {}
    store_notes = drain_notes(store)
    missing = [u for u, t in texts.items() if not t]
    if missing:  # the page store lost them (moved aside after damage): their snippets stand in
        store_notes.append(f"{len(missing)} stored page(s) not in the page store: their snippets were used")
    # a local corpus's documents are read whole (a lookup, no fetch); enriched pages win where both exist
    texts = {**result_texts(runtime.context.source, accepted), **{u: t for u, t in texts.items() if t}}
    chains, verdict, short = [], None, ""
    if state.get("chains"):  # the question's slots, filled once more from the whole texts
        reading = Reading(accepted, texts)
        chains = fill_chains(task, state["chains"], reading)
        verdict = next((v for c in chains if (v := yes_no(task, c, reading)) is not None), None)
        short = short_answer(task, chains, reading)
    usage = ModelUsage("decide")
    settings = settings_of(state, runtime.context)
    reader, reader_notes = trained_reader(settings) if reads_question(task) else (None, [])
    # the model's answer is judged by the reader whatever the question (a multi-hop one falls back to the rules)
    judge = reader if reader is not None or runtime.context.chat_model is None else trained_reader(settings)[0]
    # the reader that reads the page a multi-hop or long question's answer leads to (reading.answer.bridged)
    linker = reader or judge or trained_reader(settings)[0]
    meaning = doc_meaning(reader or judge, runtime.context.source, task, accepted)
    answered = answer_task(
        task,
        accepted,
        texts,
        runtime.context.chat_model,
        usage,
        verdict,
        reader,
        settings.reader_min_p,
        settings.reader_confident_p,
        multilingual_reader(runtime.context, settings, task),
        judge,
        settings.reader_rules_words,
        short,
        meaning,
        linker,
        None if reader or judge else lambda: doc_meaning(linker, runtime.context.source, task, accepted),
    )
    if answered.method == "reader":
        short = answered.short  # the reader's span of its best sentence, or nothing: never a slot's other value
    if not answered.answered:
        short = ""
    for_overview = wants_overview(state, answered)
    brief, brief_notes = question_brief(state, runtime, settings, accepted, texts, answered, usage, for_overview)
    if for_overview:
        answered = with_overview(answered, brief)
    brief = brief if settings.brief else []
    reader_notes = list(dict.fromkeys(reader_notes + brief_notes))
    last = records[-1] if records else {}
    errors = [e for r in records for e in r.get("errors", [])]
    result = AgentResult(
        outcome="answer" if accepted else "no_results",
        task=task,
        answer=answered.answer,
        short_answer=short,
        brief=brief,
        sources=answered.sources,
        stop_reason=last.get("reason", ""),  # the gate's words: why it stopped (no "stop: stop:")
        rounds=len(records),
        debug={
            "total_queries": len(state.get("queries") or []),
            "total_pages_visited": len(pages),
            "answer": answered.method,
            "answered": answered.answered,
            "reader_p": answered.reader_p,
            "reader_level": answered.level,
            "cited": [s.n for s in answered.sources if s.cited],
            "slots": shown_slots(chains, answered),
            "model_calls": sum(r.get("model_calls", 0) for r in records) + usage.calls,
            "model_tokens": {
                k: sum((r.get("model_tokens") or {}).get(k, 0) for r in records)
                + (usage.tokens_in if k == "in" else usage.tokens_out)
                for k in ("in", "out")
            },
            "errors": errors,
            "notes": list(state.get("notes") or []) + store_notes + reader_notes + answered.notes + usage.notes,
        },
    )
    return {"result": result.model_dump()}
