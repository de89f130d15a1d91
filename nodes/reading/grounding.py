"""Whether text a chat model wrote is grounded: made of the task's words or of the retrieved sources' words.

A small model invents: asked to plan searches for "Who wrote the novel Pride and Prejudice?", SmolLM2-135M planned
"Jazz" and "Boys World", decomposed the question into a slot about "The Sliots", merged "The original sentence is:"
into the knowledge state and answered without citing anything. What the model writes steers the session (its queries
are searched, its chains decide when a question is answered, its knowledge is what later prompts read), so each is
checked here against what the session actually has — the task and the retrieved text — before it is used:

- ``on_task``: shares a content term with the task (a query, a slot's subject);
- ``grounded``: at least ``GROUNDED_SHARE`` of its content terms occur in the given texts (a query about a bridge
  entity found in the sources, a line of merged knowledge);
- ``supported`` (a sentence of an answer): ``grounded`` counting only the words the task does not already hold,
  and every name or number it adds occurs in the source too — "The Three Musketeers is a French novel written by
  William Shakespeare [3]" (SmolLM2, asked who wrote *Pride and Prejudice*) shares half its words with its source
  but not "William Shakespeare", so it is not supported.

Terms match as words, a plural folded onto its singular ("novels" ~ "novel"). ``GROUNDED_SHARE`` is a definition
(most of the words must come from the sources), not a tuned quality threshold: it is not fitted to any evaluation
set; ``saturate bench real-model`` measures what it does with a real model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from saturate.state.text import term_set

GROUNDED_SHARE = 0.5  # at least half of a text's content terms must occur in the sources it claims to come from


def _fold(term: str) -> str:
    """A plural folded onto its singular: "novels" -> "novel", "countries" -> "country" (never below 4 letters)."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def folded_terms(text: str) -> frozenset[str]:
    return frozenset(_fold(t) for t in term_set(text))


def share_in(text: str, against: frozenset[str]) -> float:
    """Share of ``text``'s content terms found in ``against`` (folded terms); 0 when it has none."""
    own = folded_terms(text)
    return len(own & against) / len(own) if own else 0.0


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The folded content terms of ``texts`` (what ``grounded`` checks against)."""
    out: set[str] = set()
    for text in texts:
        out |= folded_terms(text)
    return frozenset(out)


def on_task(text: str, task: str) -> bool:
    """Whether ``text`` shares a content term with the task."""
    return bool(folded_terms(text) & folded_terms(task))


def grounded(text: str, against: frozenset[str]) -> bool:
    """Whether at least ``GROUNDED_SHARE`` of ``text``'s content terms occur in ``against`` (``vocabulary``)."""
    return share_in(text, against) >= GROUNDED_SHARE


def query_grounded(query: str, task: str, sources: frozenset[str]) -> bool:
    """A query the model wrote is searched only when it is about the task (a shared term) or built from the
    retrieved sources' words (``grounded``): an invented topic ("Jazz" for a question about a novel) is not."""
    return on_task(query, task) or (bool(sources) and grounded(query, sources))


_NAME = re.compile(r"\b(?:[A-Z][\w'’-]*|\w*\d\w*)")


def names_in(text: str) -> frozenset[str]:
    """The names and numbers of a sentence (capitalised words but its first, words with digits), folded terms."""
    words = _NAME.findall(text)
    first = re.match(r"\W*([\w'’-]+)", text)
    if words and first and words[0] == first.group(1) and not any(c.isdigit() for c in words[0]):
        words = words[1:]  # the first word is capitalised as any sentence's is
    return folded_terms(" ".join(words))


def supported(sentence: str, task: str, source: frozenset[str]) -> bool:
    """Whether a source (``vocabulary``) holds a sentence of an answer: at least ``GROUNDED_SHARE`` of its content
    terms beyond the task's, and every name or number beyond the task's. A sentence adding nothing to the task
    (an echo of it) is not."""
    asked = folded_terms(task)
    own = folded_terms(sentence) - asked
    if not own or len(own & source) / len(own) < GROUNDED_SHARE:
        return False
    return (names_in(sentence) - asked) <= source
