"""Which results are on topic, and which names in them are worth searching next.

One implementation, shared by the single loop (gap queries), the multi-source
loops (their heuristic next query and the gaps shown to the model), the
breadcrumbs and the Key actors:

- **relevance** of a result to the task: ``0.1 +`` the task terms it contains,
  each weighted by its rarity among the results (idf), so "Bubye" counts more
  than "waterfall"; a little less further down the list (``POSITION_DECAY``);
- **on topic**: relevance at least ``ON_TOPIC`` of the best result's;
- **names**: capitalised phrases (``_entities.NAME_PHRASE``) and long numbers
  (years, ids). A one-word name the results also use as a lower-case word
  ("Good", "List") is no name.
"""

from __future__ import annotations

import math
import re

from saturate.nodes._entities import NAME_PHRASE
from saturate.state.text import STOPWORDS, term_set, terms

ON_TOPIC = 0.5  # a result is on topic with relevance >= this share of the best result's
POSITION_DECAY = 0.1  # relevance / (1 + decay x position in the list)
FALLBACK_SUFFIXES = ("background", "history", "details", "overview", "facts", "context", "sources")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'-]+\b")
_LONG_NUMBER = re.compile(r"\b\d{4,}\b")


def result_text(result: dict) -> str:
    return f"{result.get('title', '')}. {result.get('snippet', '')}"


def relevance_weights(task: str, results: list[dict]) -> list[float]:
    """Task relevance of each result, in order (see the module docstring)."""
    task_terms = term_set(task)
    tsets = [term_set(result_text(r)) for r in results]
    n = len(results)
    df = {t: sum(1 for ts in tsets if t in ts) for t in task_terms}
    idf = {t: math.log(1 + n / df[t]) for t in task_terms if df[t]}
    return [
        (0.1 + sum(idf.get(t, 0.0) for t in task_terms & ts)) / (1 + POSITION_DECAY * pos)
        for pos, ts in enumerate(tsets)
    ]


def on_topic_floor(weights: list[float]) -> float:
    """The relevance a result needs to count as on topic."""
    return ON_TOPIC * max(weights, default=0.0)


def common_words(results: list[dict]) -> set[str]:
    """Words the results also use in lower case: a capitalised one-word "name" among them ("Good", "List",
    "Games") is a sentence start or a title fragment, not a name."""
    return set(_LOWER_WORD.findall(" ".join(result_text(r) for r in results)))


def is_name(entity, common: set[str]) -> bool:
    return not (entity.kind == "other" and " " not in entity.name and entity.name.lower() in common)


def _salient_term(term: str) -> bool:
    """Short numbers (list positions, counts) and ordinals are not names; years and longer ids are."""
    return not ((term.isdigit() and len(term) < 4) or re.fullmatch(r"\d+(?:st|nd|rd|th)", term))


def salient_phrases(task: str, results: list[dict], used_terms: set[str]) -> list[str]:
    """Names in accepted results the task does not name yet, most salient first.

    A name scores by the relevance of the result it appears in, a little less
    further down that result (the best score of a name wins). Skipped: names
    whose content terms are all in the task or earlier queries, and names that
    are the title of an accepted result (that page is in hand; searching its
    name again finds it again).
    """
    task_terms = term_set(task)
    texts = [result_text(r) for r in results]
    titles = [term_set(r.get("title", "")) for r in results]
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}  # lower-cased key -> the name as first written
    # words written capitalised somewhere other than a sentence start: those are names
    inner_caps = {m.group(1) for t in texts for m in re.finditer(r"[^.!?:\s]\s+([A-Z][\w'’-]+)", t)}
    for text, weight in zip(texts, relevance_weights(task, results)):
        found = sorted([*NAME_PHRASE.finditer(text), *_LONG_NUMBER.finditer(text)], key=lambda m: m.start())
        for k, m in enumerate(found):
            words = [re.sub(r"['’]s$", "", w) for w in m.group(0).strip(" .-'’").split()]  # Sun's → Sun
            while words and words[0].lower() in STOPWORDS:  # sentence-initial "The", "In" ...
                words = words[1:]
            phrase = " ".join(words)
            sentence_start = not text[: m.start()].strip() or text[: m.start()].rstrip()[-1] in ".!?:"
            if len(words) == 1 and sentence_start and phrase not in inner_caps:
                continue  # "Biological processes ...": a capital only because a sentence starts there
            pterms = {t for t in terms(phrase) if _salient_term(t)}
            key = phrase.lower()
            if not (pterms - task_terms - used_terms) or len(phrase) > 60 or any(pterms <= t for t in titles):
                continue
            scores[key] = max(scores.get(key, 0.0), weight * max(0.0, 1 - 0.02 * k))
            shown.setdefault(key, phrase)
    order = {k: i for i, k in enumerate(shown)}
    return [shown[k] for k in sorted(scores, key=lambda k: (-scores[k], order[k]))]


def gap_query(task: str, results: list[dict], earlier: list[str]) -> tuple[str, str]:
    """(query, planner) without a model: the task plus the most salient name not searched yet."""
    used: set[str] = set()
    for q in earlier:
        used.update(term_set(q))
    seen = {q.strip().lower() for q in earlier}
    for phrase in salient_phrases(task, results, used):
        q = f"{task} {phrase}"
        if q.strip().lower() not in seen:
            return q, "gap-terms"
    for suffix in FALLBACK_SUFFIXES:
        q = f"{task} {suffix}"
        if q.lower() not in seen:
            return q, "fallback-suffix"
    n = len(earlier) + 1
    return f"{task} ({n})", "fallback-numbered"
