"""assess_novelty: how new is this round, 0-10.

``heuristic`` (default) scores the round against everything the session has
accepted: a result whose url was accepted before counts 0, a new one counts
the share of its content terms absent from the vocabulary of all accepted
results. Repeating results therefore score low, which a summary-only score
cannot see (the knowledge state is capped at a few hundred words).

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


def session_novelty(new_results: list[dict], seen_urls, vocab: set[str]) -> tuple[float, dict]:
    """0-10: mean over results of (url unseen) x (share of terms not in vocab)."""
    if not new_results:
        return 0.0, {"results": 0}
    parts = []
    for r in new_results:
        if r["url"] in seen_urls:
            parts.append(0.0)
            continue
        t = term_set(f"{r.get('title', '')} {r.get('snippet', '')}")
        parts.append(len(t - vocab) / len(t) if t else 0.0)
    score = 10.0 * sum(parts) / len(parts)
    return round(score, 3), {
        "results": len(parts),
        "repeats": sum(1 for r in new_results if r["url"] in seen_urls),
        "term_novelty": [round(p, 3) for p in parts],
    }


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
    if settings.novelty_method == "seed-heuristic":
        score, detail = summary_novelty(results, state.get("knowledge", ""))
    else:
        score, detail = session_novelty(results, accepted.keys(), accepted_vocabulary(accepted))
    cur.update(
        novelty=score,
        novelty_method=settings.novelty_method,
        novelty_detail=detail,
        durations_ms={**cur.get("durations_ms", {}), "novelty": round((time.perf_counter() - t0) * 1000, 3)},
    )
    return {"current": cur}
