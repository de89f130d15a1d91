"""assess_novelty: how new is this round, 0-10.

``heuristic`` (default) scores the round against everything the session has
accepted, and only counts what is new *and on topic*. For each result:

- a url the session already accepted counts 0 (a repeat);
- novelty = the share of its content terms absent from the vocabulary of all
  accepted results;
- relevance = the task terms it contains, relative to the most on-topic result
  accepted so far (capped at 1), so an off-topic page full of new words
  counts little.

The round scores 10 x the best novelty x relevance among its results: "how new
and how on topic is the best thing this round found". Scoring only against the
capped knowledge state (the seed) or counting new words alone makes nearly
every round look new (measured on ../shared/data; see README, Benchmarks).

``seed-heuristic`` is the seed's word-set difference against the rolling
knowledge state only, kept for comparison.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from state.context import Context
from state.graph_state import ResearchState
from state.settings import Settings
from state.text import term_set, words


def accepted_vocabulary(results: dict[str, dict]) -> set[str]:
    vocab: set[str] = set()
    for r in results.values():
        vocab |= term_set(f"{r.get('title', '')} {r.get('snippet', '')}")
    return vocab


def session_novelty(
    new_results: list[dict], seen_urls, vocab: set[str], task_terms: set[str] = frozenset(), best_cover: int = 0
) -> tuple[float, dict]:
    """0-10: 10 x max over results of (url unseen) x (share of terms not in vocab) x (task relevance).

    ``best_cover``: the most task terms any accepted result contains (0 when
    nothing is accepted yet: relevance then counts 1).
    """
    if not new_results:
        return 0.0, {"results": 0}
    novelty, relevance, parts = [], [], []
    for r in new_results:
        t = term_set(f"{r.get('title', '')} {r.get('snippet', '')}")
        nov = 0.0 if r["url"] in seen_urls or not t else len(t - vocab) / len(t)
        rel = min(1.0, len(t & task_terms) / best_cover) if best_cover else 1.0
        novelty.append(round(nov, 3))
        relevance.append(round(rel, 3))
        parts.append(nov * rel)
    return round(10.0 * max(parts), 3), {
        "results": len(parts),
        "repeats": sum(1 for r in new_results if r["url"] in seen_urls),
        "term_novelty": novelty,
        "relevance": relevance,
        "best": parts.index(max(parts)),
    }


def task_cover(results: dict[str, dict], task_terms: set[str]) -> int:
    """The most task terms any accepted result contains."""
    return max((len(task_terms & term_set(f"{r.get('title', '')} {r.get('snippet', '')}")) for r in results.values()), default=0)


def summary_novelty(new_results: list[dict], knowledge: str) -> tuple[float, dict]:
    """The seed heuristic: share of the results' words not in the knowledge state, x10."""
    w_new = set(words(" ".join(f"{r.get('title', '')} {r.get('snippet', '')}" for r in new_results)))
    if not w_new:
        return 0.0, {"words": 0}
    w_known = set(words(knowledge))
    return round(10.0 * len(w_new - w_known) / len(w_new), 3), {"words": len(w_new)}


def assess_novelty(state: ResearchState, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    settings = Settings.model_validate(state["settings"])
    cur = dict(state["current"])
    results = cur.get("results", [])
    accepted = state.get("results") or {}
    task_terms = term_set(state["task"])
    judged = {
        "heuristic": session_novelty(
            results, accepted.keys(), accepted_vocabulary(accepted), task_terms, task_cover(accepted, task_terms)
        ),
        "seed-heuristic": summary_novelty(results, state.get("knowledge", "")),
    }
    score, detail = judged[settings.novelty_method]
    # the other judge's score, recorded for comparison (the harness measures how often they agree)
    detail = {**detail, "alt": {m: v[0] for m, v in judged.items() if m != settings.novelty_method}}
    cur.update(
        novelty=score,
        novelty_method=settings.novelty_method,
        novelty_detail=detail,
        durations_ms={**cur.get("durations_ms", {}), "novelty": round((time.perf_counter() - t0) * 1000, 3)},
    )
    return {"current": cur}
