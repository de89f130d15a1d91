"""enrich: full text for accepted results the knowledge state does not cover yet.

Candidates are accepted results in acceptance order; a result whose snippet
overlaps the knowledge state by more than ``enrich_overlap_max`` is skipped
(and the skip is logged with its overlap). At most ``url_enrich_count`` pages
are fetched through the source; their text, cut to ``page_max_chars``, goes
to the page store beside the checkpoint, and the state keeps only a reference.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from nodes._model import error_text
from state.context import Context
from state.graph_state import ResearchState
from state.records import SearchResult
from state.settings import Settings
from state.text import overlap, term_set


def enrich(state: ResearchState, runtime: Runtime[Context]) -> dict:
    settings = Settings.model_validate(state["settings"])
    known = term_set(state.get("knowledge", ""))
    log: list[dict] = []
    fetched = 0
    for res in (state.get("results") or {}).values():
        if fetched >= settings.url_enrich_count:
            break
        ov = round(overlap(f"{res.get('title', '')} {res.get('snippet', '')}", known), 3)
        entry = {"url": res["url"], "overlap": ov}
        if ov > settings.enrich_overlap_max:
            log.append({**entry, "status": "skipped", "reason": f"overlap {ov} > enrich_overlap_max {settings.enrich_overlap_max}"})
            continue
        t0 = time.perf_counter()
        try:
            text = runtime.context.source.fetch(SearchResult.model_validate(res))
        except Exception as exc:  # a broken page is recorded, the others still get fetched
            log.append({**entry, "status": "error", "reason": error_text(exc)})
            fetched += 1
            continue
        text = (text or "")[: settings.page_max_chars]
        stored = runtime.context.pages is not None
        if stored:
            runtime.context.pages.put(res["url"], text)
        fetched += 1
        log.append(
            {**entry, "status": "stored" if stored else "fetched", "chars": len(text),
             "ms": round((time.perf_counter() - t0) * 1000, 3)}
        )
    return {"pages": log}
