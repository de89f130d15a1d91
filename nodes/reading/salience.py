"""Which results are on topic, and which names in them are worth searching next.

One implementation, shared by the single loop (gap queries), the multi-source
loops (their heuristic next query and the gaps shown to the model), the
breadcrumbs and the Key actors:

- **relevance** of a result to the task: ``0.1 +`` the task terms it contains,
  each weighted by its rarity among the results (idf) and doubled for the
  task's own names and numbers (``NAME_BOOST``: "Africa" in "the longest river
  in Africa" is the constraint, "flows" is not), scaled by the share of the
  task's names it contains whole ((1 + names found) / (1 + names): "Bubye River"
  needs both words), a little less
  further down the list (``POSITION_DECAY``);
- **on topic**: relevance at least ``ON_TOPIC`` of the best result's;
- **names**: capitalised phrases (``reading.entities.NAME_PHRASE``) and long numbers
  (years, ids). A one-word name the results also use as a lower-case word
  ("Good", "List") is no name.

A gap query adds to the task the ``GAP_NAMES`` most salient names of the on-topic
accepted results (the drift guard: a name found only in off-topic results is
noise, and past a result's title and first sentence a name counts only in a
sentence that shares a task term), dates and number-only names last. Languages, demonyms and generic
qualifiers alone ("Greek", "North American English", "Central") are not names
unless the task uses them.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from saturate.nodes.reading.entities import GENERIC_NAME_WORDS, NAME_PHRASE
from saturate.state.text import STOPWORDS, scrub_urls, term_set, terms, words

ON_TOPIC = 0.5  # a result is on topic with relevance >= this share of the best result's
POSITION_DECAY = 0.1  # relevance / (1 + decay x position in the list)
NAME_BOOST = 2.0  # a task term that is one of the task's names or numbers weighs this much more
NAME_SHARE_POWER = 1.5  # relevance x (share of the task's names found) ** this: a result missing them drops far
GAP_NAMES = 2  # names a gap query adds to the task
FALLBACK_SUFFIXES = ("background", "history", "details", "overview", "facts", "context", "sources")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'-]+\b")
_LONG_NUMBER = re.compile(r"\b\d{4,}\b")
_SENTENCE_END = re.compile(r"[.!?]\s+")
_TASK_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def result_text(result: Mapping[str, Any]) -> str:
    return f"{result.get('title', '')}. {result.get('snippet', '')}"


def task_names(task: str) -> list[frozenset[str]]:
    """The task's names (capitalised phrases after its first word) and numbers, each as its set of terms."""
    names = []
    for m in NAME_PHRASE.finditer(task or ""):
        if m.start() == 0:  # the question word ("What", "Who") or a sentence start
            rest = m.group(0).split(None, 1)
            if len(rest) < 2:
                continue
            phrase = rest[1]
        else:
            phrase = m.group(0)
        ts = frozenset(terms(phrase))
        if ts:
            names.append(ts)
    names += [frozenset({n}) for n in re.findall(r"\b\d+\b", task or "")]
    return names


@dataclass(frozen=True)
class TaskTerms:
    """What relevance needs from a task: its content terms, its names (each a set of terms) and their terms."""

    terms: frozenset[str]
    names: tuple[frozenset[str], ...]
    name_terms: frozenset[str]

    def hits(self, ts: frozenset[str]) -> tuple[frozenset[str], int]:
        """A result's share of the task, from its term set: (the task terms it has, the task names it has whole)."""
        return self.terms & ts, sum(1 for name in self.names if name <= ts)

    def idf(self, n: int, df: dict[str, int]) -> dict[str, float]:
        """Rarity weight of each task term found among ``n`` results (``df``: in how many), names doubled."""
        return {t: math.log(1 + n / df[t]) * (NAME_BOOST if t in self.name_terms else 1.0) for t in self.terms if df[t]}

    def weight(self, hits: frozenset[str], found: int, idf: dict[str, float], decay: float, pos: int) -> float:
        """One result's relevance from its ``hits`` (see ``relevance_weights``)."""
        return (
            (0.1 + sum(idf.get(t, 0.0) for t in hits))
            * ((1 + found) / (1 + len(self.names))) ** NAME_SHARE_POWER
            / (1 + decay * pos)
        )


@functools.lru_cache(maxsize=1024)
def task_terms_of(task: str) -> TaskTerms:
    names = tuple(task_names(task))
    return TaskTerms(term_set(task), names, frozenset().union(*names) if names else frozenset())


def relevance_weights(task: str, results: Sequence[Mapping[str, Any]], decay: float = POSITION_DECAY) -> list[float]:
    """Task relevance of each result, in order (see the module docstring); ``decay`` 0: no position discount."""
    tt = task_terms_of(task)
    tsets = [term_set(result_text(r)) for r in results]
    df = {t: sum(1 for ts in tsets if t in ts) for t in tt.terms}
    idf = tt.idf(len(results), df)
    return [tt.weight(*tt.hits(ts), idf, decay, pos) for pos, ts in enumerate(tsets)]


def relative_relevance(
    task: str, accepted: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[float]:
    """Each new result's relevance relative to the most relevant accepted one (capped at 1; 1 while nothing is
    accepted), all scored together, without the position discount."""
    weights = relevance_weights(task, [*accepted, *new], decay=0.0)
    best = max(weights[: len(accepted)], default=0.0)
    return [min(1.0, w / best) if best > 0 else 1.0 for w in weights[len(accepted) :]]


def on_topic_floor(weights: list[float]) -> float:
    """The relevance a result needs to count as on topic."""
    return ON_TOPIC * max(weights, default=0.0)


def common_words(results: Sequence[Mapping[str, Any]]) -> set[str]:
    """Words the results also use in lower case: a capitalised one-word "name" among them ("Good", "List",
    "Games") is a sentence start or a title fragment, not a name."""
    return set(_LOWER_WORD.findall(" ".join(result_text(r) for r in results)))


# counting words: a capitalised one ("Eight" in a title) is a quantity, never a name to follow
COUNTING_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion first
    second third fourth fifth sixth seventh eighth ninth tenth""".split()
)


def is_name(entity, common: set[str]) -> bool:
    """A name worth following: not a one-word "other" the results also write in lower case (``common_words``), not
    a single letter ("P"), not a counting word ("Eight")."""
    name = entity.name.strip()
    if len(name.replace(".", "")) < 2 or name.lower() in COUNTING_WORDS:
        return False
    return not (entity.kind == "other" and " " not in name and name.lower() in common)


def _salient_term(term: str) -> bool:
    """Short numbers (list positions, counts) and ordinals are not names; years and longer ids are."""
    return not ((term.isdigit() and len(term) < 4) or re.fullmatch(r"\d+(?:st|nd|rd|th)", term))


def generic_name(phrase: str, task_words: set[str]) -> bool:
    """A phrase made only of languages, demonyms and generic qualifiers the task does not use."""
    ws = [w for w in words(phrase) if w not in STOPWORDS]
    return bool(ws) and all(w in GENERIC_NAME_WORDS and w not in task_words for w in ws)


def salient_phrases(
    task: str, results: Sequence[Mapping[str, Any]], used_terms: AbstractSet[str], min_sources: int = 1
) -> list[str]:
    """Names in on-topic accepted results the task does not name yet, most salient first (numbers last).

    A name scores by the relevance of the result it appears in, a little less
    further down that result (the best score of a name wins). Only on-topic
    results count (the drift guard). Skipped: names whose content terms are all
    in the task or earlier queries, names that are the title of an accepted
    result (that page is in hand; searching its name again finds it again),
    generic names (``generic_name``) and links (``scrub_urls``: a page's text never picks a site to search for).
    """
    task_terms = term_set(task)
    task_words = set(words(task))
    texts = [result_text(r) for r in results]
    titles = [term_set(r.get("title", "")) for r in results]
    weights = relevance_weights(task, results)
    floor = on_topic_floor(weights)
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}  # lower-cased key -> the name as first written
    numeric: set[str] = set()
    sources: dict[str, set[int]] = {}  # the results each name is found in
    # words written capitalised somewhere other than a sentence start: those are names
    inner_caps = {m.group(1) for t in texts for m in re.finditer(r"[^.!?:\s]\s+([A-Z][\w'’-]+)", t)}
    for r_index, (text, weight) in enumerate(zip(texts, weights)):
        if weight < floor:
            continue
        found = sorted([*NAME_PHRASE.finditer(text), *_LONG_NUMBER.finditer(text)], key=lambda m: m.start())
        starts = [0] + [b.end() for b in _SENTENCE_END.finditer(text)]
        for k, m in enumerate(found):
            n = bisect.bisect_right(starts, m.start()) - 1  # the sentence the name is in
            if n > 1:  # beyond the title and first sentence, a name counts only beside a task term
                sentence = text[starts[n] : starts[n + 1] if n + 1 < len(starts) else len(text)]
                if not (term_set(sentence) - term_set(m.group(0))) & task_terms:
                    continue
            ws = [re.sub(r"['’]s$", "", w) for w in m.group(0).strip(" .-'’").split()]  # Sun's → Sun
            while ws and ws[0].lower() in STOPWORDS:  # sentence-initial "The", "In" ...
                ws = ws[1:]
            phrase = " ".join(ws)
            sentence_start = not text[: m.start()].strip() or text[: m.start()].rstrip()[-1] in ".!?:"
            if len(ws) == 1 and sentence_start and phrase not in inner_caps:
                continue  # "Biological processes ...": a capital only because a sentence starts there
            pterms = {t for t in terms(phrase) if _salient_term(t)}
            key = phrase.lower()
            if (
                not (pterms - task_terms - used_terms)
                or len(phrase) > 60
                or any(pterms <= t for t in titles)
                or generic_name(phrase, task_words)
                or scrub_urls(phrase)[1]  # a link ("EVIL.COM"): untrusted text never chooses a site to search for
            ):
                continue
            scores[key] = max(scores.get(key, 0.0), weight * max(0.0, 1 - 0.02 * k))
            sources.setdefault(key, set()).add(r_index)
            shown.setdefault(key, phrase)
            if not any(c.isalpha() for c in phrase):
                numeric.add(key)
    order = {k: i for i, k in enumerate(shown)}
    kept = [k for k in scores if len(sources[k]) >= min_sources]
    return [shown[k] for k in sorted(kept, key=lambda k: (k in numeric, -scores[k], order[k]))]


def gap_query(
    task: str, results: Sequence[Mapping[str, Any]], earlier: list[str], min_sources: int = 1
) -> tuple[str, str]:
    """(query, planner) without a model: the task plus the ``GAP_NAMES`` most salient names not searched yet."""
    used: set[str] = set()
    for q in earlier:
        used.update(term_set(q))
    seen = {q.strip().lower() for q in earlier}
    names: list[str] = []
    for phrase in salient_phrases(task, results, used, min_sources):
        if term_set(phrase) - used - term_set(" ".join(names)):  # each name adds a term of its own
            names.append(phrase)
        if len(names) == GAP_NAMES:
            break
    while names:
        q = f"{task} {' '.join(names)}"
        if q.strip().lower() not in seen:
            return q, "gap-terms"
        names.pop()
    for suffix in FALLBACK_SUFFIXES:
        q = f"{task} {suffix}"
        if q.lower() not in seen:
            return q, "fallback-suffix"
    n = len(earlier) + 1
    return f"{task} ({n})", "fallback-numbered"
