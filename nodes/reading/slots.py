"""Filling the slots of a question's chains from what the session retrieved.

For each chain, slot by slot (innermost first), the subject is resolved — an
entity of the question; ``#k``, the value of slot k (the bridge); or, for a
question with no name in it, the title of a retrieved document whose words the
question contains (``link_subject``) — and every sentence of the retrieved
documents is scored as the one that fills the slot. The score is a logistic
model over a few features of the sentence (``FEATURES``), its weights fitted
on one half of the public question sets and checked on the other
(``saturate bench tune --slots``; docs/benchmarks.md):

- ``relation``: the rarity-weighted share of the slot's relation words (and its
  focus noun) in the sentence and its document's title;
- ``relation_doc``: the same share over the whole document;
- ``subject``: how surely the sentence is about the slot's subject — it names it
  (1), names its last word (a surname: ``PART_MENTION``), or belongs to a
  document titled with it (``TITLE_MENTION``);
- ``question``: the same for the question's own names (the anchors);
- ``other``: the share of the question's other words in the document (it
  belongs to this question at all);
- ``typed``: the sentence holds a candidate of the slot's kind (a name of a
  person, place, organisation or work; a date; a number; a defining phrase) that
  the question does not contain;
- ``typed_page``: what the best candidate's own page (a retrieved document
  titled with it) or the gazetteer (``reading.places``) says it is: +1 the slot's focus
  noun or a noun of its kind, -1 a noun of another kind;
- ``lead``: the sentence opens its document; ``rank``: 1 / (1 + the document's
  position among the results).

The slot's value is the best candidate of the best sentence (the one whose own
page types it best, then the one nearest the relation words); the slot is
**filled** when that sentence's probability reaches ``FILL_P`` and **stable**
when the same value led in the previous fill too (``history``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from saturate.nodes.reading.chain import NOUN_KINDS
from saturate.nodes.reading.entities import extract_entities
from saturate.nodes.reading.places import place_types
from saturate.nodes.reading.question import DEFINING, name_in, split_sentences, stem, stems, title_subject
from saturate.state.text import STOPWORDS, clip, scrub_urls, terms, words

PART_MENTION = 0.7  # a sentence naming only the subject's last word ("Worrall died …")
TITLE_MENTION = 0.8  # a sentence of a document titled with the subject that does not name it
LEAD_SENTENCES = 2  # the sentences of a page that say what its subject is
TEXT_CHARS = 8000  # text read per document
FEATURES = (
    "relation",
    "relation_doc",
    "subject",
    "question",
    "other",
    "typed",
    "typed_page",
    "lead",
    "rank",
    "task",
    "linked",
    "focus",
)
# fitted by `saturate bench tune --slots` on the public sets' half A (docs/benchmarks.md): listwise, so they
# rank the sentences of one slot; a sentence's probability is its softmax share among them
WEIGHTS = {
    "relation": 1.715,
    "relation_doc": 0.585,
    "subject": 1.475,
    "question": -1.711,
    "other": -0.413,
    "typed": 1.426,
    "typed_page": 0.424,
    "lead": 0.649,
    "rank": 1.056,
    "task": -1.357,
    "linked": 5.071,
    "focus": 1.075,
}
FILL_P = 0.3  # a slot is filled when its best sentence's probability reaches this (`saturate bench tune --fill-p`)

_ACCENTS = re.compile(r"[\u0300-\u036f]")
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
)
DATE_PHRASE = re.compile(
    rf"\b(?:\d{{1,2}}\s+{_MONTH}\s+\d{{3,4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}}|{_MONTH}\s+\d{{3,4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+century|\d{{3,4}}s?)\b"
    r"(?:\s*(?:BC|BCE|AD|CE)\b)?"
)
NUMBER_PHRASE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s*(?:%|percent|per cent|million|billion|thousand|km|kilometres|kilometers|"
    r"miles|metres|meters|feet|ft|inches|kg|tonnes|people|inhabitants|members|episodes|copies))?(?![\w])"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b",
    re.I,
)
_DESCRIPTION = re.compile(r"^[A-Z][\w'’-]*(?:\s+[\w'’-]+){0,7}\.$")  # "Country in the Caribbean."
_PHRASE_END = re.compile(r"[,;:.(]|\s(?:who|which|that|whose|where|in|of|on|at|from|for|by|with|and|known|born)\s")
_MONTHS = frozenset("january february march april may june july august september october november december".split())
# the last word of a name that says what kind of thing it is, not which one ("Bubye River", "Kansas City")
GENERIC_HEADS = frozenset(
    stem(w)
    for w in """river falls lake mountain mount sea ocean bay gulf island islands park bridge street road avenue
    station airport house hall tower church cathedral castle palace museum school college university company club
    team band party district county province region state city town village valley desert forest creek canal dam
    war battle treaty act award prize cup league series season album song film show game peak range hill center
    centre square temple empire kingdom republic dynasty group records corporation institute society""".split()
)
NAME_KINDS = ("person", "place", "organisation", "work", "name", "any")
KIND_STEMS = {k: frozenset(stem(n) for n in nouns) for k, nouns in NOUN_KINDS.items()}


def fold(text: str) -> str:
    """Accents off ("Aschenbrödel" → "Aschenbrodel"): names are matched accent-blind."""
    return _ACCENTS.sub("", unicodedata.normalize("NFKD", text))


@dataclass
class Doc:
    n: int  # the source's number in the result (1-based, in accepted order)
    url: str
    title: str
    subject: str  # lower-cased, accent-folded title without its trailing parenthesis
    title_stems: frozenset[str]
    stems: frozenset[str]  # the whole document's
    types: frozenset[str]  # stems of what the page says its subject is ("landlocked country")


@dataclass
class Sentence:
    doc: int  # index into Reading.docs
    order: int
    text: str
    folded: str
    stems: frozenset[str]
    names: tuple[tuple[str, str], ...]  # (name, entity kind)

    def tokens(self) -> list[str]:
        """The sentence's words as stems, in order (computed once)."""
        found = self.__dict__.get("_tokens")
        if found is None:
            found = self.__dict__["_tokens"] = [stem(w) for w in words(self.text)]
        return found


def defining_phrase(lead: list[str]) -> str:
    """What a page's first sentences say its subject is: the words after its first "is a / was the …" (up to a
    preposition or a clause), or a short description line ("Country in the Caribbean." → "Country")."""
    for sentence in lead:
        if _DESCRIPTION.match(sentence) and not DEFINING.search(sentence):
            cut = _PHRASE_END.search(sentence)
            return sentence[: cut.start()] if cut else sentence
        m = DEFINING.search(sentence)
        if m:
            rest = sentence[m.end() :].strip()
            cut = _PHRASE_END.search(rest)
            return (rest[: cut.start()] if cut else rest)[:80]
    return ""


def _without_title(body: str, title: str) -> str:
    """A document's text without its title line (the local corpus's full text starts with it)."""
    if title and body.startswith(title):
        rest = body[len(title) :]
        if rest[:1] == "\n":
            return rest.lstrip()
    return body


class Reading:
    """The accepted results read once: documents, their sentences and the names in them."""

    def __init__(self, results: Sequence[Mapping[str, Any]], texts: dict[str, str] | None = None):
        texts = texts or {}
        self.docs: list[Doc] = []
        self.sentences: list[Sentence] = []
        self.by_subject: dict[str, int] = {}
        for i, r in enumerate(results):
            title = r.get("title", "")
            body = _without_title(texts.get(r["url"]) or r.get("snippet", ""), title)[:TEXT_CHARS]
            sents = [s for s in split_sentences(body) if len(s) >= 12]
            types = frozenset(stem(w) for w in words(defining_phrase(sents[:LEAD_SENTENCES])))
            subject = fold(title_subject(title)).lower()
            self.docs.append(Doc(i + 1, r["url"], title, subject, stems(title), stems(f"{title} {body}"), types))
            self.by_subject.setdefault(subject, i)
            for j, s in enumerate(sents):
                # a link is never a slot's value (untrusted text's links reach no answer: state.text.scrub_urls)
                names = tuple(
                    (e.name, e.kind)
                    for e in extract_entities(s)
                    if e.kind != "quantity" and not (e.kind == "identifier" and scrub_urls(e.name)[1])
                )
                self.sentences.append(Sentence(i, j, s, fold(s), stems(s), names))
        self.n = max(1, len(self.docs))
        self.lead_stems = {}
        for x in self.sentences:
            self.lead_stems.setdefault(x.doc, x.stems)
        self._mentioning: dict[str, list[int]] = {}
        self._idf: dict[str, float] = {}
        # words the texts also use in lower case: "River", "Falls" are no one's name
        self.common = frozenset(re.findall(r"\b[a-z][a-z'-]+\b", " ".join(s.text for s in self.sentences)))

    def idf(self, t: str) -> float:
        if t not in self._idf:
            df = sum(1 for d in self.docs if t in d.stems)
            self._idf[t] = math.log(1 + self.n / df) if df else math.log(1 + self.n)
        return self._idf[t]

    def share(self, wanted: set[str], have: frozenset[str] | set[str]) -> float:
        """The rarity-weighted share of ``wanted`` stems in ``have`` (0 when nothing is wanted)."""
        total = math.fsum(self.idf(t) for t in wanted)
        return math.fsum(self.idf(t) for t in wanted if t in have) / total if total else 0.0

    def mentioning(self, name: str) -> list[int]:
        """The documents whose text names ``name`` (accent-blind, whole words)."""
        key = fold(name)
        if key not in self._mentioning:
            docs = {x.doc for x in self.sentences if key in x.folded and _whole(key, x.folded)}
            docs |= {i for i, d in enumerate(self.docs) if d.subject == key.lower()}
            self._mentioning[key] = sorted(docs)
        return self._mentioning[key]

    def own_page(self, name: str) -> Doc | None:
        i = self.by_subject.get(fold(name).lower())
        return self.docs[i] if i is not None else None


class Weighted:
    """A fixed set of stems with their rarity weights in a reading: the weighted share of it a set of stems holds."""

    def __init__(self, reading: Reading, wanted: set[str]):
        self.weights = [(t, reading.idf(t)) for t in sorted(wanted)]
        self.total = math.fsum(w for _, w in self.weights)

    def share(self, have: frozenset[str] | set[str], also: frozenset[str] = frozenset()) -> float:
        """The share in ``have`` (or ``also``: the share of the two together, without building their union)."""
        if not self.total:
            return 0.0
        return math.fsum(w for t, w in self.weights if t in have or t in also) / self.total


def _whole(name: str, text: str) -> bool:
    """``name`` occurs in ``text`` with no word character either side (no pattern compiled per name: the filler asks
    this for every name of every sentence, more distinct names than ``re``'s cache holds)."""
    n, i = len(name), text.find(name)
    while i >= 0:
        before = text[i - 1] if i else ""
        after = text[i + n] if i + n < len(text) else ""
        if not (before and (before.isalnum() or before == "_")) and not (after and (after.isalnum() or after == "_")):
            return True
        i = text.find(name, i + 1)
    return False


def _named(name: str, sentence: Sentence) -> bool:
    """Whether the sentence names ``name`` as whole words, accent-blind: as written when it has capitals (the album
    "Decade" is not "every decade"), else in any case."""
    name = fold(name)
    if name != name.lower():
        return name in sentence.folded and _whole(name, sentence.folded)
    return name_in(name, sentence.folded.lower())


def mention(subject: str, sentence: Sentence, doc: Doc, common: frozenset[str] = frozenset()) -> float:
    """How surely a sentence is about ``subject`` (module docstring)."""
    low = fold(subject).lower()
    if not low:
        return 0.0
    if _named(subject, sentence):
        return 1.0
    if doc.subject == low or (len(doc.subject) >= 4 and (doc.subject in low or low in doc.subject)):
        return TITLE_MENTION
    parts = [w for w in re.findall(r"[^\W_]+", subject) if w.lower() not in STOPWORDS]
    if len(parts) > 1:
        # the distinctive word of a name: a person's surname ("Worrall died …"), the first word of a place or a
        # thing whose last word is the kind of thing it is ("Bubye" of "Bubye River", never "River")
        word = parts[0] if stem(parts[-1].lower()) in GENERIC_HEADS else parts[-1]
        if len(word) >= 4 and word.lower() not in common and _named(word, sentence):
            return PART_MENTION
    return 0.0


def link_subject(task: str, reading: Reading) -> str:
    """The subject of a question that names nothing: the longest retrieved title all of whose words the question
    contains, in their order ("where did dr seuss go to school" → "Dr. Seuss"); "" when none is."""
    q = " ".join(stem(w) for w in words(fold(task)) if w not in STOPWORDS)
    best = ""
    for d in reading.docs:
        tw = [stem(w) for w in words(fold(title_subject(d.title))) if w not in STOPWORDS and len(w) > 1]
        if tw and f" {' '.join(tw)} " in f" {q} " and len(" ".join(tw)) > len(best):
            best = title_subject(d.title)
    return best


def candidates(
    kind: str, sentence: Sentence, doc: Doc, exclude: frozenset[str], subject: frozenset[str] = frozenset()
) -> list[str]:
    """The values of ``kind`` the sentence offers: none made only of ``exclude``d words (the question's, the
    subject's), none holding all the ``subject``'s words (its own full name: "Jonathan Douglass Reid")."""
    text = sentence.text
    if kind == "date":
        found = [m.group(0) for m in DATE_PHRASE.finditer(text)]
    elif kind == "number":
        found = [m.group(0) for m in NUMBER_PHRASE.finditer(text)]
    elif kind == "category":
        m = DEFINING.search(text)
        if not m:
            return []
        rest = text[m.end() :].strip()
        cut = _PHRASE_END.search(rest)
        found = [(rest[: cut.start()] if cut else rest[:60]).strip()]
    elif kind == "yesno":
        return []
    elif kind == "any":  # how / why: the answer is an explanation, and the page that gives it is its value
        found = [title_subject(doc.title)] if doc.title else []
    else:
        found = [n for n, k in sentence.names if _fits(kind, k, n)]
        if doc.title:
            found.append(title_subject(doc.title))
    out = []
    for f in found:
        key = frozenset(terms(f))
        if f and key and not key <= exclude and not (subject and subject <= key):
            out.append(f)
    return list(dict.fromkeys(out))


def _fits(kind: str, entity_kind: str, name: str) -> bool:
    if any(c.isdigit() for c in name) or name.split()[0].lower() in _MONTHS:
        return kind in ("name", "any") and entity_kind == "identifier"  # "October 24" is a date, not a place
    if kind == "person":
        return entity_kind in ("person", "organisation") or (entity_kind == "other" and " " in name)
    if entity_kind == "identifier":
        return kind in ("name", "any")
    return entity_kind in ("other", "organisation", "person")


def typed(reading: Reading, value: str, kind: str, focus: str | None) -> float:
    """+1 when what the value is — said by its own page or the gazetteer (``places``) — is the slot's focus noun or
    a noun of its kind, -1 when it is a noun of another kind, else 0."""
    page = reading.own_page(value)
    types = set(page.types) if page is not None else set()
    types |= place_types(value)
    if not types:
        return 0.0
    if focus and stem(focus) in types:
        return 1.0
    kinds = {k for k, nouns in KIND_STEMS.items() if types & nouns}
    if kind in kinds:
        return 1.0
    return -1.0 if kinds and kind in KIND_STEMS else 0.0


@dataclass
class Scored:
    probability: float
    sentence: Sentence
    value: str | None
    features: dict[str, float]


class SlotScorer:
    """Scores every sentence of a reading as the filler of one slot (module docstring)."""

    def __init__(self, task: str, slot: dict, subject: str, anchors: list[str], reading: Reading):
        self.reading = reading
        self.slot = slot
        self.subject = subject
        self.anchors = [a for a in anchors if a]
        self.kind = slot.get("kind") or "any"
        self.focus = slot.get("focus")
        subject_stems = {stem(w) for w in words(subject.replace(" | ", " "))}
        self.relation = {stem(w) for w in slot.get("relation") or []} - subject_stems
        if self.focus:
            self.relation.add(stem(self.focus))
        self.other = set(stems(task)) - self.relation - subject_stems
        self.task = set(stems(task))
        # each share is over a few stems: their rarity weights are looked up once per slot, not once per sentence
        self._rel, self._other, self._task = (Weighted(reading, x) for x in (self.relation, self.other, self.task))
        self._focus_stem = stem(self.focus) if self.focus else None
        self.exclude = frozenset(terms(task)) | frozenset(terms(subject.replace(" | ", " ")))
        self.subject_terms = frozenset(terms(subject)) if subject and " | " not in subject else frozenset()

    def features(self, s: Sentence) -> tuple[dict[str, float], str | None]:
        r, d = self.reading, self.reading.docs[s.doc]
        cands = candidates(self.kind, s, d, self.exclude, self.subject_terms)
        value, page = None, 0.0
        if cands:
            scored = [(typed(r, c, self.kind, self.focus), -self._distance(s, c), -i, c) for i, c in enumerate(cands)]
            page, _, _, value = max(scored)
        head = s.stems | d.title_stems
        f = {
            "relation": self._rel.share(head),
            "relation_doc": self._rel.share(d.stems),
            "subject": self.mentions(s) if self.subject else 0.0,
            "question": max((mention(a, s, d, r.common) for a in self.anchors), default=0.0),
            "other": self._other.share(d.stems),
            "typed": 1.0 if cands else 0.0,
            "typed_page": page,
            "lead": 1.0 if s.order == 0 else 0.0,
            "rank": 1.0 / (1 + s.doc),
        }
        own = head | r.lead_stems.get(s.doc, frozenset()) if s.order > 0 else head
        f["task"] = self._task.share(own)
        linked = f["task"]
        for name in [title_subject(d.title)] + [n for n, _ in s.names]:
            for p in r.mentioning(name):
                if p != s.doc:
                    linked = max(linked, self._task.share(own, r.docs[p].stems))
        f["linked"] = linked
        f["focus"] = 1.0 if self._focus_stem and self._focus_stem in own else 0.0
        return f, value

    def _distance(self, s: Sentence, value: str) -> int:
        """Words between the value and the nearest relation word in the sentence (a large number when none)."""
        toks = s.tokens()
        vt = [stem(w) for w in words(value)]
        at = [i for i in range(len(toks)) if toks[i : i + len(vt)] == vt]
        rel = [i for i, t in enumerate(toks) if t in self.relation]
        if not at or not rel:
            return 99
        return min(abs(a - b) for a in at for b in rel)

    def score(self, s: Sentence, weights: dict[str, float] = WEIGHTS) -> Scored:
        """The sentence's score (``probability`` holds the linear score until ``ranked`` normalises it)."""
        f, value = self.features(s)
        return Scored(math.fsum(weights.get(k, 0.0) * v for k, v in f.items()), s, value, f)

    def pool(self, restrict: bool = True) -> list[Sentence]:
        """The sentences that may fill the slot: with ``restrict`` and a subject, only those about the subject (a
        hop follows its subject: none about it, no value); else all."""
        if not self.subject or not restrict:
            return self.reading.sentences
        return [s for s in self.reading.sentences if self.mentions(s)]

    def mentions(self, s: Sentence) -> float:
        d = self.reading.docs[s.doc]
        return max((mention(part, s, d, self.reading.common) for part in self.subject.split(" | ")), default=0.0)

    def ranked(self, weights: dict[str, float] = WEIGHTS, restrict: bool = True) -> list[Scored]:
        """The pool's sentences, best first, each with its softmax probability among them."""
        out = [self.score(s, weights) for s in self.pool(restrict)]
        if out:
            top = max(x.probability for x in out)
            exp = [math.exp(x.probability - top) for x in out]
            total = math.fsum(exp)
            for x, e in zip(out, exp):
                x.probability = e / total
        return sorted(out, key=lambda x: (-x.probability, x.sentence.doc, x.sentence.order))


def anchors_of(chain: Mapping[str, Any]) -> list[str]:
    return [
        part
        for s in chain["slots"]
        if s.get("subject") and s["subject"][0] not in "#@"
        for part in s["subject"].split(" | ")
    ]


def fill_option(slot: dict, option: str, reading: Reading) -> None:
    """A compared alternative's slot: filled by its own page (a retrieved document titled with it), the first
    sentence of which says what it is; else by the first sentence naming it."""
    page = reading.own_page(option)
    if page is None:
        for d in reading.docs:  # "The Boatniks" is titled "The Boatniks (film)"; an option may drop "The"
            if d.subject and (d.subject.endswith(fold(option).lower()) or fold(option).lower().endswith(d.subject)):
                page = d
                break
    first = None
    if page is not None:
        i = reading.docs.index(page)
        first = next((x for x in reading.sentences if x.doc == i), None)
    else:
        first = next((x for x in reading.sentences if _named(option, x)), None)
    if first is None:
        slot.update(value=None, p=0.0, support=None, page=False)
        return
    d = reading.docs[first.doc]
    slot.update(
        value=page.title if page is not None else option,
        p=1.0 if page is not None else 0.5,
        support={"n": d.n, "url": d.url, "title": d.title, "sentence": first.text[:400]},
        page=page is not None,
    )


def keep_model(slot: dict, reading: Reading) -> bool:
    """Whether a value the chat model gave (``_chain_model.model_fill``) is still held by a retrieved sentence; its
    support and page are brought up to date with this reading."""
    value = fold(slot["value"]).lower()
    sentence = next((x for x in reading.sentences if value in x.folded.lower()), None)
    if sentence is None:
        return False
    d = reading.docs[sentence.doc]
    slot["support"] = {"n": d.n, "url": d.url, "title": d.title, "sentence": sentence.text[:400]}
    slot["page"] = reading.own_page(slot["value"]) is not None
    return True


def fill_chains(
    task: str, chains: Sequence[Mapping[str, Any]], reading: Reading, weights: dict[str, float] = WEIGHTS
) -> list[dict]:
    """The chains with every slot's current value, support and status (a new list; ``history`` extended)."""
    out: list[dict] = []
    anchors = [a for c in chains for a in anchors_of(c)]
    for chain in chains:
        slots = []
        values: dict[int, str] = {}
        for slot in chain["slots"]:
            slot = dict(slot)
            subject = slot.get("subject") or ""
            if subject.startswith("#"):
                subject = values.get(int(subject[1:]), "")
            elif subject.startswith("@"):  # the answer of an earlier sub-question
                k = int(subject[1:]) - 1
                subject = (out[k]["slots"][-1].get("value") or "") if 0 <= k < len(out) else ""
            elif not subject:
                subject = link_subject(task, reading)
            slot["resolved"] = subject
            if slot.get("by") == "model" and slot.get("value") and keep_model(slot, reading):
                history = list(slot.get("history") or [])  # the model's value stands while a passage still holds it
                slot["stable"] = bool(history) and history[-1] == slot["value"]
                slot["history"] = history + [slot["value"]]
                values[slot["n"]] = slot["value"]
                slots.append(slot)
                continue
            if chain.get("compare"):
                fill_option(slot, subject, reading)
                history = list(slot.get("history") or [])
                slot["stable"] = bool(slot["value"]) and bool(history) and history[-1] == slot["value"]
                slot["history"] = history + [slot["value"]]
                slots.append(slot)
                continue
            last = slot is chain["slots"][-1]
            ranked = SlotScorer(task, slot, subject, anchors, reading).ranked(weights, restrict=not last)
            top = ranked[0] if ranked else None
            history = list(slot.get("history") or [])
            if top is not None and top.value and top.probability >= FILL_P:
                d = reading.docs[top.sentence.doc]
                slot.update(
                    value=top.value,
                    p=round(top.probability, 3),
                    support={"n": d.n, "url": d.url, "title": d.title, "sentence": top.sentence.text[:400]},
                )
                values[slot["n"]] = top.value
                slot["page"] = reading.own_page(top.value) is not None
                slot["fits"] = fits(slot, subject, top, reading)
            else:
                slot.update(value=None, p=round(top.probability, 3) if top else 0.0, support=None, fits=0.0)
            slot["stable"] = bool(slot["value"]) and bool(history) and history[-1] == slot["value"]
            slot["history"] = history + [slot["value"]]
            slots.append(slot)
        out.append({**chain, "slots": slots})
    return out


def result_texts(source, results: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """url -> whole text of the results a source holds locally (``documents``); {} for a web source."""
    documents = getattr(source, "documents", None)
    if documents is None or not results:
        return {}
    try:
        by_id = documents([r["id"] for r in results if r.get("id")])
    except Exception:  # a damaged index: the snippets stand in (the search itself records what failed)
        return {}
    return {r["url"]: by_id[r["id"]] for r in results if r.get("id") in by_id}


def first_open(chains: Sequence[Mapping[str, Any]]) -> tuple[int, Mapping[str, Any]] | None:
    """(chain index, slot) of the first slot not filled, in chain order; None when every slot is."""
    for i, chain in enumerate(chains):
        for slot in chain["slots"]:
            if not slot.get("value"):
                return i, slot
    return None


def fits(slot: Mapping[str, Any], subject: str, top: Scored, reading: Reading) -> float:
    """Whether the value is of the kind the slot asks: -1 when what its own page (or the gazetteer) says it is
    belongs to another kind (``typed``), or when it only restates what the subject itself is — the noun its own
    page defines it by ("Breakfast is the first *meal* of the day": "meal" does not say what was eaten; a
    question asking what something is, kind ``category``, is answered by exactly that); +1 when its page says it
    is of the kind; 0 when nothing says."""
    typed_page = float(top.features.get("typed_page", 0.0))
    if typed_page < 0 or slot.get("kind") in ("category", "any", "yesno"):
        return typed_page
    page = reading.own_page(subject) if subject and " | " not in subject else None
    value = {stem(w) for w in words(str(top.value or "")) if w.lower() not in STOPWORDS}
    if page is not None and value and value <= set(page.types):
        return -1.0
    return typed_page


def complete(chains: Sequence[Mapping[str, Any]]) -> bool:
    """Every slot of every chain filled and stable (the same value two fills running), of the kind asked (no
    value ``fits`` -1), and each chain's answer supported by a source about it: the last slot's value has its own
    page among the results (a comparison: every alternative has). A bridge is supported by the next slot, filled
    from sentences about it."""
    if not chains:
        return False
    for c in chains:
        slots = c["slots"]
        if not all(s.get("value") and s.get("stable") and s.get("fits", 0.0) >= 0 for s in slots):
            return False
        if not all(s.get("page") for s in (slots if c.get("compare") else slots[-1:])):
            return False
    return True


def slot_words(slot: Mapping[str, Any]) -> str:
    """A slot as a query: its resolved subject and its relation words (with its focus noun)."""
    subject = (slot.get("resolved") or "").replace(" | ", " ")
    rel = [w for w in slot.get("relation") or [] if w.lower() not in subject.lower().split()]
    focus = slot.get("focus")
    if focus and focus not in rel and focus.lower() not in subject.lower():
        rel = [focus, *rel]
    return " ".join([subject, *rel]).strip()


def slot_query(chains: Sequence[Mapping[str, Any]], earlier: list[str]) -> tuple[str, str] | None:
    """(query, planner) for the first open slot whose subject is known; None when there is nothing new to ask.

    The query names the slot's subject (the bridge found so far) and its relation words: "Zimbabwe waterfall",
    not the most frequent names of the accepted results. When every slot holds a value, the first one not yet
    stable — or, for an answer, not yet supported by its own page — is asked with its value ("Victoria Falls
    Zimbabwe waterfall"): the round confirms it or brings what replaces it. A query asked before is not asked
    again (None: the caller's fallback plans the round)."""
    seen = {q.strip().lower() for q in earlier}
    found = first_open(chains)
    if found is not None:
        i, slot = found
        q = slot_words(slot) if slot.get("resolved") else ""
        if q and q.lower() not in seen:
            return q, f"slot {i + 1}.{slot['n']}"
        return None
    for i, chain in enumerate(chains):  # all filled: confirm the first value not yet stable or supported
        for k, slot in enumerate(chain["slots"]):
            last = k == len(chain["slots"]) - 1 or chain.get("compare")
            if slot.get("stable") and (slot.get("page") or not last):
                continue
            value = slot.get("value") or ""
            words_ = slot_words(slot)
            q = f"{value} {words_}".strip() if value.lower() not in words_.lower() else words_
            if q and q.lower() not in seen:
                return q, f"slot {i + 1}.{slot['n']} (confirm)"
            return None
    return None


KIND_WORDS = {  # a slot's kind as a person says what is wanted
    "person": "a person",
    "place": "a place",
    "organisation": "an organisation",
    "work": "a work",
    "date": "a date",
    "number": "a number",
    "name": "a name",
    "category": "what it is",
    "yesno": "yes or no",
    "any": "an explanation",
}
ASK_CHARS = 60  # a sub-question shown as what a slot asks is cut to this


def slot_asks(chain: Mapping[str, Any], slot: Mapping[str, Any], i: int) -> str:
    """What a slot asks, in the question's own words and with the kind of answer wanted: a one-slot sub-question is
    itself ("What is the speed of light (a number)"); a hop of a longer chain is its head noun (or its relation
    words) and its subject ("country of Bubye River (a place)"; a bridge's subject the slot it hangs on, "[1.1]");
    a compared alternative is its name and the sub-question's. Shown by the progress line, ``show``, the report
    and the stop reason."""
    kind = KIND_WORDS.get(str(slot.get("kind") or "any"), "an answer")
    subject = str(slot.get("resolved") or slot.get("subject") or "")  # a bridge: the value it resolved to
    if subject[:1] in ("#", "@"):
        subject = f"[{i + 1}.{subject[1:]}]" if subject[0] == "#" else f"the answer to [{subject[1:]}]"
    subject = subject.replace(" | ", " and ")
    if chain.get("compare"):
        return f"{subject}: {clip(str(chain.get('ask') or ''), ASK_CHARS)} ({kind})"
    if len(chain["slots"]) == 1:
        return f"{clip(str(chain.get('ask') or slot.get('ask') or ''), ASK_CHARS)} ({kind})"
    relation = [str(w) for w in slot.get("relation") or []]
    focus = slot.get("focus")
    noun = bool(focus) and str(focus).lower() in (w.lower() for w in relation)
    head = str(focus) if noun else " ".join(relation[:3])
    wanted = "" if noun and slot.get("kind") == "name" else f" ({kind})"  # "waterfall" says more than "a name"
    return f"{head or 'what'} of {subject or 'the question'}{wanted}"


def describe(chains: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The chains' slots in a round record: what each asks (``asks``, in the question's words), its value,
    probability, status, and ``fits``: -1 when the value is not of the kind asked (``fill_chains``)."""
    out = []
    for i, chain in enumerate(chains):
        for s in chain["slots"]:
            status = "stable" if s.get("stable") else "filled" if s.get("value") else "open"
            out.append(
                {
                    "slot": f"{i + 1}.{s['n']}",
                    "asks": slot_asks(chain, s, i),
                    # the progress line's shorter form: a one-slot question is on the line already, its kind is not
                    "brief": (
                        KIND_WORDS.get(str(s.get("kind") or "any"), "an answer")
                        if len(chain["slots"]) == 1 and not chain.get("compare")
                        else slot_asks(chain, s, i)
                    ),
                    "fits": s.get("fits", 0.0),
                    "kind": s.get("kind", ""),
                    "focus": s.get("focus"),
                    "subject": s.get("resolved") or s.get("subject") or "",
                    "value": s.get("value"),
                    "p": s.get("p"),
                    "status": status,
                    "source": (s.get("support") or {}).get("url"),
                    "page": bool(s.get("page")),
                }
            )
    return out


YES_SHARE = 2 / 3  # an alternative has the asked property when its page's opening says this share of its words
_SAME = re.compile(r"\bsame\b", re.I)
_DIFFERENT = re.compile(r"\bdifferent\b", re.I)
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})\b")
_FILLER = frozenset(stem(w) for w in "both same different also either neither considered common share".split())


def _opening(reading: Reading, slot: dict) -> tuple[frozenset[str], str] | None:
    """(stems, text) of the first sentences of a compared alternative's own page; None without the page."""
    if not slot.get("page") or not slot.get("support"):
        return None
    i = next((k for k, d in enumerate(reading.docs) if d.url == slot["support"]["url"]), None)
    if i is None:
        return None
    sents = [x for x in reading.sentences if x.doc == i][:LEAD_SENTENCES]
    have = frozenset().union(*(x.stems for x in sents)) | reading.docs[i].title_stems
    return have, " ".join(x.text for x in sents)


def yes_no(task: str, chain: Mapping[str, Any], reading: Reading) -> bool | None:
    """The answer to a yes/no comparison ("Are A and B both P?", "… the same Y?", "… different Y?") from its
    alternatives' own pages, None when it is no yes/no comparison.

    "Both P": yes unless an alternative's page is in hand and its opening sentences say less than ``YES_SHARE``
    of P's words (no page, no evidence against: yes). "Same"/"different": the alternatives' openings share a
    year (when the question asks about years) or a capitalised word the question does not use; without both
    pages, "same" is not shown (no) and "different" is not refuted (yes)."""
    if chain.get("compare") != "yesno" or len(chain.get("slots") or []) != 2:
        return None
    openings = [_opening(reading, s) for s in chain["slots"]]
    same, different = bool(_SAME.search(task)), bool(_DIFFERENT.search(task))
    if same or different:
        pages = [o for o in openings if o is not None]
        if len(pages) < len(openings):
            return different
        if "year" in task.lower():
            shared = bool(set(_YEAR.findall(pages[0][1])) & set(_YEAR.findall(pages[1][1])))
        else:
            asked = {w.lower() for w in words(task)}
            caps = [{w.lower() for w in re.findall(r"\b[A-Z][a-z]+\b", o[1])} - asked for o in pages]
            shared = bool(caps[0] & caps[1])
        return shared if same else not shared
    options = set().union(*(stems(s.get("subject") or "") for s in chain["slots"]))
    predicate = set(stems(task)) - options - _FILLER
    if not predicate:
        return None
    for o in openings:
        if o is not None and len(predicate & o[0]) < YES_SHARE * len(predicate):
            return False
    return True


def short_answer(task: str, chains: Sequence[Mapping[str, Any]], reading: Reading) -> str:
    """The answer itself, in a few words: the last slot's value of each chain (a yes/no comparison's verdict);
    "" when a chain's last slot is open."""
    parts = []
    for chain in chains:
        verdict = yes_no(task, chain, reading)
        if verdict is not None:
            parts.append("yes" if verdict else "no")
        elif not chain.get("compare") and chain["slots"] and chain["slots"][-1].get("value"):
            parts.append(chain["slots"][-1]["value"])
    return "; ".join(parts)
