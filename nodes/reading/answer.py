"""The answer from the trained reader (``reading.reader``): three honest levels, each cited.

1. The sentences worth reading (``reader.candidates``) of the accepted results (snippet and enriched page or
   corpus document) are read; each gets ``p``, the probability that it answers the question, and the span of it that
   is the answer itself.
2. A per-question model (``levels.json``'s ``question``, fitted on training questions held out of training) turns
   the reads into ``confidence``, the probability that the best sentence answers: from the best ``p``, its margin
   over the next best, whether another source's sentence agrees on its answer span, and the span's probability
   (``QUESTION_FEATURES``). Its two thresholds are settings chosen on half A of the public sets (``saturate bench
   reader``):

   - **answered** (confidence ≥ ``confident_p``): the best sentence, then the next best ones (``p`` at least
     ``SUPPORT_SHARE`` of the best, not near-duplicates), within ``ANSWER_MAX_CHARS``, each cited ``[n]``;
   - **likely** (≥ ``min_p``): the same sentences after "The sources suggest (not confirmed):";
   - **not found** (below): ``NOT_ANSWERED`` and the titles of the closest sources — only when nothing plausible
     was read; a long question (``rules_words`` content words or more: ``reader_rules_words``), which no single
     sentence most often answers, gets the extractive rules' answer instead, as likely, when they have one (and,
     answered or likely, its rules' sentences lead, the reader's follow).

3. Each sentence is shown so it reads alone: prefixed "Title: " when it does not name its source's subject or opens
   with a pronoun ("Orange River: It is the longest river in South Africa."), cut to its clauses around the answer
   span when too long (never the span cut away), one of two sentences saying the same thing left out.
4. ``short``: the best sentence's answer span when the reader is confident of it (``span_p`` ≥ ``SHORT_MIN_SPAN_P``)
   and the level is answered; else nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from saturate.nodes.reading.chain import parse_chains
from saturate.nodes.reading.extractive import (
    ANSWER_MAX_CHARS,
    ANSWER_SENTENCES,
    CUT_ALTERNATIVES,
    NOT_ANSWERED,
    ChooseCut,
    clause_texts,
    cut_to_clauses,
    extractive_answers,
    near_duplicate,
    shows_subject,
)
from saturate.nodes.reading.page_names import mentions, names, page_name
from saturate.nodes.reading.question import stems, title_subject
from saturate.nodes.reading.reader import Candidate, Read, Reader, candidates
from saturate.state.text import clip

SUPPORT_SHARE = 0.5  # a further sentence needs p >= this share of the best one's
SUPPORT_MIN_CHARS = 100  # a supporting sentence is cut to no less than this, or left out
MIN_PART_CHARS = 60
LIKELY_PREFIX = "The sources suggest (not confirmed):"
SHORT_MIN_SPAN_P = 0.3  # a short answer only from a span the reader is this sure of
AGREE_TOP = 6  # reads among which another source's agreement with the best span is looked for
QUESTION_FEATURES = ("best_p", "margin", "agree", "span_p")
BRIDGE_SENTENCES = 8  # sentences of the pages the answer's first sentence names read for the bridge (``bridged``)
_PRONOUN = re.compile(r"^(?:it|its|he|his|she|her|they|their|them|this|these|those|there)\b", re.IGNORECASE)

Level = Literal["answered", "likely", "not found"]


@dataclass(frozen=True)
class ReaderAnswer:
    answer: str
    cited: list[int]
    best_p: float  # the per-question confidence (0.0 when nothing was read)
    answered: bool  # answered or likely: a sentence is shown
    level: Level = "not found"
    short: str = ""
    reads: list[Read] = field(default_factory=list)
    by_rules: bool = False  # nothing plausible read for a long question: the extractive rules' answer, as likely


def reader_answers(chains: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the reader answers a question of these chains: one chain of one slot, no comparison. The reader was
    trained on single questions and reads one sentence at a time; on multi-hop questions and comparisons the
    extractive rules, which link a bridge sentence to the answer sentence, answered more often (docs/reader.md)."""
    return len(chains) <= 1 and all(len(c.get("slots") or []) <= 1 and not c.get("compare") for c in chains)


def reads_question(task: str) -> bool:
    """Whether the reader answers ``task`` (``reader_answers``), by the chains its syntax parses to
    (``reading.chain.parse_chains``) whatever chains a chat model proposed for the loop: which answerer reads a
    question is a property of the question, the same with a model and without. (Issue 45: SmolLM2 decomposed single
    questions into chains of two, and their answers went from the reader's to the rules'.)"""
    return reader_answers(parse_chains(task))


def source_text(result: Mapping[str, Any], pages: Mapping[str, str]) -> str:
    """What is read of a result: its snippet, then its page's text where the page was fetched, as paragraphs of their
    own, as the extractive rules read them: a snippet the search cut short ("…") never runs on into the page's first
    words. (Joined by a space, the cut "The value 299,792,458 metres…" and the page's title line "Speed of light" were
    read as one sentence, the session's best, and shown as its answer; the page holds the sentence whole.)"""
    snippet = result.get("snippet", "") or ""
    page = pages.get(result.get("url", "")) or ""
    return "\n\n".join(t for t in (snippet, page) if t)


def result_docs(results: Sequence[Mapping[str, Any]], pages: Mapping[str, str]) -> list[tuple[str, str]]:
    """(title, ``source_text``) of each result: what the reader and the brief read."""
    return [(r.get("title", ""), source_text(r, pages)) for r in results]


def read_results(
    reader: Reader,
    task: str,
    results: Sequence[Mapping[str, Any]],
    pages: dict[str, str],
    meaning: Mapping[int, float] | None = None,
) -> list[Read]:
    """Every candidate sentence of ``results`` read, best first; ``meaning``: ``doc_meaning``'s cosines."""
    reads = reader.read(task, reader.candidates(task, result_docs(results, pages)), meaning)
    return sorted(reads, key=best_first)


def best_first(x: Read) -> tuple:
    """The order of reads, best first: the most likely, then the earlier source, then the earlier sentence."""
    return (-x.p, x.candidate.doc, x.candidate.order)


def doc_meaning(
    reader: Reader | None, source: Any, task: str, results: Sequence[Mapping[str, Any]]
) -> dict[int, float]:
    """The cosine between ``task`` and each result's stored document vector (by the result's place), where the
    source holds vectors of the model the reader's ``Meaning`` calibration was fitted with
    (``LocalCorpus.meaning``); {} otherwise (the web, another embedding model, retrieval by words, no reader)."""
    if reader is None or reader.meaning is None or source is None:
        return {}
    read = getattr(source, "meaning", None)
    ids = [str(r.get("id") or "") for r in results]
    if read is None or not any(ids):
        return {}
    cos = read(task, [i for i in dict.fromkeys(ids) if i], reader.meaning.identity)
    return {d: cos[i] for d, i in enumerate(ids) if i in cos}


def question_features(reads: Sequence[Read]) -> tuple[float, ...]:
    """``QUESTION_FEATURES`` of a question's reads (best first)."""
    if not reads:
        return (0.0, 0.0, 0.0, 0.0)
    best = reads[0]
    margin = best.score - reads[1].score if len(reads) > 1 else 4.0
    span = best.span_text.lower()
    agree = bool(span) and any(
        x.candidate.doc != best.candidate.doc and span in x.candidate.text.lower() for x in reads[1:AGREE_TOP]
    )
    return (best.p, round(min(max(margin, 0.0), 4.0), 4), float(agree), best.span_p)


def confidence(reader: Reader, reads: Sequence[Read]) -> float:
    """The probability that the best-read sentence answers (``levels.json``'s per-question model)."""
    import math

    if not reads:
        return 0.0
    # the per-question model fitted with the calibration the best sentence was read with
    meaning = reader.meaning if reads[0].meaning is not None else None
    spec = meaning.question if meaning is not None else reader.levels.get("question") or {}
    weights = spec.get("weights") or {}
    z = float(spec.get("bias", 0.0)) + math.fsum(
        float(weights.get(f, 0.0)) * x for f, x in zip(QUESTION_FEATURES, question_features(reads))
    )
    return round(1.0 / (1.0 + math.exp(-z)), 6)


def _render(x: Read) -> str:
    c = x.candidate
    if shows_subject(c.title, c.text) and not _PRONOUN.match(c.text):
        return c.text
    return f"{title_subject(c.title)}: {c.text}" if title_subject(c.title) else c.text


def _keep_words(task: str, x: Read) -> set[str]:
    """The words a cut must keep: the answer span's first (the answer itself), then the task's."""
    return set(stems(x.span_text)) | set(stems(task)) if x.span_text else set(stems(task))


def _cut(task: str, x: Read, text: str, room: int, reader: Reader | None = None) -> str:
    """``text`` within ``room``, its clauses around the answer span kept: a cut that would lose the span keeps the
    clauses holding the span's words only. A cut that left out the sentence's opening, and with it the name of
    what it is about, says whose it is ("Thebes, Egypt: …was an ancient Egyptian city located along…", not "was an
    ancient Egyptian city located along…"), as the extractive rules' cuts do.

    With ``reader``, the cut is the one the reader reads as answering best: beside the cut by the question's words,
    each clause's own cut (that clause first, then what fits) is read, and the best-scored one is kept, the cut by
    words winning a tie. The question's words do not say which clause answers: "What is the freezing point of water
    in Fahrenheit?" kept Ice's "Ice is water that is frozen into a solid state…" (water, frozen) and cut away
    "…typically forming at or below temperatures of 0 °C, 32 °F, or 273.15 K.", which the reader scores higher
    (issue 42, item 8). A cut that keeps the span stays one that keeps it."""
    out = _named(x, text, room, lambda r: _clauses(task, x, text, r))
    if reader is None or len(text) <= room:
        return out
    span = x.span_text.lower()
    alts = [out]
    for part in clause_texts(text)[:CUT_ALTERNATIVES]:
        keep = set(stems(part))
        alt = _named(x, text, room, lambda r, keep=keep: cut_to_clauses(text, keep, r))
        if alt and alt not in alts and (not span or span not in out.lower() or span in alt.lower()):
            alts.append(alt)
    return reader_cut(reader, task)(x.candidate.title, alts)


def reader_cut(reader: Reader, task: str) -> ChooseCut:
    """Which of a sentence's cuts to show: the one ``reader`` scores as answering ``task`` best, the first (the cut
    by the question's words) winning a tie. For ``_cut`` and the extractive rules' cuts (``choose_cut``)."""

    def choose(title: str, cuts: list[str]) -> str:
        if len(cuts) <= 1:
            return cuts[0] if cuts else ""
        reads = reader.read(task, [Candidate(0, 0, title, c) for c in cuts])
        return cuts[max(range(len(cuts)), key=lambda i: (reads[i].score, -i))]

    return choose


def _named(x: Read, text: str, room: int, cut: Callable[[int], str]) -> str:
    """``cut(room)``, and "Subject: " before it where it leaves out the opening that names its subject."""
    out = cut(room)
    subject = title_subject(x.candidate.title)
    if out.startswith("…") and subject and not shows_subject(x.candidate.title, out):
        out = f"{subject}: {cut(room - len(subject) - 2)}"
    return out


def _clauses(task: str, x: Read, text: str, room: int) -> str:
    out = cut_to_clauses(text, _keep_words(task, x), room) or clip(text, room)
    span = x.span_text
    if span and span.lower() in text.lower() and span.lower() not in out.lower():
        alt = cut_to_clauses(text, set(stems(span)), room)
        if alt and span.lower() in alt.lower():
            return alt
    return out


def not_found(task: str, results: Sequence[Mapping[str, Any]]) -> str:
    """``NOT_ANSWERED`` and the titles of the (at most three) sources sharing most of the task's words."""
    q = stems(task)
    ranked = sorted(range(len(results)), key=lambda i: (-len(stems(results[i].get("title", "")) & q), i))[:3]
    titles = [results[i].get("title", "") for i in ranked if results[i].get("title")]
    if not titles:
        return NOT_ANSWERED
    about = ", ".join(titles[:-1]) + (" and " if len(titles) > 1 else "") + titles[-1]
    return clip(f"{NOT_ANSWERED} The closest are about {about}.", ANSWER_MAX_CHARS)


def chosen_reads(reads: Sequence[Read]) -> list[Read]:
    """The best read, then the next ones at least ``SUPPORT_SHARE`` of its ``p``, no near-duplicate of one chosen."""
    if not reads:
        return []
    best = reads[0].p
    chosen = [reads[0]]
    for x in reads[1:]:
        if len(chosen) >= ANSWER_SENTENCES or x.p < SUPPORT_SHARE * best:
            break
        if any(near_duplicate(stems(x.candidate.text), stems(c.candidate.text)) for c in chosen):
            continue
        chosen.append(x)
    return chosen


def compose(
    task: str, chosen: Sequence[Read], prefix: str = "", limit: int = ANSWER_MAX_CHARS, reader: Reader | None = None
) -> str:
    """The chosen sentences as the answer, each cited, within ``limit`` (the prefix included): the supporting
    sentences cut first, then left out, the last first; the lead cut around its answer span last; with ``reader``,
    each cut the one it reads as answering best (``_cut``)."""
    parts = [(x, _render(x)) for x in chosen]
    head = f"{prefix} " if prefix else ""

    def size() -> int:
        return len(head) + sum(len(t) + len(f" [{x.candidate.doc + 1}]") + 1 for x, t in parts)

    i = 1
    while i < len(parts):
        if size() > limit:
            x, t = parts[i]
            room = len(t) - (size() - limit)
            if room < SUPPORT_MIN_CHARS:  # a stub of a sentence ("Photosynthetic organisms store the…") says nothing
                parts.pop(i)
                continue
            parts[i] = (x, _cut(task, x, t, max(MIN_PART_CHARS, room), reader))
        i += 1
    while len(parts) > 1 and size() > limit:
        parts.pop()
    if size() > limit:
        x, t = parts[0]
        room = limit - len(head) - len(f" [{x.candidate.doc + 1}]") - 1
        parts[0] = (x, _cut(task, x, t, room, reader))
    return head + " ".join(f"{t} [{x.candidate.doc + 1}]" for x, t in parts)


def reader_answer(
    reader: Reader,
    task: str,
    results: Sequence[Mapping[str, Any]],
    pages: dict[str, str],
    min_p: float,
    confident_p: float = 0.0,
    with_rules: bool = True,
    rules_words: int = 0,
    meaning: Mapping[int, float] | None = None,
) -> ReaderAnswer:
    reads = read_results(reader, task, results, pages, meaning)
    conf = confidence(reader, reads)
    # The cuts are the ones the reader reads as answering best (``reader_cut``; the rules' too), where the answer
    # then cites the same sources as with the cuts by the question's words: a longer cut that leaves no room for a
    # later sentence loses the page that sentence was for (a multi-hop answer's second page; the brief cites what
    # the answer cites).
    confident = bool(reads) and conf >= min_p
    if with_rules and (confident or long_question(task, rules_words)):
        plain, rules = extractive_answers(task, results, pages, reader_cut(reader, task))
    else:
        plain = rules = (NOT_ANSWERED, [])
    if not confident:
        answer = _same_cited(
            _rules_first(task, rules[0], rules_words, LIKELY_PREFIX),
            _rules_first(task, plain[0], rules_words, LIKELY_PREFIX),
        )
        if answer:  # a rules' sentence fits: given as likely, not "not found"
            return ReaderAnswer(answer, cited_numbers(answer), conf, True, "likely", "", reads, by_rules=True)
        return ReaderAnswer(not_found(task, results), [], conf, False, "not found", "", reads)
    level: Level = "answered" if conf >= max(confident_p, min_p) else "likely"
    chosen = chosen_reads(reads)
    prefix = LIKELY_PREFIX if level == "likely" else ""

    def build(told: str, cuts: Reader | None) -> str:
        lead = _rules_first(task, told, rules_words, prefix)
        if lead:
            # a long question: the rules' sentences lead (they link a page to the page it names), the reader's follow
            return _append_reads(lead, chosen, prefix)
        if level == "likely":
            out = compose(task, chosen, LIKELY_PREFIX, reader=cuts)
            if not told.startswith(NOT_ANSWERED):  # after the reader's sentences, the rules' where room is left
                out = _append_rules(out, told, LIKELY_PREFIX)
            return out
        out = compose(task, chosen, reader=cuts)
        return out if told.startswith(NOT_ANSWERED) else _with_rules(out, chosen[0], told)

    answer = _same_cited(build(rules[0], reader), build(plain[0], None))
    best = reads[0]
    short = best.span_text if level == "answered" and best.span_p >= SHORT_MIN_SPAN_P else ""
    return ReaderAnswer(answer, cited_numbers(answer), conf, True, level, short, reads)


def bridged(
    reader: Reader,
    task: str,
    answer: str,
    results: Sequence[Mapping[str, Any]],
    pages: Mapping[str, str],
    rules_words: int,
    meaning: Mapping[int, float] | Callable[[], Mapping[int, float]] | None = None,
) -> str:
    """``answer`` with, second, the sentence its first sentence leads to, for a question no single sentence most
    often answers (a multi-hop one, or a long one: ``long_question``). The accepted pages that the answer's first
    sentence names (``page_names.names``) and the question does not (a page the question names is a first hop, already
    read) are the bridge's pages; the reader reads their ``BRIDGE_SENTENCES`` sentences sharing most of the question's
    words against the whole question, and the best goes after the first sentence, the answer's later sentences
    after it as far as ``ANSWER_MAX_CHARS`` allows ("… Playing as a member of the Southeastern Conference, … [1]"
    then "The conference is headquartered in Birmingham, Alabama. [10]" for "The Tennessee Volunteers football team
    plays as a member for a conference in what city?"). Unchanged when nothing is named, the sentence read is
    already shown, or it does not fit. Measured on the public sets' sessions (`saturate bench`, answer in answer):
    hotpotqa A 0.726 -> 0.738, B 0.691 -> 0.699; musique and WebQuestions unchanged; for every question, or with the
    page the question names read too, hotpotqa fell on both halves (the bridge displaced later sentences that
    held the answer), so neither. ``meaning``: ``doc_meaning``'s cosines, or a function giving them, called only when
    a page is named (most answers name none: the cosines cost a query embedding)."""
    if answer.startswith(NOT_ANSWERED) or (reads_question(task) and not long_question(task, rules_words)):
        return answer
    parts = [p.strip() for p in _CITED_PART.findall(answer)]
    if not parts:
        return answer
    prefix = LIKELY_PREFIX if answer.startswith(LIKELY_PREFIX) else ""
    first = _CITATIONS.sub("", parts[0].removeprefix(prefix))
    own = {n - 1 for n in cited_numbers(parts[0])}
    docs = result_docs(results, pages)
    named = {
        d
        for d, (title, _) in enumerate(docs)
        if d not in own and names(first, name := page_name(title)) and not mentions(task, name)
    }
    if not named:
        return answer
    # the other pages blanked, not dropped: a candidate's ``doc`` stays its source's place, which the citation numbers
    bridge_docs = [(t, x if d in named else "") for d, (t, x) in enumerate(docs)]
    cosines = meaning() if callable(meaning) else meaning
    reads = reader.read(task, candidates(task, bridge_docs, BRIDGE_SENTENCES), cosines)
    if not reads:
        return answer
    best = min(reads, key=best_first)
    shown = _shown(answer, prefix)
    if any(near_duplicate(stems(best.candidate.text), s) for s in shown):
        return answer
    out = f"{parts[0]} {_render(best)} [{best.candidate.doc + 1}]"
    if len(out) > ANSWER_MAX_CHARS:
        return answer
    for part in parts[1:]:
        if len(out) + 1 + len(part) <= ANSWER_MAX_CHARS:
            out = f"{out} {part}"
    return out


def cited_numbers(answer: str) -> list[int]:
    """The source numbers ``[n]`` an answer cites, in order of first citation."""
    return [int(n) for n in dict.fromkeys(_CITE.findall(answer))]


def long_question(task: str, rules_words: int) -> bool:
    """Whether ``task`` has at least ``rules_words`` content words (stems; 0: never): where the reader reads nothing
    plausible, such a question gets the rules' answer as likely (``reader_rules_words``, docs/reader.md)."""
    return rules_words > 0 and len(stems(task)) >= rules_words


def _same_cited(answer: str, plain: str) -> str:
    """``answer`` where it cites the same sources, in the same order, as ``plain`` (the same answer with the cuts by
    the question's words), ``plain`` otherwise."""
    return answer if cited_numbers(answer) == cited_numbers(plain) else plain


def _rules_first(task: str, rules: str, rules_words: int, prefix: str) -> str:
    """For a long question (``long_question``), ``prefix`` and the rules' sentences within ``ANSWER_MAX_CHARS``; ""
    when the question is not long, the rules have no answer, or none of their sentences fits."""
    if rules.startswith(NOT_ANSWERED) or not long_question(task, rules_words):
        return ""
    out = _append_rules(prefix, rules, prefix)
    return "" if out == prefix else out


def _with_rules(lead: str, best: Read, rules: str) -> str:
    """The reader's answer's first sentence, then the extractive rules' answer (their sentences, each with its
    citations) as far as ``ANSWER_MAX_CHARS`` allows, a sentence the reader's already shows not twice; the rules'
    answer alone when it already holds the reader's best sentence."""
    if best.candidate.text in rules:
        return rules
    first = _CITED_PART.match(lead)
    out = first.group(0).strip() if first else lead
    if len(out) > ANSWER_MAX_CHARS:
        return lead
    return _append_rules(out, rules)


def _append_rules(out: str, rules: str, prefix: str = "") -> str:
    """``out`` (its sentences after ``prefix``), then the rules' sentences as far as ``ANSWER_MAX_CHARS`` allows,
    none near a sentence already shown."""
    shown = _shown(out, prefix)
    for part in _CITED_PART.findall(rules):
        text = part.strip()
        words = stems(_CITATIONS.sub("", text))
        if any(near_duplicate(words, s) for s in shown):
            continue
        if len(out) + 1 + len(text) > ANSWER_MAX_CHARS:
            break
        out = f"{out} {text}" if out else text
        shown.append(words)
    return out


def _append_reads(out: str, chosen: Sequence[Read], prefix: str = "") -> str:
    """``out`` (its sentences after ``prefix``), then the reader's ``chosen`` sentences, each cited, as far as
    ``ANSWER_MAX_CHARS`` allows, none near a sentence already shown."""
    shown = _shown(out, prefix)
    for x in chosen:
        words = stems(x.candidate.text)
        if any(near_duplicate(words, s) for s in shown):
            continue
        text = f"{_render(x)} [{x.candidate.doc + 1}]"
        if len(out) + 1 + len(text) > ANSWER_MAX_CHARS:
            continue
        out = f"{out} {text}"
        shown.append(words)
    return out


def _shown(out: str, prefix: str) -> list[frozenset[str]]:
    """The stems of each cited sentence of ``out`` (``prefix`` and citations left out)."""
    return [stems(_CITATIONS.sub("", part.removeprefix(prefix))) for part in _CITED_PART.findall(out)]


_CITE = re.compile(r"\[(\d+)\]")
_CITED_PART = re.compile(r".+?\](?:\s*\[\d+\])*(?=\s|$)")
_CITATIONS = re.compile(r"\s*\[\d+\]")
