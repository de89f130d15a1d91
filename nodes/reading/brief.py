"""The brief: beside the short answer, the best sentences of all accepted sources for each part of the question,
cited and marked as the sources bear them out (the seeds' verification and triangulation).

1. For each part (``reading.parts``), the reader (``reading.reader``) reads the candidate sentences of the accepted
   results against the part's ``ask``; a sentence whose ``p`` reaches ``min_p`` (the setting ``brief_min_p``, chosen
   on half A of the public sets by ``saturate bench brief``) from an on-topic source, or from a page the question or
   an on-topic source names (``named_by_on_topic``: a multi-hop question's second page, whose opening sentence is
   read too: ``openings``), may be shown.
2. At most ``MAX_SENTENCES`` in all, each part its share first (``per_part``), the most likely first; one of two
   sentences saying the same thing (``extractive.near_duplicate``) is left out, across parts too. Then each source
   the direct answer cites (``cited``) that the brief does not cite yet gives its best sentence, in the part it reads
   best for, on topic or not (the answer quotes it: hotpotqa's two gold paragraphs both cited, half A 0.835 ->
   0.866, half B 0.750 -> 0.838): the brief cites what the answer cites (a multi-hop answer's second page, which the
   reader ranks low against the whole question, and which the topic floor often marks off topic), then the rest fill
   what room is left.
3. In a part, the page the part is about (its title the part's name, ``own_page``) comes first, in its own order
   (what the thing is, then what the page goes on to say); then what a thing is (another source's opening
   sentence), then the rest, the most likely first.
4. Each sentence is cited ``[n]`` and marked: **confirmed** when another accepted source (another page) holds it too
   (a sentence of it holds ``CONFIRM_SHARE`` of the sentence's words beyond the question's, and every name and
   number it adds), with that source's number; **single source** when
   none does; **contradicted** when another source says nearly the same sentence with another number or year.
5. ``overview``: for a question of several parts that no one sentence answers (the reader's "not found": a
   comparison, an explanation, causes and effects), the direct answer is, for each part, the brief's first sentence
   that fits in the part's share of the answer, as likely — a brief that holds every part is not shown under "the
   sources do not answer this".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from saturate.nodes.reading.answer import _render, best_first, result_docs
from saturate.nodes.reading.extractive import near_duplicate, shows_subject
from saturate.nodes.reading.grounding import folded_terms, names_in
from saturate.nodes.reading.page_names import NAME_MIN_CHARS, names, page_name, subject
from saturate.nodes.reading.parts import reader_question
from saturate.nodes.reading.question import split_sentences, stems, title_subject
from saturate.nodes.reading.reader import Candidate, Read, Reader, candidates, readable_sentences, sentence_key
from saturate.state.settings import BRIEF_MIN_P
from saturate.state.text import clip

MAX_SENTENCES = 8
MIN_PER_PART = 2
SENTENCE_MAX_CHARS = 400
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
SAME_CLAIM = 0.6  # share of stems two sentences share to say the same thing (a value aside)
CONFIRM_SHARE = 0.7  # share of a sentence's own words (beyond the question's) another page's sentence must hold


def per_part(parts: int) -> int:
    return max(MIN_PER_PART, MAX_SENTENCES // max(1, parts))


def build_brief(
    reader: Reader,
    task: str,
    parts: Sequence[Mapping[str, str]],
    results: Sequence[Mapping[str, Any]],
    pages: dict[str, str],
    on_topic: Sequence[bool] | None = None,
    min_p: float = BRIEF_MIN_P,
    cited: Sequence[int] = (),
) -> list[dict]:
    """The brief (module docstring): ``[{"part", "kind", "sentences": [{"text", "sources", "confirmed_by",
    "status", "p"}]}]``; parts with no sentence are kept with an empty list (what was not found is said)."""
    if not results:
        return []
    docs = result_docs(results, pages)
    sentences = [[folded_terms(f"{t}. {s}") for s in split_sentences(x or "")] for t, x in docs]
    sites = [r.get("url", "") or str(i) for i, r in enumerate(results)]  # a page is a source
    keep = named_by_on_topic(docs, on_topic, task) if on_topic is not None else [True] * len(results)
    answer_cited = set(cited)
    # the pages kept only because the question or an on-topic source names them: a multi-hop question's second page
    bridges = [d for d, k in enumerate(keep) if k and on_topic is not None and not on_topic[d]]
    read_parts: list[list[Read]] = []  # what each part may show
    of_cited: list[list[Read]] = []  # and, of a source the answer cites, what it may show for the answer's sake
    for part, own in zip(parts, own_words(parts)):
        ask = reader_question(part) or task
        # by shared words, not the reader's learned order (learned from single questions' answer sentences, it
        # lowered both measures of `saturate bench brief` on both halves: docs/reader.md)
        chosen_by_words = candidates(ask, docs)
        reads = [
            x
            for x in reader.read(ask, chosen_by_words + openings(docs, bridges, chosen_by_words))
            if x.p >= min_p and not elided(x.candidate.text) and names_part(x, own)
        ]
        read_parts.append(sorted((x for x in reads if keep[x.candidate.doc]), key=best_first))
        of_cited.append(sorted((x for x in reads if x.candidate.doc in answer_cited), key=best_first))
    quota = per_part(len(parts))
    chosen: list[list[Read]] = [[] for _ in parts]
    shown: list[frozenset[str]] = []

    def take(i: int, x: Read, of: Callable[[int, int], int] = min) -> bool:
        words = stems(x.candidate.text)
        if any(near_duplicate(words, s, of) for s in shown):
            return False
        chosen[i].append(x)
        shown.append(words)
        return True

    for i, reads in enumerate(read_parts):  # each part its share first ...
        for x in reads:
            if len(chosen[i]) >= quota:
                break
            take(i, x)
    have = {x.candidate.doc for picked in chosen for x in picked}
    for d in dict.fromkeys(d for d in cited if d not in have):  # its best sentence, in the part it reads best for
        best = max(
            ((x.p, i, x) for i, reads in enumerate(of_cited) for x in reads if x.candidate.doc == d),
            key=lambda t: t[0],
            default=None,
        )
        # left out only if it says what a shown sentence says, not if a shorter one about something else says part of
        # it ("It was recorded at the Flamingo Hotel in Las Vegas, Nevada." on the album's page against the Flamingo's
        # own "… is a hotel and casino located on the Las Vegas Strip in Paradise, Nevada", which the answer cites:
        # hotpotqa's both gold paragraphs cited, half A 0.890 -> 0.896; with the qualifier of named_by_on_topic 0.909)
        if best is not None:
            take(best[1], best[2], max)
    rest = sorted(
        ((x.p, i, x) for i, reads in enumerate(read_parts) for x in reads if x not in chosen[i]),
        key=lambda t: (-t[0], t[1], t[2].candidate.doc, t[2].candidate.order),
    )
    for _, i, x in rest:  # ... then the most likely of any part, while room is left
        if sum(map(len, chosen)) >= MAX_SENTENCES:
            break
        take(i, x)
    out = []
    for part, picked in zip(parts, chosen):
        about = own_page(part)
        mine = sorted((x for x in picked if about(x)), key=lambda x: (x.candidate.order, x.candidate.doc))
        rest = [x for x in picked if not about(x)]
        picked = mine + sorted(rest, key=lambda x: (x.candidate.order != 0, -x.p, x.candidate.doc))
        out.append(
            {
                "part": part.get("name", ""),
                "kind": part.get("kind", "question"),
                "sentences": [_marked(x, task, docs, sentences, sites) for x in picked],
            }
        )
    return out


def own_page(part: Mapping[str, str]) -> Callable[[Read], bool]:
    """Whether a read sentence comes from the page the part is about: its title (a trailing "(disambiguation)"
    aside) is the part's name, case aside. What nuclear power is, is the opening of the page Nuclear power, not of
    Uranium (a page the reader may score as high for "What is nuclear power?": 0.076 against 0.075, and the overview
    then opened the nuclear side with uranium)."""
    name = " ".join(str(part.get("name") or "").lower().split())
    return lambda x: bool(name) and " ".join(subject(x.candidate.title).lower().split()) == name


def overview(brief: Sequence[Mapping[str, Any]], prefix: str, limit: int) -> str:
    """The answer of a question of several parts that no one sentence answers: after ``prefix``, each part's first
    sentence in the brief, cited, within ``limit`` characters (each part an equal share of the room: a comparison
    shows both sides); "" unless the brief has two parts or more and a sentence for each."""
    if len(brief) < 2 or not all(part.get("sentences") for part in brief):
        return ""
    room = (limit - len(prefix)) // len(brief) - 1
    out = [prefix]
    for part in brief:
        said = [f"{x['text']} " + " ".join(f"[{n}]" for n in x["sources"]) for x in part["sentences"]]
        fits = next((t for t in said if len(t) <= room), None)
        if fits is None:  # the part's first sentence, cut at a word with its citations kept
            first = part["sentences"][0]
            cites = " ".join(f"[{n}]" for n in first["sources"])
            fits = f"{clip(first['text'], room - len(cites) - 1)} {cites}"
        out.append(fits)
    return " ".join(t for t in out if t)


def named_by_on_topic(docs: Sequence[tuple[str, str]], on_topic: Sequence[bool], task: str = "") -> list[bool]:
    """Which sources the brief may quote: the on-topic ones, and a source whose name (``page_names.page_name``: its
    title, a trailing "(disambiguation)" aside and a place's ", qualifier" — Waimea Bay of "Waimea Bay, Hawaii":
    half A's both gold 0.890 -> 0.902 —, at least ``page_names.NAME_MIN_CHARS``) the question or an on-topic source
    names — a comparison's side that the topic floor left out, the page a multi-hop question's first page leads to,
    whose words the question does not share (of hotpotqa's gold paragraphs the brief left out on half A, 53 of 57
    were such pages marked off topic; with them quoted both gold paragraphs were cited 0.413 -> 0.793: `saturate
    bench brief`)."""
    keep = list(on_topic)
    said = [task] + [text for (_, text), on in zip(docs, on_topic) if on]
    called = [page_name(title) for title, _ in docs]
    longer = {n for n in called if len(n) >= NAME_MIN_CHARS}
    for k, name in enumerate(called):
        if not keep[k]:
            within = [n for n in longer if len(n) > len(name) and name.lower() in n.lower()]
            keep[k] = any(names(text, name, within) for text in said)
    return keep


def openings(docs: Sequence[tuple[str, str]], which: Sequence[int], read: Sequence[Candidate]) -> list[Candidate]:
    """The opening sentence (what the page is) of each source in ``which`` of which no sentence is among ``read``
    yet: a multi-hop question's second page shares no word with the question, so none of its sentences is among the
    candidates chosen by shared words (``reader.candidates``), and it could never be quoted (hotpotqa's two gold
    paragraphs both cited, half A 0.866 -> 0.896, half B 0.838 -> 0.853, precision unchanged: `saturate bench
    brief`)."""
    have = {c.doc for c in read}
    said = {sentence_key(c.text) for c in read}
    out = []
    for d in (d for d in which if d not in have):
        title, text = docs[d]
        first = next(readable_sentences(text, title), None)
        if first is not None and first[2] not in said:
            out.append(Candidate(d, first[0], title, first[1]))
    return out


def own_words(parts: Sequence[Mapping[str, str]]) -> list[frozenset[str]]:
    """Each part's words that no other part's ``ask`` holds ("nuclear" of "nuclear power" beside "solar power"): a
    sentence shown for a part names it (with its source's title), so one side's sentence never stands for the
    other's. Only for the sides of a comparison, whose own words are names: an aspect's ("causes" of "causes of
    climate change") are seldom in the sentences that give them — with them, the open questions' nugget recall fell
    from 0.644 / 0.636 to 0.594 / 0.586 (A / B). Empty for a question of one part, or a part with no word of its
    own."""
    if len(parts) < 2:
        return [frozenset()] * len(parts)
    asks = [stems(str(p.get("ask") or "")) - stems("what is are the how why does do") for p in parts]
    return [
        frozenset(a - set().union(*(b for j, b in enumerate(asks) if j != i)))
        if p.get("kind") == "side"
        else frozenset()
        for i, (p, a) in enumerate(zip(parts, asks))
    ]


def names_part(x: Read, own: frozenset[str]) -> bool:
    """Whether a read sentence (with its source's title) holds a word of its part's own (``own_words``)."""
    return not own or bool(own & stems(f"{x.candidate.title} {x.candidate.text}"))


def elided(sentence: str) -> bool:
    """A search snippet's fragment with text left out ("… store the converted… Biological process …"): not a
    sentence to quote (the page's own sentence, when read, is)."""
    return "…" in sentence or " ... " in sentence


def confirms(sentence: str, task: str, other: list[frozenset[str]], title: str = "") -> bool:
    """Whether another page says the sentence too: one of its sentences (``other``: their folded terms) holds
    ``CONFIRM_SHARE`` of the sentence's terms beyond the question's, and every name and number the sentence holds,
    the question's too — its page's subject's among them where the sentence does not name it (``claim_names``):
    the other page must say it of the same things. Abraham Lincoln's "President of the United States from 1861 to
    1865." is not confirmed by the Civil War's "1861–1865 conflict in the United States.", nor "War and Peace is an
    epic novel by the Russian author Leo Tolstoy." (for "Who is the author of War and Peace?") by "Anna Karenina is a
    novel … by the Russian author Leo Tolstoy."."""
    asked = folded_terms(task)
    own = folded_terms(sentence) - asked
    names = names_in(sentence) | claim_names(title, sentence)
    return bool(own) and any(len(own & t) >= CONFIRM_SHARE * len(own) and names <= t for t in other)


def _marked(
    x: Read, task: str, docs: list[tuple[str, str]], sentences: list[list[frozenset[str]]], sites: list[str]
) -> dict:
    d = x.candidate.doc
    text = _render(x)
    if len(text) > SENTENCE_MAX_CHARS:
        text = text[: SENTENCE_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    confirmed = [
        j + 1
        for j in range(len(docs))
        if j != d and sites[j] != sites[d] and confirms(x.candidate.text, task, sentences[j], x.candidate.title)
    ]
    contradicted = _contradictions(x.candidate.text, d, docs, sites)
    status = "contradicted" if contradicted else "confirmed" if confirmed else "single source"
    return {
        "text": text,
        "sources": [d + 1],
        "confirmed_by": confirmed[:3],
        "contradicted_by": contradicted[:3],
        "status": status,
        "p": round(x.p, 3),
    }


def _contradictions(sentence: str, d: int, docs: list[tuple[str, str]], sites: list[str]) -> list[int]:
    """Sources (other pages) saying nearly the same sentence with other numbers (a year, a count, a size) about the
    same things: neither names what the other (with its page's title) does not (``claim_names``), so that two
    presidents' "President of the United States from 1981 to 1989." and "… from 1861 to 1865." on their own pages
    are two claims, not one contradicted."""
    numbers = set(_NUMBER.findall(sentence))
    if not numbers:
        return []
    words = {w for w in stems(sentence) if not w[0].isdigit()}
    about, said = claim_names(docs[d][0], sentence), folded_terms(f"{docs[d][0]} {sentence}")
    out = []
    for j, (title, text) in enumerate(docs):
        if j == d or sites[j] == sites[d]:
            continue
        for s in split_sentences(text):
            other = set(_NUMBER.findall(s))
            if not other or other & numbers:
                continue
            ow = {w for w in stems(s) if not w[0].isdigit()}
            if not ow or len(words & ow) < SAME_CLAIM * max(len(words), len(ow)):
                continue
            if about <= folded_terms(f"{title} {s}") and claim_names(title, s) <= said:  # about the same things
                out.append(j + 1)
                break
    return out


def claim_names(title: str, sentence: str) -> frozenset[str]:
    """The names a sentence's claim is about (``names_in``, numbers aside), with its page's subject's where the
    sentence does not name it (``extractive.shows_subject``): a page's description, "President of the United States
    from 1981 to 1989." or "Italian artist and architect (1475–1564).", is about the page's subject — Ronald Reagan,
    Michelangelo — and not about another page's, whose description says the same with other years."""
    names = names_in(sentence)
    if not shows_subject(title, sentence):
        names |= folded_terms(title_subject(title))
    return frozenset(w for w in names if not any(c.isdigit() for c in w))
