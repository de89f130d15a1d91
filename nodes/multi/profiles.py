"""profiles: the "Key actors" — short profiles of the most frequent key entities in the results.

Key entities are organisations, people and other names (``reading.entities``;
identifiers and quantities are not actors, nor one-word "names" the results also
use as lower-case words). A one-word name that is the last
word of a person's name in the same results (``Bonetti`` / ``Peter Bonetti``)
counts for that person. Actors are chosen and ranked by the on-topic results
mentioning them — task relevance (as for breadcrumbs: idf-weighted task terms)
at least ``reading.salience.ON_TOPIC`` of the best result's, so names scattered
through off-topic results do not crowd the profiles — at least ``MIN_MENTIONS``
of them, then by all results mentioning them, organisations and people before
other names; the top ``PROFILE_LIMIT`` get a profile, all extractive:

- **what**: the first sentence of a result titled with the name, else the first
  sentence saying "<name> is/was ...", else the first sentence mentioning it;
- **role**: the mentioning sentence sharing the most terms with the task;
- **facts**: up to ``MAX_FACTS`` other mentioning sentences with a date or number;
- **sources**: the citation numbers ([n], the merged order) of all results mentioning it
  (the profile reads them all: an actor's own page is often less on-topic than the task's).
"""

from __future__ import annotations

import re

from saturate.nodes.reading.actors import key_entities
from saturate.nodes.reading.entities import mentions
from saturate.state.multi_state import MultiState
from saturate.state.text import clip, sentences, term_set

PROFILE_LIMIT = 5
MAX_FACTS = 3
SENTENCE_CHARS = 240


def profile(name: str, kind: str, numbers: list[int], merged: list[dict], task: str) -> dict:
    task_terms = term_set(task)
    said: list[str] = []
    for n in numbers:
        e = merged[n - 1]
        said += [s for s in sentences(e.get("snippet", "")) if mentions(s, name) or mentions(s, name.split()[-1])]
    what = ""
    for n in numbers:
        e = merged[n - 1]
        if (e.get("title") or "").lower() == name.lower():
            what = next(iter(sentences(e.get("snippet", ""))), "")
            break
    if not what:
        copula = re.compile(rf"^(?:The\s+)?{re.escape(name)}\b[^.]*?\b(?:is|was|are|were)\b", re.IGNORECASE)
        what = next((s for s in said if copula.match(s)), said[0] if said else "")
    rest = [s for s in said if s != what]
    role = max(rest, key=lambda s: (len(term_set(s) & task_terms), -rest.index(s)), default="")
    facts = [s for s in rest if s != role and re.search(r"\d", s)][:MAX_FACTS]
    return {
        "name": name,
        "kind": kind,
        "what": clip(what, SENTENCE_CHARS),
        "role": clip(role, SENTENCE_CHARS),
        "facts": [clip(f, SENTENCE_CHARS) for f in facts],
        "sources": numbers,
        "mentions": len(numbers),
    }


def key_actors(task: str, merged: list[dict], limit: int = PROFILE_LIMIT) -> list[dict]:
    return [profile(c["name"], c["kind"], c["sources"], merged, task) for c in key_entities(task, merged)[:limit]]


def profiles(state: MultiState) -> dict:
    return {"profiles": key_actors(state["task"], state.get("merged") or [])}
