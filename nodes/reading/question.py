"""What a question asks: its words as light stems, its sentences, its answer type, focus and alternatives.

Used by the extractive answer (``reading.extractive``); see its docstring for how each is used.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from saturate.nodes.reading.entities import extract_entities
from saturate.state.text import STOPWORDS, paragraph_sentences, paragraphs, words

_ACCENTS = re.compile(r"[\u0300-\u036f]")
RANKED = re.compile(
    r"\b(second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))[-\s](\w+est)\b", re.I
)
_ABBREVIATION_END = re.compile(
    r"(?:\b[A-Za-z]|\b(?:Jr|Sr|St|Mr|Mrs|Ms|Dr|Co|Inc|Ltd|No|Mt|Ft|Gen|Col|Lt|Capt|Rev|Sen|Gov|Prof|vs|U\.S|U\.K))\.$"
)


# derivational endings, stripped when 5+ letters remain: investigation/investigative, founder/founded
_DERIVATIONAL = tuple("ational ation ative ition ion ive ment ness ity ical ally ly er or".split())


_POSSESSIVE_END = re.compile(r"['’]s?$")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light stem: accents, a possessive 's, plural -s/-es/-ies, -ing, -ed and a final e go, so
    flows/flowing/flowed and invade/invaded meet; numbers stay as they are.

    Cached: the extractive answer stems the same words of every source sentence again and again."""
    w = _ACCENTS.sub("", unicodedata.normalize("NFKD", word.lower()))
    w = _POSSESSIVE_END.sub("", w)
    if w.isdigit() or len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    for suffix in _DERIVATIONAL:
        if w.endswith(suffix) and len(w) - len(suffix) >= 5:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=65536)
def stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text`` (stopwords and 1-letter words dropped; "fourth-longest" one word)."""
    text = RANKED.sub(r"\1\2", text or "")
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))


def split_sentences(text: str) -> list[str]:
    """``state.text.sentences``, with the pieces a split after an abbreviation or initial ("Co.", "J.") or
    before a parenthesis ("(born 1957) is ...") joined back to the sentence they belong to — within a paragraph:
    a snippet ending "… as 8,848.86 m." and the page's heading "Mount Everest" after a blank line are two."""
    out: list[str] = []
    for para in paragraphs(text):
        start = len(out)
        for s in paragraph_sentences(para):  # a paragraph is split once
            if len(out) > start and (s[0] == "(" or _ABBREVIATION_END.search(out[-1])):
                out[-1] = f"{out[-1]} {s}"
            else:
                out.append(s)
    return out


def specific_stems(task: str) -> frozenset[str]:
    """Stems of the task's names and numbers: capitalised words after its first word, words with digits."""
    found = [
        w
        for i, w in enumerate(re.findall(r"[^\W_]+(?:['’][^\W_]+)?", task))
        if (i and w[0].isupper()) or any(c.isdigit() for c in w)
    ]
    return frozenset(stem(w) for w in found)


def title_subject(title: str) -> str:
    """A title without its trailing parenthesis: "Cascade Falls (Kettle River)" → "Cascade Falls"."""
    return re.sub(r"\s*\(.*\)\s*$", "", title or "").strip()


@functools.lru_cache(maxsize=65536)
def _whole_words(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def name_in(name: str, low_text: str) -> bool:
    """Whether the lower-cased ``name`` occurs in ``low_text`` as whole words.

    A plain substring test first (most names are not in most texts), then the whole-word pattern, compiled
    once per name: the extractive answer asks this for every name of every sentence against every source, more
    distinct names than ``re``'s own cache of 512 patterns holds."""
    return name in low_text and _whole_words(name).search(low_text) is not None


# --- what the question asks for ------------------------------------------------------------------------------

_AUX = frozenset("is are was were do does did can could has have had will would should shall may might".split())
_TYPE_CUES = (  # (pattern, type); the earliest match in the question wins, then the first listed
    (r"\bhow (?:many|much|long|old|tall|far|big|large|high|deep|wide|heavy|often)\b", "number"),
    (r"\b(?:what|which) (?:percentage|number|amount|proportion|population)\b|\bpopulation\b", "number"),
    (r"\bwhen\b|\b(?:what|which) (?:year|date|day|month|century|decade|time|era|period)\b", "date"),
    (r"\b(?:who|whom|whose)\b", "person"),
    (
        r"\bwhere\b|\b(?:what|which) (?:city|country|state|town|county|continent|region|province|place|location"
        r"|island|nation|village|area|district)\b",
        "place",
    ),
    (
        r"\b(?:what|which) (?:profession|occupation|job|career|nationality|genre|kind|type|sort|form|field"
        r"|position|role|language|religion|sport|instrument|class|style|distinction|achievement)s?\b",
        "category",
    ),
    (r"\b(?:what|which)\b", "name"),
)
YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
MONTHS = "january february march april may june july august september october november december".split()
DATE = re.compile(rf"\b(?:1\d{{3}}|20\d{{2}}|{'|'.join(MONTHS)})\b|\b\d+(?:st|nd|rd|th) century\b", re.I)
NUMBER = re.compile(
    r"\b\d[\d,.]*\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|billion)\b",
    re.I,
)
DEFINING = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the)\b")
EARLIER = re.compile(r"\b(?:older|oldest|first|earlier|earliest|before|sooner)\b", re.I)
LATER = re.compile(r"\b(?:younger|youngest|later|latest|last|newer|newest|more recent|most recent)\b", re.I)
_COMMON = re.compile(r"\b(?:both|common|share|shared|same|each)\b", re.I)
SAME = re.compile(r"\bsame\b", re.I)
DIFFERENT = re.compile(r"\bdifferent\b", re.I)
FILLER = frozenset(stem(w) for w in "both same different also either neither considered common share".split())


@dataclass(frozen=True)
class Question:
    kind: str  # number | date | person | place | category | name | any: what the answer is (rule 3)
    focus: str | None = None  # stem of the first content word after the question word
    form: str = ""  # choice ("A or B") | yesno | common ("both A and B ...") | "": rule 5
    options: tuple[str, ...] = ()  # the named alternatives of a choice, yes/no or common question


def question_names(task: str) -> list[str]:
    """Capitalised names of the task (``reading.entities``) and quoted titles, longest first."""
    found = [e.name for e in extract_entities(task) if e.kind != "quantity"]
    found += [q.strip() for q in re.findall(r"[\"“]([^\"”]{2,60})[\"”]", task)]
    return sorted(dict.fromkeys(found), key=len, reverse=True)


def _clean_option(text: str) -> str:
    return re.sub(r"^(?:the|both|either)\s+", "", text.strip(" \"“”'?.,:;"), flags=re.I).strip(" \"“”'")


def _options(task: str, sep: str) -> tuple[str, ...]:
    """The two alternatives joined by ``sep`` ("or" / "and"): the text after the last comma ("..., A or B?"),
    "between A and B", else the task's names right before and after ``sep``."""
    text = " ".join(task.split())
    tail = re.search(rf"[,:]\s*([^,:]+?)\s+{sep}\s+([^,:]+?)\s*\??\s*$", text)
    between = re.search(rf"\bbetween\s+(.+?)\s+{sep}\s+(.+?)(?:,|\s+(?:which|who|what)\b|\?|$)", text, re.I)
    for m in (tail, between):
        if m:
            pair = tuple(_clean_option(g) for g in m.groups())
            if all(pair) and all(len(o) <= 60 and o[0].isupper() for o in pair):
                return pair
    names = question_names(text)
    low = text.lower()
    for m in re.finditer(rf"\s{sep}\s", low):
        before = re.sub(r"^(?:the|both)\s+", "", low[: m.start()].rstrip(' ,?"”'))
        after = re.sub(r"^(?:the|both)\s+", "", low[m.end() :].lstrip(' "“'))
        left = [n for n in names if before.endswith(n.lower())]
        right = [n for n in names if after.startswith(n.lower())]
        if left and right:
            return (left[0], right[0])
    return ()


_RELATIVE = frozenset("who whom whose which when where".split())


def _relative(low: str, start: int, end: int) -> bool:
    """Whether the question word at ``low[start:end]`` is a relative pronoun: "the state where ...",
    "the person who ...", "the city in which ..." (after a noun, or a noun and a preposition), unless the
    question ends with it ("... was started when?")."""
    word = low[start:end].split(" ", 1)[0]
    if word not in _RELATIVE or not low[end:].strip():
        return False
    before = low[:start].split()
    if (
        before
        and before[-1] in ("in", "at", "on", "of", "for", "by", "from", "to", "with", "during")
        and len(before) > 1
    ):
        before = before[:-1]
    return bool(before) and before[-1] not in STOPWORDS and before[-1] not in _AUX


def _focus(after: Sequence[str]) -> str | None:
    """The question's focus word: the last of the first run of content words after the question word, up to a
    stopword, an adverb (-ly) or a past participle (-ed): "the usual average snowfall in" → snowfall."""
    run: list[str] = []
    for w in after:
        content = w not in STOPWORDS and len(w) > 1 and not (w.endswith(("ly", "ed")) and not w.endswith("eed"))
        if run and not content:
            break
        if content:
            run.append(w)
    return stem(run[-1]) if run else None


def question_of(task: str) -> Question:
    """The answer type, focus word, form and alternatives of a task (rules 3 and 5)."""
    low = " ".join(re.findall(r"[a-z0-9']+", task.lower()))
    first = low.split(" ", 1)[0] if low else ""
    best: tuple[int, str, int] | None = None
    for pattern, kind in _TYPE_CUES:
        for m in re.finditer(pattern, low):
            if _relative(low, m.start(), m.end()):
                continue
            if best is None or m.start() < best[0]:
                best = (m.start(), kind, m.end())
            break
    kind, focus = "any", None
    if best is not None:
        kind = best[1]
        focus = _focus(low[best[2] :].split())
    choice = _options(task, "or")
    if choice and (best is not None or first in _AUX):
        return Question(kind, None, "choice", choice)
    between = re.search(r"\bbetween\b", low) and _options(task, "and")
    if between and best is not None:
        return Question(kind, None, "choice", between)
    if first in _AUX:
        return Question("any", None, "yesno", _options(task, "and"))
    if best is not None and _COMMON.search(task):
        pair = _options(task, "and")
        if pair:
            return Question(kind, focus, "common", pair)
    return Question(kind, focus)
