"""The answer from the trained reader (``reading.reader``): its best sentences, cited, or an honest "not found".

1. The sentences worth reading (``reader.candidates``) of the accepted results (snippet and enriched page or
   corpus document) are read; each gets ``p``, the probability that it answers the question.
2. **Not found**: when the best ``p`` is below ``min_p`` (chosen on half A of the public sets by
   ``saturate bench reader``), the answer is ``NOT_ANSWERED`` and the titles of the closest sources.
3. Otherwise the answer is the best sentence, then the next best ones (``p`` at least ``SUPPORT_SHARE`` of the best,
   not near-duplicates), at most ``ANSWER_SENTENCES`` within ``ANSWER_MAX_CHARS``; each cited ``[n]``, prefixed
   "Title: " when it does not name its source's subject.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from saturate.nodes.reading.extractive import (
    ANSWER_MAX_CHARS,
    ANSWER_SENTENCES,
    NOT_ANSWERED,
    cut_to_clauses,
    extractive_answer,
    names_subject,
    near_duplicate,
)
from saturate.nodes.reading.question import stems, title_subject
from saturate.nodes.reading.reader import Read, Reader, candidates
from saturate.state.text import clip

SUPPORT_SHARE = 0.5  # a further sentence needs p >= this share of the best one's
MIN_PART_CHARS = 60


@dataclass(frozen=True)
class ReaderAnswer:
    answer: str
    cited: list[int]
    best_p: float  # the best sentence's probability (0.0 when nothing was read)
    answered: bool


def reader_answers(chains: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the reader answers a question of these chains: one chain of one slot, no comparison. The reader was
    trained on single questions (WebQuestions, CuratedTREC) and reads one sentence at a time; on multi-hop questions
    and comparisons the extractive rules, which link a bridge sentence to the answer sentence, answered far more
    often on half A and half B alike (docs/reader.md), so they keep those."""
    return len(chains) <= 1 and all(len(c.get("slots") or []) <= 1 and not c.get("compare") for c in chains)


def read_results(reader: Reader, task: str, results: Sequence[Mapping[str, Any]], pages: dict[str, str]) -> list[Read]:
    """Every candidate sentence of ``results`` read, best first."""
    docs = [
        (r.get("title", ""), " ".join(t for t in (r.get("snippet", ""), pages.get(r["url"]) or "") if t))
        for r in results
    ]
    reads = reader.read(task, candidates(task, docs))
    return sorted(reads, key=lambda x: (-x.p, x.candidate.doc, x.candidate.order))


def _render(x: Read) -> str:
    c = x.candidate
    return c.text if names_subject(c.title, c.text) else f"{title_subject(c.title)}: {c.text}"


def not_found(task: str, results: Sequence[Mapping[str, Any]]) -> str:
    """``NOT_ANSWERED`` and the titles of the (at most three) sources sharing most of the task's words."""
    q = stems(task)
    ranked = sorted(range(len(results)), key=lambda i: (-len(stems(results[i].get("title", "")) & q), i))[:3]
    titles = [results[i].get("title", "") for i in ranked if results[i].get("title")]
    if not titles:
        return NOT_ANSWERED
    about = ", ".join(titles[:-1]) + (" and " if len(titles) > 1 else "") + titles[-1]
    return clip(f"{NOT_ANSWERED} The closest are about {about}.", ANSWER_MAX_CHARS)


def reader_answer(
    reader: Reader, task: str, results: Sequence[Mapping[str, Any]], pages: dict[str, str], min_p: float
) -> ReaderAnswer:
    reads = read_results(reader, task, results, pages)
    best = reads[0].p if reads else 0.0
    if not reads or best < min_p:
        return ReaderAnswer(not_found(task, results), [], best, False)
    chosen = [reads[0]]
    for x in reads[1:]:
        if len(chosen) >= ANSWER_SENTENCES or x.p < SUPPORT_SHARE * best:
            break
        if any(near_duplicate(stems(x.candidate.text), stems(c.candidate.text)) for c in chosen):
            continue
        chosen.append(x)
    parts = [(x, _render(x)) for x in chosen]
    keep = set(stems(task))

    def size() -> int:
        return sum(len(t) + len(f" [{x.candidate.doc + 1}]") + 1 for x, t in parts)

    for i in range(1, len(parts)):  # the supporting sentences are cut first, then left out, the last first
        if size() > ANSWER_MAX_CHARS:
            x, t = parts[i]
            parts[i] = (x, cut_to_clauses(t, keep, max(MIN_PART_CHARS, len(t) - (size() - ANSWER_MAX_CHARS))) or t)
    while len(parts) > 1 and size() > ANSWER_MAX_CHARS:
        parts.pop()
    if size() > ANSWER_MAX_CHARS:
        x, t = parts[0]
        room = ANSWER_MAX_CHARS - len(f" [{x.candidate.doc + 1}]") - 1
        parts[0] = (x, cut_to_clauses(t, keep, room) or clip(t, room))
    answer = " ".join(f"{t} [{x.candidate.doc + 1}]" for x, t in parts)
    rules, _ = extractive_answer(task, results, pages)
    if not rules.startswith(NOT_ANSWERED):
        answer = _with_rules(parts[0][1], reads[0], rules)
    cited = [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", answer))]
    return ReaderAnswer(answer, cited, best, True)


def _with_rules(lead_text: str, lead: Read, rules: str) -> str:
    """The reader's best sentence, then the extractive rules' answer (their sentences, each with its citations) as
    far as ``ANSWER_MAX_CHARS`` allows; the rules' answer alone when it already holds that sentence."""
    if lead.candidate.text in rules:
        return rules
    out = f"{lead_text} [{lead.candidate.doc + 1}]"
    if len(out) > ANSWER_MAX_CHARS:
        room = ANSWER_MAX_CHARS - len(f" [{lead.candidate.doc + 1}]")
        return f"{clip(lead_text, room)} [{lead.candidate.doc + 1}]"
    for part in _CITED_PART.findall(rules):
        if len(out) + 1 + len(part.strip()) > ANSWER_MAX_CHARS:
            break
        out = f"{out} {part.strip()}"
    return out


_CITED_PART = re.compile(r".+?\](?:\s*\[\d+\])*(?=\s|$)")
