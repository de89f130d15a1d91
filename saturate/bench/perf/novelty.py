"""Figure 2, ``heuristic_novelty_ms`` (<= 0.5 ms): ``session_novelty`` of 10 results against 500 accepted
ones, vocabulary (and task cover) precomputed, as the node keeps them (``reading.vocabulary``); baselines: the same
with them recomputed per call (what the node did before it kept them), and the whole ``assess_novelty`` node
with its index in place (every round of a running session) and rebuilt (the first round after a resume).
"""

from __future__ import annotations

import random
from pathlib import Path

import saturate.nodes.assess_novelty as an
from saturate.bench.perf.common import SEED, Figure, baseline, per_call_ms, runtime, wiki_records
from saturate.nodes.reading import vocabulary
from saturate.nodes.reading.salience import relative_relevance
from saturate.sources.local import SNIPPET_CHARS
from saturate.sources.wiki import CORPUS_NAME
from saturate.state import Context, load_settings
from saturate.state.graph_state import ResearchState, initial_state
from saturate.state.shapes import ResultDict
from saturate.state.text import clip


def wiki_results(n: int, rng: random.Random) -> list[ResultDict]:
    """n SearchResult dicts from the embedded corpus, shaped like LocalCorpus.search's (500-char snippets)."""

    picked = rng.sample(wiki_records(), n)
    return [
        {
            "id": r["id"],
            "url": r["url"],
            "title": r["title"],
            "snippet": clip(r["text"], SNIPPET_CHARS),
            "source": f"local:{CORPUS_NAME}",
            "score": 1.0,
        }
        for r in picked
    ]


def bench_novelty(work: Path, p: dict, shared: dict) -> Figure:

    rng = random.Random(SEED)
    pool = wiki_results(520, rng)
    accepted = {r["url"]: r for r in pool[:500]}
    # 10 results of a round: 8 new, 2 already accepted (repeats score 0 without term work)
    new = pool[500:508] + pool[:2]
    task = f"How are {new[0]['title']} and {new[1]['title']} related?"
    uses_cover = True  # the node also scores the task relevance of the round's results against the accepted

    def prepared(acc: dict) -> tuple[set, dict]:
        """What assess_novelty derived from the accepted results on every call before reading.vocabulary kept it."""
        return an.accepted_vocabulary(acc), {"relevance": relative_relevance(task, list(acc.values()), new)}

    def recomputed(acc: dict):
        vocab, extra = prepared(acc)
        return an.session_novelty(new, acc.keys(), vocab, **extra)

    vocab, extra = prepared(accepted)
    calls, slow = p["nov_calls"], p["nov_slow_calls"]
    cached, _ = per_call_ms(lambda: an.session_novelty(new, accepted.keys(), vocab, **extra), calls)
    recompute, _ = per_call_ms(lambda: recomputed(accepted), slow)
    vocab_only, _ = per_call_ms(lambda: an.accepted_vocabulary(accepted), slow)
    cover_only = per_call_ms(lambda: relative_relevance(task, list(accepted.values()), new), slow)[0]
    state: ResearchState = {
        **initial_state(task, load_settings({"seed": SEED}, env={})),
        "knowledge": clip(" ".join(r["snippet"] for r in pool[:5]), 1500),
        "current": {"round": 3, "query": task, "results": new, "durations_ms": {}},
        "results": accepted,
    }
    rt = runtime(Context(source=shared["wiki"]))  # no chat model: the heuristic path
    node_ms, _ = per_call_ms(lambda: an.assess_novelty(state, rt), slow)  # the index in place after the first call

    def cold_node():
        vocabulary.cache_clear(rt.context)  # a resumed session: its state is new objects, the index is rebuilt
        return an.assess_novelty(state, rt)

    cold_ms, _ = per_call_ms(cold_node, slow)
    small = dict(list(accepted.items())[:25])  # a default session accepts at most 5 rounds x 5 results
    small_recompute, _ = per_call_ms(lambda: recomputed(small), max(20, calls // 4))
    also = " and relative_relevance(task, accepted, new)" if uses_cover else ""
    fig = Figure(
        key="heuristic_novelty_ms",
        value=cached,
        unit="ms",
        op="<=",
        limit=0.5,
        baselines={
            "with_vocabulary_recomputed_ms": baseline(recompute, "ms"),
            "assess_novelty_node_ms": baseline(node_ms, "ms"),
            "assess_novelty_node_index_rebuilt_ms": baseline(cold_ms, "ms"),
        },
        command=(
            "perf.novelty.bench_novelty: nodes.assess_novelty.session_novelty(10 results (2 repeats), "
            f"500 accepted urls, vocab{', task terms, best cover' if uses_cover else ''}) "
            "with accepted_vocabulary(500 accepted)"
            f"{also} precomputed, {calls} calls in a loop (median of 5 batch means); baselines: the same with "
            f"accepted_vocabulary{also} recomputed per call (what assess_novelty did before reading.vocabulary), and "
            f"the whole assess_novelty node ({slow} calls) with its index of the accepted results in place and "
            f"rebuilt per call (vocabulary.cache_clear()); embedded-corpus articles as results, 500-char snippets, "
            f"seed {SEED}"
        ),
        details={
            "accepted_results": len(accepted),
            "vocabulary_terms": len(vocab),
            "accepted_vocabulary_ms": round(vocab_only, 4),
            "task_cover_ms": round(cover_only, 4) if uses_cover else None,
            "recompute_share_of_rebuilt_node": round((vocab_only + cover_only) / cold_ms, 3) if cold_ms else None,
            "with_vocabulary_recomputed_25_accepted_ms": round(small_recompute, 4),
        },
    )
    split = (
        f" (accepted_vocabulary {vocab_only:.2f} ms + relative_relevance {cover_only:.2f} ms)"
        if uses_cover
        else f" ({vocab_only:.2f} ms)"
    )
    fig.notes.append(
        f"scoring with the vocabulary precomputed: {cached:.3f} ms; recomputing it per call{split}"
        f" makes it {recompute:.2f} ms ({recompute / cached:.0f}x); the node takes {node_ms:.2f} ms with its index "
        f"of the accepted results in place, {cold_ms:.2f} ms when it rebuilds it (first round after a resume)."
    )
    fig.notes.append(
        "Keeping the vocabulary (nodes.reading.vocabulary): "
        + (
            f"needed for the 0.5 ms target at 500 accepted results (recomputed: {recompute:.2f} ms)"
            if recompute > fig.limit
            else "not needed: even recomputed it is under 0.5 ms"
        )
        + f"; at a default session's size (25 accepted) recomputing costs {small_recompute:.3f} ms in all."
    )
    return fig
