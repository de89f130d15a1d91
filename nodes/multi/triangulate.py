"""triangulate: tag every merged result verified_multi, unverified_single or contradicted.

A result's claims are its sentences with at least ``MIN_CLAIM_TERMS`` content
terms. A claim's subject is its result's title (without a parenthesised
qualifier) and the name the sentence opens with ("The Sydney Harbour Bridge
opened ..."; a one-word opening only when it is the title); two claims of
different results are compared only when they share a subject — a place
named in passing ("... in Hong Kong") is not one. "The same statement" means
their content terms, numbers left out, have a Dice overlap (2 x shared / (both
sizes)) of at least ``AGREE_OVERLAP``.

- **contradicted**: a same-statement pair (overlap ≥ ``CONFLICT_OVERLAP``) whose
  years, or whose other numbers, are disjoint — conflicting dates or figures
  for the same subject (e.g. born 1941 / born 1942). Any two results that are
  not copies count, whatever their domain.
- **verified_multi**: a same-statement pair with compatible numbers, from two
  independent sources: different registrable domains (``state.evidence.registrable_domain``;
  a local corpus ``local://NAME/...`` counts as the domain ``local:NAME``) and not
  copies of one another (copies: one result's terms ≥ ``COPY_OVERLAP`` within
  the other's — a mirror or the same paragraph in two corpora counts once).
- **unverified_single**: neither.

Contradicted wins over verified_multi. The reason names the other result and
the two sentences' numbers; the tags are surfaced on every cited source and
counted in the result.
"""

from __future__ import annotations

import re
from itertools import combinations
from urllib.parse import urlsplit

from saturate.nodes._entities import extract_entities
from saturate.nodes._tiers import registrable_domain
from saturate.state.multi_state import MultiState
from saturate.state.text import clip, sentences, term_set

MIN_CLAIM_TERMS = 5
AGREE_OVERLAP = 0.6
CONFLICT_OVERLAP = 0.75
COPY_OVERLAP = 0.9
MAX_PER_SUBJECT = 40  # sentences compared per subject (a name in every result says little)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUM = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")


def domain_of(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return registrable_domain(url)
    return f"{parts.scheme}:{parts.hostname or ''}"


def _claims(entry: dict) -> list[dict]:
    out = []
    title = re.sub(r"\s*\([^)]*\)\s*$", "", entry.get("title") or "").lower()
    # names are extracted once per result (cached, shared with breadcrumbs and profiles), then looked up per sentence
    names = sorted(
        {
            e.name.lower()
            for e in extract_entities(f"{entry.get('title', '')}. {entry.get('snippet', '')}")
            if e.kind != "quantity"
        },
        key=len,
        reverse=True,
    )
    for s in sentences(entry.get("snippet", "")):
        terms = {t for t in term_set(s) if not t.isdigit()}
        if len(terms) < MIN_CLAIM_TERMS:
            continue
        years = set(_YEAR.findall(s))
        nums = {n.replace(",", "") for n in _NUM.findall(s)} - years
        low = s.lower().lstrip("\"'“‘( ").removeprefix("the ")
        opening = next((n for n in names if low.startswith(n)), "")
        # a one-word opening ("Chemical element with ...") is a subject only when it is the title itself
        subjects = {opening} if opening and (" " in opening or opening == title) else set()
        if title:
            subjects.add(title)
        out.append({"text": s, "terms": terms, "years": years, "nums": nums, "subjects": subjects})
    return out


def _conflict(a: dict, b: dict) -> str:
    if a["years"] and b["years"] and a["years"].isdisjoint(b["years"]):
        return f"years {sorted(a['years'])} vs {sorted(b['years'])}"
    if a["nums"] and b["nums"] and a["nums"].isdisjoint(b["nums"]):
        return f"figures {sorted(a['nums'])[:3]} vs {sorted(b['nums'])[:3]}"
    return ""


def _copies(entries: list[dict]) -> list[int]:
    """A copy-group id per entry (union of pairs whose texts are near-duplicates)."""
    group = list(range(len(entries)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    tsets = [term_set(f"{e.get('title', '')} {e.get('snippet', '')}") for e in entries]
    for i, j in combinations(range(len(entries)), 2):
        a, b = tsets[i], tsets[j]
        if a and b and len(a & b) >= COPY_OVERLAP * min(len(a), len(b)):
            group[root(i)] = root(j)
    return [root(i) for i in range(len(entries))]


def triangulate_entries(entries: list[dict]) -> dict[str, dict]:
    copies = _copies(entries)
    domains = [{domain_of(u) for u in e.get("urls") or [e["url"]]} for e in entries]
    claims = [_claims(e) for e in entries]
    by_subject: dict[str, list[tuple[int, int]]] = {}
    for i, cl in enumerate(claims):
        for j, c in enumerate(cl):
            for s in c["subjects"]:
                by_subject.setdefault(s, []).append((i, j))
    support: dict[int, list[tuple[int, str]]] = {}
    conflict: dict[int, list[tuple[int, str]]] = {}
    done: set[tuple] = set()
    for refs in by_subject.values():
        for (i, a), (k, b) in combinations(refs[:MAX_PER_SUBJECT], 2):
            if i == k or copies[i] == copies[k] or (i, a, k, b) in done:
                continue
            done.add((i, a, k, b))
            ca, cb = claims[i][a], claims[k][b]
            shared = 2 * len(ca["terms"] & cb["terms"]) / (len(ca["terms"]) + len(cb["terms"]))
            if shared < AGREE_OVERLAP:
                continue
            why = _conflict(ca, cb)
            if why and shared >= CONFLICT_OVERLAP:
                note = f"{why}: {clip(ca['text'], 120)!r} / {clip(cb['text'], 120)!r}"
                conflict.setdefault(i, []).append((k, note))
                conflict.setdefault(k, []).append((i, note))
            elif not why and domains[i].isdisjoint(domains[k]):
                support.setdefault(i, []).append((k, clip(cb["text"], 160)))
                support.setdefault(k, []).append((i, clip(ca["text"], 160)))
    tags: dict[str, dict] = {}
    for i, e in enumerate(entries):
        if i in conflict:
            others = sorted({k for k, _ in conflict[i]})
            tags[e["key"]] = {
                "tag": "contradicted",
                "with": [entries[k]["key"] for k in others],
                "reason": f"conflicts with {entries[others[0]].get('title') or entries[others[0]]['url']}: "
                f"{conflict[i][0][1]}",
            }
        elif i in support:
            others = sorted({k for k, _ in support[i]})
            doms = sorted(set().union(*(domains[k] for k in others)) | domains[i])
            tags[e["key"]] = {
                "tag": "verified_multi",
                "with": [entries[k]["key"] for k in others],
                "reason": f"also stated by {len(others)} independent source(s) ({', '.join(doms)}): "
                f"{support[i][0][1]!r}",
            }
        else:
            tags[e["key"]] = {"tag": "unverified_single", "with": [], "reason": "no independent source states the same"}
    return tags


def triangulate(state: MultiState) -> dict:
    return {"tags": triangulate_entries(state.get("merged") or [])}
