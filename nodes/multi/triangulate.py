"""triangulate: tag every merged result verified_official, verified_multi, unverified_single or contradicted.

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
- **verified_official**: the result comes from an official source — a domain of the ``primary`` tier by the
  tier table (``reading.tiers``: the built-in table and the ``source_tiers`` file) or by an official or academic
  suffix (``.gov``, ``gov.uk``, ``.int``, ``ac.jp`` ...) — or states the same as one (compatible numbers, not
  a copy). A contradiction between an official source and a non-official one is **resolved** in the official
  source's favour (the design's "attempts resolution via official sources"): the official result stays
  verified_official, the other is contradicted and its reason says which official source says otherwise.
  Two official sources that conflict are both contradicted.
- **unverified_single**: none of these.

Contradicted (unresolved) wins over verified; verified_official over verified_multi. The reason names the other
result and the two sentences' numbers; the tags are surfaced on every cited source and counted in the result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import combinations
from urllib.parse import urlsplit

from langgraph.runtime import Runtime

from saturate.nodes.reading.entities import extract_entities
from saturate.nodes.reading.tiers import load_tier_table, official, registrable_domain
from saturate.state.context import Context
from saturate.state.multi_state import MultiState
from saturate.state.settings_of import settings_of
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


def official_domains(domains: set[str], table: Mapping[str, str] | None = None) -> list[str]:
    """The official ones among a result's domains (primary tier by the table, or an official suffix)."""
    table = {} if table is None else table
    return sorted(d for d in domains if ":" not in d and (table.get(d) == "primary" or official(d)))


def triangulate_entries(entries: list[dict], table: Mapping[str, str] | None = None) -> dict[str, dict]:
    copies = _copies(entries)
    domains = [{domain_of(u) for u in e.get("urls") or [e["url"]]} for e in entries]
    officials = [official_domains(d, table) for d in domains]
    claims = [_claims(e) for e in entries]
    by_subject: dict[str, list[tuple[int, int]]] = {}
    for i, cl in enumerate(claims):
        for j, c in enumerate(cl):
            for s in c["subjects"]:
                by_subject.setdefault(s, []).append((i, j))
    support: dict[int, list[tuple[int, str]]] = {}
    conflict: dict[int, list[tuple[int, str]]] = {}
    backed: dict[int, list[tuple[int, str]]] = {}  # same statement, an official source on one side
    overruled: dict[int, list[tuple[int, str]]] = {}  # an official result's conflicts with non-official ones
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
                if bool(officials[i]) != bool(officials[k]):  # resolved: the official source stands
                    loser, winner = (k, i) if officials[i] else (i, k)
                    conflict.setdefault(loser, []).append((winner, note))
                    overruled.setdefault(winner, []).append((loser, note))
                else:
                    conflict.setdefault(i, []).append((k, note))
                    conflict.setdefault(k, []).append((i, note))
            elif not why and (officials[i] or officials[k]) and copies[i] != copies[k]:
                backed.setdefault(i, []).append((k, clip(cb["text"], 160)))
                backed.setdefault(k, []).append((i, clip(ca["text"], 160)))
            elif not why and domains[i].isdisjoint(domains[k]):
                support.setdefault(i, []).append((k, clip(cb["text"], 160)))
                support.setdefault(k, []).append((i, clip(ca["text"], 160)))
    tags: dict[str, dict] = {}

    def name(k: int) -> str:
        return entries[k].get("title") or entries[k]["url"]

    for i, e in enumerate(entries):
        if i in conflict:
            others = sorted({k for k, _ in conflict[i]})
            by = next((k for k in others if officials[k] and not officials[i]), None)
            tags[e["key"]] = {
                "tag": "contradicted",
                "with": [entries[k]["key"] for k in others],
                "reason": (
                    f"the official source {name(by)} ({', '.join(officials[by])}) says otherwise: "
                    if by is not None
                    else f"conflicts with {name(others[0])}: "
                )
                + next(note for k, note in conflict[i] if by is None or k == by),
            }
        elif officials[i] or i in backed:
            others = sorted({k for k, _ in backed.get(i, [])})
            if officials[i]:
                reason = f"from an official source ({', '.join(officials[i])})"
                if others:
                    reason += f"; also stated by {len(others)} other source(s)"
                if i in overruled:
                    k, note = overruled[i][0]
                    reason += f"; conflicts with {name(k)} resolved in its favour: {note}"
            else:
                k = next(k for k in others if officials[k])
                reason = f"also stated by the official source {name(k)} ({', '.join(officials[k])}): " + repr(
                    next(text for o, text in backed[i] if o == k)
                )
            tags[e["key"]] = {"tag": "verified_official", "with": [entries[k]["key"] for k in others], "reason": reason}
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


def triangulate(state: MultiState, runtime: Runtime[Context] | None = None) -> dict:
    table = load_tier_table(settings_of(state, runtime.context if runtime else None).source_tiers)
    return {"tags": triangulate_entries(state.get("merged") or [], table)}
