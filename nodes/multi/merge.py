"""merge: cross-source deduplication with attribution.

Every hit the loops (and breadcrumb queries) kept becomes part of one merged
result per document, which lists every source and query that found it. Two
hits are the same document when they share a canonical URL (http(s): host
lower-cased without ``www.``, no fragment, no ``utm_*``/``fbclid``/``gclid``
parameters, no trailing slash) or an identical text fingerprint (normalised
title + snippet: the same paragraph in two corpora, or a mirror). A hit matching
an entry by either key joins it; its keys then point there too.

Hits are taken in a fixed order — loops, then breadcrumbs, then entity research, then query number
(a lead's place among the followed ones),
then the configured order of the sources, then rank — so the merged order (and
the citation numbers) interleaves the sources' best results and does not
depend on which thread finished first. Merging is recomputed from all hits each
time it runs (after the loops, again after the breadcrumbs).
"""

from __future__ import annotations

import functools
import hashlib
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from saturate.state.multi_state import MultiState
from saturate.state.text import words

_TRACKING = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid")
PHASES = {"loop": 0, "breadcrumb": 1, "entity": 2}  # merge order of the phases


def canonical_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return url
    host = (parts.hostname or "").lower().removeprefix("www.")
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.lower().startswith(_TRACKING)]
    )
    return urlunsplit(("https", host, parts.path.rstrip("/") or "/", query, ""))


def text_fingerprint(result: dict) -> str:
    return _fingerprint(result.get("title", ""), result.get("snippet", ""))


@functools.lru_cache(maxsize=8192)
def _fingerprint(title: str, snippet: str) -> str:
    blob = " ".join(words(title)) + "\n" + " ".join(words(snippet))
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def merge_hits(hits: list[dict], source_order: list[str]) -> list[dict]:
    order = {name: i for i, name in enumerate(source_order)}
    ranked = sorted(
        hits,
        key=lambda h: (
            PHASES.get(h["phase"], len(PHASES)),
            h["query_no"],
            order.get(h["source"], len(order)),
            h["rank"],
        ),
    )
    entries: list[dict] = []
    index: dict[str, int] = {}
    for h in ranked:
        r = h["result"]
        keys = ("u:" + canonical_url(r["url"]), "t:" + text_fingerprint(r))
        i = next((index[k] for k in keys if k in index), None)
        if i is None:
            i = len(entries)
            entries.append(
                {
                    "key": keys[0],
                    "url": r["url"],
                    "id": r.get("id", ""),
                    "title": r.get("title", ""),
                    "snippet": r.get("snippet", ""),
                    "urls": [],
                    "ids": [],
                    "sources": [],
                    "found_by": [],
                }
            )
        e = entries[i]
        for k in keys:
            index.setdefault(k, i)
        if r["url"] not in e["urls"]:
            e["urls"].append(r["url"])
        if r.get("id") and r["id"] not in e["ids"]:
            e["ids"].append(r["id"])
        if h["source"] not in e["sources"]:
            e["sources"].append(h["source"])
        by = {"source": h["source"], "query": h["query"], "phase": h["phase"]}
        if by not in e["found_by"]:
            e["found_by"].append(by)
    return entries


def merge(state: MultiState) -> dict:
    return {"merged": merge_hits(state.get("hits") or [], [s["name"] for s in state["sources"]])}
