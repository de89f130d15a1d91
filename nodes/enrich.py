"""enrich: full text for accepted results the knowledge state does not cover yet.

Candidates are accepted results in acceptance order — and only those: a
page's own text or links never add a URL to fetch. A result whose snippet
overlaps the knowledge state by more than ``enrich_overlap_max`` is skipped
(and the skip is logged with its overlap). At most ``url_enrich_count`` pages
are fetched through the source (a refused or failed fetch counts too, which
bounds the time enrichment takes); their text, cut to ``page_max_chars``, goes
to the page store beside the checkpoint, and the state keeps only a reference:
``{url, overlap, status, chars, ms}`` plus, when the source says so, the final
URL after redirects, the content type and notes (a body cut at
``fetch_max_bytes`` or by the time cap, the ``page_max_chars`` cut).
A refusal of the fetch guard has status ``refused``, other failures ``error``;
both carry the reason.

Page text is untrusted data: it is stored, never interpreted. Nothing in it
reaches the settings, the gate, or the choice of what is fetched.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from saturate.nodes._model import error_text
from saturate.nodes._notes import drain_notes
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.records import SearchResult
from saturate.state.settings_of import settings_of
from saturate.state.text import overlap, term_set


def enrich(state: ResearchState, runtime: Runtime[Context]) -> dict:
    settings = settings_of(state, runtime.context)
    known = term_set(state.get("knowledge", ""))
    log: list[dict] = []
    fetched = 0
    for res in (state.get("results") or {}).values():
        if fetched >= settings.url_enrich_count:
            break
        ov = round(overlap(f"{res.get('title', '')} {res.get('snippet', '')}", known), 3)
        entry = {"url": res["url"], "overlap": ov}
        if ov > settings.enrich_overlap_max:
            log.append(
                {
                    **entry,
                    "status": "skipped",
                    "reason": f"overlap {ov} > enrich_overlap_max {settings.enrich_overlap_max}",
                }
            )
            continue
        t0 = time.perf_counter()
        try:
            text = runtime.context.source.fetch(SearchResult.model_validate(res))
        except Exception as exc:  # a broken or refused page is recorded, the others still get fetched
            status = getattr(exc, "fetch_status", None)
            log.append(
                {
                    **entry,
                    "status": status if status in ("refused", "error") else "error",
                    "reason": error_text(exc),
                    "ms": round((time.perf_counter() - t0) * 1000, 3),
                }
            )
            fetched += 1
            continue
        meta = _fetch_meta(text, res["url"])
        text = str(text or "")
        if len(text) > settings.page_max_chars:
            meta.setdefault("notes", []).append(
                f"text cut to page_max_chars {settings.page_max_chars} (of {len(text)})"
            )
            text = text[: settings.page_max_chars]
        stored = False
        if runtime.context.pages is not None:
            try:
                stored = runtime.context.pages.put(res["url"], text) is not False
            except Exception as exc:  # a full disk or a locked file: the page is not kept, the session goes on
                meta.setdefault("notes", []).append(f"not stored: {error_text(exc)}")
        fetched += 1
        log.append(
            {
                **entry,
                "status": "stored" if stored else "fetched",
                "chars": len(text),
                "ms": round((time.perf_counter() - t0) * 1000, 3),
                **meta,
            }
        )
    update: dict = {"pages": log}
    notes = drain_notes(runtime.context.pages)
    if notes:
        update["notes"] = notes
    return update


def _fetch_meta(text: object, url: str) -> dict:
    """What a source's FetchedText tells about the fetch (final URL, content type, notes); {} for a plain str."""
    meta: dict = {}
    final_url = getattr(text, "final_url", "")
    if isinstance(final_url, str) and final_url and final_url != url:
        meta["final_url"] = final_url[:2000]
    content_type = getattr(text, "content_type", "")
    if isinstance(content_type, str) and content_type:
        meta["content_type"] = content_type[:100]
    notes = getattr(text, "notes", ())
    if isinstance(notes, (list, tuple)) and notes:
        meta["notes"] = [str(n)[:300] for n in notes]
    return meta
