"""Whether text a chat model wrote is grounded: made of the task's words or of the retrieved sources' words.

A small model invents: asked to plan searches for "Who wrote the novel Pride and Prejudice?", SmolLM2-135M planned
"Jazz" and "Boys World", decomposed the question into a slot about "The Sliots", merged "The original sentence is:"
into the knowledge state and answered without citing anything. What the model writes steers the session (its queries
are searched, its chains decide when a question is answered, its knowledge is what later prompts read), so each is
checked here against what the session actually has — the task and the retrieved text — before it is used:

- ``on_task``: shares a content term with the task (a query, a slot's subject);
- ``grounded``: at least ``GROUNDED_SHARE`` of its content terms occur in the given texts (a query about a bridge
  entity found in the sources, a line of merged knowledge, a sentence of an answer).

Terms match as words, a plural folded onto its singular ("novels" ~ "novel"). ``GROUNDED_SHARE`` is a definition
(most of the words must come from the sources), not a tuned quality threshold: it is not fitted to any evaluation
set; ``saturate bench served`` measures what it does with a real model.
"""

from __future__ import annotations

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
